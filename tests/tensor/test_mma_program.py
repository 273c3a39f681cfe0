"""mma_unordered from the language: a program fills its operands from an integer formula,
multiplies, and observes c; the observed bits must equal the model's reference loop
(mma_model.py) for the same formula. Also the extents trap at the call, and the receipt
names the multiply's rounding, order, bound and device instruction."""
import json
import pathlib
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import BIN, cairn_cell_flags, run  # noqa: E402
from mma_model import FORMATS, bound_violations, f32_bits, reference_bits  # noqa: E402

PROGRAM = """
fn fill(n:usize, seed:u64, x:rw<{T}>[n]) {{
  for i in 0..n {{
    let h = (u64(i) * 40503 + seed) % {SPAN};
    let sign = (u64(i) % 3 == 0) as_sign;
    x[i] = from_bits[{T}]({U}(h + {LOW} + sign));
  }}
}}

fn main() -> i32 {{
  buffer c:f32[{MN}] = zeroed;
  buffer a:{T}[{MK}] = zeroed;
  buffer b:{T}[{KN}] = zeroed;
  for i in 0..{MN} {{ c[i] = f32(i % 7) - 3.0; }}
  fill({MK}, 17, a);
  fill({KN}, 4099, b);
  mma_unordered({M}, {N}, {K}, c, a, b);
  observe("c", c);
  return 0;
}}
"""

# Bit windows that give finite values of moderate size: (span, low, sign bit).
WINDOWS = {"f16": (0x4800, 0x1800, 0x8000), "bf16": (0x1400, 0x3600, 0x8000),
           "f8e4m3": (0x40, 0x18, 0x80), "f8e5m2": (0x28, 0x24, 0x80)}
UNSIGNED = {"f16": "u16", "bf16": "u16", "f8e4m3": "u8", "f8e5m2": "u8"}


def program(fmt, m, n, k):
    span, low, sign = WINDOWS[fmt]
    text = PROGRAM.format(T=fmt, U=UNSIGNED[fmt], SPAN=span, LOW=low, MN=m * n, MK=m * k, KN=k * n,
                          M=m, N=n, K=k)
    # the sign: (i % 3 == 0) selects the sign bit; written with an if-free integer formula
    return text.replace("(u64(i) % 3 == 0) as_sign", f"(1 - (u64(i) % 3 + 2) / 3) * {sign}")


def operand_bits(fmt, count, seed):
    span, low, sign = WINDOWS[fmt]
    return [(i * 40503 + seed) % span + low + (sign if i % 3 == 0 else 0) for i in range(count)]


def observed_bits(raw_dir):
    files = sorted(pathlib.Path(raw_dir).glob("c.*.bin"))
    assert len(files) == 1, files
    data = files[0].read_bytes()
    return [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]


@pytest.mark.parametrize("fmt,shape", [("f16", (5, 7, 19)), ("bf16", (3, 3, 40)), ("f8e4m3", (4, 9, 33)),
                                       ("f8e5m2", (2, 6, 17))])
def test_program_matches_the_model(tmp_path, fmt, shape):
    m, n, k = shape
    src = tmp_path / "mma.cairn"
    src.write_text(program(fmt, m, n, k))
    r = run([BIN / "cairn", "run", *cairn_cell_flags(), str(src), "--observe-raw", str(tmp_path / "raw")],
            timeout=300)
    assert r.returncode == 0, r.stderr
    a, b = operand_bits(fmt, m * k, 17), operand_bits(fmt, k * n, 4099)
    assert all(isinstance(FORMATS[fmt].decode(x), Fraction) for x in a + b)     # finite
    c = [f32_bits(float(i % 7) - 3.0) for i in range(m * n)]
    got = observed_bits(tmp_path / "raw")
    assert got == reference_bits(fmt, m, n, k, c, a, b)
    assert not bound_violations(fmt, m, n, k, c, a, b, got)


def test_a_short_view_traps_at_the_call(tmp_path):
    src = tmp_path / "short.cairn"
    src.write_text("fn main() -> i32 {\n  buffer c:f32[3] = zeroed;\n  buffer a:f16[4] = zeroed;\n"
                   "  buffer b:f16[4] = zeroed;\n  mma_unordered(2, 2, 2, c, a, b);\n  return 0;\n}\n")
    r = run([BIN / "cairn", "run", *cairn_cell_flags(), str(src)], timeout=300)
    assert r.returncode != 0
    assert "trap: mma_unordered: c holds 3 elements, fewer than m*n = 4" in r.stderr
    assert "short.cairn:5:3" in r.stderr


def test_the_receipt_names_the_multiply(tmp_path):
    src = tmp_path / "rec.cairn"
    src.write_text(program("f8e4m3", 2, 2, 2))
    out = tmp_path / "rec"
    r = run([BIN / "cairn", "build", str(src), "-o", str(out)], timeout=300)
    assert r.returncode == 0, r.stderr
    receipt = json.loads((tmp_path / "rec.receipt.json").read_text())
    entries = [e for e in receipt["numerics"]["main"] if e.get("op") == "mma"]
    assert entries == [{
        "op": "mma", "from": "f8e4m3", "to": "f32", "rounding": "nearest-even", "order": "unordered",
        "products": "exact", "emulated_order": "increasing k", "bound": "(k + 1) * 2^-22 * (|c| + sum |a b|)",
        "instruction": {"host": "reference loop, increasing k",
                        **{t: "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32"
                           for t in ["sm_80", "sm_89", "sm_90", "sm_120"]}},
        "widen": "to f16 (exact) before the f16 instruction"}]
