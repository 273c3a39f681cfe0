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


# NaN payloads and pool widths through the lowering. The inputs reach F unchanged (no
# arithmetic first, so a signalling NaN stays signalling): every third one a NaN with
# both signs, quiet and signalling, and payload bits spread over all 22; the rest bit
# patterns as above. N is no multiple of 256, so pools of 1, 2, 7 and 16 threads cut it
# into unequal shares with a short last block.
NAN_N = 4133
NAN_INPUTS = """  for i in 0..N {{
    if i % 3 == 0 {{
      x[i] = from_bits[f32](u32((i / 3 % 2) * 2147483648 + 2139095040 + (i / 6 % 2) * 4194304
                                + (i * 2654435761 % 4194303) + 1));
    }} else {{
      x[i] = from_bits[f32](u32(i * 4099 * 17 % 4294967291));
    }}
  }}
"""
NAN_PROGRAM = """const N:usize = {n};
fn region(x:ro<f32>[N], y:rw<f32>[N]) {{ parallel i in N {{ y[i] = std.cr.{f}(x[i]); }} }}
fn ordered(x:ro<f32>[N], z:rw<f32>[N]) {{ for i in 0..N {{ z[i] = std.cr.{f}(x[i]); }} }}
fn main() -> i32 {{
  buffer x:f32[N] = zeroed;
  buffer y:f32[N] = zeroed;
  buffer z:f32[N] = zeroed;
{inputs}  region(x, y);
  ordered(x, z);
  observe("x", x);
  observe("region", y);
  observe("ordered", z);
  return 0;
}}
"""
NAN_CONVERT = """const N:usize = {n};
fn narrow(x:ro<f32>[N], h:rw<{t}>[N]) {{ parallel i in N {{ h[i] = {t}(x[i]); }} }}
fn widen(h:ro<{t}>[N], y:rw<f32>[N]) {{ parallel i in N {{ y[i] = f32(h[i]); }} }}
fn main() -> i32 {{
  buffer x:f32[N] = zeroed;
  buffer h:{t}[N] = zeroed;
  buffer g:{t}[N] = zeroed;
  buffer y:f32[N] = zeroed;
  buffer z:f32[N] = zeroed;
{inputs}  narrow(x, h);
  for i in 0..N {{ g[i] = {t}(x[i]); }}
  widen(h, y);
  for i in 0..N {{ z[i] = f32(g[i]); }}
  observe("x", x);
  observe("region", h);
  observe("ordered", g);
  observe("wide_region", y);
  observe("wide_ordered", z);
  return 0;
}}
"""
WIDTHS = (1, 2, 7, 16)


def raw_words(exe, folder, env, size):
    """The program's observations as lists of unsigned words (CAIRN_OBSERVE_RAW)."""
    folder.mkdir()
    res = run_exe(exe, env={"CAIRN_OBSERVE_RAW": str(folder), **env})
    assert res.returncode == 0, res.stderr
    out = {}
    for o in read_log(folder / "index.jsonl"):
        data = (folder / o["file"]).read_bytes()
        out[o["name"]] = [int.from_bytes(data[k:k + size], "little") for k in range(0, len(data), size)]
    return out


def is_nan32(b):
    return b & 0x7FFFFFFF > 0x7F800000


def test_the_nan_inputs_are_what_the_test_means():
    # the program's own formula, in Python: a third NaN, half signalling, both signs
    pats = [((i // 3 % 2) << 31) + 0x7F800000 + (i // 6 % 2 << 22) + i * 2654435761 % 4194303 + 1
            for i in range(0, NAN_N, 3)]
    assert all(is_nan32(b) for b in pats)
    assert {b >> 31 for b in pats} == {0, 1} and {b >> 22 & 1 for b in pats} == {0, 1}
    assert all(pats.count(b) == 1 for b in pats[:200])


@pytest.mark.parametrize("func", F32)
def test_nan_payloads_and_pool_widths_give_the_one_nan(tmp_path, func):
    src = tmp_path / "n.cairn"
    src.write_text(NAN_PROGRAM.format(n=NAN_N, f=func, inputs=NAN_INPUTS))
    build(src, tmp_path / "n")
    seen = set()
    for kernel in ("avx512", "avx2", "scalar"):
        for w in WIDTHS:
            env = {"CAIRN_CR_KERNEL": kernel, "CAIRN_THREADS": str(w)}
            obs = raw_words(tmp_path / "n", tmp_path / f"raw-{kernel}-{w}", env, 4)
            x, y = obs["x"], obs["region"]
            assert y == obs["ordered"], (kernel, w)
            nans = [k for k, b in enumerate(x) if is_nan32(b)]
            assert len(nans) > NAN_N // 3 and any(x[k] >> 22 & 1 == 0 for k in nans)
            # docs/numerics.md: every NaN result of std.cr is 0x7FFFFFFF, payload dropped
            assert all(y[k] == 0x7FFFFFFF for k in nans), (kernel, w)
            seen.add(tuple(y))
    assert len(seen) == 1
    assert lowered(src, tmp_path, f"cairn_cr_{func}f_array(")


def f16_of_nan(b):
    # quiet, the sign, the top 9 payload bits (docs/numerics.md: what F16C does)
    return (b >> 16 & 0x8000) | 0x7E00 | (b >> 13 & 0x1FF)


def bf16_of_nan(b):
    return (b >> 16) | 0x0040


@pytest.mark.parametrize("storage", ["f16", "bf16"])
def test_conversion_nan_payloads_and_pool_widths(tmp_path, storage):
    src = tmp_path / "c.cairn"
    src.write_text(NAN_CONVERT.format(n=NAN_N, t=storage, inputs=NAN_INPUTS))
    build(src, tmp_path / "c")
    model = f16_of_nan if storage == "f16" else bf16_of_nan
    for w in WIDTHS:
        f32s = raw_words(tmp_path / "c", tmp_path / f"raw32-{w}", {"CAIRN_THREADS": str(w)}, 4)
        f16s = raw_words(tmp_path / "c", tmp_path / f"raw16-{w}", {"CAIRN_THREADS": str(w)}, 2)
        x, h = f32s["x"], f16s["region"]
        assert h == f16s["ordered"] and f32s["wide_region"] == f32s["wide_ordered"], w
        nans = [k for k, b in enumerate(x) if is_nan32(b)]
        assert [h[k] for k in nans] == [model(x[k]) for k in nans], w
        # widening: the payload shifted into place, not made quiet (16 - 3 or 16 bits)
        shift = 13 if storage == "f16" else 16
        exp_bits = 0x7C00 if storage == "f16" else 0x7F80
        frac_mask = 0x3FF if storage == "f16" else 0x7F
        for k in nans:
            assert h[k] & exp_bits == exp_bits
            wide = (h[k] >> 15 << 31) | 0x7F800000 | (h[k] & frac_mask) << shift
            assert f32s["wide_region"][k] == wide, (w, k)
    assert lowered(src, tmp_path, f"cairn_f32_to_{storage}_array(")


def lowered(src, folder, call):
    """Whether the region of src is lowered to the array form `call` (the C emitted)."""
    out = folder / "emitted"
    res = cairn("build", src, "-o", folder / "q", "--emit-c", out, "--emit-only")
    assert res.returncode == 0, res.stderr
    return "".join(p.read_text() for p in out.iterdir()).count(call) == 1
