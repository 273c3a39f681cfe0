"""Bad requests to the coordinator: each gets the right 4xx with a JSON error, is logged,
and changes nothing (no bundle filed, the job still leased). Bundles are made and signed
here with the openssl command line, independently of the C code under test."""
import base64
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, ENROL, HERE, Farm, enrol, enrol_request, sign_envelope, statement, upload_body  # noqa: E402

RECEIPT = json.dumps({"cairn": "0.1.0", "numerics": {"main": [
    {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even", "sum": "exact"}]}}).encode()


@pytest.fixture(scope="module")
def setup(tmp_path_factory, farm_store):  # one coordinator per store
    tmp = tmp_path_factory.mktemp("rejections")
    farm = Farm(tmp, lease=60, max_body=256 * 1024)
    farm.start()
    try:
        keys = {n: farm.keygen(n) for n in ("x", "y")}
        tokens = {n: enrol(farm, n, keys[n])[0] for n in keys}
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"]})
        jobs = []
        for _ in range(2):
            status, job = farm.request("POST", "/api/v1/claim", {"wait_s": 2}, token=tokens["x"])
            assert status == 200, job
            jobs.append(job)
        yield farm, keys, tokens, jobs, tmp
    finally:
        farm.close()


def files_for(job):
    return {f"{job['cases'][0]}/receipt.json": RECEIPT}


def bundle(job, key, tmp, files=None, machine="x", **kw):
    files = files if files is not None else files_for(job)
    st = statement(job, machine, files, **kw)
    return sign_envelope(key, json.dumps(st).encode(), tmp), files


def upload(farm, job, body, token):
    return farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", body, token=token)


def assert_nothing_filed(farm, jobs):
    assert farm.filed() == []
    assert farm.blobs() == farm.source_blobs()   # no file of a refused bundle was stored
    for job in jobs:
        view = farm.run_view(job["run"])
        [j] = [v for v in view["jobs"] if v["job"] == job["job"]]
        assert j["state"] == "running", j


def rejected(status, answer, code, words):
    assert status == code, (status, answer)
    assert isinstance(answer, dict) and words in answer["error"], answer


def test_tampered_payload(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    st = json.loads(base64.b64decode(env["payload"]))
    st["predicate"]["cases"][0]["exit_status"] = 1
    env["payload"] = base64.b64encode(json.dumps(st).encode()).decode()
    rejected(*upload(farm, jobs[0], upload_body(env, files), tokens["x"]), 422, "signature")
    assert_nothing_filed(farm, jobs)


def test_swapped_signature(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    other, _ = bundle(jobs[1], keys["x"], tmp)
    env["signatures"] = other["signatures"]
    rejected(*upload(farm, jobs[0], upload_body(env, files), tokens["x"]), 422, "signature")
    assert_nothing_filed(farm, jobs)


def test_signed_by_another_agents_key(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["y"], tmp)
    rejected(*upload(farm, jobs[0], upload_body(env, files), tokens["x"]), 403, "another key")
    assert_nothing_filed(farm, jobs)


def test_subject_digest_does_not_match_its_file(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    changed = {n: b + b" " for n, b in files.items()}
    rejected(*upload(farm, jobs[0], upload_body(env, changed), tokens["x"]), 422, "sha256")
    assert_nothing_filed(farm, jobs)


def test_file_that_is_not_a_subject(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    extra = dict(files, **{"smuggled.bin": b"\x00"})
    rejected(*upload(farm, jobs[0], upload_body(env, extra), tokens["x"]), 422, "not a subject")
    assert_nothing_filed(farm, jobs)


def test_predicate_contradicting_its_receipt(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp, unordered=True)
    rejected(*upload(farm, jobs[0], upload_body(env, files), tokens["x"]), 422, "receipt says")
    assert_nothing_filed(farm, jobs)


def test_unsafe_subject_path(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp, files={"../../escape.json": b"{}"})
    status, answer = upload(farm, jobs[0], upload_body(env, {"../../escape.json": b"{}"}),
                            tokens["x"])
    rejected(status, answer, 422, "safe relative path")
    assert_nothing_filed(farm, jobs)


def test_reserved_file_names(setup):
    farm, keys, tokens, jobs, tmp = setup
    files = {"agent.pub.pem": b"-----BEGIN PUBLIC KEY----- forged"}
    env, _ = bundle(jobs[0], keys["x"], tmp, files=files)
    rejected(*upload(farm, jobs[0], upload_body(env, files), tokens["x"]), 422, "reserved")
    assert_nothing_filed(farm, jobs)


def test_bundle_replayed_onto_another_job(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    rejected(*upload(farm, jobs[1], upload_body(env, files), tokens["x"]), 409, "replayed")
    assert_nothing_filed(farm, jobs)


def test_statement_naming_another_machine(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp, machine="y")
    rejected(*upload(farm, jobs[0], upload_body(env, files), tokens["x"]), 409, "machine")
    assert_nothing_filed(farm, jobs)


@pytest.mark.parametrize("raw, words", [
    (b"{not json", "not valid JSON"),
    (b"[1, 2]", "JSON object"),
    (b'{"envelope": "x", "files": {}}', "envelope"),
    (b'{"envelope": {}, "files": {"a": 5}}', "base64"),
    (b'{"envelope": {"payload": 1}, "files": {}}', "DSSE"),
])
def test_malformed_bodies(setup, raw, words):
    farm, keys, tokens, jobs, tmp = setup
    status, answer = farm.request("POST", f"/api/v1/jobs/{jobs[0]['job']}/bundle", raw=raw,
                                  token=tokens["x"])
    rejected(status, answer, 400, words)
    assert_nothing_filed(farm, jobs)


def test_oversized_body(setup):
    farm, keys, tokens, jobs, tmp = setup
    raw = b'{"envelope": "' + b"A" * (300 * 1024) + b'"}'
    status, answer = farm.request("POST", f"/api/v1/jobs/{jobs[0]['job']}/bundle", raw=raw,
                                  token=tokens["x"])
    rejected(status, answer, 413, "max_body_bytes")
    assert_nothing_filed(farm, jobs)


@pytest.mark.parametrize("token", [None, "0" * 64, ENROL, ADMIN])
def test_unenrolled_or_wrong_tokens_get_401(setup, token):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    status, answer = upload(farm, jobs[0], upload_body(env, files), token)
    assert status == 401, answer
    for method, path in (("POST", "/api/v1/claim"), ("POST", f"/api/v1/jobs/{jobs[0]['job']}/heartbeat")):
        assert farm.request(method, path, {}, token=token)[0] == 401
    assert_nothing_filed(farm, jobs)


def test_admin_routes_need_the_admin_token(setup):
    farm, keys, tokens, jobs, tmp = setup
    for token in (None, tokens["x"], ENROL):
        assert farm.request("GET", "/api/v1/status", token=token)[0] == 401
        assert farm.request("POST", "/api/v1/runs", {}, token=token)[0] == 401
    status, _ = farm.request("POST", "/api/v1/agents/enrol", {"name": "z"}, token="wrong")
    assert status == 401


def test_unknown_routes_and_bad_ids(setup):
    farm, keys, tokens, jobs, tmp = setup
    rejected(*farm.request("GET", "/api/v1/nothing"), 404, "no route")
    rejected(*farm.request("DELETE", "/api/v1/status"), 405, "not allowed")
    rejected(*farm.request("GET", "/api/v1/runs/abc"), 400, "positive integer")
    rejected(*farm.request("GET", "/api/v1/runs/999"), 404, "no run")
    rejected(*farm.request("POST", "/api/v1/jobs/999/bundle", {"envelope": {}, "files": {}},
                           token=tokens["x"]), 404, "no job")


def test_bad_runs_and_blobs(setup):
    farm, keys, tokens, jobs, tmp = setup
    rejected(*farm.request("PUT", "/api/v1/blobs/" + "0" * 64, raw=b"data"), 422, "sha256")
    rejected(*farm.request("PUT", "/api/v1/blobs/xyz", raw=b"data"), 400, "hex")
    src = farm.run_view(jobs[0]["run"])["source_sha"]
    rejected(*farm.request("POST", "/api/v1/runs", {"source": "1" * 64, "cases": ["a.cairn"],
                                                     "matrix": {}}), 422, "not been uploaded")
    rejected(*farm.request("POST", "/api/v1/runs", {"source": src, "cases": ["../x.cairn"],
                                                     "matrix": {}}), 400, "relative paths")
    rejected(*farm.request("POST", "/api/v1/runs", {"source": src, "cases": ["a.cairn"],
                                                     "matrix": {"compilers": ["icc"]}}), 400, "gcc or clang")
    rejected(*farm.request("POST", "/api/v1/runs", {"source": src, "cases": ["a.cairn"],
                                                     "matrix": {"compilers": "gcc"}}), 400, "array")
    status, st = farm.request("GET", "/api/v1/status")
    assert len(st["runs"]) == 1          # none of those made a run


def test_good_upload_is_filed_once_and_a_repeat_is_idempotent(setup):
    farm, keys, tokens, jobs, tmp = setup
    env, files = bundle(jobs[0], keys["x"], tmp)
    body = upload_body(env, files)
    status, answer = upload(farm, jobs[0], body, tokens["x"])
    assert status == 200 and answer["filed"] is True, answer
    assert len(farm.filed()) == 1
    status, again = upload(farm, jobs[0], body, tokens["x"])
    assert status == 200 and again["filed"] is False and again["duplicate"] is True
    assert len(farm.filed()) == 1
    # A different bundle for the filed job is a conflict; so is a heartbeat for it.
    other, files2 = bundle(jobs[0], keys["x"], tmp, files={
        f"{jobs[0]['cases'][0]}/receipt.json": RECEIPT + b" "})
    rejected(*upload(farm, jobs[0], upload_body(other, files2), tokens["x"]), 409, "already")
    assert farm.request("POST", f"/api/v1/jobs/{jobs[0]['job']}/heartbeat", {},
                        token=tokens["x"])[0] == 409
    assert len(farm.filed()) == 1
    # The other agent may not file x's job.
    env_y, files_y = bundle(jobs[1], keys["y"], tmp, machine="y")
    rejected(*upload(farm, jobs[1], upload_body(env_y, files_y), tokens["y"]), 409, "not leased")


def test_revoked_agent_gets_401_and_cannot_enrol_again(setup):
    farm, keys, tokens, jobs, tmp = setup
    status, st = farm.request("GET", "/api/v1/status")
    y = [a for a in st["agents"] if a["name"] == "y"][0]
    assert farm.request("POST", f"/api/v1/agents/{int(y['id'])}/revoke")[0] == 200
    assert farm.request("POST", "/api/v1/claim", {}, token=tokens["y"])[0] == 401
    status, answer = enrol_request(farm, "y", keys["y"], caps={"compilers": {}})
    rejected(status, answer, 403, "revoked")


def test_rejections_are_logged(setup):
    farm, *_ = setup
    log = (farm.tmp / "farm.log").read_text()
    assert "-> 403" in log and "-> 422" in log and "-> 413" in log and "-> 401" in log
