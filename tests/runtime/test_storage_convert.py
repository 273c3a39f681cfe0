"""Storage-float conversions of runtime/cairn_float.h against the exact model in
test_storage_model.py: every bit pattern widened, and f32 / f64 narrowed at every tie,
one ulp either side of it, every boundary, the specials, and the f64 values where going
through f32 would round twice. The C side is tests/c/float_conv.c."""
import pathlib
import struct
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import harness, run  # noqa: E402
from test_storage_model import (FORMATS, PAST, f32_bits, f32_value, f64_bits,  # noqa: E402
                                f64_value)

NAMES = list(FORMATS)


def conv(mode, fmt, words, width=8):
    """Runs float_conv MODE FMT over hex words; returns its outputs as ints / PAST."""
    text = "".join(f"{w:0{width}x}\n" for w in words)
    res = run([harness("float_conv"), mode, fmt], input=text, check=True)
    out = res.stdout.split()
    assert len(out) == len(words)
    return [PAST if o == "past" else int(o, 16) for o in out]


def narrow(fmt, source, words):
    """f32 (source 32) or f64 (64) bits -> FMT through the runtime; f8e4m3 uses _try."""
    mode = ("try" if fmt == "f8e4m3" else "from") + str(source)
    return conv(mode, fmt, words, 8 if source == 32 else 16)


def expect_all(fmt, source, words):
    model = FORMATS[fmt].convert_f32 if source == 32 else FORMATS[fmt].convert_f64
    got = narrow(fmt, source, words)
    bad = [(hex(w), g, model(w)) for w, g in zip(words, got) if g != model(w)]
    assert not bad, f"{len(bad)} of {len(words)} differ, first: {bad[:5]}"


def with_negatives(words, source):
    sign = 1 << (source - 1)
    return words + [w | sign for w in words]


def ties(fmt):
    """The exact midpoint of every two neighbouring non-negative values of fmt,
    including the largest finite and the step past it (the overflow threshold)."""
    f = FORMATS[fmt]
    vals = f.values + [f.beyond]
    return [(a + b) / 2 for a, b in zip(vals, vals[1:])]


def around_f32(value):
    """An f32 value and its two f32 neighbours (one ulp below and above); for 2^128
    (bf16's step past the largest), the largest f32 and infinity."""
    b = 0x7F800000 if value >= 2 ** 128 else f32_bits(float(value))
    return [b - 1, b, b + 1] if b else [b, b + 1]


def around_f64(value):
    b = f64_bits(float(value))
    return [b - 1, b, b + 1] if b else [b, b + 1]


def boundaries(fmt):
    """Largest finite, overflow threshold, smallest normal and subnormal, half the
    smallest subnormal, and the f32 extremes."""
    f = FORMATS[fmt]
    smallest_normal = min(v for v, b in zip(f.values, f.bits) if b >> f.man)
    return [f.max, (f.max + f.beyond) / 2, f.beyond, smallest_normal, f.values[1],
            f.values[1] / 2, f.values[1] / 4, 3 * f.values[1] / 4, 1]


SPECIALS32 = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
              0xFF800001, 0x7FFFFFFF, 0x7FA5A5A5, 0x7FC02000, 0x7FE00000, 0x7F7FFFFF, 1,
              0x00800000, 0x007FFFFF]
SPECIALS64 = [0, 1 << 63, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000,
              0xFFF8000000000000, 0x7FF0000000000001, 0x7FFFFFFFFFFFFFFF, 0x7FF5A5A5A5A5A5A5,
              0x7FEFFFFFFFFFFFFF, 1, 0x0010000000000000, f64_bits(1e300), f64_bits(1e-300),
              f64_bits(3.5e38), f64_bits(1e-46)]


@pytest.mark.parametrize("fmt", NAMES)
def test_widen_to_f64_every_bit_pattern(fmt):
    """FMT -> f64 keeps every bit pattern: a value's exact Fraction, a zero's sign, and a
    NaN's sign and payload bit for bit, signalling NaNs included (f16 0x7C01 stays
    signalling: a C (double) conversion of the f32 would set the quiet bit)."""
    f = FORMATS[fmt]
    out = [int(o, 16) for o in
           run([harness("float_conv"), "widen64", fmt], check=True).stdout.split()]
    assert len(out) == 1 << f.width
    for bits, got in enumerate(out):
        v = f.decode(bits)
        sign = bits >> (f.width - 1)
        if isinstance(v, tuple):  # NaN: same sign, payload at the top of f64's fraction
            m = bits & ((1 << f.man) - 1)
            assert got == (sign << 63) | (0x7FF << 52) | (m << (52 - f.man)), hex(bits)
        else:
            assert got >> 63 == sign, hex(bits)
            w = f64_value(got)
            assert (w == v if isinstance(v, float) else Fraction(w) == v), hex(bits)
    if fmt == "f16":
        assert out[0x7C01] == 0x7FF0040000000000  # still signalling


@pytest.mark.parametrize("fmt", NAMES)
def test_widen_every_bit_pattern(fmt):
    f = FORMATS[fmt]
    out = [int(o, 16) for o in run([harness("float_conv"), "widen", fmt], check=True).stdout.split()]
    assert len(out) == 1 << f.width
    for bits, got in enumerate(out):
        v = f.decode(bits)
        if isinstance(v, tuple):  # NaN: same sign, payload kept exactly
            m = bits & ((1 << f.man) - 1)
            sign = (bits >> (f.width - 1)) << 31
            assert got == sign | 0x7F800000 | (m << (23 - f.man)), hex(bits)
        else:
            assert f32_value(got) == v, hex(bits)
            if v == 0:
                assert got >> 31 == bits >> (f.width - 1), hex(bits)  # signed zero


