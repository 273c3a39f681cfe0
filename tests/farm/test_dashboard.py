"""The dashboard, over HTTP and in a real browser. Over HTTP: the seeded runs show every
verdict in the run's matrix, every link resolves, agent-sent text is escaped, the plot is
self-contained SVG, a case's history says when it last changed, and the machine list
shows the GPU and when the agent was last heard from. Issue 28's pages and pieces: values and distances where cells differ, a case's cells side by
side, run and job times, submitter, commit and branch, the grid with flaky cases and its
filters, machine pages, badges, empty logs. In Debian's headless Chromium, driven over
the DevTools protocol (python3-websocket): every page loads without a console error (a
blocked fetch or script, a CSP violation, a bad SVG would be one), the run's matrix shows
the seeded verdicts in their colours, every link of every page resolves, and a
screenshot of each page is kept under build/test-artifacts/ (not committed; the session
lists them at its end)."""
import base64
import json
import math
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402
from dashlib import EXPECTED, Page, seeded_farm  # noqa: E402

try:
    import websocket
except ImportError:       # the browser fixture fails, naming it
    websocket = None
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = pathlib.Path(__file__).resolve().parents[2] / "build" / "test-artifacts"
# Every wait for the browser: a guard against hanging only (it starts and loads pages in
# seconds alone, and far slower on one loaded core).
HANG_S = 300


