"""`make demo`, the README's first command, run whole (farm/demo.sh): a coordinator and
an agent on loopback run the examples across the demo matrix, compare, export the run's
bundles as folders and verify one with cairn-farm and with plain openssl. It broke once
without a test noticing: the evidence moved into the content store and the script still
looked for bundle folders in the state."""
import json
import os
import subprocess
import time
import urllib.request

import pytest

from cairntest import BIN, ROOT


@pytest.mark.sqlite_only("the demo runs the embedded default store")
def test_make_demo_runs_whole(tmp_path):
    env = dict(os.environ, BIN=str(BIN), DEMO=str(tmp_path / "demo"), KEEP="0")
    r = subprocess.run(["bash", str(ROOT / "farm" / "demo.sh")], env=env, cwd=ROOT,
                       capture_output=True, text=True, timeout=900)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert "0 violates-contract" in out and "0 differs-where-fixed" in out, out[-4000:]
    assert "exported run 1: 3 bundle(s)" in out, out[-4000:]
    assert "verified: " in out and "Signature Verified Successfully" in out, out[-4000:]
    bundles = list((tmp_path / "demo" / "export" / "evidence").rglob("bundle.dsse.json"))
    assert len(bundles) == 3, bundles
    assert "demo: done (coordinator and agent stopped" in out, out[-4000:]
    done = r.stdout[r.stdout.index("demo: done (coordinator and agent stopped"):]
    assert "http://" not in done, done  # no URL of a dashboard that is down
    serve = done.splitlines()[2].split()  # the way back it prints, followed verbatim
    assert serve[1:3] == ["serve", "--state"], done
    proc = subprocess.Popen(serve, cwd=ROOT, stderr=subprocess.DEVNULL)
    try:
        state = serve[3]
        for _ in range(600):  # a guard against hanging only
            if os.path.exists(f"{state}/serve.json") and proc.poll() is None:
                try:
                    url = json.load(open(f"{state}/serve.json"))["url"]
                    with urllib.request.urlopen(url + "/", timeout=60) as page:
                        assert page.status == 200
                        break
                except (OSError, ValueError):
                    pass
            assert proc.poll() is None, "the printed serve command exited"
            time.sleep(0.1)
        else:
            raise AssertionError("the served state never answered (hung)")
    finally:
        proc.terminate()
        proc.wait(timeout=60)
