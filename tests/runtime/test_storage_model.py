"""An exact model of the storage floats and quantize, written from the format
definitions (IEEE 754 binary16, bfloat16, OCP FP8 E4M3 and E5M2) with Python's
`fractions`, plus tests that hold the model itself to known facts and to numpy.

The model never looks at how runtime/cairn_float.h works: a format is a sorted list of
its exact values, and rounding picks the nearest one by exact rational distance, ties
going to the value whose bit pattern is even. The other test_storage_*.py files import
it (`from test_storage_model import FORMATS, ...`).
"""
import bisect
import struct
from fractions import Fraction

import pytest

PAST = "past"  # the value lies past the format's finite range


def f32_value(bits):
    """The exact value of an f32 bit pattern (a Python float holds every f32)."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def f64_value(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def f32_bits(value):
    """Bits of a float that must be exactly an f32 (asserts it is)."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    assert f32_value(bits) == value or value != value, value
    return bits


def f64_bits(value):
    return struct.unpack("<Q", struct.pack("<d", value))[0]


class Format:
    """A binary float format: 1 sign bit, `ebits` exponent bits, `man` fraction bits.

    ieee: the all-ones exponent holds infinity (fraction 0) and NaNs (IEEE 754).
    Otherwise (OCP E4M3) it holds normal numbers, except all-ones fraction: the NaN.
    """

    def __init__(self, name, ebits, man, bias, ieee):
        self.name, self.ebits, self.man, self.bias, self.ieee = name, ebits, man, bias, ieee
        self.width = 1 + ebits + man
        self.sign_bit = 1 << (ebits + man)
        emask, fmask = (1 << ebits) - 1, (1 << man) - 1
        # Every non-negative finite value with its bit pattern, in increasing order.
        pairs = sorted((self.decode(b), b) for b in range(self.sign_bit)
                       if isinstance(self.decode(b), Fraction))
        self.values = [v for v, _ in pairs]
        self.bits = [b for _, b in pairs]
        assert all(a < b for a, b in zip(self.values, self.values[1:]))
        self.max = self.values[-1]
        self.max_bits = self.bits[-1]
        # The value one step past the largest, as if the exponent range went on: rounding
        # to it means the value overflows. Its fraction field is the largest's plus one.
        self.beyond = self.max + (self.max - self.values[-2])
        self.beyond_bits = self.max_bits + 1
        self.floats = [float(v) for v in self.values] + [float(self.beyond)]
        self.all_bits = self.bits + [self.beyond_bits]
        # midpoints of neighbours: q < mids[i] is nearer values[i], q > mids[i] nearer the next
        self.mids = [(a + b) / 2 for a, b in zip(self.values, self.values[1:] + [self.beyond])]
        self.quiet_nan = (emask << man) | fmask if not ieee else (emask << man) | (1 << (man - 1))
        self.infinity = (emask << man) if ieee else None

    def decode(self, bits):
        """Value of a bit pattern: a Fraction, +-inf (float), or ('nan', bits)."""
        sign = -1 if bits & self.sign_bit else 1
        e = (bits >> self.man) & ((1 << self.ebits) - 1)
        m = bits & ((1 << self.man) - 1)
        if e == (1 << self.ebits) - 1:
            if self.ieee:
                return sign * float("inf") if m == 0 else ("nan", bits)
            if m == (1 << self.man) - 1:
                return ("nan", bits)
        if e == 0:
            return sign * Fraction(m, 1 << self.man) * Fraction(2) ** (1 - self.bias)
        return sign * (1 + Fraction(m, 1 << self.man)) * Fraction(2) ** (e - self.bias)

    def round_magnitude(self, q, noise=None):
        """Bits of |q| (a Fraction or float, q >= 0) rounded to nearest, ties to even,
        or with noise: up exactly when the dropped fraction exceeds noise / 2^32.
        Returns PAST when the result would be the step past the largest value."""
        if q >= self.floats[-1]:  # the step past the largest, exactly
            return PAST
        i = bisect.bisect_right(self.floats, q) - 1  # fast on a float q, exact on either
        q = Fraction(q)
        lo, lo_bits, hi_bits = self.values[i], self.all_bits[i], self.all_bits[i + 1]
        if q == lo:
            return lo_bits
        if noise is not None:
            hi = self.mids[i] * 2 - lo
            up = (q - lo) / (hi - lo) > Fraction(noise, 2 ** 32)
        else:  # nearer to hi when past the midpoint; at it, to the even bit pattern
            up = q > self.mids[i] or (q == self.mids[i] and hi_bits % 2 == 0)
        result = hi_bits if up else lo_bits
        return PAST if result == self.beyond_bits else result

    def nan_from(self, sign, payload, payload_bits):
        """The documented NaN rule: a quiet NaN with the sign and the payload's top bits."""
        keep = (payload >> (payload_bits - self.man)) & ((1 << self.man) - 1)
        return (self.sign_bit if sign else 0) | self.quiet_nan | keep

    def convert(self, value, sign=None, payload=0, payload_bits=23):
        """Round a float value (f32 or f64, given as a Python float) to this format:
        bits, or PAST for a finite overflow or an infinity with no infinity to go to."""
        if sign is None:
            sign = struct.pack("<d", value)[7] >> 7
        if value != value:
            return self.nan_from(sign, payload, payload_bits)
        sign_bits = self.sign_bit if sign else 0
        if abs(value) == float("inf"):
            return sign_bits | self.infinity if self.ieee else PAST
        r = self.round_magnitude(abs(value))
        if r == PAST:
            return sign_bits | self.infinity if self.ieee else PAST
        return sign_bits | r

    def convert_f32(self, bits):
        return self.convert(f32_value(bits), bits >> 31, bits & 0x7FFFFF, 23)

    def convert_f64(self, bits):
        return self.convert(f64_value(bits), bits >> 63, bits & ((1 << 52) - 1), 52)


