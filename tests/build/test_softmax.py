"""examples/softmax.cairn against an exact model: every observed bit (the max, each
exp, the normaliser, each f16 output) recomputed here from the observed f16 logits with
Python fractions, each rounding done once and exactly as the receipt names it, and
exp(x) correctly rounded to f32 from decimal's exp at 60 digits (itself correctly
rounded at that precision; the model checks that no result lies near enough to an f32
midpoint for those 60 digits to leave a doubt). Emulated and host builds, at pool
widths 1 and 3, must give the same bits; the receipt names std.cr.exp as correctly
rounded and the sum as exact."""
import decimal
import pathlib
import struct
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import EXAMPLES, build, read_log, run_exe  # noqa: E402

SOURCE = EXAMPLES / "softmax.cairn"


def round_to(q, p, emin):
    """q rounded to nearest-even in a binary format with p significant bits and least
    normal exponent emin (subnormals kept); q finite, well inside the range."""
    if q == 0:
        return Fraction(0)
    sign, a = (-1 if q < 0 else 1), abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, emin)
    unit = Fraction(2) ** (e - p + 1)
    n, rest = divmod(a, unit)
    if rest * 2 > unit or (rest * 2 == unit and n % 2 == 1):
        n += 1
    return sign * n * unit


def f32(q):
    return round_to(q, 24, -126)


def f16(q):
    return round_to(q, 11, -14)


def exp_f32(d):
    """exp(d) correctly rounded to f32, d a dyadic rational with |d| < 17: decimal holds
    d within 10^-59 of itself and its exp is correctly rounded at 60 digits, so the value
    is within 10^-57 of exp(d), relatively; the rounding must not be in doubt there."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        e = Fraction((decimal.Decimal(d.numerator) / decimal.Decimal(d.denominator)).exp())
    r = f32(e)
    lo, hi = f32(e * (1 - Fraction(1, 10 ** 55))), f32(e * (1 + Fraction(1, 10 ** 55)))
    assert lo == hi == r, f"exp({d}) too near an f32 midpoint for 60 digits"
    return r


def f16_value(bits):
    sign = -1 if bits >> 15 else 1
    e, m = (bits >> 10) & 0x1F, bits & 0x3FF
    assert e != 0x1F
    return sign * (Fraction(m, 1 << 24) if e == 0 else Fraction(1024 + m, 1 << 10) * Fraction(2) ** (e - 15))


def f32_bits(q):
    return struct.unpack("<I", struct.pack("<f", float(q)))[0]


def f16_bits(q):
    return struct.unpack("<H", struct.pack("<e", float(q)))[0]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("softmax")
    out = {}
    for mode, extra in (("host", []), ("emulate", ["--emulate"])):
        receipt = build(SOURCE, tmp / mode, *extra)
        for width in (1, 3):
            folder = tmp / f"{mode}{width}"
            folder.mkdir()
            res = run_exe(tmp / mode, env={"CAIRN_THREADS": str(width),
                                           "CAIRN_OBSERVE": str(folder / "log"),
                                           "CAIRN_OBSERVE_RAW": str(folder)})
            assert res.returncode == 0, res.stderr
            obs = {}
            for seq, o in enumerate(read_log(folder / "log")):
                obs[o["name"]] = (o, (folder / f"{o['name']}.{seq}.bin").read_bytes())
            out[(mode, width)] = (receipt, obs)
    return out


def test_same_bits_everywhere(runs):
    first = next(iter(runs.values()))[1]
    for key, (_, obs) in runs.items():
        assert {k: v[0]["sha256"] for k, v in obs.items()} == \
               {k: v[0]["sha256"] for k, v in first.items()}, key


def test_every_bit_matches_the_exact_model(runs):
    obs = runs[("host", 1)][1]
    raw = obs["x"][1]
    n = len(raw) // 2
    xs = [f16_value(b) for b in struct.unpack(f"<{n}H", raw)]
    m = max(xs)  # f16 -> f32 is exact, and max is exact
    assert struct.unpack("<I", obs["max"][1])[0] == f32_bits(m)
    es = [exp_f32(f32(x - m)) for x in xs]
    assert list(struct.unpack(f"<{n}I", obs["exp"][1])) == [f32_bits(e) for e in es]
    s = f32(sum(es))  # the exact sum, rounded once
    assert struct.unpack("<I", obs["sum"][1])[0] == f32_bits(s)
    ys = [f16(f32(e / s)) for e in es]
    assert list(struct.unpack(f"<{n}H", obs["softmax"][1])) == [f16_bits(y) for y in ys]
    # and it is a softmax: within N half-units of f16 (plus f32's) of 1
    assert abs(sum(ys) - 1) <= n * Fraction(1, 2 ** 11) * max(ys) + Fraction(1, 2 ** 20)


def test_receipt_names_the_roundings(runs):
    receipt = runs[("host", 1)][0]
    assert {"op": "std.cr.exp", "type": "f32", "rounding": "correctly-rounded"} \
        in receipt["numerics"]["exps"]
    assert any(e["op"] == "sum" and e.get("sum") == "exact" for e in receipt["numerics"]["main"])
