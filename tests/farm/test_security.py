"""Issue 15, the farm under attack: each test is a hostile agent's or an anonymous
client's move that once crashed, locked out or corrupted the coordinator. Bundles are
signed here with the openssl command line (farmlib), independently of the C code."""
import base64
import hashlib
import json
import os
import sqlite3
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, Farm, enrol, sign_envelope, statement, upload_body  # noqa: E402

RECEIPT = json.dumps({"cairn": "0.1.0", "numerics": {"main": [
    {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even", "sum": "exact"}]}}).encode()


def claim(farm, token):
    status, job = farm.request("POST", "/api/v1/claim", {"wait_s": 2}, token=token)
    assert status == 200, job
    return job


def signed_upload(farm, job, key, token, tmp, files=None, mutate=None, machine="x"):
    """Uploads a bundle for JOB; MUTATE(statement) may change the statement before signing."""
    files = files if files is not None else {f"{job['cases'][0]}/receipt.json": RECEIPT}
    st = statement(job, machine, files)
    if mutate:
        mutate(st)
    env = sign_envelope(key, json.dumps(st).encode(), tmp)
    return farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", upload_body(env, files),
                        token=token)


def model_cell_digest(observations):
    """compare.c's digest, written again from docs/farm.md: sha256 over one line per
    observation, "name type count sha256\\n", shown as its first 12 hex digits."""
    text = "".join(f"{o['name']} {o['type']} {o['count']:.0f} {o['sha256']}\n"
                   for o in observations)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# --- High 1: a filed bundle with a huge observation type must not crash compare ------

def test_compare_survives_a_filed_huge_observation_type(tmp_path):
    """A bundle filed (by an older coordinator, before uploads were bounded) with a 3 MB
    observation type: /runs/ID and `cairn-farm compare` must answer, with the digest the
    model gives, after a restart too. Before the fix compare.c hashed past its buffer."""
    with Farm(tmp_path, lease=60, max_body=8 << 20) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        status, answer = signed_upload(farm, job, key, token, tmp_path)
        assert status == 200, answer
        farm.stop_server()
        observations = [
            {"name": "y", "type": "t" * (3 << 20), "count": 1, "sha256": "ab" * 32},
            {"name": "z" * 300, "type": "f64[4]", "count": 4, "sha256": "cd" * 32}]
        db = sqlite3.connect(farm.state / "farm.db")
        pred = json.loads(db.execute("SELECT predicate FROM jobs WHERE id=?",
                                     (job["job"],)).fetchone()[0])
        pred["cases"][0]["observations"] = observations
        db.execute("UPDATE jobs SET predicate=? WHERE id=?", (json.dumps(pred), job["job"]))
        db.commit()
        db.close()
        farm.start()
        want = model_cell_digest(observations)
        status, page = farm.request("GET", f"/runs/{run}")
        assert status == 200
        assert want in page.decode(), page[:2000]
        r = farm.cli("compare", run)
        assert want in r.stdout, (r.stdout, r.stderr)
        assert farm.server.poll() is None


# --- High 1: every field an agent sends is bounded at upload ---------------------------

@pytest.fixture(scope="module")
def farm1(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("security")
    farm = Farm(tmp, lease=600, max_body=8 << 20)
    farm.start()
    try:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"]})
        yield farm, key, token, claim(farm, token), tmp
    finally:
        farm.close()


def obs(**kw):
    o = {"name": "y", "type": "f64", "count": 1, "sha256": "ab" * 32}
    o.update(kw)
    return o


def set_case(**fields):
    def mutate(st):
        st["predicate"]["cases"][0].update(fields)
    return mutate


BAD_FIELDS = [
    (set_case(exit_status=1e300), "predicate.cases[0].exit_status"),
    (set_case(exit_status=-1e300), "predicate.cases[0].exit_status"),
    (set_case(exit_status=2.5), "predicate.cases[0].exit_status"),
    (set_case(exit_status="0"), "predicate.cases[0].exit_status"),
    (set_case(exit_status=65536), "predicate.cases[0].exit_status"),
    (set_case(build_status=1 << 40), "predicate.cases[0].build_status"),
    (set_case(case="c" * 1025), "predicate.cases[0].case"),
    (set_case(unordered="yes"), "predicate.cases[0].unordered"),
    (set_case(trap="t" * 4097), "predicate.cases[0].trap"),
    (set_case(observations=[obs(type="t" * 257)]), "predicate.cases[0].observations[0].type"),
    (set_case(observations=[obs(type="t" * (3 << 20))]), "predicate.cases[0].observations[0].type"),
    (set_case(observations=[obs(), obs(name="")]), "predicate.cases[0].observations[1].name"),
    (set_case(observations=[obs(name="n" * 257)]), "predicate.cases[0].observations[0].name"),
    (set_case(observations=[obs(count=1.5)]), "predicate.cases[0].observations[0].count"),
    (set_case(observations=[obs(count=-1)]), "predicate.cases[0].observations[0].count"),
    (set_case(observations=[obs(count=1e300)]), "predicate.cases[0].observations[0].count"),
    (set_case(observations=[obs(sha256="AB" * 32)]), "predicate.cases[0].observations[0].sha256"),
    (set_case(observations=[obs(sha256="ab" * 33)]), "predicate.cases[0].observations[0].sha256"),
    (set_case(observations=[obs()] * 4097), "predicate.cases[0].observations"),
    (set_case(observations="none"), "predicate.cases[0].observations"),
    (set_case(checks=[{"name": "k", "ok": 1}]), "predicate.cases[0].checks[0].ok"),
    (set_case(checks=[{"name": "k" * 300, "ok": True}]), "predicate.cases[0].checks[0].name"),
    (set_case(deep=[[[[[[[[[1]]]]]]]]]), "predicate.cases[0].deep"),
    (lambda st: st["predicate"].update(attempt=1e300), "predicate.attempt"),
    (lambda st: st["predicate"]["machine"].update(cpu="c" * 5000), "predicate.machine.cpu"),
    (lambda st: st["predicate"].update(cases={}), "predicate.cases"),
]


@pytest.mark.parametrize("mutate,field", BAD_FIELDS, ids=[f for _, f in BAD_FIELDS])
def test_out_of_bounds_fields_are_refused_naming_the_field(farm1, mutate, field):
    farm, key, token, job, tmp = farm1
    status, answer = signed_upload(farm, job, key, token, tmp, mutate=mutate)
    assert 400 <= status < 500, (status, answer)
    assert field in answer["error"], answer
    assert farm.evidence_dirs() == []
    assert farm.server.poll() is None


def test_nul_inside_a_subject_name_is_refused(farm1):
    farm, key, token, job, tmp = farm1
    name = f"{job['cases'][0]}/receipt.json"
    files = {name: RECEIPT}

    def mutate(st):
        st["subject"].append({"name": name + "\0.evil", "digest": {"sha256": "ab" * 32}})
    status, answer = signed_upload(farm, job, key, token, tmp, files=files, mutate=mutate)
    assert status == 400 and "NUL" in answer["error"], (status, answer)
    assert farm.evidence_dirs() == []


@pytest.mark.parametrize("second", ["{name}", "{name}\\u0000other"])
def test_duplicate_file_names_in_one_upload_are_refused(farm1, second):
    """Two copies of one name in "files" (or the same name cut by a NUL): before, the
    first was verified and the last one written."""
    farm, key, token, job, tmp = farm1
    name = f"{job['cases'][0]}/receipt.json"
    st = statement(job, "x", {name: RECEIPT})
    env = sign_envelope(key, json.dumps(st).encode(), tmp)
    good = base64.b64encode(RECEIPT).decode()
    evil = base64.b64encode(b"not the receipt").decode()
    raw = ('{"envelope": %s, "files": {"%s": "%s", "%s": "%s"}}'
           % (json.dumps(env), name, good, second.format(name=name), evil)).encode()
    status, answer = farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", raw=raw,
                                  token=token)
    assert status == 400, (status, answer)
    assert "twice" in answer["error"] or "NUL" in answer["error"], answer
    assert farm.evidence_dirs() == []


def test_fields_at_their_bounds_are_filed(farm1):
    """The bounds are not off by one: a 256-byte type, a 2^53 count and the extreme
    statuses are accepted (this files the module's job, so it runs last)."""
    farm, key, token, job, tmp = farm1
    mutate = set_case(exit_status=-65536, build_status=0, observations=[
        obs(type="t" * 256, name="n" * 256, count=2 ** 53)])
    status, answer = signed_upload(farm, job, key, token, tmp, mutate=mutate)
    assert status == 200, answer
    assert len(farm.evidence_dirs()) == 1
