"""The API's protocol in one place (farm/proto/api.h): the error-code table, the router
and docs/farm.md agree, every refusal carries a code whose status is the one the table
gives it, and the parsers hold each field to its type and bound. The tables are read
from the sources with regular expressions, independently of the C code under test."""
import hashlib
import os
import pathlib
import re
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, ENROL, Farm, c_table, enrol, enrol_request  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "farm.md").read_text()


def error_table():
    """{code: status} from the X-macro table PROTO_ERRORS in farm/proto/api.h."""
    text = (ROOT / "farm" / "proto" / "api.h").read_text()
    rows = re.findall(r'X\((\w+), "(\w+)", (\d{3}),', text)
    assert len(rows) >= 20, rows
    return {name: int(status) for _, name, status in rows}


def router_routes():
    """[(method, pattern)] from ROUTES in farm/serve/routes.c."""
    table = c_table("farm/serve/routes.c", "ROUTES")
    routes = re.findall(r'\{"([A-Z]+)", "([^"]+)", AUTH_\w+, \w+(?:, \w+)*\}', table)
    assert len(routes) >= 18, routes
    return routes


ERRORS = error_table()


def test_every_error_code_is_documented_with_its_status():
    documented = {m.group(1): int(m.group(2))
                  for m in re.finditer(r"^\| `([a-z_]+)` \| (\d{3}) \|", DOC, re.M)}
    assert documented == ERRORS


def test_every_route_is_documented_and_every_documented_route_served():
    documented = set(re.findall(r"^\| `(GET|POST|PUT|DELETE) (/[^`]*)` \|", DOC, re.M))
    served = set()
    for method, pattern in router_routes():
        # docs name the variable segments in capitals: ID, SHA256, CASE, evidence/PATH
        regex = re.escape(pattern).replace(r"\*\*", r"[A-Za-z0-9_/]+").replace(r"\*", "[A-Z0-9]+")
        hits = {d for d in documented if d[0] == method and re.fullmatch(regex, d[1])}
        assert hits, f"{method} {pattern} is not in docs/farm.md's route table"
        served |= hits
    assert documented == served, documented - served


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("protocol")
    with Farm(tmp, lease=60, max_body=64 * 1024, claim_wait=1) as f:
        key = f.keygen("p")
        token, _ = enrol(f, "p", key)
        f.agent_token, f.agent_key = token, key
        yield f


def refused(answer_and_status, code):
    status, answer = answer_and_status
    assert isinstance(answer, dict), (status, answer)
    assert answer["code"] == code and status == ERRORS[code], (status, answer)
    assert answer["status"] == status and isinstance(answer["error"], str) and answer["error"]


def test_routing_and_authentication_refusals(farm):
    refused(farm.request("GET", "/api/v1/nothing"), "no_route")
    refused(farm.request("DELETE", "/api/v1/status"), "method_not_allowed")
    refused(farm.request("GET", "/api/v1/status", token=None), "no_token")
    refused(farm.request("GET", "/api/v1/status", token=ENROL), "wrong_token")
    refused(farm.request("POST", "/api/v1/agents/challenge", token=ADMIN), "wrong_token")
    refused(farm.request("POST", "/api/v1/claim", {}, token="not-a-token"), "unknown_agent")
    refused(farm.request("GET", "/api/v1/runs/0"), "bad_id")
    refused(farm.request("GET", "/api/v1/runs/12x"), "bad_id")
    refused(farm.request("GET", "/api/v1/runs/999999"), "not_found")
    refused(farm.request("POST", "/api/v1/agents/999999/revoke"), "not_found")
    refused(farm.request("POST", "/api/v1/runs", raw=b"x" * (65 * 1024)), "too_large")


@pytest.mark.parametrize("path,body,code", [
    ("/api/v1/claim", b"{", "bad_json"),
    ("/api/v1/claim", b"[1]", "bad_json"),
    ("/api/v1/claim", b'{"wait_s": "5"}', "bad_field"),
    ("/api/v1/claim", b'{"wait_s": 1e400}', "bad_field"),
    ("/api/v1/jobs/1/heartbeat", b'{"progress": 5}', "bad_field"),
    ("/api/v1/jobs/1/heartbeat", b'{"progress": "' + b"p" * 4097 + b'"}', "bad_field"),
    ("/api/v1/jobs/1/heartbeat", b'{"progress": "a\\u0000b"}', "bad_json"),
    ("/api/v1/jobs/1/bundle", b'{"envelope": [], "files": {}}', "bad_field"),
    ("/api/v1/jobs/1/bundle", b'{"envelope": {}, "files": {"a": "x"}}', "bad_field"),
])
def test_agent_bodies_are_held_to_their_types_and_bounds(farm, path, body, code):
    refused(farm.request("POST", path, raw=body, token=farm.agent_token), code)


def test_admin_bodies_are_held_to_their_types_and_bounds(farm):
    sha = hashlib.sha256(b"tree").hexdigest()
    assert farm.request("PUT", f"/api/v1/blobs/{sha}", raw=b"tree")[0] == 200
    refused(farm.request("PUT", f"/api/v1/blobs/{sha}", raw=b"other"), "digest_mismatch")
    refused(farm.request("PUT", "/api/v1/blobs/ABC", raw=b"x"), "bad_id")
    good = {"source": sha, "matrix": {"compilers": ["gcc"]}, "cases": ["a.cairn"]}
    for bad in ({"source": "abc"}, {"cases": []}, {"cases": ["../a.cairn"]}, {"cases": [1]},
                {"cases": ["a" * 1025]}, {"matrix": {"compilers": ["nope"]}}):
        refused(farm.request("POST", "/api/v1/runs", {**good, **bad}), "bad_field")
    refused(farm.request("POST", "/api/v1/runs", {**good, "source": "0" * 64}), "missing_blob")
    status, created = farm.request("POST", "/api/v1/runs", good)
    assert status == 201 and created == {"run": created["run"], "jobs": 1}, created


def test_enrolment_refusals(farm):
    key = farm.keygen("q")
    refused(enrol_request(farm, "q" * 129, key), "bad_field")
    refused(enrol_request(farm, "q", key, proof=False), "bad_field")
    refused(enrol_request(farm, "q", key, proof_name="other"), "proof_refused")
    refused(enrol_request(farm, "q", key, nonce="0" * 64), "proof_refused")
    refused(enrol_request(farm, "q", key, caps={"gpus": []}), "bad_field")
    token, agent = enrol(farm, "q", key)
    assert farm.request("POST", f"/api/v1/agents/{agent}/revoke")[1] == {"revoked": True}
    refused(farm.request("POST", "/api/v1/claim", {}, token=token), "unknown_agent")
    refused(enrol_request(farm, "q", key), "key_revoked")


def test_the_answers_are_the_documented_shapes(farm):
    assert farm.request("GET", "/healthz", token=None) == (200, {"ok": True})
    status, ch = farm.request("POST", "/api/v1/agents/challenge", token=ENROL)
    assert status == 200 and sorted(ch) == ["expires_in_s", "nonce", "proof_type"]
    assert re.fullmatch(r"[0-9a-f]{64}", ch["nonce"])
    status, lease = farm.request("POST", "/api/v1/jobs/999999/heartbeat", {},
                                 token=farm.agent_token)
    refused((status, lease), "lease_lost")