@pytest.mark.parametrize("fmt", NAMES)
def test_f32_ties_and_their_neighbours(fmt):
    words = [w for t in ties(fmt) for w in around_f32(t)]
    expect_all(fmt, 32, with_negatives(words, 32))


@pytest.mark.parametrize("fmt", NAMES)
def test_f32_boundaries_specials_and_random(fmt):
    import random
    rng = random.Random(fmt)
    words = [w for v in boundaries(fmt) for w in around_f32(v)]
    words += [rng.getrandbits(32) for _ in range(20000)]
    words += [f32_bits(float(v)) for v in FORMATS[fmt].values]  # every value converts back
    expect_all(fmt, 32, with_negatives(words, 32) + SPECIALS32)


@pytest.mark.parametrize("fmt", NAMES)
def test_f64_ties_neighbours_and_double_rounding(fmt):
    """At an f64 just off a tie, rounding to f32 first lands on the tie and then goes to
    the even side; the runtime must round the f64 once. The test asserts that these
    inputs really are such traps, so it would catch a conversion through f32."""
    f = FORMATS[fmt]
    words = [w for t in ties(fmt) for w in around_f64(t)]
    sample = words[3:3000] + words[-300:]
    traps = sum(f.convert_f32(f32_bits(struct.unpack("<f", struct.pack("<f", f64_value(w)))[0]))
                != f.convert_f64(w) for w in sample if f64_value(w) < 3.4e38)
    assert traps > len(sample) // 5, "the inputs must include double-rounding traps"
    expect_all(fmt, 64, with_negatives(words, 64))


@pytest.mark.parametrize("fmt", NAMES)
def test_f64_boundaries_specials_and_random(fmt):
    import random
    rng = random.Random(fmt + "64")
    words = [w for v in boundaries(fmt) for w in around_f64(v)]
    words += [rng.getrandbits(64) for _ in range(5000)]
    # random doubles in and around the format's range, where most of the rounding is
    lo_e, hi_e = -140 if fmt == "bf16" else -28, 130 if fmt == "bf16" else 18
    words += [f64_bits(rng.uniform(1, 2) * 2.0 ** rng.randint(lo_e, hi_e)) for _ in range(20000)]
    expect_all(fmt, 64, with_negatives(words, 64) + SPECIALS64)


@pytest.mark.parametrize("source,value", [(32, 464.00003), (32, float("inf")), (32, -500.0),
                                          (64, 464 + 2.0 ** -40), (64, -1e300),
                                          (64, float("-inf"))])
def test_f8e4m3_traps_past_448(source, value):
    """No infinity in E4M3: the plain conversion traps; 464 + 2^-40 as an f64 traps too
    (through f32 it would become the tie 464 and go to 448)."""
    word = struct.unpack("<I", struct.pack("<f", value))[0] if source == 32 else f64_bits(value)
    res = run([harness("float_conv"), f"from{source}", "f8e4m3"], input=f"{word:x}\n")
    assert res.returncode != 0
    assert "trap: f8e4m3 overflow" in res.stderr


def test_f8e4m3_tie_at_464_goes_to_448_without_trap():
    got = conv("from32", "f8e4m3", [f32_bits(464.0), f32_bits(-464.0), f32_bits(464 - 2.0 ** -15)])
    assert got == [0x7E, 0xFE, 0x7E]
    assert conv("from64", "f8e4m3", [f64_bits(464.0), f64_bits(464 - 2.0 ** -40)], 16) == [0x7E, 0x7E]


@pytest.mark.parametrize("mode,fmt", [("array16", "f16"), ("array16i", "f16"), ("array16b", "bf16")])
def test_bulk_arrays_against_model(mode, fmt):
    """The bulk functions (F16C where the CPU has it, the vectorized integer loops) on
    every tie and neighbour, in an odd-length array so each loop's tail runs too."""
    words = with_negatives([w for t in ties(fmt) for w in around_f32(t)], 32) + SPECIALS32
    text = "".join(f"{w:08x}\n" for w in words)
    out = run([harness("float_conv"), mode], input=text, check=True).stdout.split()
    model = FORMATS[fmt].convert_f32
    bad = [hex(w) for w, o in zip(words, out) if int(o, 16) != model(w)]
    assert len(out) == len(words) and not bad, bad[:5]


def test_spec_examples():
    # to_bits(f16(1.0 / 3.0)) == 0x3555, from f64 and from f32
    assert conv("from64", "f16", [f64_bits(1.0 / 3.0)], 16) == [0x3555]
    assert conv("from32", "f16", [f32_bits(struct.unpack("<f", struct.pack("<f", 1 / 3))[0])]) == [0x3555]
    # f32(mean(bf16(1.0), bf16(0.5))) == 0.75, mean = bf16((f32(a) + f32(b)) / 2.0)
    a, b = conv("from32", "bf16", [f32_bits(1.0), f32_bits(0.5)])
    table = [int(o, 16) for o in run([harness("float_conv"), "widen", "bf16"], check=True).stdout.split()]
    mean = (f32_value(table[a]) + f32_value(table[b])) / 2.0  # exact in f32 here
    (m,) = conv("from32", "bf16", [f32_bits(mean)])
    assert f32_value(table[m]) == 0.75
