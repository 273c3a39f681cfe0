"""The Python package (python/cairn): cairn.build and cairn.load on tests/python/
kernels.cairn, every call compared with NumPy's own arithmetic or with exact rationals
(fractions); the checks on what a caller passes (dtype, shape, contiguity, exactness of
scalars); traps as TrapError with the runtime's message and location, per thread; and
the runtime's exact sum and bracket GEMM against fractions."""
import concurrent.futures
import ctypes
import fractions
import math
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import cairn

KERNELS = pathlib.Path(__file__).resolve().parent / "kernels.cairn"
F = fractions.Fraction


@pytest.fixture(scope="module")
def k():
    return cairn.build(KERNELS)


def exact(values):
    return sum((F(float(v)) for v in values), F(0))


def test_build_is_cached_and_load_finds_the_same_library(k, tmp_path, monkeypatch):
    log = tmp_path / "calls"
    wrapper = tmp_path / "cairn"
    wrapper.write_text(f"#!/bin/sh\necho x >> {log}\nexec {cairn._find.cairn_binary()} \"$@\"\n")
    wrapper.chmod(0o755)
    src = tmp_path / "one.cairn"
    src.write_text("pub fn one() -> i32 = 1;\n")
    monkeypatch.setenv("CAIRN", str(wrapper))
    first = cairn.build(src)
    again = cairn.build(src)
    assert first.one() == 1 and again.one() == 1
    assert log.read_text().count("x") == 1  # the second build found the first in the cache
    src.write_text("pub fn one() -> i32 = 2;\n")
    assert cairn.build(src).one() == 2  # a changed source builds again
    assert cairn.load(k.path).functions.keys() == k.functions.keys()
    assert cairn.load(str(k.path)[:-3] + ".receipt.json").dot.signature == \
        "dot(n:usize, x:ro<f64>[n], y:ro<f64>[n]) -> f64"


def test_a_refused_program_is_a_build_error_with_its_diagnostics(tmp_path):
    src = tmp_path / "bad.cairn"
    src.write_text("pub fn f(x:f16) -> f16 = x + x;\n")
    with pytest.raises(cairn.BuildError) as e:
        cairn.build(src)
    assert e.value.status == 1 and "error[E-OPERATOR]" in e.value.diagnostics


def test_dot_is_the_exact_sum_of_the_rounded_products(k):
    rng = np.random.default_rng(1)
    for n in (0, 1, 7, 1000, 70000):
        x = rng.standard_normal(n) * 10.0 ** rng.integers(-200, 200, n)
        y = rng.standard_normal(n)
        products = x * y  # NumPy rounds each product once, as CAIRN's f64 * does
        got = k.dot(x, y)
        assert isinstance(got, np.float64)
        assert got == float(exact(products))
        assert n or math.copysign(1, got) == 1  # no terms: +0.0


def test_axpy_writes_in_place_what_numpy_computes(k):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(5000).astype(np.float32)
    y = rng.standard_normal(5000).astype(np.float32)
    want = np.float32(0.75) * x + y
    k.axpy(np.float32(0.75), x, y)
    assert y.tobytes() == want.tobytes()


def test_storage_floats_go_in_and_out_as_numpy_rounds_them(k):
    rng = np.random.default_rng(3)
    h = (rng.standard_normal(4096) * 1000).astype(np.float16)
    out, outb = np.zeros(4096, np.float16), np.zeros(4096, np.uint16)
    count = k.halve(h, out, outb)
    assert isinstance(count, np.float16) and count == np.float16(4096)
    v = h.astype(np.float32) * np.float32(0.5)
    assert out.tobytes() == v.astype(np.float16).tobytes()
    bits = v.view(np.uint32).astype(np.uint64)
    assert outb.tobytes() == ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16).tobytes()


def test_bits_pass_untouched_nan_payloads_included(k):
    x16 = np.array([0x7E01, 0xFC01, 0x0001, 0x8000, 0x7C00], np.uint16).view(np.float16)
    y16 = np.zeros_like(x16)
    k.copy16(x16, y16)
    assert y16.view(np.uint16).tolist() == [0x7E01, 0xFC01, 0x0001, 0x8000, 0x7C00]
    x8 = np.arange(256, dtype=np.uint8)
    y8 = np.zeros_like(x8)
    k.copy8(x8, y8)
    assert (y8 == x8).all()
    assert k.bf16_to_f32(0x3FC0) == np.float32(1.5) and k.bf16_to_f32(0xFF80) == -np.inf


@pytest.mark.parametrize("x,s", [(1.0, 0.5), (-1000.0, 1.0), (2.5, 1.0), (3.5, 1.0),
                                 (0.3, 0.1), (np.inf, 1.0), (-126.5, 1.0)])
def test_quantize_is_the_exact_quotient_rounded_and_saturated(k, x, s):
    x32, s32 = np.float32(x), np.float32(s)
    q = F(float(x32)) / F(float(s32)) if math.isfinite(x32) else None
    want = 127 if q is None else max(-128, min(127, round(q)))  # round: ties to even
    assert k.quant(x32, s32) == want