def keep_screenshot(browser, name):
    """A screenshot of the page the browser shows, kept as ARTIFACTS/NAME.png (listed at
    the end of the session by conftest.py)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = browser.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
    path = ARTIFACTS / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    assert path.stat().st_size > 5000
    farmlib.ARTIFACTS_KEPT.append(path)
    return path


@pytest.fixture(scope="module")
def farm(tmp_path_factory, farm_store):  # one coordinator per store
    farm, runs = seeded_farm(tmp_path_factory.mktemp("dash"))
    farm.runs = tuple(runs[:2])
    farm.values_run, farm.flaky_runs, farm.passing_run = runs[2], tuple(runs[3:5]), runs[5]
    farm.edited_run = runs[6]
    yield farm
    farm.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    # Not a skip: scripts/deps.sh (run by `make test`) installs both, and a browser test
    # that skips where they are missing would pass on a CI machine that checked nothing.
    if CHROMIUM is None or websocket is None:
        pytest.fail("the browser tests need chromium and python3-websocket: scripts/deps.sh"
                    " installs both")
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


# --- issue 28: values, times, who and what, the grid, machines, badges ----------------

def f64_ulp(a, b):
    """ULPs between two f64 values, by their bit patterns (an independent model of
    lib/obs.c's distance): the ordered integers of their bits, +0 and -0 one value."""
    def key(x):
        i = struct.unpack("<q", struct.pack("<d", x))[0]
        return i if i >= 0 else -(i & 0x7FFFFFFFFFFFFFFF)
    return abs(key(a) - key(b))


def expected_diff(a, b):
    """`cairn diff`'s words for how B differs from A (lists of floats), from the model."""
    differ = [i for i, (x, y) in enumerate(zip(a, b))
              if struct.pack("<d", x) != struct.pack("<d", y)]
    first = differ[0]
    dist = [None if math.isnan(a[i]) != math.isnan(b[i]) else f64_ulp(a[i], b[i]) for i in differ]
    text = f"{len(differ)} of {len(a)} differ; first [{first}]: {a[first]!r} vs {b[first]!r}, " \
           f"{dist[0]} ULP; "
    if None in dist:
        return text + f"largest: a NaN against a number at [{differ[dist.index(None)]}]"
    most = max(dist)
    return text + f"largest {most} ULP at [{differ[dist.index(most)]}]"


def text_of(body):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", body.decode()))


def test_where_cells_differ_the_values_and_ulp_distances_show(farm):
    """cases_values/wide.cairn: the device moves two of five f64 elements by 1 and 2 ULPs
    and turns one into a NaN. The case page and the run page say how many differ, the
    first with both values, its distance and the largest, as the model computes them;
    the host and emulated cells (the same bits) show no difference."""
    host = [1.0, 2.0, 3.0, 4.0, 0.5]
    device = [1.0, 2.0000000000000004, 3.0, 4.000000000000002, float("nan")]
    want = expected_diff(host, device)
    assert want.startswith("3 of 5 differ; first [1]: 2.0 vs 2.0000000000000004, 1 ULP")
    run = farm.values_run
    status, body = get(farm, f"/cases/{run}/examples/wide.cairn")
    assert status == 200
    text = text_of(body)
    assert want in text, text
    assert text.count("differ;") == 1               # the emulated cell is the host's bits
    assert "f64[5]: 1.0, 2.0, 3.0, 4.0, ..." in text and "min 0.5 max 4.0" in text
    assert "NaN 1, inf 0" in text                   # the device's values
    for kind in ("host", "emulated", "device"):
        assert f"data-kind={kind}>{kind}<" in body.decode(), kind
    _, page = get(farm, f"/runs/{run}")
    assert want in text_of(page)
    assert "differs: a NaN against a number" in text_of(page)   # the matrix cell's summary


def test_runs_show_times_submitter_commit_and_branch(farm):
    run = farm.values_run
    status, body = get(farm, f"/runs/{run}")
    html = body.decode()
    facts = re.search(r"<dl id=facts>(.*?)</dl>", html, re.S).group(1)
    for label in ("submitted", "started", "finished", "took"):
        value = re.search(f"<dt>{label}<dd>([^<]*)", facts).group(1)
        assert value and not value.startswith("-"), (label, value)
    assert "ci &lt;nightly&gt;" in facts and "<nightly>" not in facts
    assert "feature/&lt;b&gt;dash&lt;/b&gt;" in facts and "0123456789abcdef0123" in facts
    jobs = re.search(r"<table id=jobs>(.*?)</table>", html, re.S).group(1)
    rows = re.findall(r"<tr><td>\d+.*?</tr>", jobs)
    assert len(rows) == 3
    for row in rows:
        cells = re.findall(r"<td[^>]*>(.*?)(?=<td|</tr>)", row)
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$", cells[5]), cells
        assert re.match(r"[0-9.]+ s$", cells[6]), cells    # how long the job took
    status, index = get(farm, "/")
    row = re.search(rf'<tr><td><a href="/runs/{run}">.*?</tr>', index.decode()).group(0)
    assert "ci &lt;nightly&gt;" in row and "0123456789ab<" in row and " s<" in row
    # Read from git when the source is a checkout: this tree's HEAD.
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=pathlib.Path(__file__).parent).stdout.strip()
    if head:
        assert farm.run_view(farm.runs[0])["commit"] == head


def test_minus_one_never_shows_and_an_empty_log_says_so(farm):
    """No page shows -1 where nothing was measured (the history showed it); the silent
    case's log is empty, and its link says so."""
    run = farm.values_run
    pages = ["/", f"/runs/{run}", f"/runs/{farm.runs[0]}", "/history/examples/fixed.cairn",
             f"/cases/{run}/examples/silent.cairn", "/grid", "/machines/gpu-box"]
    for path in pages:
        status, body = get(farm, path)
        assert status == 200, path
        assert not re.search(r"[>\s(]-1(\.0+)?[<\s)]", body.decode()), path
    _, body = get(farm, f"/runs/{run}")
    logs = re.findall(r'/examples/silent\.cairn/run\.log">log</a>( \(empty\))?', body.decode())
    assert logs == [" (empty)"] * 3, logs
    _, body = get(farm, f"/runs/{run}")
    assert re.findall(r'/examples/wide\.cairn/run\.log">log</a>( \(empty\))?', body.decode()) \
        == [""] * 3
    link = re.search(r'href="(/files/[^"]*/examples/silent\.cairn/run\.log)"', body.decode())
    assert farm.get_bytes(link.group(1)) == (200, b"")


