"""Issue 28, the promises of the dashboard that need a farm of their own: a finished run's
comparison is computed once and kept (a page shows the kept one, not one computed again:
the test changes what was filed under it and the page does not move until the kept
comparison is dropped); `cairn-farm submit` reads the commit and branch from git when the
source is a checkout (a throwaway repository made here, so the test does not depend on
how the suite was checked out); the grid's machine filter and the machine pages tell two
machines apart."""
import json
import os
import re
import sqlite3
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from dashlib import Page  # noqa: E402
from farmlib import HERE, Farm, refile_predicate, wait_for  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402


def get(farm, path):
    status, body = farm.request("GET", path, token=None)
    return status, (body if isinstance(body, bytes) else str(body).encode()).decode()


def stored(farm, run):
    """Whether RUN's comparison is stored (the index shows its summary)."""
    _, index = get(farm, "/")
    row = re.search(rf'<tr><td><a href="/runs/{run}">.*?</tr>', index)
    return row and ("no promise broken" in row.group(0) or "FAILED" in row.group(0))


@pytest.mark.sqlite_only("edits filed predicates in farm.db")
def test_a_finished_runs_comparison_is_computed_once_and_kept(tmp_path):
    """fixed.cairn is identical in both cells of a finished run. One cell's filed
    bundle is then replaced in farm.db under a stopped coordinator, signed again with
    that case's observation digests changed: had any page compared
    the run again, fixed.cairn would now differ where fixed. The restarted coordinator's
    run page, history and grid still say identical (the kept comparison); once the kept
    comparison is dropped, as a coordinator from before kept none, the reporter compares
    the run again (once) and every page says what was filed now."""
    with Farm(tmp_path, lease=30) as farm:
        farm.agent("box", idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "cases_verdicts", {"compilers": ["gcc", "clang"]})
        farm.wait_run(run, 90)
        wait_for(lambda: stored(farm, run), 30, "the run's comparison to be stored")
        case = "examples/fixed.cairn"
        assert Page(get(farm, f"/runs/{run}")[1]).verdicts[case] == "identical"
        farm.stop_server()
        db = sqlite3.connect(farm.state / "farm.db")
        job = min(j for (j,) in db.execute("SELECT id FROM jobs WHERE run_id=?", (run,)))
        changed = []

        def change(pred):                              # one cell of the two
            for o in (o for c in pred["cases"] if c["case"] == case for o in c["observations"]):
                o["sha256"] = "ee" * 32
                changed.append(o["name"])
        refile_predicate(farm, db, job, change, farm.keygen("box"))
        db.commit()
        assert changed
        farm.start()
        for path in (f"/runs/{run}", f"/runs/{run}?case=fixed"):
            assert Page(get(farm, path)[1]).verdicts[case] == "identical", path
        assert "identical" in get(farm, f"/history/{case}")[1]
        assert 'class="differs-where-fixed' not in get(farm, "/grid?case=fixed.cairn")[1]
        farm.stop_server()
        db.execute("DELETE FROM reports")
        db.execute("DELETE FROM case_history")
        db.commit()
        db.close()
        farm.start()
        wait_for(lambda: stored(farm, run), 30, "the run's comparison to be stored again")
        assert Page(get(farm, f"/runs/{run}")[1]).verdicts[case] == "differs-where-fixed"
        assert 'class="differs-where-fixed' in get(farm, "/grid?case=fixed.cairn")[1]


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, timeout=30).stdout.strip()


def test_submit_reads_commit_and_branch_from_git(tmp_path):
    """A source in a git checkout: the run names HEAD's commit and branch; an uncommitted
    change is warned about; --commit and --branch win over git; a source outside any
    checkout names neither."""
    repo = tmp_path / "repo"
    subprocess.run(["cp", "-r", str(HERE / "cases"), str(repo)], check=True)
    git(repo, "init", "-q")
    git(repo, "checkout", "-q", "-b", "topic/dash-28")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x")
    head = git(repo, "rev-parse", "HEAD")
    plain = tmp_path / "plain"
    subprocess.run(["cp", "-r", str(HERE / "cases"), str(plain)], check=True)
    with Farm(tmp_path, lease=30) as farm:
        matrix = tmp_path / "m.json"
        matrix.write_text(json.dumps({"compilers": ["gcc"]}))

        def submit(tree, *extra):
            r = farm.cli("submit", "--matrix", matrix, *extra, tree)
            assert r.returncode == 0, r.stderr
            return farm.run_view(int(r.stdout.split()[1].rstrip(":"))), r.stderr
        view, warn = submit(repo)
        assert (view["commit"], view["branch"]) == (head, "topic/dash-28"), view
        assert warn == ""
        example = next(repo.rglob("*.cairn"))
        example.write_text(example.read_text() + "// edited\n")
        view, warn = submit(repo)
        assert view["commit"] == head and "has changes not committed" in warn, warn
        view, _ = submit(repo, "--commit", "f" * 40, "--branch", "release")
        assert (view["commit"], view["branch"]) == ("f" * 40, "release"), view
        git(repo, "checkout", "-q", "--detach")
        view, _ = submit(repo)
        assert view["commit"] == head and not view.get("branch"), view
        view, _ = submit(plain)
        if subprocess.run(["git", "-C", str(plain), "rev-parse"], capture_output=True).returncode:
            assert not view.get("commit") and not view.get("branch"), view


def test_the_machine_filter_and_pages_tell_two_machines_apart(tmp_path):
    """Two agents with labels a and b; run 1 requires a, run 2 requires b. The grid
    filtered by one machine shows only the runs where that machine ran the case; each
    machine's page lists its own jobs and not the other's."""
    with Farm(tmp_path, lease=30) as farm:
        farm.agent("box-a", "--labels", "a", idle=AGENT_IDLE_S)
        farm.agent("box-b", "--labels", "b", idle=AGENT_IDLE_S)
        runs = []
        for label in ("a", "b"):
            runs.append(farm.submit(HERE / "cases", {"compilers": ["gcc"],
                                                     "machines": [[label]]}))
        for run in runs:
            farm.wait_run(run, 90)
        for run in runs:
            wait_for(lambda: stored(farm, run), 30, "the runs' comparisons to be stored")
        for name, mine, other in (("box-a", runs[0], runs[1]), ("box-b", runs[1], runs[0])):
            _, grid = get(farm, f"/grid?machine={name}")
            row = re.search(r'<tr data-case="([^"]+)"[^>]*>(.*?)</tr>', grid, re.S)
            assert row, grid
            cells = re.findall(r"<td class=\"?([a-z-]+)", row.group(2))
            heads = [int(r) for r in re.findall(r'<th><a href="/runs/(\d+)"', grid)]
            assert heads == [runs[1], runs[0]], heads        # newest first
            shown = dict(zip(heads, cells))
            assert shown[mine] != "pending" and shown[other] == "pending", (name, shown)
            status, page = get(farm, f"/machines/{name}")
            assert status == 200
            jobs = re.search(r"<table id=jobs>(.*?)</table>", page, re.S).group(1)
            assert f'<a href="/runs/{mine}">' in jobs and f'<a href="/runs/{other}">' not in jobs
        assert get(farm, "/machines/box-a")[1] != get(farm, "/machines/box-b")[1]
