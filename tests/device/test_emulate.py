"""The spec's "Emulated device runs" table, row by row, on the emulation (docs/devices.md).

Each program under programs/ computes on the device (dev_* observations) and the same
thing as host code (ref_*). Where the table says "the same", every dev_ equals its ref_
bit for bit, at every pool width (CAIRN_THREADS; 1, 3 and 16 here, 1..16 under
CAIRN_MATRIX), in this matrix cell (gcc or clang; plain, ASan+UBSan or TSan). Where it
says "may differ", the result is held to the contract's bound around an exact model
(Python fractions). Tensor cores are the next issue's."""
import json
import math
import pathlib
import struct
from fractions import Fraction

import numpy as np
import pytest

from cairntest import BIN, MATRIX, run
from devicelib import PROGRAMS, accepted, build, observe, pairs, same_or_device_nan, values

WIDTHS = list(range(1, 17)) if MATRIX else [1, 3, 16]
# Observations whose bits follow the order threads arrive in (atomic float adds).
UNORDERED = {"sum_f32", "sum_f64"}

SAME = ["lanes_exact", "reduce_device", "coop_block", "atomics", "wide", "cr_lanes",
        "enclose_device", "atomics_widths", "warp_branches", "shared_atomics", "reduce_ops"]
# Programs whose lanes' floats all leave std.cr calls: std.cr gives one NaN on both sides
# (0x7fffffff / 0x7fffffffffffffff, numerics.md "Correctly rounded math") and a call's
# result is a move, so these keep the host's bits even where they are NaNs.
EXACT = {"cr_lanes"}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each program built once in this cell and run at every width: {program: [obs...]}."""
    cache = {}

    def get(name):
        accepted(PROGRAMS / f"{name}.cairn")
        if name not in cache:
            tmp = tmp_path_factory.mktemp(name)
            exe = build(PROGRAMS / f"{name}.cairn", tmp / name)
            cache[name] = [observe(exe, tmp / f"w{w}", w) for w in WIDTHS]
        return cache[name]
    return get


@pytest.mark.parametrize("name", SAME)
def test_device_equals_host_reference(runs, name):
    """Bit for bit, but where host code gives a NaN a device lane gives the device's NaN
    (EXACT: bit for bit, NaNs too)."""
    for obs in runs(name):
        for dev, ref in pairs(obs):
            if name in EXACT:
                assert obs[dev][:3] == obs[ref][:3], f"{name}: {dev} differs from {ref}"
                continue
            bad = same_or_device_nan(obs, dev, ref)
            assert bad is None, f"{name}: {dev} differs from {ref} at element {bad}"


@pytest.mark.parametrize("name", SAME)
def test_same_bits_at_every_width(runs, name):
    first, *rest = runs(name)
    for obs in rest:
        for k in first:
            if k not in UNORDERED:
                assert obs[k][2] == first[k][2], f"{name}: {k} depends on the pool width"


def test_device_float_min_max_against_a_model(runs):
    """reduce min/max parallel over f32/f64 device views (softmax's largest term): the
    value numpy's min/max gives, -0.0 for a min and +0.0 for a max where zeros of both
    signs tie, and the quiet NaN (0x7fc00000, 0x7ff8000000000000) where a term is a NaN,
    at every width."""
    def model(xs, pick, bits, quiet):
        a = np.array(xs)
        if np.isnan(a).any():
            return quiet
        m = pick(a)
        if m == 0:  # zeros of both signs tie: min takes -0.0 and max +0.0 when present
            signs = {math.copysign(1.0, x) for x in xs if x == 0}
            m = -0.0 if (pick is np.min and -1.0 in signs) or (pick is np.max and signs == {-1.0}) \
                else 0.0
        return bits(m)
    b32 = lambda x: struct.unpack("<I", struct.pack("<f", x))[0]  # noqa: E731
    b64 = lambda x: struct.unpack("<Q", struct.pack("<d", x))[0]  # noqa: E731
    for obs in runs("reduce_ops"):
        f = {k: values(obs, "f_" + k) for k in ("pos", "neg", "nan", "inf", "wide", "wnan")}
        got = lambda k: values(obs, k)[0]  # noqa: E731
        assert b32(got("dev_fmin_pos")) == model(f["pos"], np.min, b32, 0x7fc00000) == 0x80000000
        assert b32(got("dev_fmax_neg")) == model(f["neg"], np.max, b32, 0x7fc00000) == 0
        assert b32(got("dev_fmin_inf")) == model(f["inf"], np.min, b32, 0) == 0xff800000
        assert b32(got("dev_fmax_inf")) == model(f["inf"], np.max, b32, 0) == 0x7f800000
        assert b32(got("nan_fmin32")) == model(f["nan"], np.min, b32, 0x7fc00000) == 0x7fc00000
        assert b32(got("nan_fmax32")) == model(f["nan"], np.max, b32, 0x7fc00000) == 0x7fc00000
        half = [x * 0.5 for x in f["wide"]]
        assert b64(got("dev_fmin_wide")) == model(half, np.min, b64, 0) == 1 << 63
        assert b64(got("dev_fmax_wide")) == model(half, np.max, b64, 0)
        assert b64(got("nan_fmin64")) == 0x7ff8000000000000
        assert math.isnan(f["wnan"][-1]) and not any(math.isnan(x) for x in f["wnan"][:-1])


def test_device_float_reduce_is_the_exact_sum(runs):
    """Row 6: a device reduce + over floats is the exact device sum: the exact sum of the
    terms (each rounded as its yield says: numpy float32 / Python float) rounded once
    (Python fractions and test_sum.py's rounding), at every width; the index-order fold
    of reduce + for, observed beside it, is a different number here."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "runtime"))
    import test_sum as model
    for obs in runs("reduce_device"):
        f, g = values(obs, "f"), values(obs, "g")
        terms = [np.float32(np.float32(x) * np.float32(1.25)).item() for x in f]
        want = model.F32.bits(model.F32.round(sum(Fraction(t) for t in terms)))
        assert obs["dev_fsum"][3] == struct.pack("<I", want)
        dterms = [x - 0.5 for x in g]
        want = model.F64.bits(model.F64.round(sum(Fraction(t) for t in dterms)))
        assert obs["dev_dsum"][3] == struct.pack("<Q", want)
        assert obs["fold_fsum"][3] != obs["dev_fsum"][3]  # the order would have shown


def test_device_integer_reduce_is_exact(runs):
    """Row 5: integer device reduces give the host's value; the + total fits although the
    index-order running sum leaves i32's range (no trap)."""
    obs = runs("reduce_device")[0]
    assert values(obs, "dev_isum")[0] == values(obs, "ref_isum")[0]


def _bins(terms, k):
    return [terms[b::k] for b in range(k)]


def test_atomic_float_adds_within_bound(runs):
    """Row 10: atomic_add_unordered lies within k * 2^-23 * (|old| + sum |v|) + k * 2^-125
    (f32, flushed) and k * 2^-52 * (|old| + sum |v|) (f64) of the exact sum, bins of k
    terms each, old = 0; the subnormal f32 terms are flushed in a device lane (the sum
    stays +0.0) and kept by the host's atomic add."""
    for obs in runs("atomics"):
        for typ, terms_name, sums_name, eps, tiny in (
                ("f32", "f", "sum_f32", Fraction(1, 2 ** 23), Fraction(1, 2 ** 125)),
                ("f64", "d", "sum_f64", Fraction(1, 2 ** 52), Fraction(0))):
            terms, sums = values(obs, terms_name), values(obs, sums_name)
            for b, bin_terms in enumerate(_bins(terms, len(sums))):
                k = len(bin_terms)
                exact = sum(Fraction(t) for t in bin_terms)
                bound = k * eps * sum(abs(Fraction(t)) for t in bin_terms) + k * tiny
                assert abs(Fraction(sums[b]) - exact) <= bound, (typ, b)
        assert obs["sub_device"][3] == struct.pack("<f", 0.0)
        # the host keeps them: equal terms give the same partial sums in any order
        term, acc = np.float32(1e-39), np.float32(0.0)
        assert term != 0 and abs(term) < np.finfo(np.float32).tiny
        for _ in range(5000):
            acc = np.float32(acc + term)
        assert obs["sub_host"][3] == struct.pack("<f", acc)


def test_device_trap_reports_like_the_host(tmp_path):
    """Row 1: a failed guard in a device lane aborts with the host's trap line."""
    src = PROGRAMS / "trap_lane.cairn"
    exe = build(src, tmp_path / "trap_lane")
    res = run([exe], env={"CAIRN_THREADS": "4"})
    assert res.returncode != 0
    assert res.stderr.strip().splitlines()[-1] == f"trap: integer overflow: 100 + 2147483600 does not fit in i32 at {src}:3:28"


def test_warp_operation_needs_whole_warps(tmp_path):
    """A block whose thread count is not a multiple of 32 traps where a warp operation
    would run on a partial warp (the device would read lanes that do not exist)."""
    src = tmp_path / "partial.cairn"
    src.write_text("fn k(x:rw<f32>[40]@device) {\n"
                   "  blocks g in 1 threads t in 40 { x[t] = reduce + warp yield x[t]; }\n}\n"
                   "fn main() -> i32 {\n  buffer x:f32[40]@device = zeroed;\n  k(x);\n  return 0;\n}\n")
    accepted(src)
    exe = build(src, tmp_path / "partial")
    res = run([exe])
    assert res.returncode != 0 and "a warp operation needs whole warps" in res.stderr
    assert f"{src}:2:30" in res.stderr  # the thread count


@pytest.mark.parametrize("flags,target", [([], "host"), (["--target", "sm_90", "--emulate"], "sm_90")])
def test_receipt_says_emulated_with_device_numerics(tmp_path, flags, target):
    """The receipt of a program with device work run on host threads: the target, emulate
    true, and the device numerics (atomics with their bound, unordered device sums)."""
    accepted(PROGRAMS / "atomics.cairn")
    build(PROGRAMS / "atomics.cairn", tmp_path / "a", *flags)
    r = json.loads((tmp_path / "a.receipt.json").read_text())
    assert r["target"] == target and r["emulate"] is True and "nvcc" not in r
    assert {"op": "atomic_add", "type": "f32", "rounding": "nearest-even", "order": "unordered",
            "space": "global", "flush_subnormals": True,
            "bound": "k * 2^-23 * (|old| + sum |v|) + k * 2^-125"} in r["numerics"]["floats"]
    assert {"op": "atomic_add", "type": "f32", "rounding": "nearest-even", "order": "unordered",
            "space": "host", "flush_subnormals": False,
            "bound": "k * 2^-23 * (|old| + sum |v|)"} in r["numerics"]["host_sub"]
    build(PROGRAMS / "reduce_device.cairn", tmp_path / "r", *flags)
    r = json.loads((tmp_path / "r.receipt.json").read_text())
    assert {"op": "sum", "from": "f32", "to": "f32", "rounding": "nearest-even",
            "order": "exact"} in r["numerics"]["fsum"]
    build(PROGRAMS / "coop_block.cairn", tmp_path / "c", *flags)
    r = json.loads((tmp_path / "c.receipt.json").read_text())
    assert {"op": "sum", "from": "f32", "to": "f32", "rounding": "nearest-even",
            "order": "warp-butterfly"} in r["numerics"]["warps"]


def test_host_program_is_not_emulated(tmp_path):
    build(pathlib.Path(__file__).resolve().parents[2] / "examples" / "parallel_sum.cairn", tmp_path / "p")
    assert json.loads((tmp_path / "p.receipt.json").read_text())["emulate"] is False
