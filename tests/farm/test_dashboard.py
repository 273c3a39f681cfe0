"""The dashboard, over HTTP and in a real browser. Over HTTP: the seeded runs show every
verdict in the run's matrix, every link resolves, agent-sent text is escaped, the plot is
self-contained SVG, a case's history says when it last changed, and the machine list
shows the GPU and when the agent was last heard from. In Debian's headless Chromium,
driven over the DevTools protocol (python3-websocket): every page loads without a console
error (a blocked fetch or script, a CSP violation, a bad SVG would be one), the run's
matrix shows the seeded verdicts in their colours, every link resolves, and a screenshot
of the run page is kept under build/test-artifacts/ (not committed)."""
import base64
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from dashlib import EXPECTED, Page, seeded_farm  # noqa: E402

try:
    import websocket
except ImportError:       # the browser tests say so below
    websocket = None
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None or websocket is None,
    reason="chromium or python3-websocket is not installed (scripts/deps.sh installs both)")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "build" / "test-artifacts"


@pytest.fixture(scope="module")
def farm(tmp_path_factory, farm_store):  # one coordinator per store
    farm, run1, run2 = seeded_farm(tmp_path_factory.mktemp("dash"))
    farm.runs = (run1, run2)
    yield farm
    farm.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    b = Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def get(farm, path):
    status, body = farm.request("GET", path, token=None)
    return status, body if isinstance(body, bytes) else str(body).encode()


def test_the_run_matrix_shows_each_seeded_verdict(farm):
    status, body = get(farm, f"/runs/{farm.runs[0]}")
    assert status == 200
    page = Page(body.decode())
    assert page.verdicts == EXPECTED
    assert page.scripts == 0
    text = body.decode()
    assert "within-bound" in text and "0.4" in text and "1.75" in text
    assert "the case observes nothing" in text


def test_agent_text_is_escaped(farm):
    _, body = get(farm, f"/runs/{farm.runs[0]}")
    text = body.decode()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>bold</b>" not in text and "&lt;b&gt;bold&lt;/b&gt; &amp; &quot;quoted&quot;" in text


def test_every_link_resolves(farm):
    for path in ("/", f"/runs/{farm.runs[0]}", "/history/examples/within.cairn"):
        status, body = get(farm, path)
        assert status == 200, path
        page = Page(body.decode())
        assert page.links, path
        for link in page.links:
            if link.startswith("#"):
                assert link[1:] in page.ids, (path, link)
                continue
            assert link.startswith("/"), link       # nothing leaves the coordinator
            status, _ = get(farm, link.split("#")[0])
            assert status == 200, (path, link)


def test_cells_link_their_receipt_log_and_bundle(farm):
    _, body = get(farm, f"/runs/{farm.runs[0]}")
    links = Page(body.decode()).links
    receipts = [link for link in links if link.endswith("/examples/fixed.cairn/receipt.json")]
    assert len(receipts) == 2
    status, receipt = farm.request("GET", receipts[0], token=None)
    assert status == 200 and receipt["source"]["path"].endswith("examples/fixed.cairn")
    assert sum(link.endswith("/bundle.dsse.json") for link in links) == 2 * len(EXPECTED)
    assert any(link.endswith("/examples/quiet.cairn/run.log") for link in links)


def test_the_plot_is_self_contained_svg(farm):
    status, body = get(farm, f"/runs/{farm.runs[0]}/plot.svg")
    assert status == 200
    root = ET.fromstring(body)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = body.decode()
    assert "<script" not in text and "href" not in text and "@import" not in text
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any("within.cairn" in t and "0.4" in t for t in titles)
    assert any("beyond.cairn" in t and "1.75" in t for t in titles)


def test_history_says_when_a_case_last_changed(farm):
    run1, run2 = farm.runs
    status, body = get(farm, "/history/examples/within.cairn")
    text = body.decode()
    assert status == 200 and f"/runs/{run1}" in text and f"/runs/{run2}" in text
    assert f'Last changed in <a href="/runs/{run2}">run {run2}</a>' in text
    _, body = get(farm, "/history/examples/fixed.cairn")
    assert f'Last changed in <a href="/runs/{run2}">' in body.decode()   # one cell fewer


