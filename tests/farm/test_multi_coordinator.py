"""Several coordinators on one PostgreSQL store and one shared state folder.

Two coordinators serve the same run; agents are spread over both, half of them through
a forwarder that stands in for a load balancer. One coordinator is killed with SIGKILL
mid-run and the forwarder moves its agents to the survivor, tokens and all. The run
must complete through the survivor with every job done exactly once and every bundle
an agent saw acknowledged filed exactly once: its row points to its folder, and once no
coordinator is left, a fresh one's reconcile leaves exactly one folder per job.
"""
import contextlib
import os
import re
import socket
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402
from farmlib import FARM, HERE, Farm, Relay, enrol, wait_for  # noqa: E402


def acknowledged(agent):
    """Job ids this agent's log says were uploaded and filed (acknowledged)."""
    return {int(line.split()[2].rstrip(":")) for line in agent.logpath.read_text().splitlines()
            if line.endswith("bundle uploaded and filed")}


def coordinator(tmp, name, state, store, claim_wait=5):
    """A coordinator whose own files are under TMP/NAME and whose state folder is STATE."""
    (tmp / name).mkdir(exist_ok=True)
    farm = Farm(tmp / name, lease=3, store=store, claim_wait=claim_wait)
    farm.state = state
    return farm


def test_two_coordinators_one_killed_every_job_once(tmp_path):
    if farmlib.POSTGRES is None:
        pytest.skip("several coordinators need the PostgreSQL store")
    store = {"store": farmlib.POSTGRES.database()}
    state = tmp_path / "state"
    a = coordinator(tmp_path, "a", state, store).start()
    b = coordinator(tmp_path, "b", state, store).start()
    fwd = Relay(a.port)
    try:
        # A token enrolled at one coordinator works at the other.
        token, _ = enrol(a, "probe", a.keygen("probe"))
        status, _ = b.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token)
        assert status == 204
        agents = []
        for i in range(2):   # through the forwarder to A, later to B
            a.url, url = fwd.url, a.url
            agents.append(a.agent(f"via-a{i}", env={"FAKE_CAIRN_SLEEP": "0.3"}))
            a.url = url
        agents += [b.agent(f"at-b{i}", env={"FAKE_CAIRN_SLEEP": "0.3"}) for i in range(2)]
        run = a.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"], "repeat": 12})
        wait_for(lambda: sum(j["state"] == "done" for j in b.run_view(run)["jobs"]) >= 6,
                 600, "6 filed bundles: hung?")
        a.kill9()                                   # mid-run: uploads and claims in flight
        fwd.target = b.port
        view = b.wait_run(run, 120)
        jobs = view["jobs"]
        assert len(jobs) == 24 and all(j["state"] == "done" for j in jobs), jobs
        # Every acknowledged bundle is the filed one: its job is done by that agent.
        by_id = {j["job"]: j for j in jobs}
        acked = 0
        for agent in agents:
            for job in acknowledged(agent):
                assert by_id[job]["agent"] == agent.name, (job, by_id[job])
                assert f"/{agent.name}/" in by_id[job]["evidence"]
                acked += 1
        assert acked >= 24 - 2, "most bundles are acknowledged to the agent that made them"
        filed = {j["evidence"] for j in jobs}
        assert len(filed) == 24                     # one bundle per job, none shared
        for d in b.exported(tmp_path / "export-b"):   # every file checked, each verified
            r = subprocess.run([FARM, "verify", d / "bundle.dsse.json", "--key",
                                d / "agent.pub.pem"], capture_output=True, text=True, timeout=30)
            assert r.returncode == 0, (d, r.stderr)
        # Once no coordinator is alive, a new one's reconcile drops what the killed one
        # left half-written; a collection then keeps every filed bundle's files.
        for agent in agents:
            agent.kill()
        b.stop_server()
        time.sleep(3.5)                             # b's sign of life goes stale
        c = coordinator(tmp_path, "c", state, store).start()
        try:
            assert set(c.filed()) == filed
            assert not list((state / "tmp").iterdir())
            assert c.run_view(run)["jobs"] == jobs
            assert c.cli("gc").returncode == 0
            exported = c.exported(tmp_path / "export-c")
            assert {str(d.relative_to(tmp_path / "export-c")) for d in exported} == filed
        finally:
            c.close()
    finally:
        fwd.close()
        a.close()
        b.close()


@contextlib.contextmanager
def two_coordinators(tmp_path, claim_wait=5):
    """Coordinators A and B on one fresh PostgreSQL database and one state folder, both
    closed at the end (the test is skipped without PostgreSQL)."""
    if farmlib.POSTGRES is None:
        pytest.skip("several coordinators need the PostgreSQL store")
    store = {"store": farmlib.POSTGRES.database()}
    state = tmp_path / "state"
    a = coordinator(tmp_path, "a", state, store, claim_wait).start()
    b = coordinator(tmp_path, "b", state, store, claim_wait).start()
    try:
        yield a, b
    finally:
        a.close()
        b.close()


