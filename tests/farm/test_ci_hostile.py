"""`cairn-farm submit --wait --junit` against a hostile coordinator (issue 39): a server
that takes the upload and the run like a real one, then answers the run's view, its
results or its report with garbage (not JSON, JSON of the wrong shape, fields of the
wrong type, an answer cut short). The client must say what was wrong, exit 3 (the
coordinator's fault, docs/farm.md "CI and monitoring"), and write no JUnit file: a CI
system reads a file that is there as the run's verdict. The good answers are recorded
first from a real coordinator's run, so each case changes one thing only."""
import copy
import hashlib
import http.server
import json
import os
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, FARM, Farm  # noqa: E402
from test_ci import BOTH, FAIL, PASS, submit_wait, tree, validate  # noqa: E402

import subprocess  # noqa: E402

PATHS = {"view": "/api/v1/runs/1", "results": "/api/v1/runs/1/results",
         "report": "/api/v1/runs/1/report"}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The answers of a real coordinator for a finished run of two cells, one case
    passing and one failing: {"view", "results", "report"} and the source tree."""
    tmp = tmp_path_factory.mktemp("recorded")
    source = tree(tmp, "src", {"pass.cairn": PASS, "fail.cairn": FAIL})
    with Farm(tmp, lease=15) as farm:
        farm.agent("ci-box", idle=30)
        r = submit_wait(farm, source, BOTH, "--junit", tmp / "real.xml")
        assert r.returncode == 1, r.stdout + r.stderr
        validate(tmp / "real.xml")
        answers = {}
        for name, path in PATHS.items():
            status, answers[name] = farm.request("GET", path)
            assert status == 200, (path, answers[name])
    return answers, source


class Hostile(http.server.BaseHTTPRequestHandler):
    """Answers the upload and the run's creation as a coordinator does, and the run's
    GETs from self.server.answers: a JSON value, or bytes sent as they are."""
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, length=None):
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw) if length is None else length))
        self.end_headers()
        self.wfile.write(raw)
        self.wfile.flush()

    def do_PUT(self):
        data = self.rfile.read(int(self.headers["Content-Length"]))
        self.send(200, {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)})

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send(201, {"run": 1, "jobs": 2})

    def do_GET(self):
        for name, path in PATHS.items():
            if self.path == path:
                answer = self.server.answers[name]
                if isinstance(answer, tuple):      # (bytes, declared length): cut short
                    self.send(200, answer[0], length=answer[1])
                    self.close_connection = True
                else:
                    self.send(200, answer)
                return
        self.send(404, {"error": {"code": "not_found", "message": self.path}})


def set_in(value, keys, new):
    """VALUE with the item at KEYS (a list of keys and indexes) replaced by NEW."""
    value = copy.deepcopy(value)
    at = value
    for k in keys[:-1]:
        at = at[k]
    at[keys[-1]] = new
    return value


# (which answer, how it is made from the good one); each id says what is wrong.
GARBAGE = {
    "view-not-json": ("view", lambda v: b"<html>502 Bad Gateway</html>"),
    "view-a-list": ("view", lambda v: []),
    "view-jobs-a-number": ("view", lambda v: set_in(v, ["jobs"], 7)),
    "view-job-state-a-number": ("view", lambda v: set_in(v, ["jobs", 0, "state"], 42)),
    "view-jobs-not-objects": ("view", lambda v: set_in(v, ["jobs"], ["done", "done"])),
    "view-cut-short": ("view", lambda v: (json.dumps(v).encode()[:40],
                                          len(json.dumps(v).encode()))),
    "results-not-json": ("results", lambda v: b"\x00\xff garbage"),
    "results-an-object": ("results", lambda v: {"cells": "x"}),
    "results-rows-not-objects": ("results", lambda v: [1, "two", None]),
    "results-predicate-a-string": ("results", lambda v: set_in(v, [0, "predicate"], "x")),
    "results-cases-a-number": ("results", lambda v: set_in(v, [0, "predicate", "cases"], 3)),
    "report-not-json": ("report", lambda v: b"{\"columns\": ["),
    "report-a-string": ("report", lambda v: "report"),
    "report-columns-not-strings": ("report", lambda v: set_in(v, ["columns"], [1, {}, None])),
    "report-cases-an-object": ("report", lambda v: set_in(v, ["cases"], {"a": 1})),
    "report-case-name-a-number": ("report", lambda v: set_in(v, ["cases", 0, "case"], 5)),
    "report-cells-a-list": ("report", lambda v: set_in(v, ["cases", 0, "cells"], [1, 2])),
    "report-verdict-unknown": ("report", lambda v: set_in(v, ["cases", 0, "verdict"], "fine")),
    "report-cut-short": ("report", lambda v: (json.dumps(v).encode()[:100],
                                              len(json.dumps(v).encode()))),
}


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_a_hostile_coordinator_gives_a_clear_error_and_no_junit(tmp_path, recorded, case):
    answers, source = recorded
    which, make = GARBAGE[case]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.answers = dict(answers, **{which: make(answers[which])})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        matrix = tmp_path / "matrix.json"
        matrix.write_text(json.dumps(BOTH))
        junit = tmp_path / "out.xml"
        r = subprocess.run([FARM, "submit", "--matrix", matrix, "--wait", "--junit", junit,
                            "--timeout", "600", source, "--coordinator", url,
                            "--token", ADMIN], capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    assert r.returncode == 3, (case, r.returncode, r.stdout, r.stderr)
    assert "cairn-farm submit: " in r.stderr, (case, r.stderr)
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
    assert not junit.exists(), (case, junit.read_text()[:2000])


def test_the_hostile_server_passes_the_good_answers_through(tmp_path, recorded):
    """The same server with the recorded answers unchanged: the failing case's verdict
    (exit 1) and a JUnit file that validates, so each garbage case fails for its own
    change and not for the fake."""
    answers, source = recorded
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    server.answers = answers
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        matrix = tmp_path / "matrix.json"
        matrix.write_text(json.dumps(BOTH))
        r = subprocess.run([FARM, "submit", "--matrix", matrix, "--wait", "--junit",
                            tmp_path / "out.xml", source, "--coordinator",
                            f"http://127.0.0.1:{server.server_address[1]}", "--token", ADMIN],
                           capture_output=True, text=True, timeout=300)
    finally:
        server.shutdown()
        server.server_close()
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    validate(tmp_path / "out.xml")
