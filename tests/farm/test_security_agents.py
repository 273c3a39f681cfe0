"""Issue 24 (Medium, Low): what an enrolled agent, or someone holding the enrolment token,
could cost the coordinator or the other agents: capabilities, connections and long polls
without bound, bundles that make folders without bound, statements about another source,
attempt or farm, challenges that push others' nonces out, names taken twice. Each test
drives the real coordinator over HTTP (raw sockets for floods) and failed on the
coordinator this issue started from."""
import hashlib
import http.client
import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from attacklib import CLAIM_LIMIT_S, claims_answered, configure  # noqa: E402
from farmlib import (ENROL, HERE, RECEIPT, Farm, claim, enrol, enrol_request,  # noqa: E402
                     read_answer, rss_mib, signed_upload)


def caps_of_size(size):
    """Capabilities that parse as a prober's would, padded with labels to about SIZE bytes."""
    label = "l" * min(4000, size // 1000)   # each within the 4,096 bytes any field may have
    return {"compilers": {"gcc": {"version": "t", "sanitizers": []}}, "gpus": [],
            "labels": [f"{label}{i}" for i in range(size // (len(label) + 8))]}


# --- Medium 7: capabilities are bounded, and shared, not copied per request -------------

def test_capabilities_over_their_bound_are_refused(tmp_path):
    """Capabilities of 160 KiB (the prober's are about 1 KiB) are refused at enrolment,
    naming the bound (19 MiB of them were accepted, and GET / grew to 19 MiB); 300 KiB
    of them are over max_enrol_body_bytes, refused from the declared length (issue 39)."""
    with Farm(tmp_path, max_body=8 << 20) as farm:
        status, answer = enrol_request(farm, "big", farm.keygen("big"), caps=caps_of_size(160 << 10))
        assert status == 400 and "capabilities" in answer["error"], (status, answer)
        assert "max_capabilities_bytes" in answer["error"], answer
        status, answer = enrol_request(farm, "big", farm.keygen("big"), caps=caps_of_size(300 << 10))
        assert status == 413 and "max_enrol_body_bytes" in answer["error"], (status, answer)
        status, page = farm.request("GET", "/", token=None)
        assert status == 200 and len(page) < 100_000


def test_an_agents_capabilities_are_held_once_for_all_its_requests(tmp_path):
    """With the bound raised to 4 MiB, an agent enrolled with 3.5 MiB of capabilities
    and 40 of its long polls parked: the coordinator holds its capabilities once (each
    request held its own copy: 40 long polls with 19 MiB of them took a GiB)."""
    farm = configure(Farm(tmp_path, max_body=8 << 20, claim_wait=30),
                     max_capabilities_bytes=4 << 20, max_enrol_body_bytes=8 << 20,
                     max_claims_per_agent=100)
    with farm:
        status, answer = enrol_request(farm, "big", farm.keygen("big"),
                                       caps=caps_of_size(3_500_000))
        assert status == 200, answer
        token = answer["token"]
        assert farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token)[0] == 204
        before = rss_mib(farm.server.pid)
        body = json.dumps({"wait_s": 20}).encode()
        socks = []
        for i in range(40):
            s = socket.create_connection(("127.0.0.1", farm.port), timeout=30)
            s.sendall(f"POST /api/v1/claim HTTP/1.1\r\nHost: farm\r\nAuthorization: Bearer "
                      f"{token}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            socks.append(s)
        time.sleep(3)
        grew = rss_mib(farm.server.pid) - before
        for s in socks:
            s.close()
        print(f"40 long polls of an agent with 3.5 MiB of capabilities: memory grew {grew:.1f} MiB")
        assert grew < 30, f"memory grew by {grew:.0f} MiB"


# --- Medium 8: one agent cannot take the farm's connections or its claims ---------------

def test_one_agent_cannot_lock_out_another(tmp_path):
    """An enrolled agent opens 1,000 long polls from two addresses: another agent's
    claims are still answered, each within 5 s, and the hostile one's are capped per
    agent (connections over max_connections_per_agent and parked claims over
    max_claims_per_agent get 429). Before, a token exempted its connections from every
    cap, and 1,000 of them took every slot."""
    with Farm(tmp_path, claim_wait=30) as farm:
        hostile, _ = enrol(farm, "hostile", farm.keygen("hostile"))
        victim, _ = enrol(farm, "victim", farm.keygen("victim"))
        body = json.dumps({"wait_s": 30}).encode()
        request = (f"POST /api/v1/claim HTTP/1.1\r\nHost: farm\r\nAuthorization: Bearer "
                   f"{hostile}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
        socks = []
        for i in range(1000):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.settimeout(5)
            s.bind((f"127.0.0.{2 + i % 2}", 0))
            try:
                s.connect(("127.0.0.1", farm.port))
                s.sendall(request)
            except OSError:
                pass
            socks.append(s)
        try:
            time.sleep(1)
            results = claims_answered(farm, victim, 5, CLAIM_LIMIT_S)
            refused = 0
            for s in socks:
                s.settimeout(0.05)
                answer = read_answer(s, limit=0)
                refused += bool(answer and answer[0] == 429)
        finally:
            for s in socks:
                s.close()
        print(f"victim's claims beside 1,000 hostile long polls: {results}; {refused} refused")
        assert results and all(status == 204 for status, _ in results), results
        assert refused >= 900, refused


# --- Medium 9: one bundle cannot make folders without bound ----------------------------

def upload_files(farm, key, token, tmp, names):
    job = claim(farm, token)
    case = job["cases"][0]
    files = {f"{case}/receipt.json": RECEIPT}
    files.update({f"{case}/{n}": b"x" for n in names})
    return signed_upload(farm, job, key, token, tmp, files=files), job


def test_a_deep_path_is_refused(tmp_path):
    """A file name 100 folders deep (a 1,024-byte subject name of a/a/a... made 512):
    refused, naming max_path_depth, and nothing is written."""
    with Farm(tmp_path, lease=60) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        (status, answer), _ = upload_files(farm, key, token, tmp_path, ["a/" * 100 + "f"])
        assert status == 400 and "max_path_depth" in answer["error"], (status, answer)
        assert farm.filed() == [] and farm.blobs() == farm.source_blobs()
        assert not (farm.state / "evidence").exists() or not any((farm.state / "evidence").iterdir())


def test_the_folders_one_bundle_may_make_are_bounded(tmp_path):
    """600 files each in a folder of its own, with max_bundle_inodes at 1,000: refused
    before anything is written (a 297 KiB upload made 59,983 folders). Stored by content,
    the 300 files a bundle within the bound names make no folder of theirs at all: 300
    equal files are one blob (with the receipt and the key: three new blobs, and at most
    two fan-out folders each)."""
    farm = configure(Farm(tmp_path, lease=60), max_bundle_inodes=1000)
    with farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"]})
        names = [f"d{i}/f" for i in range(600)]
        (status, answer), _ = upload_files(farm, key, token, tmp_path, names)
        assert status == 400 and "max_bundle_inodes" in answer["error"], (status, answer)
        assert farm.filed() == [] and farm.blobs() == farm.source_blobs()

        def inodes():
            return sum(1 for _ in farm.state.rglob("*"))
        before, blobs_before = inodes(), len(farm.blobs())
        (status, answer), _ = upload_files(farm, key, token, tmp_path, names[:300])
        assert status == 200, answer
        assert len(farm.blobs()) - blobs_before == 3
        assert inodes() - before <= 3 * 3


# --- Low 11: a revoked token claims nowhere ----------------------------------------------

def test_a_token_revoked_at_one_coordinator_claims_nothing_at_another(tmp_path):
    """An agent revoked at A claims at B at once, where B has its token cached: refused
    (401), no job handed out (B's 2 s cache let it claim: the claim's statement did not
    check revoked in the store)."""
    from test_multi_coordinator import two_coordinators
    with two_coordinators(tmp_path) as (a, b):
        token, agent = enrol(b, "revokee", b.keygen("revokee"))
        assert b.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token)[0] == 204
        run = a.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        assert a.request("POST", f"/api/v1/agents/{int(agent)}/revoke")[0] == 200
        status, answer = b.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token)
        assert status == 401 and answer["code"] == "unknown_agent", (status, answer)
        assert [j["state"] for j in a.run_view(run)["jobs"]] == ["queued"]


# --- Low 12: a statement names this farm's job: its source, attempt and farm -------------

@pytest.fixture(scope="module")
def farm12(tmp_path_factory, farm_store):  # one coordinator per store
    tmp = tmp_path_factory.mktemp("statement")
    farm = Farm(tmp, lease=600)
    farm.start()
    key = farm.keygen("x")
    token, _ = enrol(farm, "x", key)
    farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"], "repeat": 2})
    yield farm, key, token, tmp
    farm.close()


@pytest.mark.parametrize("field,value", [
    ("source", {"sha256": "ab" * 32}), ("attempt", 2), ("farm", "0" * 32)])
def test_a_statement_about_another_source_attempt_or_farm_is_refused(farm12, field, value):
    """A bundle signed for this job but naming another source digest, another attempt, or
    another farm (the same key enrolled in two farms): 409 replayed, nothing filed (it
    was filed)."""
    farm, key, token, tmp = farm12
    job = claim(farm, token)
    status, answer = signed_upload(farm, job, key, token, tmp,
                                   mutate=lambda st: st["predicate"].update({field: value}))
    assert status == 409 and answer["code"] == "replayed", (field, status, answer)
    assert field in answer["error"], answer
    status, answer = signed_upload(farm, job, key, token, tmp)   # the true statement
    assert status == 200, answer


# --- Low 13: challenges are bounded per address, and nobody's nonce is pushed out --------

def challenges(farm, source, n):
    """N challenges asked for from the address SOURCE on one connection: their statuses."""
    conn = http.client.HTTPConnection("127.0.0.1", farm.port, timeout=30,
                                      source_address=(source, 0))
    statuses = []
    for _ in range(n):
        conn.request("POST", "/api/v1/agents/challenge",
                     headers={"Authorization": f"Bearer {ENROL}"})
        r = conn.getresponse()
        r.read()
        statuses.append(r.status)
    conn.close()
    return statuses


def test_a_flood_of_challenges_keeps_a_victims_nonce(tmp_path):
    """A victim asks for a challenge; 1,120 more come from 70 other addresses: the
    victim's enrolment with its nonce still succeeds, each address gets at most its
    share, and the coordinator refuses new challenges rather than forget one (1,100
    challenges evicted the victim's nonce and its enrolment was refused)."""
    with Farm(tmp_path) as farm:
        status, challenge = farm.request("POST", "/api/v1/agents/challenge", token=ENROL)
        assert status == 200
        statuses = []
        for i in range(70):
            statuses += challenges(farm, f"127.0.0.{2 + i}", 16)
        status, answer = enrol_request(farm, "victim", farm.keygen("victim"),
                                       nonce=challenge["nonce"])
        assert status == 200, (status, answer)
        assert statuses.count(503) >= 90, sorted(set(statuses))
        per_address = challenges(farm, "127.0.0.200", 20)
        assert 429 in per_address or 503 in per_address, per_address


# --- Low 14: one machine name, one key ---------------------------------------------------

def test_a_second_key_under_one_machine_name_is_refused(tmp_path):
    """Two keys enrolled as one machine name showed two identical machines: the second is
    refused (409 name_taken) while the first agent holds the name, and takes it once that
    agent is revoked."""
    with Farm(tmp_path) as farm:
        first, second = farm.keygen("first"), farm.keygen("second")
        _, agent = enrol(farm, "gpu-07", first)
        status, answer = enrol_request(farm, "gpu-07", second)
        assert status == 409 and answer["code"] == "name_taken", (status, answer)
        assert enrol_request(farm, "gpu-07", first)[0] == 200   # the same key again
        assert farm.request("POST", f"/api/v1/agents/{int(agent)}/revoke")[0] == 200
        assert enrol_request(farm, "gpu-07", second)[0] == 200
        _, page = farm.request("GET", "/", token=None)
        row = '<tr><td><a href="/machines/gpu-07">gpu-07</a>'
        # the new one alone: revoked agents are not on the index (issue 39); the machine's
        # page lists the agents that held its name before
        assert page.decode().count(row) == 1
        # The name's page is the machine that holds it now, not the revoked one.
        status, machine = farm.request("GET", "/machines/gpu-07", token=None)
        assert status == 200 and "<dt>revoked" not in machine.decode()


def keyid_of(key):
    """An Ed25519 key's id as the farm names it (SHA-256 of the raw public key), by
    openssl rather than our C."""
    der = subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-outform", "DER"],
                         check=True, capture_output=True, timeout=30).stdout
    return hashlib.sha256(der[-32:]).hexdigest()


def job_ids(html, table):
    """The job ids in the page's table with id TABLE (empty when it is not there)."""
    m = re.search(rf"<table id={table}>(.*?)</table>", html, re.S)
    return [int(j) for j in re.findall(r"<tr><td>(\d+)<td>", m.group(1))] if m else []


def test_a_name_enrolled_again_shows_each_keys_jobs_as_its_own(tmp_path):
    """A machine name whose agent was revoked and enrolled again with another key: the
    name's page is the agent that holds it now, and its jobs, failures, counts and key
    are that agent's alone; what the revoked key ran (a bundle it filed, a FAILED one) is
    listed below under its own key as an earlier holder, never among the present one's.
    A job the revoked agent held when revoked and the new one then ran is the new one's."""
    with Farm(tmp_path, lease=30) as farm:
        first, second = farm.keygen("first"), farm.keygen("second")
        token1, agent1 = enrol(farm, "gpu-07", first)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"], "repeat": 4})
        passed, failed, held = (claim(farm, token1) for _ in range(3))
        assert signed_upload(farm, passed, first, token1, tmp_path, machine="gpu-07")[0] == 200
        status, answer = signed_upload(farm, failed, first, token1, tmp_path, machine="gpu-07",
                                       mutate=lambda st: st["predicate"].update(result="FAILED"))
        assert status == 200, answer
        assert farm.request("POST", f"/api/v1/agents/{int(agent1)}/revoke")[0] == 200
        token2, agent2 = enrol(farm, "gpu-07", second)
        mine = []
        for _ in range(2):                  # the job the revoked agent held, and the last
            job = claim(farm, token2)
            assert signed_upload(farm, job, second, token2, tmp_path, machine="gpu-07")[0] == 200
            mine.append(job["job"])
        assert held["job"] in mine, (held, mine)

        status, page = farm.request("GET", "/machines/gpu-07", token=None)
        assert status == 200
        html = page.decode()
        facts = html[:html.index("<p id=counts>")]
        assert keyid_of(second) in facts and keyid_of(first) not in facts
        assert "<dt>revoked" not in facts
        assert sorted(job_ids(html, "jobs")) == sorted(mine), html
        assert job_ids(html, "failures") == [] and '<p id=failures>None.</p>' in html
        assert re.search(r"<p id=counts>Its jobs: 2 done; leases lost: 0\.</p>", html), html
        earlier = html[html.index("<h2 id=earlier>"):]
        assert f"<h3 id=agent-{int(agent1)}>key <code>{keyid_of(first)}</code> (revoked)</h3>" \
            in earlier, earlier
        assert sorted(job_ids(earlier, f"jobs-{int(agent1)}")) == \
            sorted([passed["job"], failed["job"]])
        assert "FAILED" in earlier
        assert keyid_of(second) not in earlier and f"agent-{int(agent2)}" not in earlier
        # The run's own view agrees on who filed what.
        by_job = {j["job"]: j for j in farm.run_view(run)["jobs"]}
        assert all(by_job[j]["state"] == "done" for j in mine + [passed["job"], failed["job"]])

        # A name never re-enrolled has no earlier holders.
        enrol(farm, "gpu-08", farm.keygen("third"))
        html = farm.request("GET", "/machines/gpu-08", token=None)[1].decode()
        assert "<h2 id=earlier>" not in html and '<p id=jobs>No job yet.</p>' in html


def claim_status(farm, token):
    """The status of a claim that waits for nothing (204 when no job is queued)."""
    return farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token)[0]


def test_a_key_enrolled_again_loses_its_old_token_at_once(tmp_path):
    """Enrolling a key again gives it a new token, and the old one means nothing from
    that moment, though it was just used (and so cached: auth.c keeps agents by token
    for AGENT_CACHE_SECONDS); another agent's token, cached too, keeps working."""
    with Farm(tmp_path) as farm:
        key, other = farm.keygen("k"), farm.keygen("other")
        old, agent = enrol(farm, "box", key)
        token_other, _ = enrol(farm, "box-2", other)
        assert claim_status(farm, old) == 204 and claim_status(farm, token_other) == 204
        new, again = enrol(farm, "box", key)
        assert again == agent and new != old
        assert claim_status(farm, old) == 401
        assert claim_status(farm, new) == 204 and claim_status(farm, token_other) == 204


@pytest.mark.sqlite_only("changes an agent's token in farm.db behind the coordinator")
def test_an_enrolment_keeps_the_other_agents_tokens_cached(tmp_path):
    """Every enrolment used to empty the cache of agents by token, so while a fleet
    enrolled every claim of every agent read the database first (on PostgreSQL a round
    trip on the HTTP thread, ahead of the claim). Now an enrolment forgets its own agent
    only. Seen here by taking agent A's token out of farm.db once A's token is cached:
    A's next request authenticates from the cache, after B enrolled too, as long as the
    cache entry is younger than agent_cache_seconds (an hour here, so that no machine is
    too slow for it: this test once retried while its tries took under the default 2 s),
    and is refused once the cache is emptied (a revocation)."""
    with configure(Farm(tmp_path), agent_cache_seconds=3600) as farm:
        token, agent = enrol(farm, "a", farm.keygen("a"))
        assert claim_status(farm, token) == 204                  # A's token is cached now
        db = sqlite3.connect(farm.state / "farm.db", timeout=30)
        db.execute("UPDATE agents SET token_hash=? WHERE id=?", ("0" * 64, agent))
        db.commit()
        status = enrol_request(farm, "b", farm.keygen("b"))[0]
        seen = claim_status(farm, token)
        assert status == 200
        assert seen == 204, "another agent's enrolment emptied the cache"
        # The cache is what let A in: emptied, A's token (not in the store) is refused.
        _, third = enrol(farm, "c", farm.keygen("c"))
        assert farm.request("POST", f"/api/v1/agents/{int(third)}/revoke")[0] == 200
        assert claim_status(farm, token) == 401


@pytest.mark.sqlite_only("changes an agent's token in farm.db behind the coordinator")
def test_an_agent_cached_longer_than_agent_cache_seconds_is_read_again(tmp_path):
    """agent_cache_seconds bounds how long a token the store no longer has still works
    (a revocation at another coordinator sharing the store): past it, the store is read
    again and the token refused. The sleep makes the entry older than 1 ms for sure."""
    with configure(Farm(tmp_path), agent_cache_seconds=0.001) as farm:
        token, agent = enrol(farm, "a", farm.keygen("a"))
        assert claim_status(farm, token) == 204
        db = sqlite3.connect(farm.state / "farm.db", timeout=30)
        db.execute("UPDATE agents SET token_hash=? WHERE id=?", ("0" * 64, agent))
        db.commit()
        time.sleep(0.01)
        assert claim_status(farm, token) == 401