def test_every_integer_width_a_bool_and_a_reference(k):
    total = np.array([10], np.int64)
    assert k.mix(-128, 65535, -2**63 + 70000, 2**64 - 1, True, total) is False
    assert total[0] == 10 - 128 + 65535 + (-2**63 + 70000) + (2**64 - 1) % 1000
    assert k.mix(a=1, b=2, c=3, d=4, flag=False, total=total) is True


def test_extents_left_out_are_the_arrays_sizes(k):
    x, y = np.array([1, 2, 3], np.int32), np.array([10, 20], np.int32)
    out = np.zeros(6, np.int32)
    k.outer(-1, x, y, out)  # n = 3, m = 2 from the arrays; k is given
    assert out.tolist() == [9, 19, 19, 39, 29, 59]
    out2 = np.zeros((3, 2), np.int32)  # any shape: its elements in C order
    k.outer(3, 2, -1, x, y, out2)
    assert out2.reshape(-1).tolist() == out.tolist()


def test_contiguous_arrays_are_passed_without_a_copy(k, monkeypatch):
    seen = []
    fn = k.functions["axpy"]
    real = fn._cfunc

    def spy(*args):
        seen.append(args)
        return real(*args)
    monkeypatch.setattr(fn, "_cfunc", spy)
    x, y = np.ones(8, np.float32), np.zeros(8, np.float32)
    x.flags.writeable = False  # an ro view needs no writeable array
    fn(np.float32(2), x, y)
    assert seen[0][2] == x.ctypes.data and seen[0][4] == y.ctypes.data
    strided = np.ones(16, np.float32)[::2]
    fn(np.float32(2), strided, y)  # an ro view that is not contiguous is copied first
    assert seen[1][2] != strided.ctypes.data and (y == 4).all()


@pytest.mark.parametrize("call,error,text", [
    (lambda k: k.dot(np.ones(3, np.float32), np.ones(3)), TypeError,
     "x: ro<f64> takes a float64 array, not float32"),
    (lambda k: k.dot([1.0, 2.0], np.ones(2)), TypeError, "x: ro<f64> takes a numpy array, not list"),
    (lambda k: k.axpy(np.float32(1), np.ones(4, np.float32), np.ones(8, np.float32)[::2]),
     ValueError, "y: rw<f32> writes into the array itself, which must be C-contiguous"),
    (lambda k: k.axpy(0.1, np.ones(2, np.float32), np.ones(2, np.float32)), TypeError,
     "a: 0.1 is not exactly a f32"),
    (lambda k: k.mix(128, 0, 0, 0, True, np.zeros(1, np.int64)), ValueError, "a: 128 is not a i8"),
    (lambda k: k.mix(1.0, 0, 0, 0, True, np.zeros(1, np.int64)), ValueError, "a: 1.0 is not a i8"),
    (lambda k: k.mix(1, 0, 0, 0, 1, np.zeros(1, np.int64)), TypeError, "flag: a bool parameter"),
    (lambda k: k.mix(1, 0, 0, 0, True, np.zeros(2, np.int64)), ValueError, "one-element array"),
    (lambda k: k.halve(np.ones(2, np.float16), np.ones(2, np.float16), np.ones(2, np.float16)),
     TypeError, "outb: rw<bf16> takes uint16 holding bf16 bits, not float16"),
    (lambda k: k.bf16_to_f32(70000), TypeError, "x: bf16 is passed as its bits"),
    (lambda k: k.dot(np.ones(2)), TypeError, "dot() is missing y"),
    (lambda k: k.dot(np.ones(2), np.ones(2), z=1), TypeError, "dot() has no parameter 'z'"),
    (lambda k: k.pick(np.ones(2, np.int32)), TypeError, "pick() is missing k"),
    (lambda k: k.nothing, AttributeError, "the library has no pub fn 'nothing'"),
])
def test_what_a_caller_passes_is_checked(k, call, error, text):
    with pytest.raises(error) as e:
        call(k)
    assert text in str(e.value), str(e.value)


def test_a_trap_is_an_exception_with_its_place_and_the_process_goes_on(k):
    with pytest.raises(cairn.TrapError) as e:
        k.pick(np.arange(4, dtype=np.int32), 9)
    assert e.value.message == "index 9 out of bounds for extent 4"
    text = KERNELS.read_text().splitlines()
    line = next(i for i, l in enumerate(text, 1) if l.startswith("pub fn pick"))
    col = text[line - 1].index("x[k]") + 1
    assert (e.value.file, e.value.line, e.value.col) == (str(KERNELS), line, col)
    assert str(e.value) == f"index 9 out of bounds for extent 4 at {KERNELS}:{line}:{col}"
    with pytest.raises(cairn.TrapError, match=r"integer overflow: 2147483647 \+ 1 does not fit"):
        k.add(2**31 - 1, 1)
    with pytest.raises(cairn.TrapError, match="view extent mismatch: x has 3 elements, its "
                                              "parameter declares 4"):
        k.dot(4, np.ones(3), np.ones(4))
    with pytest.raises(cairn.TrapError, match="quantize scale must be positive and finite "
                                              r"\(scale = -1\)"):
        k.quant(np.float32(1), np.float32(-1))
    assert k.pick(np.arange(4, dtype=np.int32), 2) == 2


