"""The dashboard in a real browser: Debian's headless Chromium driven over the DevTools
protocol (python3-websocket). Every page loads without a console error (a blocked
fetch or script, a CSP violation, a bad SVG would be one), the run's matrix shows the
seeded verdicts in their colours, every link resolves, and a screenshot of the run page
is kept as a test artifact under build/test-artifacts/ (not committed)."""
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

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from dashlib import EXPECTED, seeded_farm  # noqa: E402

websocket = pytest.importorskip("websocket", reason="python3-websocket is not installed "
                                                    "(scripts/deps.sh installs it)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed "
                                                         "(scripts/deps.sh installs it)")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "build" / "test-artifacts"


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


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    farm, run1, run2 = seeded_farm(tmp_path_factory.mktemp("browser-farm"))
    browser = Browser(tmp_path_factory.mktemp("chromium"))
    yield farm, run1, run2, browser
    browser.close()
    farm.close()


def test_pages_load_without_console_errors(site):
    farm, run1, _, browser = site
    for path in ("/", f"/runs/{run1}", f"/runs/{run1}/plot.svg", "/history/examples/within.cairn"):
        errors = browser.load(farm.url + path)
        assert errors == [], (path, errors)


def test_the_matrix_shows_the_seeded_verdicts_in_colour(site):
    farm, run1, _, browser = site
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


def test_every_link_on_the_run_page_resolves(site):
    farm, run1, _, browser = site
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
