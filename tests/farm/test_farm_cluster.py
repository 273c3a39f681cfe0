"""The farm end to end with real processes on loopback (fake cairn, tests/farm/fake_cairn.py):
capability matching, exactly-once jobs, comparison verdicts, offline verification (ours and
the openssl CLI's), agent loss, coordinator crash, cancellation, --help everywhere."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import AGENT, ENROL, FARM, HERE, Farm, wait_for  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

CASES = HERE / "cases"


def all_jobs(farm, runs):
    return [j for r in runs for j in farm.run_view(r)["jobs"]]


def caps_of(farm):
    status, st = farm.request("GET", "/api/v1/status")
    assert status == 200
    return {a["name"]: a["caps"] for a in st["agents"]}, st


def fits(caps, cell):
    cc = caps["compilers"].get(cell["compiler"])
    if cc is None:
        return False
    if cell["sanitizer"] != "none" and cell["sanitizer"] not in cc["sanitizers"]:
        return False
    return set(cell["labels"]) <= set(caps["labels"])


def test_three_agents_each_job_once_on_a_fitting_agent(tmp_path):
    with Farm(tmp_path, lease=15) as farm:
        farm.agent("a-gcc", "--compilers", "gcc", idle=AGENT_IDLE_S)
        farm.agent("b-clang", "--compilers", "clang", "--labels", "big", idle=AGENT_IDLE_S)
        farm.agent("c-both", "--compilers", "gcc,clang", sanitizers="asan", idle=AGENT_IDLE_S)
        run1 = farm.submit(CASES, {"compilers": ["gcc", "clang"], "sanitizers": ["none", "asan"]})
        run2 = farm.submit(CASES, {"compilers": ["clang"], "machines": [["big"]]})
        for run in (run1, run2):
            farm.wait_run(run, 90)
        caps, st = caps_of(farm)
        jobs = all_jobs(farm, [run1, run2])
        assert len(jobs) == 5
        for j in jobs:
            assert j["state"] == "done", j
            assert j["attempt"] == 1 and j["lost"] == 0, j   # exactly once
            assert fits(caps[j["agent"]], j["cell"]), j
        # Only c-both offers asan; only b-clang carries the "big" label.
        assert {j["agent"] for j in jobs if j["cell"]["sanitizer"] == "asan"} == {"c-both"}
        assert [j["agent"] for j in jobs if j["cell"]["labels"]] == ["b-clang"]
        assert not [e for e in st["events"] if e["kind"] == "agent_lost"]
        # One bundle per job, each where the job's agent and cell say; exported as folders.
        expected = {f"evidence/0.1.0/{r}/{j['agent']}/{j['cell_id']}" for r in (run1, run2)
                    for j in farm.run_view(r)["jobs"]}
        assert set(farm.filed()) == expected
        dirs = farm.exported(tmp_path / "export")
        assert {str(d.relative_to(tmp_path / "export")) for d in dirs} == expected
        # The comparison: fixed cases identical, the unordered one differs within its bound.
        r = farm.cli("compare", run1, "--json")
        assert r.returncode == 0, r.stdout + r.stderr
        report = json.loads(r.stdout)
        verdicts = {c["case"]: c["verdict"] for c in report["cases"]}
        assert verdicts == {"examples/fixed.cairn": "identical",
                            "examples/plain.cairn": "identical",
                            "examples/unordered.cairn": "within-bound"}
        assert len(report["columns"]) == 4
        text = farm.cli("compare", run1)
        assert "examples/unordered.cairn" in text.stdout and text.returncode == 0
        status, page = farm.request("GET", f"/runs/{run1}", token=None)
        assert status == 200 and b"within-bound" in page
        assert page.count(b"<tr data-case=") == 3 and b"gcc-asan-emulated" in page
        # Receipts record the cell's flags: the agent built with the cell's compiler.
        for d in dirs:
            receipt = json.loads((d / "examples/fixed.cairn/receipt.json").read_text())
            cell = d.name.split("+")[0].split("-")
            assert receipt["compiler"]["name"] == cell[0]
            assert receipt["sanitizers"] == (["address", "undefined"] if cell[1] == "asan" else [])
        check_offline_verification(farm, dirs[0], tmp_path)


def check_offline_verification(farm, folder, tmp):
    bundle, pub = folder / "bundle.dsse.json", folder / "agent.pub.pem"
    ok = subprocess.run([FARM, "verify", bundle, "--key", pub], capture_output=True, text=True,
                        timeout=30)
    assert ok.returncode == 0 and "verified" in ok.stdout, ok.stderr
    # The plain openssl command line, as docs/farm.md shows it.
    env = json.loads(bundle.read_text())
    script = HERE.parent.parent / "farm" / "verify_openssl.sh"
    r = subprocess.run(["bash", script, bundle, pub], capture_output=True, text=True, timeout=30,
                       cwd=tmp)
    assert r.returncode == 0 and "Signature Verified Successfully" in r.stdout, r.stdout + r.stderr
    # Another key does not verify it; a changed subject file is caught.
    other = farm.keygen("stranger")
    bad = subprocess.run([FARM, "verify", bundle, "--key", str(other) + ".pub"],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "another key" in bad.stderr
    receipt = folder / "examples/plain.cairn/receipt.json"
    receipt.write_text(receipt.read_text() + " ")
    bad = subprocess.run([FARM, "verify", bundle, "--key", pub], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 1 and "sha256" in bad.stderr
    assert env["payloadType"] == "application/vnd.in-toto+json"


def test_compare_flags_a_fixed_case_that_differs(tmp_path):
    with Farm(tmp_path) as farm:
        farm.agent("m", idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "cases_differ", {"compilers": ["gcc", "clang"]})
        farm.wait_run(run, 60)
        r = farm.cli("compare", run, "--json")
        assert r.returncode == 1
        verdicts = {c["case"]: c["verdict"] for c in json.loads(r.stdout)["cases"]}
        assert verdicts == {"examples/differs.cairn": "differs-where-fixed",
                            "examples/fixed.cairn": "identical"}


def wait_progress(farm, run, needle, timeout=30):
    def running():
        jobs = farm.run_view(run)["jobs"]
        return [j for j in jobs if j["state"] == "running" and needle in (j["progress"] or "")]
    return wait_for(running, timeout, f"a running job at '{needle}'")[0]


def test_agent_killed_mid_job_is_requeued_and_finished_elsewhere(tmp_path):
    with Farm(tmp_path, lease=2) as farm:
        slow = farm.agent("slow", env={"FAKE_CAIRN_SLEEP": "60"})
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = wait_progress(farm, run, "case 1/1")
        assert job["agent"] == "slow"
        time.sleep(1.5)                       # heartbeats have extended the lease by now
        slow.send_signal(signal.SIGKILL)
        slow.wait(10)
        farm.agent("rescue", idle=AGENT_IDLE_S)
        view = farm.wait_run(run, 40)
        [j] = view["jobs"]
        assert j["state"] == "done" and j["agent"] == "rescue"
        assert j["attempt"] == 2 and j["lost"] == 1
        filed = farm.filed()
        assert [f.split("/")[-2] for f in filed] == ["rescue"]     # one bundle, from the rescuer
        _, st = farm.request("GET", "/api/v1/status")
        assert [e["kind"] for e in st["events"]] == ["agent_lost"]


def test_lost_job_fails_as_agent_lost_after_the_retry_limit(tmp_path):
    with Farm(tmp_path, lease=1, max_attempts=1) as farm:
        slow = farm.agent("doomed", env={"FAKE_CAIRN_SLEEP": "60"})
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        wait_progress(farm, run, "case 1/1")
        slow.send_signal(signal.SIGKILL)
        slow.wait(10)
        [j] = farm.wait_run(run, 20)["jobs"]
        assert j["state"] == "failed" and j["failure"] == "agent_lost"
        assert farm.filed() == []


def test_cancellation_reaches_a_running_agent(tmp_path):
    with Farm(tmp_path, lease=3) as farm:
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        # Started after the submit: its short idle counts from the cancellation on.
        agent = farm.agent("busy", env={"FAKE_CAIRN_SLEEP": "60"}, idle=2)
        wait_progress(farm, run, "case 1/1")
        r = farm.cli("cancel", run)
        assert r.returncode == 0, r.stderr
        agent.wait(20)                         # it stopped the case and went idle
        log = agent.logpath.read_text()
        assert "cancelled by the coordinator" in log
        assert "uploaded" not in log
        [j] = farm.run_view(run)["jobs"]
        assert j["state"] == "cancelled"
        assert farm.filed() == []


def acknowledged(agent_logs):
    acked = set()
    for log in agent_logs:
        for line in log.read_text().splitlines():
            if line.endswith("bundle uploaded and filed"):
                acked.add(int(line.split()[2].rstrip(":")))
    return acked


def test_coordinator_killed_during_uploads_loses_nothing_acknowledged(tmp_path):
    """kill -9 of the coordinator while a bundle is being filed (a blob being written in
    tmp/: each bundle carries a 3 MB raw file of random bytes, a new blob every time, so
    filing takes a while, and the kill waits for one): the restart keeps every
    acknowledged bundle, every file of each intact and verified, and drops what was
    half-written.
    With PostgreSQL the killed coordinator's sign of life was still fresh at the restart,
    so it was taken for a live peer and its temp folder (and any folder it had renamed
    into place unacknowledged) was kept: this failed whenever the kill landed in a
    filing, which it now always does (issue 24, Medium 6)."""
    farm = Farm(tmp_path, lease=3, max_body=16 << 20)
    try:
        farm.start()
        agents = [farm.agent(f"w{i}", idle=AGENT_IDLE_S) for i in range(2)]
        run = farm.submit(HERE / "cases_bulky", {"compilers": ["gcc", "clang"], "repeat": 15})
        wait_for(lambda: sum(j["state"] == "done" for j in farm.run_view(run)["jobs"]) >= 6,
                 60, "6 filed bundles")
        tmp = farm.state / "tmp"
        wait_for(lambda: any(tmp.iterdir()), 60, "a filing in progress", step=0.001)
        farm.kill9()
        time.sleep(0.5)                        # its database sessions end
        acked_before = acknowledged([a.logpath for a in agents])
        assert acked_before
        farm.start()                           # same state folder, same port
        view = farm.run_view(run)
        done = {j["job"] for j in view["jobs"] if j["state"] == "done"}
        assert acked_before <= done, "an acknowledged bundle went missing"
        assert not list((farm.state / "tmp").iterdir())
        view = farm.wait_run(run, 90)
        assert all(j["state"] == "done" for j in view["jobs"])
        assert len(farm.filed()) == 30
        dirs = farm.exported()                 # every file checked, every bundle verified
        assert len(dirs) == 30
        for d in dirs:
            r = subprocess.run([FARM, "verify", d / "bundle.dsse.json", "--key",
                                d / "agent.pub.pem"], capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, (d, r.stderr)

    finally:
        farm.close()


def test_every_command_has_help(tmp_path):
    for exe, verbs in ((FARM, ["serve", "submit", "status", "compare", "cancel", "revoke",
                               "verify", "gc", "export"]),
                       (AGENT, ["keygen", "probe", "run", "loadgen"])):
        r = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0 and "usage" in r.stdout
        for verb in verbs:
            r = subprocess.run([exe, verb, "--help"], capture_output=True, text=True, timeout=10)
            assert r.returncode == 0 and "usage" in r.stdout, (exe, verb)
        bad = subprocess.run([exe, "frobnicate"], capture_output=True, text=True, timeout=10)
        assert bad.returncode == 2 and "unknown verb" in bad.stderr
