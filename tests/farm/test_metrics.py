"""GET /metrics (docs/farm.md, "CI and monitoring"): the Prometheus text format, checked
by `promtool check metrics` (Debian's prometheus package), its counts held to what a
run did, open or behind the admin token as the config says, and scraped by a real
Prometheus on loopback while a run goes on, one series queried back from it."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, ENROL, FARM, Farm, connect_from, enrol, wait_for  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402
from test_ci import FAIL, PASS, tree  # noqa: E402

PROMTOOL, PROMETHEUS = shutil.which("promtool"), shutil.which("prometheus")
needs_promtool = pytest.mark.skipif(
    PROMTOOL is None, reason="promtool missing: install Debian's prometheus package "
                             "(scripts/deps.sh does)")


def metrics(farm, token=None):
    status, body = farm.request("GET", "/metrics", token=token)
    return status, body


def series(text):
    """{'name{labels}': value} of the exposition text."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def promtool_check(text):
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr + text


@needs_promtool
def test_metrics_pass_promtool_and_count_what_a_run_did(tmp_path):
    source = tree(tmp_path, "src", {"pass.cairn": PASS, "fail.cairn": FAIL})
    with Farm(tmp_path, lease=15) as farm:
        status, body = metrics(farm)
        assert status == 200
        promtool_check(body.decode())          # an empty farm's page too
        farm.agent("metrics-box", idle=AGENT_IDLE_S)
        run = farm.submit(source, {"compilers": ["gcc", "clang"]})
        farm.wait_run(run, 90)
        farm.request("GET", "/no/such/route")
        status, body = metrics(farm)
        text = body.decode()
        promtool_check(text)
        s = series(text)
        assert s['cairn_farm_jobs{state="done"}'] == 2
        assert s['cairn_farm_jobs{state="queued"}'] == 0 and s["cairn_farm_queue_depth"] == 0
        assert s['cairn_farm_runs{state="finished"}'] == 1
        assert s['cairn_farm_claims_total{result="job"}'] == 2
        assert s['cairn_farm_filings_total{result="filed"}'] == 2
        assert s["cairn_farm_bundles"] == 2 and s["cairn_farm_source_archives"] == 1
        assert s['cairn_farm_agents{state="alive"}'] == 1
        assert s['cairn_farm_agents{state="revoked"}'] == 0
        assert s['cairn_farm_http_requests_total{route="POST /api/v1/jobs/*/bundle",status="200"}'] == 2
        assert s['cairn_farm_http_requests_total{route="none",status="404"}'] == 1
        count = s["cairn_farm_claim_duration_seconds_count"]
        assert count >= 2 and s['cairn_farm_claim_duration_seconds_bucket{le="+Inf"}'] == count
        assert s["cairn_farm_blobs_written_total"] >= 1
        # A revoked agent moves from alive to revoked.
        agent = farm.request("GET", "/api/v1/status")[1]["agents"][0]["id"]
        assert farm.request("POST", f"/api/v1/agents/{agent}/revoke", body={})[0] == 200
        s = series(metrics(farm)[1].decode())
        assert s['cairn_farm_agents{state="revoked"}'] == 1
        assert s['cairn_farm_agents{state="alive"}'] == 0


