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
