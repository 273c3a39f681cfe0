"""The dashboard over HTTP: the seeded runs show every verdict in the run's matrix, every
link resolves, agent-sent text is escaped, the plot is self-contained SVG, a case's
history says when it last changed, and the machine list shows the GPU and the last
time the agent was heard from. (test_dashboard_browser.py loads the same pages in
Chromium.)"""
import os
import sys
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from dashlib import EXPECTED, Page, seeded_farm  # noqa: E402


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    farm, run1, run2 = seeded_farm(tmp_path_factory.mktemp("dash"))
    farm.runs = (run1, run2)
    yield farm
    farm.close()


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
