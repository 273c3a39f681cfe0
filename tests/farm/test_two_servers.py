"""Two coordinators in one process share nothing (issue 32): tests/c/farm_two_servers.c
opens two servers, each with its own state folder, store and tokens, and runs requests
through each one's router. An agent token cached by A must mean nothing at B, and each
server's run 1 must name its own source archive in its claims. Both failed while the
agent cache and the run cache were a file's statics (checked against that code)."""
from cairntest import TBIN, run


def test_two_servers_in_one_process_share_no_state(tmp_path):
    r = run([TBIN / "farm_two_servers"], timeout=120, env={"TMPDIR": str(tmp_path),
                                                          "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout + r.stderr[-2000:]
    lines = r.stdout.splitlines()
    assert len(lines) == 4 and all(l.startswith("ok: ") for l in lines), lines
