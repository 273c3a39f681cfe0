"""quantize[T] and quantize_stochastic[T] of runtime/cairn_float.h against the exact
model in test_storage_model.py: ties, saturation, negatives, tiny and huge quotients,
quotients that are not dyadic (the sticky path), bad scales and NaN (traps), and the
stochastic rounding's threshold and unbiasedness over noise."""
import pathlib
import random
import struct
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import harness, run  # noqa: E402
from test_storage_model import FORMATS, INTEGERS, f32_bits, f32_value, quantize  # noqa: E402

TARGETS = list(FORMATS) + list(INTEGERS)
INF, NAN = 0x7F800000, 0x7FC00000


def runtime_quantize(target, cases, stochastic=False):
    """Runs float_conv quant|stoch over (x_bits, scale_bits[, noise]) cases."""
    text = "".join(" ".join(f"{c:x}" if i < 2 else str(c) for i, c in enumerate(case)) + "\n"
                   for case in cases)
    res = run([harness("float_conv"), "stoch" if stochastic else "quant", target],
              input=text, check=True)
    out = res.stdout.split()
    assert len(out) == len(cases)
    return [int(o) if target in INTEGERS else int(o, 16) for o in out]


def check(target, cases, stochastic=False):
    got = runtime_quantize(target, cases, stochastic)
    bad = [(tuple(hex(c) for c in case), g, quantize(target, *case))
           for case, g in zip(cases, got) if g != quantize(target, *case)]
    assert not bad, f"{len(bad)} of {len(cases)} differ, first: {bad[:5]}"


def f32(value):
    return f32_bits(float(value))