# The claim's wait: past every hang guard here, so that an answer with a job can only
# be the wake-up, never the wait running out (claim_wait_max_seconds' ceiling).
LONG_POLL_S = 3600
HANG_S = 300


def claims_none(farm):
    """The coordinator's count of claim tries that found nothing (its /metrics)."""
    status, text = farm.request("GET", "/metrics")
    assert status == 200, text
    text = text.decode() if isinstance(text, bytes) else str(text)
    return int(float(re.search(r'^cairn_farm_claims_total\{result="none"\} (\S+)$', text,
                                re.M).group(1)))


def test_a_long_poll_at_one_coordinator_wakes_for_jobs_queued_at_the_other(tmp_path):
    """A claim parked at B (its first try found nothing: B's /metrics counted it) gets
    the job a run submitted at A queues: A's NOTIFY, read on B's reaper tick, wakes it.
    Its wait is an hour, so a job in the answer within the hang guard is the wake-up,
    however slow the machine; how soon it came is a benchmark's."""
    with two_coordinators(tmp_path, claim_wait=LONG_POLL_S) as (a, b):
        token, _ = enrol(b, "waiter", b.keygen("waiter"))
        answer = {}

        def wait_at_b():
            answer["status"], answer["job"] = b.request(
                "POST", "/api/v1/claim", {"wait_s": LONG_POLL_S}, token=token,
                timeout=LONG_POLL_S + 30)

        before = claims_none(b)
        waiter = threading.Thread(target=wait_at_b, daemon=True)
        waiter.start()
        wait_for(lambda: claims_none(b) > before, HANG_S, "the claim's first try at B: hung?")
        a.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        waiter.join(HANG_S)
        assert not waiter.is_alive(), \
            f"the claim parked at B was not woken by the job queued at A in {HANG_S} s: hung"
        assert answer["status"] == 200, answer


def test_a_store_that_is_neither_sqlite_nor_postgresql_is_refused(tmp_path):
    farm = Farm(tmp_path, store={"store": "mysql://farm@127.0.0.1/farm"})
    r = subprocess.run([FARM, "serve", "--state", farm.state, "--config", farm.config],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and '"store" must be "sqlite" or a postgresql:// URI' in r.stderr, r


def test_an_unreachable_postgresql_store_is_named_at_start(tmp_path):
    with socket.socket() as s:              # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    farm = Farm(tmp_path, store={"store": f"postgresql://cairn@127.0.0.1:{port}/farm"})
    r = subprocess.run([FARM, "serve", "--state", farm.state, "--config", farm.config],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "PostgreSQL store:" in r.stderr, r
    assert not (farm.state / "farm.db").exists()   # no SQLite file made instead


@pytest.mark.sqlite_only("makes a farm.db as the coordinator before the store interface did")
def test_a_farm_db_from_before_the_store_interface_opens_and_settles(tmp_path):
    """A farm.db made before journal rows named their coordinator opens; its journal
    row, of a bundle no job filed, is dropped by the migration at start (issue 28)."""
    import sqlite3
    farm = Farm(tmp_path)
    farm.state.mkdir(parents=True)
    with sqlite3.connect(farm.state / "farm.db") as c:
        c.execute("CREATE TABLE unsettled(seq INTEGER PRIMARY KEY, job_id INTEGER NOT NULL,"
                  " evidence TEXT NOT NULL, files TEXT NOT NULL)")
        c.execute("INSERT INTO unsettled(job_id, evidence, files) VALUES(1, ?, ?)",
                  ("evidence/v/1/m/cell", '{"a.txt": "aGVsbG8="}'))
    with farm:
        log = (farm.tmp / "farm.log").read_text()
        assert "1 journal row(s) of no filed bundle dropped" in log, log
        with sqlite3.connect(farm.state / "farm.db", timeout=10) as c:
            assert c.execute("SELECT COUNT(*) FROM unsettled").fetchone()[0] == 0


def test_a_revocation_at_one_coordinator_holds_at_the_other_within_seconds(tmp_path):
    """B caches agents by token; a revocation at A must reach B's cache within its 2 s
    lifetime, not wait for B's next flush (B has none of its own to make)."""
    with two_coordinators(tmp_path) as (a, b):
        token, agent_id = enrol(b, "revokee", b.keygen("revokee"))
        claim = {"wait_s": 0}
        assert b.request("POST", "/api/v1/claim", claim, token=token)[0] == 204  # cached now
        assert a.request("POST", f"/api/v1/agents/{int(agent_id)}/revoke")[0] == 200
        # Within the cache's 2 s lifetime and a request's time; without the store's word
        # B would never refuse it (it has no flush of its own), so a generous guard.
        wait_for(lambda: b.request("POST", "/api/v1/claim", claim, token=token)[0] == 401,
                 60, "B refusing the token revoked at A: it never heard?", step=0.1)
