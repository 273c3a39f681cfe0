"""A new builtin is one row of compiler/syntax/ops.def plus its emitter per target.

The test builds a compiler variant from this tree with one extra row, the fixture's
sq(x) = x * x (tests/build/ops_fixture/sq.def), and the C back end's emitter for it
(ops_fixture/sq_c.h; host C, emulation and CUDA share it), given to the build by the two
-D hooks and nothing else. With them the new builtin checks (and is refused where the
checker's rule says), lowers for every target, runs with the bits an independent model
gives (Python's own rounding of the exact product), and is named in the receipt; without
them the stock compiler does not know it."""
import json
import pathlib
import struct
import subprocess

import pytest

from cairntest import BIN, ROOT

FIXTURE = ROOT / "tests" / "build" / "ops_fixture"


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


X64 = 1.1
X32 = f32(1.1)
# The model: sq rounds the exact square once to nearest even. Python's float product is
# the exact product rounded once (IEEE 754); an f32 product is exact in f64 (48 bits),
# and packing rounds it once to f32.
SQ64 = f64_bits(X64 * X64)
LANE = [f32(X32 + k) for k in range(4)]  # z + f32(i), itself rounded once to f32
SQ32 = [f32_bits(f32(a * a)) for a in LANE]

PROGRAM = f"""fn main() -> i32 {{
  let x: f64 = 1.1;
  let z: f32 = 1.1;
  buffer v: f32[4] = zeroed;
  parallel i in 4 {{ v[i] = sq(z + f32(i)); }}
  if to_bits(sq(x)) != {SQ64} {{ return 1; }}
{"".join(f"  if to_bits(v[{k}]) != {b} {{ return {2 + k}; }}" + chr(10) for k, b in enumerate(SQ32))}  return 0;
}}
"""

LANE_CALL = """fn main() -> i32 {
  let h: f16 = f16(1.5);
  let y = sq(h);
  return 0;
}
"""


@pytest.fixture(scope="module")
def variant(tmp_path_factory):
    """bin/cairn built with the fixture's row and emitter, in a folder of its own."""
    work = tmp_path_factory.mktemp("ops-variant")
    hooks = (f"-DCAIRN_OPS_EXTRA='\"{FIXTURE}/sq.def\"' "
             f"-DCAIRN_OPS_EXTRA_C='\"{FIXTURE}/sq_c.h\"'")
    out = subprocess.run(["make", "-j2", f"OBJ={work}/obj", f"BIN={work}/bin",
                          f"EXTRA_CFLAGS={hooks}", f"{work}/bin/cairn"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return work / "bin" / "cairn"


def cairn(binary, *args, cwd):
    return subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env={"CAIRN_CACHE": str(cwd / "cache"), "PATH": "/usr/bin:/bin"})


def test_the_stock_compiler_does_not_know_the_fixture(tmp_path):
    (tmp_path / "p.cairn").write_text(PROGRAM)
    r = cairn(BIN / "cairn", "check", "p.cairn", cwd=tmp_path)
    assert r.returncode == 1 and "sq" in r.stderr, r.stderr


def test_one_row_checks_lowers_runs_and_is_in_the_receipt(variant, tmp_path):
    (tmp_path / "p.cairn").write_text(PROGRAM)
    assert cairn(variant, "check", "p.cairn", cwd=tmp_path).returncode == 0
    for mode in ([], ["--emulate"], ["--target", "sm_90"]):
        out = tmp_path / f"emit{len(mode)}"
        out.mkdir()
        r = cairn(variant, "build", "p.cairn", "--emit-c", out, "--emit-only", "-o", out / "p",
                  *mode, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        assert any(" * " in f.read_text() for f in out.iterdir())
    r = cairn(variant, "build", "p.cairn", "-o", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    run = subprocess.run([str(tmp_path / "p")], capture_output=True, text=True)
    assert run.returncode == 0, (run.returncode, run.stderr)
    entries = json.loads((tmp_path / "p.receipt.json").read_text())["numerics"]["main"]
    for t in ("f32", "f64"):
        assert {"op": "sq", "type": t, "rounding": "nearest-even"} in entries, entries


def test_the_rows_type_rule_refuses_a_storage_float(variant, tmp_path):
    (tmp_path / "p.cairn").write_text(LANE_CALL)
    r = cairn(variant, "check", "p.cairn", cwd=tmp_path)
    assert r.returncode == 1 and "error[E-" in r.stderr, r.stderr


# verify and predict read the row too: sq's value is fresh for the reason its rounding
# column gives (RND_ONCE's wording), a pure function of numbers (its rule), so a guard that
# does not depend on it is still decided; predict counts one operation of its result's type
# (its cost column). A pass that decided sq's meaning again (a switch over builtins that
# does not know it) would say "sq is not modelled" and leave every later guard unknown.
MODEL = """fn f(x: f64, v: rw<f64>[4], k: usize) requires k < 2 {
  let z = sq(x);
  v[k + 2] = z;
  if z > 2.0 { v[k + 3] = 1.0; }
}
fn g(x: f64, y: f32, n: usize) -> f64 {
  let mut s: f64 = 0.0;
  for i in 0..n { s += sq(x) + f64(sq(y)); }
  return s;
}
"""


def test_verify_gives_the_rows_rounding_as_its_reason(variant, tmp_path):
    (tmp_path / "p.cairn").write_text(MODEL)
    r = cairn(variant, "verify", "p.cairn", "--json", "--function", "f", cwd=tmp_path)
    props = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert props, r.stderr
    why = "sq (rounded once to nearest even)"
    by_line = {(p["property"], int(p["at"].split(":")[1])): p for p in props}
    assert by_line[("unmodelled construct", 2)]["detail"] == why, props
    assert by_line[("index out of bounds", 3)]["verdict"] == "verified", props
    late = by_line[("index out of bounds", 4)]
    assert late["verdict"] == "unknown" and why in late["reason"], late


def test_predict_counts_the_rows_cost(variant, tmp_path):
    (tmp_path / "p.cairn").write_text(MODEL)
    r = cairn(variant, "predict", "p.cairn", "--device", "h100", "--json", "--function", "g",
              cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ops = json.loads(r.stdout)["functions"][0]["ops"]
    # a term: sq(x) and sq(y) one operation each of their types, + and += one f64 each
    assert ops["f64"]["formula"] == "3*n" and ops["f32"]["formula"] == "n", ops
