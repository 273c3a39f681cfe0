"""lib/obs.h, the decoding of observations that cairn run --show, cairn show, cairn diff and
the farm's dashboard share, held to models that never look at how lib/obs.c works:

- values: Python's struct (f64, f32, and f16 through its 'e' code), numpy, and the exact
  rational model of the storage floats in tests/runtime/test_storage_model.py;
- the shortest round-trip decimal: Python's repr() for f64, numpy's str() for f32 and
  f16 (numpy prints the shortest unique digits, Dragon4), and for bf16 and the f8
  formats a model that enumerates every decimal of p significant digits inside the
  value's rounding interval and reads each back with the rational model's rounding;
  every storage pattern exhaustively (2^16 and 2^8 of them), f32 and f64 on boundaries
  and random patterns;
- ULP distances: numpy.testing's nulp_diff for f16/f32/f64 and, for every format, the
  distance of two values' places in the format's sorted list of values (the model's),
  with Python integers for the integer types;
- summaries and comparisons: numpy's nanmin/nanmax/isnan/isinf and a plain Python loop.
"""
import math
import pathlib
import random
import struct
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from cairntest import harness, run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "runtime"))
from test_storage_model import FORMATS  # noqa: E402

CHECK = harness("obs_check")
SIZES = {"bool": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "u8": 1, "u16": 2, "u32": 4,
         "u64": 8, "usize": 8, "f8e4m3": 1, "f8e5m2": 1, "f16": 2, "bf16": 2, "f32": 4, "f64": 8}


