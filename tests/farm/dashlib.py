"""Seeding for the dashboard tests: one farm, one agent with a stand-in GPU, and two runs
over tests/farm/cases_verdicts whose cases give every verdict (the expected ones below).
Run 2 uses gcc only, so the compiler-dependent cases change between the runs."""
import html.parser
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, Farm, wait_for  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

CASES = HERE / "cases_verdicts"
GPU_PATH = {"PATH": f"{HERE / 'fake_gpu'}:{os.environ['PATH']}"}
EXPECTED = {
    "examples/fixed.cairn": "identical",
    "examples/within.cairn": "within-bound",
    "examples/beyond.cairn": "violates-contract",
    "examples/fixed_differs.cairn": "differs-where-fixed",
    "examples/quiet.cairn": "no-evidence",
    "examples/checked.cairn": "violates-contract",
}


VALUES = HERE / "cases_values"
FLAKY = HERE / "cases_flaky"
# Run 3 puts one case's cells side by side: on the host, emulated for sm_90, on the
# (stand-in) sm_90 device.
SIDE_BY_SIDE = {"cells": [{"compiler": "gcc"},
                          {"compiler": "gcc", "mode": "emulated", "target": "sm_90"},
                          {"compiler": "gcc", "mode": "device", "target": "sm_90"}]}
BRANCH = "feature/<b>dash</b>"   # what a submitter typed: escaped on every page


def seeded_farm(tmp_path):
    """A started farm with runs 1 (cases_verdicts, gcc and clang), 2 (the same, gcc only),
    3 (cases_values side by side: host, emulated, device; submitted with --commit and
    --branch), 4 and 5 (cases_flaky twice, one source and matrix: coin.cairn's verdict
    changes between them), 6 (cases_flaky on gcc alone: no promise broken), 7 (cases_flaky
    with steady.cairn edited to differ on clang, the matrix of runs 4 and 5: its verdict
    changes with its source, so it is not flaky). The caller closes it."""
    edited = tmp_path / "flaky-edited"
    shutil.copytree(FLAKY, edited)
    (edited / "examples" / "steady.cairn").write_text(
        "// Edited: differs on clang from its first build.\n//! observe-later acc 0\n")
    farm = Farm(tmp_path, lease=15).start()
    try:
        env = dict(GPU_PATH, FAKE_CAIRN_COUNTER=str(tmp_path / "builds"))
        farm.agent("gpu-box", env=env, idle=AGENT_IDLE_S)
        runs = [farm.submit(CASES, {"compilers": ["gcc", "clang"]}),
                farm.submit(CASES, {"compilers": ["gcc"]}),
                farm.submit(VALUES, SIDE_BY_SIDE, "--commit", "0123456789abcdef0123",
                            "--branch", BRANCH, "--submitter", "ci <nightly>")]
        for run in runs:
            farm.wait_run(run, 90)
        both, gcc = {"compilers": ["gcc", "clang"]}, {"compilers": ["gcc"]}
        for tree, matrix in ((FLAKY, both), (FLAKY, both), (FLAKY, gcc), (edited, both)):
            # one after the other: the counter decides coin.cairn's bits
            runs.append(farm.submit(tree, matrix))
            farm.wait_run(runs[-1], 90)
        # A finished run's comparison is stored by the coordinator's reporter, which the
        # index and the histories read: all runs' are there before the tests look.
        wait_for(lambda: farm.request("GET", "/", token=None)[1].count(b"no promise broken")
                 + farm.request("GET", "/", token=None)[1].count(b"FAILED") >= len(runs), 30,
                 "every run's comparison to be stored")
    except BaseException:
        farm.close()
        raise
    return farm, runs


class Page(html.parser.HTMLParser):
    """Links, ids, and the verdict cell of every matrix row of a page."""

    def __init__(self, text):
        super().__init__()
        self.links, self.ids, self.verdicts, self.scripts = [], set(), {}, 0
        self._row = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "script":
            self.scripts += 1
        if tag == "tr" and "data-case" in a:
            self._row = a["data-case"]
        if tag == "td" and self._row and "verdict" in (a.get("class") or "").split():
            self.verdicts[self._row] = [c for c in a["class"].split() if c != "verdict"][0]
