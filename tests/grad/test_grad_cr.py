"""The std.cr derivatives keep full precision where the textbook forms lose it: the
gradient derive grad makes for tanh and sigmoid (f32), at inputs where tanh or sigmoid
is within 2^-10 of 1, against the exact derivative (Python's cosh and exp in double,
written without cancellation: tanh' = 1 / cosh^2, sigmoid' = e^-|x| / (1 + e^-|x|)^2).
The textbook 1 - tanh^2 and s (1 - s) are off by far more than the few f32 roundings
allowed here (at x = 8 they lose every bit). Also every other std.cr derivative at one
point each, against its closed form in double."""
import math
import struct

import pytest

from cairntest import BIN, cairn_cell_flags, run

XS = [0.25, -1.5, 4.5, 8.0, -9.0, 12.0]

SOURCE = """
fn t(x:f32) -> f32 = std.cr.tanh(x);
derive grad for t;
fn s(x:f32) -> f32 = std.cr.sigmoid(x);
derive grad for s;
fn rest(x:f32) -> f32 = std.cr.exp(x) + std.cr.exp2(x) * 2.0 + std.cr.expm1(x) * 3.0 + std.cr.log(x) * 5.0 + std.cr.log2(x) * 7.0 + std.cr.log1p(x) * 11.0 + std.cr.sin(x) * 13.0 + std.cr.cos(x) * 17.0;
derive grad for rest;
fn wide(x:f64) -> f64 = std.cr.exp(x) + std.cr.log(x) * 3.0;
derive grad for wide;
fn main() -> i32 {
  buffer dt:f32[N] = zeroed;
  buffer ds:f32[N] = zeroed;
XS
  observe("dt", dt);
  observe("ds", ds);
  let mut dr:f32 = 0.0;
  let r = rest_grad(0.75, 1.0, dr);
  observe("dr", dr);
  let mut dw:f64 = 0.0;
  let w = wide_grad(1.25, 1.0, dw);
  observe("dw", dw);
  return 0;
}
"""


@pytest.fixture(scope="module")
def grads(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grad_cr")
    lines = []
    for i, x in enumerate(XS):
        lines.append(f"  let mut a{i}:f32 = 0.0;\n  let ta{i} = t_grad({x!r}, 1.0, a{i});\n"
                     f"  dt[{i}] = a{i};\n  let mut b{i}:f32 = 0.0;\n"
                     f"  let sb{i} = s_grad({x!r}, 1.0, b{i});\n  ds[{i}] = b{i};")
    src = tmp / "g.cairn"
    src.write_text(SOURCE.replace("XS", "\n".join(lines)).replace("f32[N]", f"f32[{len(XS)}]"))
    res = run([BIN / "cairn", "run", src, *cairn_cell_flags(), "--observe", tmp / "obs.jsonl",
               "--observe-raw", tmp], timeout=300)
    assert res.returncode == 0, res.stderr
    out = {}
    for seq, name in enumerate(["dt", "ds", "dr", "dw"]):
        raw = (tmp / f"{name}.{seq}.bin").read_bytes()
        out[name] = struct.unpack(f"<{len(raw) // 4}f" if name != "dw" else "<d", raw)
    return out


def close(got, want, roundings):
    return abs(got - want) <= roundings * 2.0 ** -24 * abs(want)


@pytest.mark.parametrize("i", range(len(XS)))
def test_tanh_derivative_in_the_tails(grads, i):
    x = XS[i]
    want = 1.0 / math.cosh(x) ** 2
    assert close(grads["dt"][i], want, 8), (x, grads["dt"][i], want)


@pytest.mark.parametrize("i", range(len(XS)))
def test_sigmoid_derivative_in_the_tails(grads, i):
    x = XS[i]
    e = math.exp(-abs(x))
    want = e / (1.0 + e) ** 2
    assert close(grads["ds"][i], want, 8), (x, grads["ds"][i], want)


def test_the_other_derivatives(grads):
    x = 0.75
    ln2 = math.log(2.0)
    want = (math.exp(x) + 2.0 * 2.0 ** x * ln2 + 3.0 * math.exp(x) + 5.0 / x + 7.0 / (x * ln2)
            + 11.0 / (1.0 + x) + 13.0 * math.cos(x) - 17.0 * math.sin(x))
    assert close(grads["dr"][0], want, 40), (grads["dr"][0], want)
    assert abs(grads["dw"][0] - (math.exp(1.25) + 3.0 / 1.25)) <= 2.0 ** -48
