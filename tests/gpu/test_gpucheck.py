"""The exact checker of make gpu (tests/gpu/gpucheck.py) against bounds computed by hand
from the contracts' formulas (spec: numerics.md; docs/devices.md for atomics)."""
import pathlib
import struct
import sys
from fractions import Fraction

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import gpucheck  # noqa: E402


def o(name, type_, values):
    fmt = {"f64": "d", "f32": "f", "f16": "e"}[type_]
    return {"name": name, "type": type_, "bits": struct.pack("<%d%s" % (len(values), fmt), *values)}


def test_sum_exact_and_bound_by_hand():
    # x = [1, 2^-24, 2^-24] in f32, out = 1 (the ordered fold): exact 1 + 2^-23,
    # bound gamma_2 (u = 2^-24) * (1 + 2^-23).
    obs = {"x": o("x", "f32", [1.0, 2.0 ** -24, 2.0 ** -24]), "t": o("t", "f32", [1.0])}
    e = gpucheck.measure({"kind": "sum", "terms": "x", "type": "f32"}, obs, "t")
    u = Fraction(1, 2 ** 24)
    bound = 2 * u / (1 - 2 * u) * (1 + 2 * u)
    assert e["ok"] and Fraction(e["error"]) == 2 * u
    assert Fraction(e["limit"]) == Fraction(float(bound))
    assert abs(Fraction(e["ratio"]) - 2 * u / bound) < Fraction(1, 10 ** 15)


def test_sum_beyond_the_bound_fails():
    obs = {"x": o("x", "f64", [1.0, 2.0 ** -53, 2.0 ** -53]),
           "t": o("t", "f64", [1.0 - 2.0 ** -53])}
    e = gpucheck.measure({"kind": "sum", "terms": "x", "type": "f64"}, obs, "t")
    assert not e["ok"] and e["ratio"] > 1


def test_mma_bound_by_hand():
    # 1 x 1 output, k = 2: a = [1, 2^-11] (f16), b = [1, 1], c_old = [0];
    # exact 1 + 2^-11; bound 3 * 2^-22 * (1 + 2^-11). An output of 1.0 errs by 2^-11:
    # far beyond; an output of 1 + 2^-11 (exact in f32) is within (ratio 0).
    obs = {"a": o("a", "f16", [1.0, 2.0 ** -11]), "b": o("b", "f16", [1.0, 1.0]),
           "c0": o("c0", "f32", [0.0]), "c": o("c", "f32", [1.0 + 2.0 ** -11])}
    spec = {"kind": "mma", "m": 1, "n": 1, "k": 2, "a": "a", "b": "b", "c_old": "c0"}
    e = gpucheck.measure(spec, obs, "c")
    assert e["ok"] and e["ratio"] == 0.0
    assert Fraction(e["limit"]) == Fraction(float(3 * Fraction(1, 2 ** 22) * (1 + Fraction(1, 2 ** 11))))
    obs["c"] = o("c", "f32", [1.0])
    e = gpucheck.measure(spec, obs, "c")
    expect = Fraction(2 ** 22, 3 * (2 ** 11 + 1))   # 2^-11 / (3 * 2^-22 * (1 + 2^-11))
    assert not e["ok"] and abs(Fraction(e["ratio"]) - expect) < Fraction(1, 10 ** 9)


def test_atomic_add_f32_bound_by_hand():
    # old 0, k = 2 adds of 1 and 2^-30: exact 1 + 2^-30; bound 2 * 2^-23 * (1 + 2^-30) + 2 * 2^-125.
    obs = {"old": o("old", "f32", [0.0]), "v": o("v", "f32", [1.0, 2.0 ** -30]),
           "s": o("s", "f32", [1.0])}
    e = gpucheck.measure({"kind": "atomic_add", "old": "old", "terms": "v", "type": "f32"}, obs, "s")
    bound = 2 * Fraction(1, 2 ** 23) * (1 + Fraction(1, 2 ** 30)) + 2 * Fraction(1, 2 ** 125)
    assert e["ok"] and abs(Fraction(e["ratio"]) - Fraction(1, 2 ** 30) / bound) < Fraction(1, 10 ** 15)


def test_non_finite_outputs_and_shape_mismatches_fail():
    obs = {"x": o("x", "f64", [1.0, 2.0]), "t": o("t", "f64", [float("inf")])}
    assert not gpucheck.measure({"kind": "sum", "terms": "x"}, obs, "t")["ok"]
    obs["t"] = o("t", "f64", [3.0, 3.0])
    assert not gpucheck.measure({"kind": "sum", "terms": "x"}, obs, "t")["ok"]


def test_atomic_bins_and_constants_by_hand():
    # 5 terms [1, 2, 3, 4, 5] into 2 bins: bin 0 gets 1, 3, 5 (k 3, exact 9), bin 1 gets
    # 2, 4 (k 2, exact 6); f64 bound k * 2^-52 * sum |v|. Outputs 9 and 6 + 2^-50.
    obs = {"v": o("v", "f64", [1.0, 2.0, 3.0, 4.0, 5.0]),
           "s": o("s", "f64", [9.0, 6.0 + 2.0 ** -50])}
    e = gpucheck.measure({"kind": "atomic_add", "terms": "v", "bins": 2, "type": "f64"}, obs, "s")
    expect = Fraction(1, 2 ** 50) / (2 * Fraction(1, 2 ** 52) * 6)   # bin 1's ratio: 1/3
    assert e["ok"] and Fraction(e["ratio"]) == Fraction(float(expect))
    # 1000 subnormal f32 constants flushed to 0 on a device: error 1000 * c, bound
    # 1000 * 2^-23 * 1000 c + 1000 * 2^-125 (c = 1e-39 rounded to f32, below 2^-125).
    obs = {"z": o("z", "f32", [0.0])}
    e = gpucheck.measure({"kind": "atomic_add", "const": 1e-39, "count": 1000, "type": "f32"},
                         obs, "z")
    c = Fraction(struct.unpack("<f", struct.pack("<f", 1e-39))[0])
    bound = 1000 * Fraction(1, 2 ** 23) * 1000 * c + 1000 * Fraction(1, 2 ** 125)
    assert e["ok"] and Fraction(e["ratio"]) == Fraction(float((1000 * c) / bound))


def test_sum_of_scaled_terms_by_hand():
    # Terms 1.25 * x in f32, x = [0.75, 2^-30]: 0.9375 and 1.25 * 2^-30 (both exact);
    # an output of 0.9375 errs by 1.25 * 2^-30 against gamma_1 * (0.9375 + 1.25 * 2^-30).
    obs = {"x": o("x", "f32", [0.75, 2.0 ** -30]), "t": o("t", "f32", [0.9375])}
    e = gpucheck.measure({"kind": "sum", "terms": "x", "scale": 1.25, "type": "f32"}, obs, "t")
    u = Fraction(1, 2 ** 24)
    small = Fraction(5, 4) * Fraction(1, 2 ** 30)
    ratio = small / (u / (1 - u) * (Fraction(15, 16) + small))
    assert e["ok"] is (ratio <= 1) and abs(Fraction(e["ratio"]) - ratio) < Fraction(1, 10 ** 12)