def grid_rows(body):
    return {m.group(1): m.group(2) for m in
            re.finditer(r'<tr data-case="([^"]+)"([^>]*)>', body.decode())}


def test_the_grid_marks_flaky_cases_and_filters(farm):
    """coin.cairn's verdict changes between runs 4 and 5 (one source, one matrix): flaky,
    and so marked; steady.cairn's changes between runs 5 and 7 (one matrix) but its source
    was edited: not flaky; fixed_differs.cairn changes between runs 1 and 2 but those ran
    other matrices: not flaky. The filters keep what they say."""
    run5, run7 = farm.flaky_runs[1], farm.edited_run
    assert farm.run_view(run5)["source_sha"] != farm.run_view(run7)["source_sha"]
    assert farm.run_view(run5)["matrix_id"] == farm.run_view(run7)["matrix_id"]
    assert Page(get(farm, f"/runs/{run5}")[1].decode()).verdicts["examples/steady.cairn"] \
        == "identical"
    assert Page(get(farm, f"/runs/{run7}")[1].decode()).verdicts["examples/steady.cairn"] \
        == "differs-where-fixed"
    status, body = get(farm, "/grid")
    assert status == 200
    rows = grid_rows(body)
    assert "data-flaky=1" in rows["examples/coin.cairn"]
    assert "data-flaky" not in rows["examples/steady.cairn"]
    assert "data-flaky" not in rows["examples/fixed_differs.cairn"]
    assert body.count(b' flaky" title=') == 1          # the one cell where it changed
    assert set(grid_rows(get(farm, "/grid?flaky=1")[1])) == {"examples/coin.cairn"}
    assert set(grid_rows(get(farm, "/grid?case=wide")[1])) == {"examples/wide.cairn"}
    differs = set(grid_rows(get(farm, "/grid?verdict=differs-where-fixed")[1]))
    assert differs == {"examples/coin.cairn", "examples/fixed_differs.cairn",
                       "examples/steady.cairn", "examples/wide.cairn"}
    assert grid_rows(get(farm, "/grid?machine=nobody")[1]) == {}
    assert len(grid_rows(get(farm, "/grid?machine=gpu-box")[1])) == len(rows)
    status, body = get(farm, "/grid?runs=2")
    assert set(grid_rows(body)) == {"examples/coin.cairn", "examples/steady.cairn"}
    status, body = get(farm, "/runs/1?verdict=identical")
    assert Page(body.decode()).verdicts == {"examples/fixed.cairn": "identical"}


def test_a_machine_has_its_page(farm):
    status, body = get(farm, "/machines/gpu-box")
    assert status == 200
    html = body.decode()
    assert "NVIDIA H200" in html and "compute capability 9.0" in html and " s ago)" in html
    assert re.search(r"<p id=counts>Its jobs: \d+ done", html), html
    jobs = re.search(r"<table id=jobs>(.*?)</table>", html, re.S).group(1)
    assert len(re.findall(r'<a href="/runs/\d+">', jobs)) >= 9
    failures = re.search(r"<table id=failures>(.*?)</table>", html, re.S).group(1)
    assert "FAILED" in failures                        # checked.cairn fails a check
    assert get(farm, "/machines/nobody")[0] == 404
    _, index = get(farm, "/")
    assert '<a href="/machines/gpu-box">gpu-box</a>' in index.decode()