def test_threads_each_see_their_own_trap(k):
    def one(t):
        x = np.arange(64, dtype=np.int32)
        for _ in range(50):
            try:
                k.pick(x, 1000 + t)
                return "no trap"
            except cairn.TrapError as e:
                if e.message != f"index {1000 + t} out of bounds for extent 64":
                    return e.message
            with pytest.raises(cairn.TrapError, match="for extent 512"):
                k.stride(np.ones(512, np.float32), np.zeros(512, np.float32))
            if k.pick(x, t) != t:
                return "wrong value"
        return "ok"
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert list(pool.map(one, range(16))) == ["ok"] * 16


def test_exact_sum_against_fractions():
    rng = np.random.default_rng(4)
    for n in (0, 1, 2, 100, 10000):
        for dtype in (np.float64, np.float32):
            x = (rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)).astype(dtype)
            x[::7] = -x[::7] * 3  # cancellation
            got = cairn.exact_sum(x)
            assert got.dtype == dtype
            want = exact(x)
            if dtype == np.float64:
                assert got == float(want)
            else:  # rounded once to f32: the f32 nearest the exact sum, ties to even
                lo = np.float32(float(want))
                cands = [np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))]
                best = min(abs(F(float(c)) - want) for c in cands)
                assert abs(F(float(got)) - want) == best
    assert cairn.exact_sum(np.array([1e308, 1e308, -1e308])) == 1e308  # no overflow inside
    assert cairn.exact_sum(np.array([1e308, 1e308])) == np.inf
    assert math.copysign(1, cairn.exact_sum(np.array([-0.0, -0.0]))) == -1
    assert math.copysign(1, cairn.exact_sum(np.array([], np.float64))) == 1
    assert np.isnan(cairn.exact_sum(np.array([np.inf, -np.inf])))
    assert cairn.exact_sum(np.ones((3, 4), np.float32)[:, ::2]) == 6  # any shape and strides
    with pytest.raises(TypeError, match="float64 or float32"):
        cairn.exact_sum(np.array([1, 2, 3]))


def bracket_ok(a, b, lo, hi):
    """Containment, and exactness: lo == hi exactly where the product is representable,
    else hi is lo's upper neighbour."""
    m, n = lo.shape
    for i in range(m):
        for j in range(n):
            p = sum((F(float(a[i, t])) * F(float(b[t, j])) for t in range(a.shape[1])), F(0))
            l, h = lo[i, j], hi[i, j]
            assert F(float(l)) <= p <= F(float(h)), (i, j)
            if F(float(l)) == p:
                assert l == h
            else:
                assert np.nextafter(l, l.dtype.type(np.inf)) == h, (i, j, l, h)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 4, 5), (7, 1, 9), (2, 33, 3)])
def test_mm_enclose_contains_the_exact_product_tightly(dtype, shape):
    m, kk, n = shape
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal((m, kk)) * 2.0 ** rng.integers(-30, 30, (m, kk))).astype(dtype)
    b = (rng.standard_normal((kk, n)) * 2.0 ** rng.integers(-30, 30, (kk, n))).astype(dtype)
    lo, hi, info = cairn.mm_enclose(a, b, info=True)
    assert lo.dtype == dtype and lo.shape == (m, n) and info["tight"]
    bracket_ok(a, b, lo, hi)
    lo2, hi2 = cairn.mm_enclose(np.asfortranarray(a), b.T.copy().T)  # any strides: same bits
    assert lo2.tobytes() == lo.tobytes() and hi2.tobytes() == hi.tobytes()


def test_mm_enclose_refuses_what_has_no_bracket():
    a = np.ones((2, 2))
    a[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"mm_enclose: A\[1\]\[0\]"):
        cairn.mm_enclose(a, np.ones((2, 2)))
    with pytest.raises(ValueError, match="A's columns must be B's rows"):
        cairn.mm_enclose(np.ones((2, 3)), np.ones((2, 2)))
    with pytest.raises(TypeError, match="one type for both"):
        cairn.mm_enclose(np.ones((2, 2)), np.ones((2, 2), np.float32))


def test_the_package_needs_no_build_step():
    package = pathlib.Path(cairn.__file__).parent
    assert {p.suffix for p in package.iterdir() if p.is_file()} == {".py"}
    r = subprocess.run([sys.executable, "-c", "import cairn; print(cairn.__version__)"],
                       capture_output=True, text=True, cwd=package.parent)
    assert r.returncode == 0 and r.stdout.strip() == cairn.__version__