def test_metrics_behind_the_admin_token_when_the_config_says_so(tmp_path):
    """With "metrics": "admin" only the admin token reads /metrics: an anonymous client, a
    wrong token, the enrolment token and an enrolled agent's token are all refused (the
    page names every agent, run and route of the farm)."""
    with Farm(tmp_path) as farm:
        config = json.loads(farm.config.read_text())
        farm.stop_server()
        farm.config.write_text(json.dumps(dict(config, metrics="admin")))
        farm.start()
        agent_token, _ = enrol(farm, "metrics-agent", farm.keygen("metrics-agent"))
        assert farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=agent_token)[0] == 204
        for token in (None, "wrong-token-0123456789", ENROL, agent_token):
            status, body = metrics(farm, token=token)
            assert status in (401, 403) and b"cairn_farm" not in repr(body).encode(), \
                (token, status, body)
        status, body = metrics(farm, token=ADMIN)
        assert status == 200 and b"cairn_farm_jobs" in body
    for key, value in (("metrics", "closed"), ("log_format", "xml"), ("metrics", 1)):
        bad = tmp_path / f"bad-{key}.json"
        bad.write_text(json.dumps(dict(config, **{key: value})))
        r = subprocess.run([FARM, "serve", "--check-config", "--state", tmp_path / "x",
                            "--config", bad], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and f'"{key}" must be' in r.stderr, (key, r.stderr)


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def query(port, expr):
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return json.loads(answer.read())["data"]["result"]
    except OSError:
        return []


@pytest.mark.skipif(PROMETHEUS is None,
                    reason="prometheus missing: install Debian's prometheus package "
                           "(scripts/deps.sh does)")
def test_a_real_prometheus_scrapes_a_coordinator_under_load(tmp_path):
    source = tree(tmp_path, "src", {f"c{i}.cairn": PASS for i in range(4)})
    with Farm(tmp_path, lease=15) as farm:
        port = free_port()
        target = urllib.parse.urlparse(farm.url).netloc
        (tmp_path / "prometheus.yml").write_text(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            "scrape_configs:\n"
            f"  - job_name: cairn-farm\n    static_configs: [{{targets: ['{target}']}}]\n")
        prom = subprocess.Popen(
            [PROMETHEUS, f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
        try:
            for _ in range(2):     # scraped while agents claim, run and file
                farm.agent(f"load-{_}", idle=AGENT_IDLE_S)
            runs = [farm.submit(source, {"compilers": ["gcc", "clang"], "repeat": 3})
                    for _ in range(2)]
            for run in runs:
                farm.wait_run(run, 120)
            want = 2 * 2 * 3   # runs x compilers x repeats, each one bundle

            def scraped():
                got = query(port, 'cairn_farm_jobs{job="cairn-farm",state="done"}')
                return got and float(got[0]["value"][1]) == want
            wait_for(scraped, 90, "Prometheus to scrape every filed job")
            up = query(port, 'up{job="cairn-farm"}')
            assert up and up[0]["value"][1] == "1", up
        finally:
            prom.terminate()
            try:
                prom.wait(20)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()


def test_json_logs_are_one_object_a_line_with_the_fields(tmp_path):
    source = tree(tmp_path, "src", {"pass.cairn": PASS})
    with Farm(tmp_path, lease=15) as farm:
        config = json.loads(farm.config.read_text())
        farm.stop_server()
        farm.config.write_text(json.dumps(dict(config, log_format="json")))
        farm.start()
        farm.agent("log-box", idle=AGENT_IDLE_S)
        run = farm.submit(source, {"compilers": ["gcc"]})
        farm.wait_run(run, 90)
        job = farm.run_view(run)["jobs"][0]["job"]
        # Refusals are logged: a wrong token on the job's heartbeat, a bad run id.
        farm.request("POST", f"/api/v1/jobs/{job}/heartbeat", body={}, token="wrong" * 5)
        farm.request("GET", "/api/v1/runs/nope")
        farm.request("GET", '/no/"such"/route')
    text = (tmp_path / "farm.log").read_text()
    lines = [l for l in text.splitlines() if l.startswith("{")]
    records = [json.loads(l) for l in lines]     # every line one object
    events = {r["event"] for r in records}
    assert {"listening", "enrolled", "run_created", "request"} <= events, events
    for r in records:
        assert set(r) >= {"time", "level", "event", "message"}, r
        assert r["time"].endswith("Z") and r["level"] in ("info", "warn", "error"), r
    refused = [r for r in records if r["event"] == "request" and r["status"] == 401]
    assert refused and refused[0]["job"] == job, refused
    assert refused[0]["route"] == "POST /api/v1/jobs/*/heartbeat" and refused[0]["level"] == "warn"
    assert refused[0]["duration_ms"] >= 0
    created = [r for r in records if r["event"] == "run_created"]
    assert created[0]["run"] == run
    assert any(r.get("status") == 404 and "such" in r["message"] for r in records)
    # After the restart into JSON, no line of ours is text: those came before it.
    after = text[text.index('{"time"'):]
    assert not [l for l in after.splitlines() if l.startswith("farm:")], after


def test_anonymous_caps_closures_are_counted(tmp_path):
    """Over max_anonymous_per_address (1 here) each new connection from 127.0.0.1 closes
    the oldest anonymous one, the scrape's own included: the counter counts them."""
    with Farm(tmp_path) as farm:
        config = json.loads(farm.config.read_text())
        farm.stop_server()
        farm.config.write_text(json.dumps(dict(config, max_anonymous_per_address=1)))
        farm.start()
        idle = [connect_from(farm.port) for _ in range(3)]   # silent: anonymous, open

        def closed():
            status, body = metrics(farm)
            s = series(body.decode()) if status == 200 else {}
            return s.get('cairn_farm_refused_total{bound="max_anonymous_per_address"}', 0) >= 2
        try:
            wait_for(closed, 30, "the per-address cap's closures to be counted")
        finally:
            for sock in idle:
                sock.close()
