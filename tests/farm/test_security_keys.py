"""Issue 39 (items 7 and 12): one machine name, one live agent; one key, one working
agent. Sixteen enrolments at once under one free name made 2-8 live holders on
PostgreSQL (each saw the name free, then inserted: no unique index); two agents sharing
a key livelocked (each enrolment took the other's token, the other enrolled again).
Each test drives the real coordinator (and, for the key, two real cairn-agent processes)
and failed on the coordinator before this change."""
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402
from farmlib import (ENROL, ENROL_PROOF_TYPE, HERE, Farm, enrol, enrol_request,  # noqa: E402
                     sign_envelope, wait_for)

CAPS = {"compilers": {"gcc": {"version": "t", "sanitizers": []}}, "gpus": [], "labels": []}


def live_holders(farm, name):
    status, st = farm.request("GET", "/api/v1/status")
    assert status == 200, st
    return [a for a in st["agents"] if a["name"] == name and not a.get("revoked")]


def enrol_at_once(farms, name, n, tmp):
    """N keys enrol under NAME at once, spread over FARMS (proofs signed first, each for
    a nonce of the coordinator it goes to; then the requests released together from N
    threads): the N answers."""
    bodies = []
    for i in range(n):
        farm, key = farms[i % len(farms)], farms[0].keygen(f"k{i}")
        status, challenge = farm.request("POST", "/api/v1/agents/challenge", token=ENROL)
        assert status == 200, challenge
        payload = json.dumps({"purpose": "cairn-farm enrol", "nonce": challenge["nonce"],
                              "name": name}).encode()
        bodies.append({"name": name, "capabilities": CAPS,
                       "public_key": pathlib.Path(f"{key}.pub").read_text(),
                       "proof": sign_envelope(key, payload, tmp, ENROL_PROOF_TYPE)})
    start, answers = threading.Barrier(n), [None] * n

    def one(i):
        start.wait(120)
        answers[i] = farms[i % len(farms)].request("POST", "/api/v1/agents/enrol", bodies[i],
                                                   token=ENROL, timeout=120)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return answers


def test_sixteen_enrolments_under_one_free_name_make_one_live_holder(tmp_path):
    """Sixteen keys enrol under one free name at once, at one coordinator (SQLite) or
    spread over two on one PostgreSQL database: one is enrolled, the other fifteen are
    refused name_taken, and one live agent holds the name. Eight rounds, each a new name."""
    if farmlib.POSTGRES is None:
        farm = Farm(tmp_path).start()
        farms = [farm]
    else:
        from test_multi_coordinator import coordinator
        store = {"store": farmlib.POSTGRES.database()}
        farms = [coordinator(tmp_path, c, tmp_path / "state", store, 5).start() for c in "ab"]
    try:
        for round in range(8):
            answers = enrol_at_once(farms, f"contested{round}", 16, tmp_path)
            statuses = sorted(a[0] for a in answers)
            assert statuses == [200] + [409] * 15, (round, answers)
            assert all(a[1]["code"] == "name_taken" for a in answers if a[0] == 409), answers
            assert len(live_holders(farms[0], f"contested{round}")) == 1
            for i in range(16):    # the keys enrol again under the next name
                (farms[0].tmp / f"k{i}.key").unlink()
    finally:
        for f in farms:
            f.close()


def plant_second_live_holder(farm, name, other):
    """Makes agent OTHER a second live holder of NAME in the store, as the race before
    the unique index did (the index dropped first, as a store from before it has none)."""
    sql = ["DROP INDEX agents_live_name",
           f"UPDATE agents SET name='{name}' WHERE name='{other}'"]
    if "store" in farm.store:
        subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", farm.store["store"],
                        "-c", ";".join(sql)], check=True, capture_output=True, timeout=60)
    else:
        db = sqlite3.connect(farm.state / "farm.db")
        for s in sql:
            db.execute(s)
        db.commit()
        db.close()


def test_two_live_holders_from_before_the_index_leave_one_at_start(tmp_path):
    """A store where two live agents hold one name (made before the index): the
    coordinator starts, the first enrolled keeps the name and its token, the later one is
    revoked, and a third key is refused the name."""
    with Farm(tmp_path) as farm:
        first, _ = enrol(farm, "twice", farm.keygen("a"))
        later, _ = enrol(farm, "other", farm.keygen("b"))
        farm.stop_server()
        plant_second_live_holder(farm, "twice", "other")
        farm.start()
        assert len(live_holders(farm, "twice")) == 1
        assert farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=first)[0] == 204
        status, answer = farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=later)
        assert status == 401 and answer["code"] == "unknown_agent", (status, answer)
        status, answer = enrol_request(farm, "twice", farm.keygen("c"))
        assert status == 409 and answer["code"] == "name_taken", (status, answer)


def test_a_key_enrolled_again_tells_the_old_token_so(tmp_path):
    """A key enrols twice (two processes holding it): the first token is answered
    token_superseded, not unknown_agent (on which an agent enrols again, taking the
    other's token: the livelock); the newest token works; a revoked agent's old tokens
    are all unknown_agent."""
    with Farm(tmp_path) as farm:
        key = farm.keygen("shared")
        old, agent = enrol(farm, "shared", key)
        new, again = enrol(farm, "shared", key)
        assert again == agent
        status, answer = farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=old)
        assert status == 401 and answer["code"] == "token_superseded", (status, answer)
        assert farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=new)[0] == 204
        assert farm.request("POST", f"/api/v1/agents/{agent}/revoke")[0] == 200
        for token in (old, new):
            status, answer = farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token)
            assert status == 401 and answer["code"] == "unknown_agent", (status, answer)


def test_two_agents_sharing_a_key_end_with_one_working(tmp_path):
    """Two cairn-agent processes with one key file: the one whose token the other's
    enrolment replaced stops, exit 1, saying why; the other files the run. Before, each
    enrolled again on unknown_agent, taking the other's token, for ever."""
    with Farm(tmp_path, lease=15) as farm:
        first = farm.agent("twin")
        wait_for(lambda: "enrolled as agent" in first.logpath.read_text(), 120,
                 "the first agent's enrolment")
        second = farm.agent("twin")     # the same key file: keygen keeps the first key
        wait_for(lambda: first.poll() is not None, 300, "the first agent to stop")
        assert first.returncode == 1
        assert "another agent enrolled with this key" in first.logpath.read_text()
        run = farm.submit(HERE / "cases", {"compilers": ["gcc"]})
        view = farm.wait_run(run, 600)
        assert [j["state"] for j in view["jobs"]] == ["done"], view
        assert second.poll() is None