def badge_text(farm, matrix):
    status, body = get(farm, f"/badge/{matrix}")
    assert status == 200
    root = ET.fromstring(body)
    return [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")]


def test_each_matrix_has_a_badge(farm):
    matrix = {r: farm.run_view(r)["matrix_id"] for r in (farm.runs[0], farm.passing_run,
                                                        farm.flaky_runs[1])}
    assert badge_text(farm, matrix[farm.runs[0]]) == ["cairn farm", "failing"]
    assert badge_text(farm, matrix[farm.passing_run]) == ["cairn farm", "passing"]
    assert badge_text(farm, matrix[farm.flaky_runs[1]] + ".svg") == ["cairn farm", "failing"]
    assert badge_text(farm, "0123456789abcdef") == ["cairn farm", "no run"]
    assert get(farm, "/badge/nothex")[0] == 404
    _, page = get(farm, f"/runs/{farm.passing_run}")
    assert f'<img src="/badge/{matrix[farm.passing_run]}"' in page.decode()


NEW_PAGES = ["/grid", "/grid?flaky=1", "/machines/gpu-box", "/cases/3/examples/wide.cairn",
             "/runs/3", "/history/examples/coin.cairn"]


def test_every_link_of_the_new_pages_resolves(farm):
    assert farm.values_run == 3
    for path in NEW_PAGES:
        status, body = get(farm, path)
        assert status == 200, path
        page = Page(body.decode())
        assert page.links and page.scripts == 0, path
        for link in page.links:
            if link.startswith("#"):
                assert link[1:] in page.ids, (path, link)
                continue
            assert link.startswith("/"), link
            status, _ = get(farm, link.split("#")[0])
            assert status == 200, (path, link)


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
        end = time.monotonic() + HANG_S   # a guard: the browser hung at its start
        while port is None and time.monotonic() < end:
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
        end = time.monotonic() + HANG_S
        while not any(e.get("method") == "Page.loadEventFired" for e in self.events):
            assert time.monotonic() < end, f"{url} did not load in {HANG_S} s: hung?"
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


def test_pages_load_without_console_errors(farm, browser):
    run1 = farm.runs[0]
    matrix = farm.run_view(run1)["matrix_id"]
    for path in ("/", f"/runs/{run1}", f"/runs/{run1}/plot.svg", "/history/examples/within.cairn",
                 *NEW_PAGES, f"/badge/{matrix}"):
        errors = browser.load(farm.url + path)
        assert errors == [], (path, errors)
        name = re.sub(r"[^A-Za-z0-9]+", "-", path).strip("-") or "index"
        keep_screenshot(browser, f"dashboard-{name}")


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
    keep_screenshot(browser, "dashboard-run")


@pytest.mark.parametrize("path", [f"/runs/1", *NEW_PAGES])
def test_every_link_on_each_page_resolves_in_the_browser(farm, browser, path):
    browser.load(farm.url + path)
    links = browser.eval("[...document.querySelectorAll('a')].map(a => a.href)")
    ids = set(browser.eval("[...document.querySelectorAll('[id]')].map(e => e.id)"))
    here = browser.eval("location.href").partition("#")[0]
    assert len(links) > 3, path
    for link in links:
        assert link.startswith(farm.url), link
        target, _, anchor = link.partition("#")
        if anchor and target == here:
            assert anchor in ids, link
            continue
        with urllib.request.urlopen(target, timeout=30) as r:
            assert r.status == 200, link
            assert not anchor or f'id={anchor}' in r.read().decode(), link


def test_the_filter_form_works_without_script(farm, browser):
    """The run page's filters are a plain GET form: choosing a verdict and submitting it
    (no script of the page's own) shows only those rows."""
    assert browser.load(f"{farm.url}/runs/{farm.runs[0]}") == []
    browser.eval("document.querySelector('select[name=verdict]').value = 'violates-contract';"
                 "document.querySelector('form').submit(); 1")
    end = time.monotonic() + HANG_S
    while "verdict=violates-contract" not in browser.eval("location.href"):
        assert time.monotonic() < end, f"the form did not submit in {HANG_S} s: hung?"
        time.sleep(0.1)
    time.sleep(0.5)
    cases = browser.eval("[...document.querySelectorAll('#matrix tr[data-case]')]"
                         ".map(tr => tr.dataset.case)")
    assert sorted(cases) == ["examples/beyond.cairn", "examples/checked.cairn"]
    keep_screenshot(browser, "dashboard-run-filtered")