FORMATS = {
    "f16": Format("f16", 5, 10, 15, True),
    "bf16": Format("bf16", 8, 7, 127, True),
    "f8e4m3": Format("f8e4m3", 4, 3, 7, False),
    "f8e5m2": Format("f8e5m2", 5, 2, 15, True),
}
INTEGERS = {"i8": (-128, 127), "u8": (0, 255), "i16": (-32768, 32767), "u16": (0, 65535)}


def quantize(target, x_bits, scale_bits, noise=None):
    """quantize[T](x, scale) (noise=None) or quantize_stochastic[T](x, scale, noise):
    the exact quotient rounded once, saturating. Returns the result bits for a float T,
    the integer for an integer T, or "trap" where the runtime must trap."""
    x, s = f32_value(x_bits), f32_value(scale_bits)
    if not (s > 0 and s != float("inf")) or x != x:
        return "trap"
    negative = x_bits >> 31 == 1
    if abs(x) == float("inf"):
        q = None  # saturates
    else:
        q = abs(Fraction(x) / Fraction(s))
    if target in INTEGERS:
        lo, hi = INTEGERS[target]
        limit = -lo if negative else hi
        if q is None:
            return -limit if negative else limit
        whole = q.numerator // q.denominator
        rest = q - whole
        if noise is not None:
            up = rest > Fraction(noise, 2 ** 32)
        else:
            up = rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1)
        mag = min(whole + up, limit)
        return -mag if negative else mag
    fmt = FORMATS[target]
    sign_bits = fmt.sign_bit if negative else 0
    mag = fmt.max_bits if q is None else fmt.round_magnitude(q, noise)
    return sign_bits | (fmt.max_bits if mag == PAST else mag)


# ---- the model held to known facts (so a wrong model cannot pass silently) ----

def test_model_format_constants():
    f16, bf16, e4m3, e5m2 = (FORMATS[n] for n in ("f16", "bf16", "f8e4m3", "f8e5m2"))
    assert f16.max == 65504 and f16.max_bits == 0x7BFF and f16.infinity == 0x7C00
    assert f16.values[1] == Fraction(1, 2 ** 24) and f16.decode(0x0400) == Fraction(1, 2 ** 14)
    assert bf16.max == (2 - Fraction(1, 2 ** 7)) * Fraction(2) ** 127
    assert bf16.values[1] == Fraction(1, 2 ** 133)
    assert e4m3.max == 448 and e4m3.max_bits == 0x7E and e4m3.decode(0x7F)[0] == "nan"
    assert e4m3.values[1] == Fraction(1, 2 ** 9) and e4m3.beyond == 480
    assert e5m2.max == 57344 and e5m2.max_bits == 0x7B and e5m2.values[1] == Fraction(1, 2 ** 16)
    assert len(f16.values) == 0x7C00 and len(e4m3.values) == 0x7F and len(e5m2.values) == 0x7C
    assert e4m3.quiet_nan == 0x7F and f16.quiet_nan == 0x7E00 and bf16.quiet_nan == 0x7FC0


def test_model_rounding_facts():
    f16, e4m3 = FORMATS["f16"], FORMATS["f8e4m3"]
    assert f16.convert(1.0 / 3.0) == 0x3555
    assert f16.convert(65519.0) == 0x7BFF and f16.convert(65520.0) == 0x7C00
    assert f16.convert(-0.0) == 0x8000 and f16.convert(2.0 ** -25) == 0
    assert f16.convert(2.0 ** -25 * 1.5) == 1
    assert e4m3.convert(464.0) == 0x7E and e4m3.convert(464.0001) == PAST
    assert e4m3.convert(float("inf")) == PAST
    assert quantize("i8", f32_bits(-2.5), f32_bits(1.0)) == -2
    assert quantize("i8", f32_bits(500.0), f32_bits(2.0)) == 127
    assert quantize("f8e4m3", f32_bits(1e9), f32_bits(1.0)) == 0x7E


def test_model_matches_numpy_float16():
    """numpy's float16 casts round to nearest-even: a second, independent opinion."""
    np = pytest.importorskip("numpy")
    f16 = FORMATS["f16"]
    rng = np.random.default_rng(5)
    xs32 = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    xs32 = xs32[(xs32 & 0x7F800000) != 0x7F800000]  # finite and infinite only below
    mids = [float(a + b) / 2 for a, b in zip(f16.values, f16.values[1:])]
    xs32 = np.concatenate([xs32, np.array(mids, dtype=np.float32).view(np.uint32)])
    with np.errstate(over="ignore"):
        got = xs32.view(np.float32).astype(np.float16).view(np.uint16)
    for x, g in zip(xs32.tolist(), got.tolist()):
        assert f16.convert_f32(x) == g, hex(x)
    xs64 = rng.integers(0, 2 ** 64, 5000, dtype=np.uint64)
    xs64 = xs64[(xs64 & 0x7FF0000000000000) != 0x7FF0000000000000]
    with np.errstate(over="ignore"):
        got = xs64.view(np.float64).astype(np.float16).view(np.uint16)
    for x, g in zip(xs64.tolist(), got.tolist()):
        assert f16.convert_f64(x) == g, hex(x)
