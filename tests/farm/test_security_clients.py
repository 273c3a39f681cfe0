"""Issue 39: the client verbs against what they read and write. `cairn-farm submit` reads
the commit and branch of a tree whose .git/config may be anyone's; `cairn-farm export`
writes into a folder where links may have been planted."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, FARM, HERE, Farm  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402


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


def test_export_follows_no_link_planted_in_its_folder(tmp_path):
    """Links planted in the export folder, one where a bundle's folder goes (to a folder
    outside) and one where a file goes (to a file outside): the export refuses, exit 1,
    and writes nothing outside. Before, it followed both and exited 0. A file already
    there is not overwritten either; into a fresh folder the same export succeeds."""
    with Farm(tmp_path, lease=30) as farm:
        farm.agent("box", idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "cases", {"compilers": ["gcc"]})
        farm.wait_run(run, 90)
        (evidence,) = farm.filed()
        outside = tmp_path / "outside"
        outside.mkdir()
        victim = tmp_path / "victim.txt"
        victim.write_text("keep me\n")
        # a link where the bundle's cell folder goes
        out = tmp_path / "out"
        cell = out / evidence
        cell.parent.mkdir(parents=True)
        cell.symlink_to(outside)
        r = farm.cli("export", run, out)
        assert r.returncode == 1, r.stdout + r.stderr
        assert list(outside.iterdir()) == []
        # a link where the envelope goes
        out2 = tmp_path / "out2"
        (out2 / evidence).mkdir(parents=True)
        (out2 / evidence / "bundle.dsse.json").symlink_to(victim)
        r = farm.cli("export", run, out2)
        assert r.returncode == 1, r.stdout + r.stderr
        assert victim.read_text() == "keep me\n"
        r = farm.cli("export", run, tmp_path / "fresh")
        assert r.returncode == 0, r.stdout + r.stderr
