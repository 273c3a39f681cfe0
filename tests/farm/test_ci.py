"""The farm as a CI pipeline sees it (docs/farm.md, "CI and monitoring"): JUnit XML from
`cairn-farm compare RUN --junit FILE` and `submit --wait --junit FILE`, validated with
xmllint against the Jenkins/Ant schema (tests/farm/junit-jenkins.xsd), with hostile
agent-supplied strings; and submit --wait's exit statuses: 0 every promise kept, 1 one
broken, 2 usage, 3 infrastructure (coordinator unreachable, run cancelled, --timeout)."""
import json
import os
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import ADMIN, FARM, Farm, wait_for  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
XSD = os.path.join(HERE, "junit-jenkins.xsd")
A, B = "a" * 64, "b" * 64
# Every kind of text XML cannot take as it is: markup, quotes, a CDATA end, a control
# character, a tab and a newline (attributes would fold them), a comment's dashes.
HOSTILE = "x<y>&\"z'\u0001]]>\t\n--<!-- -->"

pytestmark = pytest.mark.skipif(shutil.which("xmllint") is None,
                                reason="xmllint (Debian's libxml2-utils) is not installed")


def validate(path):
    r = subprocess.run(["xmllint", "--noout", "--schema", XSD, str(path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr + open(path, encoding="utf-8", errors="replace").read()
    return ET.parse(path).getroot()


def case(name, observations, **extra):
    c = {"case": name, "build_status": 0, "exit_status": 0, "unordered": False,
         "observations": observations, "checks": [{"name": "build", "ok": True}],
         "bounds": [], "duration_ms": 1500.0}
    c.update(extra)
    return c


def obs(name, sha):
    return {"name": name, "type": "f64", "count": 1, "sha256": sha}


def cases_of(root, suite):
    s = [t for t in root.findall("testsuite") if t.get("name") == suite]
    assert len(s) == 1, [t.get("name") for t in root.findall("testsuite")]
    return {tc.get("name"): tc for tc in s[0].findall("testcase")}


def test_offline_junit_with_hostile_strings_validates_and_keeps_them(tmp_path):
    results = [
        {"machine": "m<1>", "cell_id": "gcc&none", "bundle_sha256": "c" * 64,
         "evidence": "evidence/0.1.0/1/m/gcc", "predicate": {"cases": [
             case("examples/pass.cairn", [obs("p", A)]),
             case("examples/fail.cairn", [obs("q" + HOSTILE, A)]),
             case("examples/skip.cairn", []),
             case(HOSTILE, [obs("r", A)], trap="trap: " + HOSTILE, exit_status=1)]}},
        {"machine": "m2", "cell_id": "clang", "predicate": {"cases": [
            case("examples/pass.cairn", [obs("p", A)]),
            case("examples/fail.cairn", [obs("q" + HOSTILE, B)]),
            case("examples/skip.cairn", []),
            case(HOSTILE, [obs("r", A)])]}}]
    path = tmp_path / "r.json"
    # Raw bytes that are no UTF-8 (a lone continuation byte, an encoded surrogate, U+FFFE)
    # inside a case name: the JSON parser passes them through, the XML must not.
    text = json.dumps(results).replace("examples/skip.cairn", "examples/sk\\u0007ip.cairn")
    raw = text.encode().replace(b"pass.cairn", b"pa\xffss\xed\xa0\x80\xef\xbf\xbe.cairn")
    path.write_bytes(raw)
    junit = tmp_path / "out.xml"
    r = subprocess.run([FARM, "compare", path, "--junit", junit], capture_output=True,
                       timeout=30)
    assert r.returncode == 1, r.stderr      # differs-where-fixed: the run fails
    root = validate(junit)
    cells = cases_of(root, "m<1>/gcc&none")
    assert set(cells) == {"examples/pa\ufffdss\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd.cairn",
                          "examples/fail.cairn", "examples/sk\ufffdip.cairn",
                          HOSTILE.replace("\u0001", "\ufffd")}, set(cells)
    passed = cells["examples/pa\ufffdss\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd.cairn"]
    assert list(passed) == [] and passed.get("time") == "1.500"
    failure = cells["examples/fail.cairn"].find("failure")
    assert failure.get("type") == "differs-where-fixed"
    assert "observation q" + HOSTILE.replace("\u0001", "\ufffd") in failure.get("message")
    assert cells["examples/sk\ufffdip.cairn"].find("skipped").text.startswith("no-evidence")
    trapped = cells[HOSTILE.replace("\u0001", "\ufffd")].find("failure")
    assert "trap: " + HOSTILE.replace("\u0001", "\ufffd") in trapped.get("message")
    props = {p.get("name"): p.get("value") for p in root.find("testsuite").iter("property")}
    assert props["bundle_sha256"] == "c" * 64 and props["machine"] == "m<1>"
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "2", "1")


def tree(tmp_path, name, cases):
    root = tmp_path / name
    (root / "examples").mkdir(parents=True)
    for case_name, text in cases.items():
        (root / "examples" / case_name).write_text(text)
    return root


PASS = "// the same bits everywhere\n//! observe x 1.5,2.25\n"
FAIL = "// bits that depend on the compiler where the receipt fixes them\n//! observe-cc acc\n"
SKIP = "// observes nothing: no evidence\n"
BOTH = {"compilers": ["gcc", "clang"]}


def submit_wait(farm, source, matrix, *extra, timeout=120):
    mpath = farm.tmp / f"matrix-{time.time_ns()}.json"
    mpath.write_text(json.dumps(matrix))
    return farm.cli("submit", "--matrix", mpath, "--wait", *extra, source, timeout=timeout)


def test_a_run_gives_junit_with_values_and_pipeline_exit_statuses(tmp_path):
    mixed = tree(tmp_path, "mixed", {"pass.cairn": PASS, "fail.cairn": FAIL, "skip.cairn": SKIP})
    kept = tree(tmp_path, "kept", {"pass.cairn": PASS, "skip.cairn": SKIP})
    with Farm(tmp_path, lease=15) as farm:
        farm.agent("ci-box", idle=AGENT_IDLE_S)
        junit = tmp_path / "submit.xml"
        r = submit_wait(farm, mixed, BOTH, "--junit", junit)
        assert r.returncode == 1, r.stdout + r.stderr
        root = validate(junit)
        run = int(r.stdout.split()[1].rstrip(":"))
        gcc = cases_of(root, "ci-box/gcc-none-emulated")
        failure = gcc["examples/fail.cairn"].find("failure")
        assert failure.get("type") == "differs-where-fixed", ET.tostring(failure)
        # The first differing element with both values and how far apart they are (the
        # coordinator's report: 1.0 with gcc, 1.0000000000000002 with clang).
        message = failure.get("message")
        assert "observation acc" in message and "element 0" in message, message
        assert "1 ulp apart" in message and "ci-box/clang-none-emulated" in message, message
        assert gcc["examples/skip.cairn"].find("skipped") is not None
        assert list(gcc["examples/pass.cairn"]) == [e for e in gcc["examples/pass.cairn"]
                                                     if e.tag == "system-out"]
        assert gcc["examples/pass.cairn"].find("system-out").text == \
            f"{farm.url}/cases/{run}/examples/pass.cairn"
        props = {p.get("name"): p.get("value") for p in root.find("testsuite").iter("property")}
        assert props["dashboard"] == f"{farm.url}/runs/{run}"
        assert len(props["bundle_sha256"]) == 64
        # compare RUN writes the same file, and exits as the verdicts say.
        again = tmp_path / "compare.xml"
        r = farm.cli("compare", run, "--junit", again)
        assert r.returncode == 1 and validate(again) is not None
        assert again.read_bytes() == junit.read_bytes()
        r = submit_wait(farm, kept, BOTH, "--junit", tmp_path / "kept.xml")
        assert r.returncode == 0, r.stdout + r.stderr
        assert validate(tmp_path / "kept.xml").find("testsuite/testcase/failure") is None


def test_exit_statuses_for_usage_and_infrastructure(tmp_path):
    kept = tree(tmp_path, "kept", {"pass.cairn": PASS})
    with Farm(tmp_path) as farm:      # no agent: nothing ever finishes
        r = farm.cli("submit", "--junit", tmp_path / "x.xml", kept)
        assert r.returncode == 2 and "go with --wait" in r.stderr, r.stderr
        r = submit_wait(farm, kept, BOTH, "--timeout", "0")
        assert r.returncode == 2 and "--timeout" in r.stderr, r.stderr
        r = submit_wait(farm, kept, BOTH, "--timeout", "1")
        assert r.returncode == 3 and "did not finish within --timeout 1 s" in r.stderr, r.stderr
        # Cancelled while it is waited for: 3, and the message says why.
        mpath = tmp_path / "m.json"
        mpath.write_text(json.dumps(BOTH))
        waiting = subprocess.Popen([FARM, "submit", "--matrix", mpath, "--wait", kept,
                                    "--coordinator", farm.url, "--token", ADMIN],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: farm.request("GET", "/api/v1/runs/2")[0] == 200, 30, "run 2")
            assert farm.request("POST", "/api/v1/runs/2/cancel", body={})[0] == 200
            out, err = waiting.communicate(timeout=60)
        finally:
            if waiting.poll() is None:
                waiting.kill()
        assert waiting.returncode == 3 and "run 2 was cancelled" in err, (out, err)
        url = farm.url
    # The coordinator gone: 3.
    r = subprocess.run([FARM, "submit", "--wait", kept, "--coordinator", url, "--token", ADMIN],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, (r.returncode, r.stderr)
    r = subprocess.run([FARM, "compare", "1", "--coordinator", url, "--token", ADMIN],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, (r.returncode, r.stderr)