def f32r(value):
    """Bits of the f32 nearest a Python float (for literals such as 0.1)."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def tie_cases(target):
    """Quotients exactly halfway between two neighbours of T (and one f32 ulp either
    side), at scales 1, 2^-3 (exact) and 3 (x = quotient * 3, still exact)."""
    if target in INTEGERS:
        lo, hi = INTEGERS[target]
        halves = [Fraction(2 * k + 1, 2) for k in range(max(lo, -300), min(hi, 300))]
        halves += [Fraction(hi) + Fraction(1, 2), Fraction(lo) - Fraction(1, 2)]
    else:
        fmt = FORMATS[target]
        halves = fmt.mids[:: max(1, len(fmt.mids) // 600)] + [fmt.mids[-1], fmt.mids[-2]]
    cases = []
    for h in halves:
        for scale in (1, Fraction(1, 8), 3):
            x = h * scale
            if abs(x) >= 2 ** 127:
                continue
            b = f32(x)
            for xb in (b - 1, b, b + 1) if x else (b, b + 1):
                cases.append((xb, f32(scale)))
                cases.append((xb ^ 0x80000000, f32(scale)))
    return cases


def edge_cases():
    """Zeros, infinities, saturation, subnormal x and scales, extreme quotients."""
    xs = [0.0, 1.0, 1e9, 3e38, 1e-45, 1e-40, 2.0 ** -126, 448.0, 464.0, 480.0, 57344.0,
          65504.0, 65520.0, 127.5, 128.5, 255.5, 32767.5, 65535.5, 0.5, 1.5, 2.5]
    scales = [1.0, 2.0, 0.375, 1e-45, 1e-40, 2.0 ** -126, 3e38, 1e30, 7.0, 0.1]
    cases = [(f32r(x) | sign, f32r(s)) for x in xs for s in scales for sign in (0, 0x80000000)]
    return cases + [(INF, f32(1.0)), (INF | 0x80000000, f32(2.0)), (INF, 1)]


def random_cases(seed, n=3000):
    rng = random.Random(seed)
    cases = []
    for _ in range(n):
        x = rng.getrandbits(32) & ~0x7F800000 | (rng.randint(100, 150) << 23)
        s = rng.getrandbits(23) | (rng.randint(110, 140) << 23)
        cases.append((x, s))
    return cases


@pytest.mark.parametrize("target", TARGETS)
def test_quantize_ties_and_neighbours(target):
    check(target, tie_cases(target))


@pytest.mark.parametrize("target", TARGETS)
def test_quantize_edges_saturation_and_random_quotients(target):
    check(target, edge_cases() + random_cases(target))


def test_quantize_spec_examples():
    assert runtime_quantize("i8", [(f32(-2.5), f32(1)), (f32(500), f32(2))]) == [-2, 127]
    assert runtime_quantize("f8e4m3", [(f32(1e9), f32(1))]) == [0x7E]  # 448
    assert f32_value(f32(448)) == FORMATS["f8e4m3"].max


def f32_round(q):
    """q rounded to f32 (through f64, which is exact enough for these q: no tie)."""
    return Fraction(struct.unpack("<f", struct.pack("<f", float(q)))[0])


def test_quantize_rounds_the_exact_quotient_once():
    """Cases where the f32 division x / scale lands exactly on a half, so rounding the
    f32 quotient would go to the even integer, while the exact quotient lies off the
    half and must round by its side. The test asserts these are real traps."""
    rng = random.Random(7)
    cases, traps = [], 0
    while len(cases) < 400:
        half = Fraction(2 * rng.randint(4096, 8000) + 1, 2)
        s = f32_value(rng.getrandbits(23) | (127 << 23))
        x = f32r(float(half * Fraction(s)))
        q = Fraction(f32_value(x)) / Fraction(s)
        if f32_round(q) == half and q != half:
            cases.append((x, f32(s)))
            whole = half - Fraction(1, 2)
            traps += quantize("i16", x, f32(s)) != whole + whole % 2
    assert traps > 100
    check("i16", cases)
    check("u16", cases)


# The trap names the scale: the shortest decimal that reads back to it as an f32.
BAD_SCALES = [(0.0, "0"), (-0.0, "-0"), (-1.0, "-1"), (float("inf"), "inf"),
              (float("-inf"), "-inf"), (float("nan"), "nan"), (-1e-45, "-1e-45")]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("scale,text", BAD_SCALES)
def test_quantize_bad_scale_traps(target, scale, text):
    sbits = struct.unpack("<I", struct.pack("<f", scale))[0]
    for mode, line in (("quant", f"3f800000 {sbits:x}\n"), ("stoch", f"3f800000 {sbits:x} 5\n")):
        res = run([harness("float_conv"), mode, target], input=line)
        assert res.returncode != 0
        want = f"trap: quantize scale must be positive and finite (scale = {text}) at"
        assert f"{want} quant.cairn:7:3" in res.stderr, res.stderr


@pytest.mark.parametrize("target", ["f16", "f8e4m3", "i8", "u16"])
def test_quantize_nan_traps(target):
    """Decision: quantize of a NaN traps for every T (its result is always finite)."""
    for x in (NAN, 0xFF800001):
        for mode, noise in (("quant", ""), ("stoch", " 9")):
            res = run([harness("float_conv"), mode, target], input=f"{x:x} 3f800000{noise}\n")
            assert res.returncode != 0 and "trap: quantize of NaN" in res.stderr


@pytest.mark.parametrize("target", TARGETS)
def test_stochastic_against_model(target):
    rng = random.Random("stoch" + target)
    cases = [(x, s, rng.getrandbits(32)) for x, s in edge_cases() + random_cases(target, 2000)]
    cases += [(x, s, n) for x, s in tie_cases(target)[:400] for n in (0, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1)]
    check(target, cases, stochastic=True)


@pytest.mark.parametrize("target", ["i8", "u16", "f16", "bf16", "f8e4m3", "f8e5m2"])
def test_stochastic_threshold_is_strict(target):
    """A dropped fraction of exactly a / 2^k rounds up for noise below a * 2^(32-k) and
    stays for noise at or above it; an exact quotient never moves."""
    if target in INTEGERS:
        x, unit = Fraction(5) + Fraction(3, 16), 1
    else:
        fmt = FORMATS[target]
        i = len(fmt.values) // 2
        x, unit = fmt.values[i], fmt.values[i + 1] - fmt.values[i]
        x += unit * Fraction(3, 16)
    edge = 3 * 2 ** 28
    cases = [(f32(x), f32(1), n) for n in (0, edge - 1, edge, edge + 1, 2 ** 32 - 1)]
    cases += [(f32(x - unit * Fraction(3, 16)), f32(1), n) for n in (0, 7)]
    got = runtime_quantize(target, cases, stochastic=True)
    base = quantize(target, f32(x), f32(1))  # nearest: the lower neighbour here
    up = quantize(target, f32(x), f32(1), noise=0)
    assert up != base
    assert got == [up, up, base, base, base, base, base]


@pytest.mark.parametrize("target", ["i8", "f16", "f8e5m2"])
def test_stochastic_unbiased_over_noise(target):
    """Over the 2^12 evenly spaced noise words j * 2^20, a quotient whose dropped fraction
    is a multiple of 2^-12 rounds up in exactly that fraction of them, so the mean of the
    results equals the quotient exactly; over random noise the mean is within 5 sigma."""
    fmt = FORMATS.get(target)
    for frac_num in (1, 1000, 2047, 2048, 4095):
        if fmt:
            lo, hi = fmt.values[len(fmt.values) // 2], fmt.values[len(fmt.values) // 2 + 1]
        else:
            lo, hi = Fraction(-7), Fraction(-6)  # negative: rounds away from zero
        q = lo + (hi - lo) * Fraction(frac_num, 4096)
        grid = [(f32(q), f32(1), j << 20) for j in range(4096)]
        got = runtime_quantize(target, grid, stochastic=True)
        vals = [Fraction(g) if not fmt else fmt.decode(g) for g in got]
        assert sum(vals) / len(vals) == q, (target, frac_num)
    rng = random.Random(target)
    q = lo + (hi - lo) * Fraction(1, 3)  # not dyadic in the fraction: 1/3 of a unit
    x = f32r(float(q))
    q = Fraction(f32_value(x))
    cases = [(x, f32(1), rng.getrandbits(32)) for _ in range(20000)]
    vals = [Fraction(g) if not fmt else fmt.decode(g) for g in runtime_quantize(target, cases, True)]
    p = (q - lo) / (hi - lo)
    mean_frac = (sum(vals) / len(vals) - lo) / (hi - lo)
    sigma = (float(p) * (1 - float(p)) / len(vals)) ** 0.5
    assert abs(float(mean_frac - p)) < 5 * sigma
