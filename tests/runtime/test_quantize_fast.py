"""quantize[T](x, s) rounds the f64 quotient (double)x / (double)s, not an integer
division (issue 33; the proof that this equals rounding the exact quotient is at
cairn__quotient_f64 in runtime/cairn_float.h). Held to the exact model of
test_storage_model.py (Python fractions) for i8, u16 and f8e4m3 (and every other T on
the near-tie sample) over: every tie of T at exact scales with its f32 neighbours; every
tie approached as closely as an f32 x allows at random 24-bit scales (the quotients
nearest a tie that any pair of f32s gives: where an f64 quotient could fall onto the
tie if the proof were wrong); planted ties at random scales with few bits; and a random
sample of pairs over the whole range, subnormals and saturation included."""
import pathlib
import random
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_storage_model import FORMATS, INTEGERS, f32_bits, f32_value  # noqa: E402
from test_storage_quantize import check, f32, f32r  # noqa: E402


def ties(target):
    """Every tie of T (the midpoints between neighbours, saturation's edge included)."""
    if target in INTEGERS:
        lo, hi = INTEGERS[target]
        return [Fraction(2 * k + 1, 2) for k in range(lo - 1, hi + 1)]
    fmt = FORMATS[target]
    return list(fmt.mids)


def exact_scale_cases(target, rng):
    """Each tie at scales where h * s is an f32 (the quotient is the tie itself), with
    the f32 neighbours of x either side, both signs."""
    scales = [Fraction(1), Fraction(1, 8), Fraction(3), Fraction(5, 4), Fraction(2) ** -20,
              Fraction(2) ** 20, Fraction(7, 16)]
    scales += [Fraction(rng.randint(1, 511), 2 ** rng.randint(0, 12)) for _ in range(4)]
    if target == "u16":  # 131072 ties: the scale 3, which makes no quotient dyadic
        scales = [Fraction(3)]
    cases = []
    for h in ties(target):
        for s in scales:
            x = h * s
            if abs(x) >= 2 ** 127 or Fraction(f32_value(f32r(float(x)))) != x:
                continue
            b = f32(x)
            for xb in (b - 1, b, b + 1):
                cases += [(xb, f32(s)), (xb ^ 0x80000000, f32(s))]
    return cases


def near_tie_cases(target, rng, per_tie=3):
    """x the f32 nearest h * s (and the two f32s beside it) for random full-width s."""
    cases = []
    hs = ties(target)
    for h in hs[:: 1 if len(hs) < 1000 else 8]:  # f16, bf16, i16: every 8th tie
        for _ in range(per_tie):
            sb = rng.getrandbits(23) | (rng.randint(100, 150) << 23)
            x = h * Fraction(f32_value(sb))
            if not 2 ** -149 < abs(x) < 2 ** 127:
                continue
            b = f32r(float(x))
            for xb in (b - 1, b, b + 1):
                cases.append((xb, sb))
    return cases


def random_cases(rng, n):
    """Pairs over the whole f32 range: subnormal and huge x and s, random signs of x."""
    cases = []
    for _ in range(n):
        x = rng.getrandbits(31) | (rng.getrandbits(1) << 31)
        s = rng.getrandbits(31)
        if x & 0x7F800000 == 0x7F800000 or s & 0x7F800000 == 0x7F800000 or s == 0:
            continue
        cases.append((x, s))
    return cases


@pytest.mark.parametrize("target", ["i8", "u16", "f8e4m3"])
def test_every_tie_at_exact_scales(target):
    check(target, exact_scale_cases(target, random.Random("exact" + target)))


@pytest.mark.parametrize("target", ["i8", "u8", "i16", "f16", "bf16", "f8e4m3", "f8e5m2"])
def test_every_tie_approached_from_both_sides(target):
    rng = random.Random("near" + target)
    check(target, near_tie_cases(target, rng, per_tie=12 if target in ("i8", "f8e4m3") else 1))


@pytest.mark.parametrize("target", ["i8", "f8e4m3"])
def test_planted_ties_and_random_pairs(target):
    rng = random.Random("plant" + target)
    hs = ties(target)
    cases = []
    while len(cases) < 4000:  # a tie h times a scale of at most 12 bits: x is exact
        h, s = rng.choice(hs), Fraction(rng.randint(1, 4095), 2 ** rng.randint(0, 30))
        if 2 ** -126 <= abs(h * s) < 2 ** 127:
            cases.append((f32_bits(float(h * s)), f32(s)))
    cases += random_cases(rng, 30000)
    # quotients in T's working range, where the rounding (not saturation) decides
    for _ in range(20000):
        s = rng.getrandbits(23) | (rng.randint(110, 140) << 23)
        x = rng.getrandbits(23) | ((((s >> 23) & 0xFF) + rng.randint(-12, 8)) << 23)
        cases.append((x | (rng.getrandbits(1) << 31), s))
    check(target, cases)
