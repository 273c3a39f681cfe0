"""std.cr through the language: tests/device/programs/cr_lanes.cairn computes every
correctly rounded function on special and pseudo-random inputs in device lanes, a block
region and a host loop. The device halves equal the host's bits (tests/device/
test_emulate.py); here every host result is held to MPFR (tests/c/cr_check.c `pairs`),
so the lowering, the runtime and the receipt are checked together, and the receipt
names each function's rounding."""
import json
import struct

from cairntest import BIN, ROOT, harness, run
from devicelib import build, observe, values

PROGRAM = ROOT / "tests" / "device" / "programs" / "cr_lanes.cairn"
F32 = ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"]
F64 = ["exp", "log"]


def test_results_match_mpfr(tmp_path):
    exe = build(PROGRAM, tmp_path / "cr_lanes")
    obs = observe(exe, tmp_path / "run", 3)
    n = obs["x"][1]
    x = struct.unpack(f"<{n}I", obs["x"][3])
    d = struct.unpack(f"<{n}Q", obs["d"][3])
    r32 = struct.unpack(f"<{10 * n}I", obs["ref_lane_f32"][3])
    r64 = struct.unpack(f"<{2 * n}Q", obs["ref_lane_f64"][3])
    lines = [f"f32 {F32[j // n]} {x[j % n]:x} {r32[j]:x}" for j in range(10 * n)]
    lines += [f"f64 {F64[j // n]} {d[j % n]:x} {r64[j]:x}" for j in range(2 * n)]
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("\n".join(lines) + "\n")
    res = run([harness("cr_check"), "pairs", pairs], timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    assert f"{12 * n} results, 0 differ" in res.stdout
    # the NaNs are the one documented pattern
    assert struct.pack("<I", 0x7FFFFFFF) in obs["ref_lane_f32"][3]
    assert 0x7FC00000 not in r32 and 0xFFC00001 not in r32


def test_receipt_names_correct_rounding(tmp_path):
    out = tmp_path / "cr_lanes"
    res = run([BIN / "cairn", "build", PROGRAM, "-o", out])
    assert res.returncode == 0, res.stderr
    numerics = json.loads((tmp_path / "cr_lanes.receipt.json").read_text())["numerics"]
    seen = {(e["op"], e["type"]) for entries in numerics.values() for e in entries
            if e["op"].startswith("std.cr.")}
    want = {(f"std.cr.{f}", "f32") for f in F32} | {(f"std.cr.{f}", "f64") for f in F64}
    assert seen == want
    for entries in numerics.values():
        for e in entries:
            if e["op"].startswith("std.cr."):
                assert e["rounding"] == "correctly-rounded"