def obs(verb, typ, lines):
    r = run([CHECK, verb, typ], input="".join(f"{x}\n" for x in lines), timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def every(typ):
    """{bits: (text, value as a float)} for every pattern of a 1- or 2-byte type."""
    out = {}
    for line in run([CHECK, "all", typ], timeout=600, check=True).stdout.splitlines():
        hexbits, text, value = line.split()
        bits = int(hexbits, 16)
        assert hexbits == f"0x{bits:0{2 * SIZES[typ]}x}"
        out[bits] = (text, float.fromhex(value) if value != "nan" and "inf" not in value
                     else float(value))
    assert len(out) == 1 << (8 * SIZES[typ])
    return out


def layout(dec, negative=False):
    """The text repr() gives a number of these digits: repr of the nearest double, which
    has the same shortest digits whenever there are at most 15 of them."""
    digits = len(dec.normalize().as_tuple().digits)
    assert digits <= 15
    return ("-" if negative else "") + repr(float(dec))


PLACES = {}


def place_of(fmt, value):
    """The index of a non-negative finite value in the model's sorted list of values."""
    if fmt.name not in PLACES:
        PLACES[fmt.name] = {v: i for i, v in enumerate(fmt.values)}
    return PLACES[fmt.name][value]


def model_value(fmt, bits):
    v = fmt.decode(bits)
    return v if isinstance(v, (Fraction, float)) else None  # None: a NaN


def model_shortest(fmt, bits):
    """The shortest decimal that the rational model rounds back to |bits|, the nearest
    such one when several are as short (ties to the even last digit), found by trying
    every candidate of p digits inside the rounding interval, p = 1, 2, ..."""
    mag = bits & (fmt.sign_bit - 1)
    x = fmt.decode(mag)
    i = place_of(fmt, x)
    lo = fmt.mids[i - 1] if i else Fraction(0)
    hi = fmt.mids[i]
    e = 0
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    for p in range(1, 18):
        found = []
        for q in (e - p + 1, e - p + 2):   # p digits below the next decade, or at it
            unit = Fraction(10) ** q
            for d in range(math.ceil(lo / unit), math.floor(hi / unit) + 1):
                if 0 < d < 10 ** p and fmt.round_magnitude(d * unit) == mag:
                    found.append((abs(d * unit - x), d % 2, d, q))
        if found:
            _, _, d, q = min(found)
            return Decimal(d).scaleb(q)
    raise AssertionError("no decimal reads back")


@pytest.mark.parametrize("typ", ["f16", "bf16", "f8e4m3", "f8e5m2"])
def test_storage_floats_every_pattern(typ):
    """Exhaustive: each pattern's value, and its text against the enumerating model."""
    fmt = FORMATS[typ]
    got = every(typ)
    for bits, (text, value) in got.items():
        want = model_value(fmt, bits)
        if want is None:
            assert text == "nan" and math.isnan(value), hex(bits)
            continue
        negative = bool(bits & fmt.sign_bit)
        if isinstance(want, float):           # an infinity
            assert text == ("-inf" if negative else "inf") and value == want, hex(bits)
            continue
        assert Fraction(value) == want and math.copysign(1, value) == (-1 if negative else 1)
        if want == 0:
            assert text == ("-0.0" if negative else "0.0"), hex(bits)
            continue
        assert text == layout(model_shortest(fmt, bits), negative), (hex(bits), text)


def test_f16_every_pattern_against_struct_and_numpy():
    got = every("f16")
    for bits, (text, value) in got.items():
        ref = struct.unpack("<e", bits.to_bytes(2, "little"))[0]
        if math.isnan(ref):
            assert text == "nan" and math.isnan(value)
            continue
        assert struct.pack("<d", value) == struct.pack("<d", ref), hex(bits)
        num = str(np.frombuffer(bits.to_bytes(2, "little"), dtype="<f2")[0])
        if math.isinf(ref):
            assert text == num
        else:
            assert Decimal(text) == Decimal(num) and text == layout(Decimal(num)), hex(bits)


def float_patterns(width, rng, n):
    """Boundary patterns of an f32/f64 and N random ones (random sign, exponent, fraction)."""
    man = 23 if width == 32 else 52
    ebits = width - 1 - man
    top = (1 << ebits) - 1
    out = set()
    for e in list(range(0, 4)) + list(range(top - 3, top + 1)) + [top // 2, top // 2 + 1]:
        for m in (0, 1, 2, (1 << man) - 1, (1 << man) - 2, 1 << (man - 1)):
            for s in (0, 1):
                out.add(s << (width - 1) | e << man | m)
    for e in range(0, top + 1, max(1, top // 300)):       # powers of two: asymmetric intervals
        out.add(e << man)
    while len(out) < n:
        out.add(rng.getrandbits(width))
    return sorted(out)


def test_f64_text_is_python_repr():
    rng = random.Random(25)
    patterns = float_patterns(64, rng, 60000)
    patterns += [struct.unpack("<Q", struct.pack("<d", v))[0]
                 for v in (0.1, 0.3, 1 / 3, 2 / 3, 1e16, 1e15, 9999999999999998.0, 1e-4,
                           9.999999999999999e-05, 123456789.0, 5e-324, 1e23, 2.0 ** 53)]
    lines = obs("format", "f64", [f"{b:x}" for b in patterns])
    for bits, line in zip(patterns, lines):
        text, hexbits, value = line.split()
        ref = struct.unpack("<d", struct.pack("<Q", bits))[0]
        assert hexbits == f"0x{bits:016x}"
        assert text == repr(ref), (hex(bits), text, repr(ref))
        if not math.isnan(ref):
            assert struct.pack("<d", float.fromhex(value) if "inf" not in value
                               else float(value)) == struct.pack("<d", ref)


def test_f32_text_has_numpys_shortest_digits():
    rng = random.Random(32)
    patterns = float_patterns(32, rng, 120000)
    lines = obs("format", "f32", [f"{b:x}" for b in patterns])
    values = np.array(patterns, dtype=np.uint32).view(np.float32)
    for bits, line, v in zip(patterns, lines, values):
        text, hexbits, value = line.split()
        ref = struct.unpack("<f", struct.pack("<I", bits))[0]
        assert hexbits == f"0x{bits:08x}"
        if math.isnan(ref):
            assert text == "nan"
            continue
        assert float(value) if "inf" in value else float.fromhex(value) == ref
        num = str(v)
        if math.isinf(ref):
            assert text == num
            continue
        assert Decimal(text) == Decimal(num), (hex(bits), text, num)
        assert text == layout(Decimal(num)), (hex(bits), text)
        assert np.float32(text) == v      # and it reads back


@pytest.mark.parametrize("typ", ["bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                                 "usize"])
def test_integers(typ):
    width = 8 * SIZES[typ]
    signed = typ.startswith("i")
    rng = random.Random(width)
    patterns = {0, 1, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1}
    patterns |= {rng.getrandbits(width) for _ in range(2000)}
    patterns = sorted(patterns)
    lines = obs("format", typ, [f"{b:x}" for b in patterns])
    for bits, line in zip(patterns, lines):
        text = line.split()[0]
        if typ == "bool":
            assert text == {0: "false", 1: "true"}.get(bits, f"bool(0x{bits:02x})")
            continue
        v = bits - (1 << width) if signed and bits >> (width - 1) else bits
        assert text == str(v)
    pairs = [(rng.choice(patterns), rng.choice(patterns)) for _ in range(3000)]
    pairs += [(0, (1 << width) - 1), ((1 << width) - 1, 0), (1 << (width - 1), (1 << (width - 1)) - 1)]
    dist = obs("ulp", typ, [f"{a:x} {b:x}" for a, b in pairs])
    for (a, b), d in zip(pairs, dist):
        va = a - (1 << width) if signed and a >> (width - 1) else a
        vb = b - (1 << width) if signed and b >> (width - 1) else b
        assert int(d) == abs(va - vb), (typ, hex(a), hex(b))


def rank(fmt, bits):
    """The place of a non-NaN pattern in the format's sorted values (+-0 both at 0; an
    infinity one past the largest finite), from the model's list of values."""
    v = fmt.decode(bits)
    neg = bool(bits & fmt.sign_bit)
    if isinstance(v, float):
        place = len(fmt.values)
    else:
        place = place_of(fmt, abs(v))
    return -place if neg else place


@pytest.mark.parametrize("typ", ["f16", "bf16", "f8e4m3", "f8e5m2"])
def test_storage_ulp_against_the_sorted_values(typ):
    fmt = FORMATS[typ]
    width = fmt.width
    rng = random.Random(width * 7)
    nan = fmt.quiet_nan
    special = [0, fmt.sign_bit, 1, fmt.sign_bit | 1, fmt.max_bits, fmt.sign_bit | fmt.max_bits, nan,
               fmt.sign_bit | nan]
    if fmt.infinity is not None:
        special += [fmt.infinity, fmt.sign_bit | fmt.infinity, fmt.infinity | 1]
    pairs = [(a, b) for a in special for b in special]
    if width == 8:
        pairs += [(a, b) for a in range(256) for b in range(256)]     # every pair
    else:
        pairs += [(rng.getrandbits(16), rng.getrandbits(16)) for _ in range(40000)]
        pairs += [(b, b + 1) for b in range(0, 0xFFFF, 97)]
    dist = obs("ulp", typ, [f"{a:x} {b:x}" for a, b in pairs])
    for (a, b), d in zip(pairs, dist):
        na, nb = model_value(fmt, a) is None, model_value(fmt, b) is None
        if na or nb:
            assert d == ("0" if na and nb else "nan"), (hex(a), hex(b), d)
        else:
            assert int(d) == abs(rank(fmt, a) - rank(fmt, b)), (hex(a), hex(b), d)


@pytest.mark.parametrize("typ,dtype", [("f16", np.float16), ("f32", np.float32),
                                       ("f64", np.float64)])
def test_ieee_ulp_against_numpy_nulp_diff(typ, dtype):
    from numpy.testing._private.utils import nulp_diff
    width = 8 * SIZES[typ]
    udt = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
    rng = random.Random(width)
    a = [rng.getrandbits(width) for _ in range(20000)]
    b = [x ^ rng.getrandbits(rng.choice([1, 4, 12, width])) for x in a]
    # numpy's nulp_diff takes finite values, subtracts places in the type's own signed
    # integer (so it wraps across zero for large ones) and answers in the float type
    # (exact up to 2^11 in f16): compare where it is exact, which is most pairs here.
    exact_below = {16: 1 << 11, 32: 1 << 24, 64: 1 << 53}[width]
    sign = 1 << (width - 1)
    pairs = [(x, y) for x, y in zip(a, b)
             if np.isfinite(np.array([x, y], dtype=udt).view(dtype)).all()
             and ((x ^ y) & sign == 0 or (x & ~sign) + (y & ~sign) < exact_below)]
    pairs += [(0, sign), (1, sign | 1), (sign | 5, 3)]
    dist = obs("ulp", typ, [f"{x:x} {y:x}" for x, y in pairs])
    xs = np.array([p[0] for p in pairs], dtype=udt).view(dtype)
    ys = np.array([p[1] for p in pairs], dtype=udt).view(dtype)
    ref = np.asarray(nulp_diff(xs, ys)).ravel()
    compared = 0
    for (x, y), d, r in zip(pairs, dist, ref):
        if r < exact_below:
            assert int(d) == int(r), (typ, hex(x), hex(y), d, r)
            compared += 1
    assert compared > len(pairs) // 3
    assert dist[-3:] == ["0", "2", "8"]      # +0/-0; 1 and -1 (subnormal steps); -5 and 3


def le_bytes(typ, bits):
    return b"".join(x.to_bytes(SIZES[typ], "little") for x in bits)


@pytest.mark.parametrize("typ,dtype", [("f16", "<f2"), ("f32", "<f4"), ("f64", "<f8"),
                                       ("i16", "<i2"), ("u64", "<u8"), ("i8", "i1")])
def test_summary_against_numpy(typ, dtype):
    rng = random.Random(hash(typ) & 0xFFFF)
    width = 8 * SIZES[typ]
    for trial in range(40):
        n = rng.choice([0, 1, 2, 7, 100])
        bits = [rng.getrandbits(width) for _ in range(n)]
        if typ.startswith("f") and trial % 3 == 0 and n:       # signed zeros, all NaN
            zero_or_nan = {"f16": [0, 0x8000, 0x7e00], "f32": [0, 0x80000000, 0x7fc00001],
                           "f64": [0, 1 << 63, 0x7ff8000000000000]}[typ]
            bits = [rng.choice(zero_or_nan) for _ in range(n)]
        line = obs("summary", typ, [f"{b:x}" for b in bits])[0].split()
        arr = np.frombuffer(le_bytes(typ, bits), dtype=dtype)
        count, nan, inf, has_range = map(int, line[:4])
        assert count == n
        if typ.startswith("f"):
            assert nan == int(np.isnan(arr).sum()) and inf == int(np.isinf(arr).sum())
        else:
            assert nan == inf == 0
        finite = arr[~np.isnan(arr)] if typ.startswith("f") else arr
        assert has_range == (len(finite) > 0)
        if not has_range:
            continue
        lo = np.frombuffer(int(line[4], 16).to_bytes(SIZES[typ], "little"), dtype=dtype)[0]
        hi = np.frombuffer(int(line[5], 16).to_bytes(SIZES[typ], "little"), dtype=dtype)[0]
        assert lo == finite.min() and hi == finite.max()
        if typ.startswith("f") and lo == 0:     # -0 is the least when it is there
            has_neg_zero = any(b == 1 << (width - 1) for b in bits)
            assert (int(line[4], 16) == 1 << (width - 1)) == has_neg_zero


def test_compare_against_a_plain_loop():
    rng = random.Random(7)
    fmt = FORMATS["bf16"]
    for trial in range(200):
        n = rng.choice([1, 3, 50])
        a = [rng.getrandbits(16) for _ in range(n)]
        b = [x if rng.random() < 0.7 else rng.choice([x ^ 1, x ^ 0x8000, rng.getrandbits(16)])
             for x in a]
        line = obs("compare", "bf16", [f"{x:x} {y:x}" for x, y in zip(a, b)])[0].split()
        diffs = [i for i in range(n) if a[i] != b[i]]
        assert int(line[0]) == len(diffs)
        if not diffs:
            continue

        def dist(x, y):
            nx, ny = model_value(fmt, x) is None, model_value(fmt, y) is None
            if nx or ny:
                return 0 if nx and ny else math.inf
            return abs(rank(fmt, x) - rank(fmt, y))
        first = diffs[0]
        assert int(line[1]) == first and int(line[2], 16) == a[first] and int(line[3], 16) == b[first]
        d0 = dist(a[first], b[first])
        assert line[4] == ("nan" if d0 == math.inf else str(d0))
        largest = max(dist(a[i], b[i]) for i in diffs)
        at = next(i for i in diffs if dist(a[i], b[i]) == largest)
        assert int(line[5]) == at and line[6] == ("nan" if largest == math.inf else str(largest))


def test_unknown_type_is_refused():
    assert run([CHECK, "format", "f128"], input="0\n").returncode == 2
