"""Seeding for the dashboard tests: one farm, one agent with a stand-in GPU, and two runs
over tests/farm/cases_verdicts whose cases give every verdict (the expected ones below).
Run 2 uses gcc only, so the compiler-dependent cases change between the runs."""
import html.parser
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, Farm, wait_for  # noqa: E402

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


def seeded_farm(tmp_path):
    """A started farm with runs 1 (gcc and clang) and 2 (gcc); the caller closes it."""
    farm = Farm(tmp_path, lease=15).start()
    try:
        farm.agent("gpu-box", env=GPU_PATH, idle=4)
        run1 = farm.submit(CASES, {"compilers": ["gcc", "clang"]})
        farm.wait_run(run1, 90)
        run2 = farm.submit(CASES, {"compilers": ["gcc"]})
        farm.wait_run(run2, 90)
        # A finished run's comparison is stored by the coordinator's reporter, which the
        # index and the histories read: both runs' are there before the tests look.
        wait_for(lambda: farm.request("GET", "/", token=None)[1].count(b"no promise broken")
                 + farm.request("GET", "/", token=None)[1].count(b"FAILED") >= 2, 30,
                 "both runs' comparisons to be stored")
    except BaseException:
        farm.close()
        raise
    return farm, run1, run2


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
