"""Issue 39: the client verbs against what they read and write. `cairn-farm submit` reads
the commit and branch of a tree whose .git/config may be anyone's; `cairn-farm export`
writes into a folder where links may have been planted."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, FARM, HERE, Farm  # noqa: E402


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, timeout=30).stdout.strip()


def test_submit_runs_nothing_a_trees_git_config_names(tmp_path):
    """A tree whose .git/config sets core.fsmonitor (and a hook folder) to a script that
    writes out its environment: submitting it still names HEAD's commit, and the script
    never runs. Before, `git status` ran it as the submitter, CAIRN_FARM_TOKEN in hand."""
    repo, spy = tmp_path / "repo", tmp_path / "spied"
    subprocess.run(["cp", "-r", str(HERE / "cases"), str(repo)], check=True)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x")
    script = tmp_path / "monitor.sh"
    script.write_text(f"#!/bin/sh\nenv >> {spy}\n")
    script.chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction"):
        (hooks / hook).write_text(script.read_text())
        (hooks / hook).chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "core.hooksPath", str(hooks))
    example = next(repo.rglob("*.cairn"))
    example.write_text(example.read_text() + "// edited\n")   # status has work to do
    with Farm(tmp_path, lease=30) as farm:
        matrix = tmp_path / "m.json"
        matrix.write_text(json.dumps({"compilers": ["gcc"]}))
        env = dict(os.environ, CAIRN_FARM_TOKEN=ADMIN, CAIRN_FARM_URL=farm.url)
        r = subprocess.run([FARM, "submit", "--matrix", matrix, repo], env=env,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        view = farm.run_view(int(r.stdout.split()[1].rstrip(":")))
        assert view["commit"] == git(repo, "rev-parse", "HEAD")
        assert "has changes not committed" in r.stderr, r.stderr
    assert not spy.exists(), spy.read_text()[:300]