def test_machines_show_gpu_and_last_heard(farm):
    _, body = get(farm, "/")
    text = body.decode()
    assert "gpu-box" in text and "NVIDIA H200" in text and "compute capability 9.0" in text
    assert "CUDA 12.4" in text and " s ago)" in text
    assert f'href="/runs/{farm.runs[1]}"' in text


@pytest.mark.parametrize("path", ["/files/../state.db", "/files/farm.db", "/files/evidence/../x",
                                  "/runs/0", "/runs/abc", "/runs/999/plot.svg"])
def test_outside_paths_and_unknown_runs_are_404(farm, path):
    status, _ = get(farm, path)
    assert status == 404


# --- in Chromium ---------------------------------------------------------------------
class Browser:
    """One headless Chromium and one page, spoken to over the DevTools protocol."""

    def __init__(self, tmp):
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run", "--remote-debugging-port=0",
             f"--user-data-dir={tmp}", "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        end = time.time() + 60
        while port is None and time.time() < end:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = m and m.group(1)
        assert port, "chromium did not start its DevTools endpoint"
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page = [p for p in pages if p["type"] == "page"][0]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=60)
        self.next_id, self.events = 0, []
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                assert "error" not in msg, msg
                return msg["result"]
            self.events.append(msg)

    def load(self, url):
        """Navigates and waits for the load event; returns the errors logged meanwhile."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        end = time.time() + 30
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.time() < end, f"{url} did not load"
            self.events.append(json.loads(self.ws.recv()))
        time.sleep(0.3)                       # late console messages
        self.call("Runtime.evaluate", expression="1")
        return [e for e in self.events if is_error(e)]

    def eval(self, js):
        r = self.call("Runtime.evaluate", expression=js, returnByValue=True)
        assert "exceptionDetails" not in r, r
        return r["result"]["value"]

    def close(self):
        self.ws.close()
        self.proc.terminate()
        self.proc.wait(20)


def is_error(event):
    m, p = event.get("method"), event.get("params", {})
    return (m == "Runtime.exceptionThrown" or
            (m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert")) or
            (m == "Log.entryAdded" and p["entry"]["level"] == "error"))


@needs_chromium
def test_pages_load_without_console_errors(farm, browser):
    run1 = farm.runs[0]
    for path in ("/", f"/runs/{run1}", f"/runs/{run1}/plot.svg", "/history/examples/within.cairn"):
        errors = browser.load(farm.url + path)
        assert errors == [], (path, errors)


@needs_chromium
def test_the_matrix_shows_the_seeded_verdicts_in_colour(farm, browser):
    run1 = farm.runs[0]
    assert browser.load(f"{farm.url}/runs/{run1}") == []
    rows = browser.eval("""Object.fromEntries([...document.querySelectorAll('#matrix tr[data-case]')]
        .map(tr => { const td = tr.querySelector('td.verdict');
                     return [tr.dataset.case, [td.textContent, getComputedStyle(td).backgroundColor]]; }))""")
    assert {case: v[0] for case, v in rows.items()} == EXPECTED
    colours = {v[0]: v[1] for v in rows.values()}
    assert len(set(colours.values())) == 5, colours   # five verdicts, five colours
    assert browser.eval("document.querySelectorAll('svg circle, svg path').length") >= 3
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    (ARTIFACTS / "dashboard-run.png").write_bytes(base64.b64decode(shot["data"]))
    assert (ARTIFACTS / "dashboard-run.png").stat().st_size > 10000


@needs_chromium
def test_every_link_on_the_run_page_resolves(farm, browser):
    run1 = farm.runs[0]
    browser.load(f"{farm.url}/runs/{run1}")
    links = browser.eval("[...document.querySelectorAll('a')].map(a => a.href)")
    ids = set(browser.eval("[...document.querySelectorAll('[id]')].map(e => e.id)"))
    assert len(links) > 20
    for link in links:
        assert link.startswith(farm.url), link
        target, _, anchor = link.partition("#")
        if anchor and target == f"{farm.url}/runs/{run1}":
            assert anchor in ids, link
            continue
        with urllib.request.urlopen(target, timeout=30) as r:
            assert r.status == 200, link
            assert not anchor or f'id={anchor}' in r.read().decode(), link
