"""End to end with the real cairn (BIN/cairn): a coordinator and one agent build and run a
small program of ours under gcc and clang; the filed digests must equal an independent
model (Python's struct + hashlib over the bits the program must produce), the comparison
must say identical (the receipt fixes every rounding) and the bundles must verify."""
import hashlib
import json
import os
import struct
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import BIN, FARM, HERE, Farm  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

CAIRN = BIN / "cairn"


def model_digests():
    """What parallel_tenths.cairn must observe, computed without cairn."""
    ordered = 0.0
    for _ in range(10):
        ordered += 0.1                       # ten roundings in written order
    bits = {"x": struct.pack("<10d", *[0.1] * 10),
            "exact": struct.pack("<d", 1.0),  # the exact sum of ten 0.1s rounds to 1.0
            "ordered": struct.pack("<d", ordered)}
    assert ordered != 1.0
    return {name: hashlib.sha256(b).hexdigest() for name, b in bits.items()}


@pytest.mark.skipif(not CAIRN.exists(), reason=f"{CAIRN} not built (the compiler is absent)")
def test_real_cairn_on_gcc_and_clang(tmp_path):
    with Farm(tmp_path, lease=30) as farm:
        farm.agent("real", "--compilers", "gcc,clang", cairn=CAIRN, idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "real", {"compilers": ["gcc", "clang"]})
        view = farm.wait_run(run, 200)
        assert all(j["state"] == "done" for j in view["jobs"]), view["jobs"]
        status, results = farm.request("GET", f"/api/v1/runs/{run}/results")
        assert status == 200 and len(results) == 2
        want = model_digests()
        for res in results:
            [case] = res["predicate"]["cases"]
            assert case["build_status"] == 0 and case["exit_status"] == 0, case
            assert {o["name"]: o["sha256"] for o in case["observations"]} == want
            assert all(c["ok"] for c in case["checks"]), case["checks"]
            assert case["unordered"] is False
            receipt = json.loads(farm.filed_file(res["evidence"], case["receipt"]))
            assert receipt["compiler"]["name"] == res["predicate"]["cell"]["compiler"]
        for folder in farm.exported():
            r = subprocess.run([FARM, "verify", folder / "bundle.dsse.json", "--key",
                                folder / "agent.pub.pem"], capture_output=True, text=True,
                               timeout=30)
            assert r.returncode == 0, r.stderr
        r = farm.cli("compare", run, "--json")
        assert r.returncode == 0, r.stdout + r.stderr
        [row] = json.loads(r.stdout)["cases"]
        assert row["verdict"] == "identical"
