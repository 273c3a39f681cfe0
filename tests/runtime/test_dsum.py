"""The exact device sum (runtime/cairn_dsum.*, issue 23 item 11): the emulated launch of a
device `reduce + parallel` gives the bits of the host's exact sum on every input, at every
launch shape and pool width, held to the exact rational model of test_sum.py.

tests/c/dsum_harness.c runs each case through the host's exact sum and through the
emulated device launch at twelve shapes (1 to 300 blocks of 1 to 1024 threads, three of
them drawn at random per run) plus the one generated code uses. The cases are
test_sum.py's (boundaries of rounding, the special values table, subnormals, -0.0,
cancellation to zero, random terms of narrow and wide range, large arrays) and sums of
2^24 terms (and of 2^20: one exponent's range; cancellation to zero) generated in the harness, whose model comes from numpy and Python
integers here (every term is an integer number of the format's least subnormal), at
three shapes each."""
import pathlib
import sys

import numpy as np
import pytest

from cairntest import SAN, harness, run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import test_sum as model  # noqa: E402  (the exact model and the cases, not its tests)

SHAPES = 13  # device sums per case (dsum_harness.c: 9 fixed, 3 drawn, 1 generated code's)
WIDTHS = [1, 2, 7, 16]


def run_dsum(fmt, width, seed, text):
    res = run([harness("dsum_harness"), fmt.name, str(seed)], input=text, timeout=900,
              env={"CAIRN_THREADS": str(width)})
    assert res.returncode == 0, res.stderr
    return [[int(w, 16) for w in line.split()] for line in res.stdout.splitlines()]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("fmt", [model.F64, model.F32], ids=["f64", "f32"])
def test_device_sum_is_the_host_exact_sum(fmt, width):
    cases, text, expected, _ = model.prepared(fmt)
    rows = run_dsum(fmt, width, 77 + width, text)
    assert len(rows) == len(cases)
    for i, (case, want, row) in enumerate(zip(cases, expected, rows)):
        assert len(row) == 1 + SHAPES, row
        assert row[0] == want, f"case {i}: the host's exact sum {row[0]:x}, model {want:x}"
        for s, got in enumerate(row[1:]):
            show = " ".join(f"{b:x}" for b in case[:6])
            assert got == want, (f"{fmt.name} width {width} case {i} [{show}] ({len(case)} "
                                 f"terms) shape {s}: got {got:x}, model {want:x}")


# ---- 2^24 terms: generated in the harness, modelled here -----------------------------

MASK = (1 << 64) - 1


def splitmix(state):
    """splitmix64 over numpy uint64 arrays: (new state, output)."""
    state = state + np.uint64(0x9e3779b97f4a7c15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
    return state, z ^ (z >> np.uint64(31))


def generated(fmt, kind, n, seed):
    """The harness's terms (dsum_gen in dsum_harness.c) as an array of bits."""
    with np.errstate(over="ignore"):
        k = np.arange(n, dtype=np.uint64)
        if kind == "cancel":
            k = k // np.uint64(2)
        s = np.uint64(seed) ^ (k * np.uint64(0x2545f4914f6cdd1d))
        s, r = splitmix(s)
        s, r2 = splitmix(s)
        if fmt is model.F64:
            e = (np.uint64(1013) + r2 % np.uint64(20)) if kind == "normal" else (r2 % np.uint64(2000) + np.uint64(1))
            bits = (r >> np.uint64(12)) | (e << np.uint64(52)) | ((r2 >> np.uint64(63)) << np.uint64(63))
            flip = np.uint64(1 << 63)
        else:
            e = (np.uint64(117) + r2 % np.uint64(20)) if kind == "normal" else (r2 % np.uint64(240) + np.uint64(1))
            bits = (r >> np.uint64(41)) | (e << np.uint64(23)) | ((r2 >> np.uint64(63)) << np.uint64(31))
            flip = np.uint64(1 << 31)
        if kind == "cancel":
            bits = np.where(np.arange(n) % 2 == 1, bits ^ flip, bits)
    return bits


def exact_total(fmt, bits):
    """The exact sum of finite, normal terms as a Fraction: each is an integer mantissa
    times a power of two. The mantissas' three 18-bit parts are added per exponent by
    np.bincount, whose float64 sums are exact here (2^24 terms of 2^18 each stay below
    2^53), and the exponents' sums as Python integers."""
    from fractions import Fraction
    mbits = fmt.p - 1
    exp = ((bits >> np.uint64(mbits)) & np.uint64((1 << (fmt.width - 1 - mbits)) - 1)).astype(np.int64)
    mant = ((bits & np.uint64((1 << mbits) - 1)) | np.uint64(1 << mbits)).astype(np.int64)
    sign = np.where((bits >> np.uint64(fmt.width - 1)) & np.uint64(1), -1.0, 1.0)
    parts = [np.bincount(exp, weights=sign * ((mant >> (18 * j)) & ((1 << 18) - 1)),
                         minlength=1 << 11) for j in range(3)]
    total = sum(sum(int(parts[j][e]) << (18 * j) for j in range(3)) << e
                for e in range(1 << 11))
    bias = (1 << (fmt.width - 2 - mbits)) - 1
    return Fraction(total) * Fraction(2) ** (-bias - mbits)


@pytest.mark.skipif(SAN != "none", reason="2^24 terms: the plain cells run it")
@pytest.mark.parametrize("fmt", [model.F64, model.F32], ids=["f64", "f32"])
def test_two_to_the_24_terms(fmt):
    runs = [("wide", 1 << 24, 11), ("normal", (1 << 20) + 7, 12), ("cancel", 1 << 20, 13)]
    text = "".join(f"gen {kind} {n} {seed}\n" for kind, n, seed in runs)
    rows = run_dsum(fmt, 16, 5, text)
    assert len(rows) == len(runs)
    for (kind, n, seed), row in zip(runs, rows):
        total = exact_total(fmt, generated(fmt, kind, n, seed))
        want = 0 if total == 0 else fmt.bits(fmt.round(total))
        assert row == [want] * 4, (kind, [hex(b) for b in row], hex(want))
