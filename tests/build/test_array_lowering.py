"""A host parallel region `v[i] = F(e)`, F std.cr or an f32 <-> f16/bf16 conversion, is
lowered to the runtime's array form (compiler/lower/lower_c_array.c, runtime/
cairn_cr_array.h, runtime/cairn_float.h): its results are the bits of the scalar
functions, which a `for` loop over the same inputs still calls, under every kernel this
machine runs (CAIRN_CR_KERNEL); the region keeps its index checks and their source
locations; device regions keep the scalar functions."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import build, cairn, read_log, run_exe  # noqa: E402

F32 = ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"]

# N is no multiple of the 256-index blocks nor of a vector; the inputs: every 4099th
# bit pattern (specials, subnormals, NaN payloads among them) then scaled values.
PROGRAM = """const N:usize = 70001;
fn region(x:ro<f32>[N], m:f32, y:rw<f32>[N]) {{
  parallel i in N {{ y[i] = std.cr.{f}(x[i] * 0.5 - m); }}
}}
fn ordered(x:ro<f32>[N], m:f32, z:rw<f32>[N]) {{
  for i in 0..N {{ z[i] = std.cr.{f}(x[i] * 0.5 - m); }}
}}
fn main() -> i32 {{
  buffer x:f32[N] = zeroed;
  buffer y:f32[N] = zeroed;
  buffer z:f32[N] = zeroed;
  let mut r:u64 = 12345;
  for i in 0..N {{
    if i < 50000 {{
      x[i] = from_bits[f32](u32(i * 4099 * 17 % 4294967291));
    }} else {{
      r = r * 48271 % 2147483647;
      x[i] = f32(r % 40001) * 0.001 - 20.0;
    }}
  }}
  region(x, 0.25, y);
  ordered(x, 0.25, z);
  observe("region", y);
  observe("ordered", z);
  return 0;
}}
"""


def observations(exe, folder, kernel):
    log = folder / f"log-{kernel}"
    res = run_exe(exe, env={"CAIRN_OBSERVE": str(log), "CAIRN_CR_KERNEL": kernel})
    assert res.returncode == 0, res.stderr
    return {o["name"]: o["sha256"] for o in read_log(log)}


@pytest.mark.parametrize("func", F32)
def test_region_gives_the_scalar_bits_under_every_kernel(tmp_path, func):
    src = tmp_path / "p.cairn"
    src.write_text(PROGRAM.format(f=func))
    build(src, tmp_path / "p")
    digests = {k: observations(tmp_path / "p", tmp_path, k) for k in ("avx512", "avx2", "scalar")}
    for k, d in digests.items():
        assert d["region"] == d["ordered"], (k, d)
    assert len({d["region"] for d in digests.values()}) == 1
    out = tmp_path / "c"
    res = cairn("build", src, "-o", tmp_path / "q", "--emit-c", out, "--emit-only")
    assert res.returncode == 0, res.stderr
    text = (out / "p.c").read_text()
    assert text.count(f"cairn_cr_{func}f_array(") == 1  # the region's, not the for loop's
    assert '#include "cairn_cr_array.h"' in text


def test_region_keeps_its_index_checks(tmp_path):
    src = tmp_path / "t.cairn"
    src.write_text("""const N:usize = 1000;
fn region(x:ro<f32>[N], y:rw<f32>[500]) {
  parallel i in N { y[i] = std.cr.exp(x[i]); }
}
fn main() -> i32 {
  buffer x:f32[N] = zeroed;
  buffer y:f32[500] = zeroed;
  region(x, y);
  return 0;
}
""")
    build(src, tmp_path / "t")
    res = run_exe(tmp_path / "t")
    assert res.returncode != 0 and "trap" in res.stderr and "3:21" in res.stderr, res.stderr


def test_other_shapes_and_device_regions_keep_the_scalar_call(tmp_path):
    src = tmp_path / "d.cairn"
    src.write_text("""const N:usize = 64;
fn sum_after(x:ro<f32>[N], y:rw<f32>[N]) {
  parallel i in N { y[i] = std.cr.exp(x[i]) + 1.0; }
}
fn reads_itself(y:rw<f32>[N]) {
  parallel i in N { y[i] = std.cr.exp(y[i]); }
}
fn device(x:ro<f32>[N]@device, y:rw<f32>[N]@device) {
  parallel i in N { y[i] = std.cr.exp(x[i]); }
}
fn main() -> i32 { return 0; }
""")
    for mode in ([], ["--emulate"]):
        out = tmp_path / f"c{len(mode)}"
        res = cairn("build", src, "-o", tmp_path / "d", "--emit-c", out, "--emit-only", *mode)
        assert res.returncode == 0, res.stderr
        text = "".join(p.read_text() for p in out.iterdir())
        assert "_array(" not in text and "cairn_cr_expf(" in text


CONVERT = """const N:usize = 70001;
fn narrow(x:ro<f32>[N], h:rw<{t}>[N]) {{ parallel i in N {{ h[i] = {t}(x[i] * 0.5); }} }}
fn widen(h:ro<{t}>[N], y:rw<f32>[N]) {{ parallel i in N {{ y[i] = f32(h[i]); }} }}
fn main() -> i32 {{
  buffer x:f32[N] = zeroed;
  buffer h:{t}[N] = zeroed;
  buffer g:{t}[N] = zeroed;
  buffer y:f32[N] = zeroed;
  buffer z:f32[N] = zeroed;
  for i in 0..N {{ x[i] = from_bits[f32](u32(i * 4099 * 17 % 4294967291)); }}
  narrow(x, h);
  for i in 0..N {{ g[i] = {t}(x[i] * 0.5); }}
  widen(h, y);
  for i in 0..N {{ z[i] = f32(g[i]); }}
  observe("region", h);
  observe("ordered", g);
  observe("wide_region", y);
  observe("wide_ordered", z);
  return 0;
}}
"""


@pytest.mark.parametrize("storage", ["f16", "bf16"])
def test_conversion_regions_give_the_scalar_bits(tmp_path, storage):
    src = tmp_path / "v.cairn"
    src.write_text(CONVERT.format(t=storage))
    build(src, tmp_path / "v")
    d = observations(tmp_path / "v", tmp_path, "avx512")
    assert d["region"] == d["ordered"] and d["wide_region"] == d["wide_ordered"], d
    out = tmp_path / "c"
    res = cairn("build", src, "-o", tmp_path / "q", "--emit-c", out, "--emit-only")
    assert res.returncode == 0, res.stderr
    text = (out / "v.c").read_text()
    assert text.count(f"cairn_f32_to_{storage}_array(") == 1
    assert text.count(f"cairn_{storage}_to_f32_array(") == 1
