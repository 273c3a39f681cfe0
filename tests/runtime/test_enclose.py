"""The exact bracket GEMM against exact rational arithmetic (tests/runtime/enclose_model.py).

Every output is checked for containment lo <= A*B <= hi; where the operands scale
losslessly, lo and hi must equal the exact floor and ceiling in the format.
"""
import math
import pathlib
import subprocess
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import harness  # noqa: E402
from enclose_model import (Case, FORMATS, INF, SIGN, ceil_bits, check_bracket,  # noqa: E402
                           exact_product, floor_bits, parse_results, random_normal_bits,
                           rng_for, run_cases, to_bits, value)

F64_MAX = 0x7FEFFFFFFFFFFFFF


def run(cases, env=None):
    proc = run_cases(harness("enclose_run"), cases, env=env)
    assert proc.returncode in (0, 1), proc.stderr
    results = parse_results(proc.stdout)
    assert [r["name"] for r in results] == [c.name for c in cases]
    return results


def random_case(name, m, n, k, width=64):
    rng = rng_for(name)
    return Case(name, width, m, n, k, random_normal_bits(rng, m * k, width),
                random_normal_bits(rng, k * n, width))


def check_all(cases, env=None, expect_tight=True):
    results = run(cases, env)
    widths = []
    for case, r in zip(cases, results):
        assert r["rc"] == 0, r
        if expect_tight:
            assert r["tight"] == 1 and r["tight_outputs"] == case.m * case.n, r
        widths.append(check_bracket(case, r, tight=bool(r["tight"])))
    return results, widths


FOUR_SHAPES = [(1, 1, 8), (5, 7, 100), (16, 16, 512), (3, 2, 4000)]


@pytest.mark.parametrize("shape", FOUR_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_random_shapes_are_tight(shape):
    case = random_case("shape_%dx%dx%d" % shape, *shape)
    _, widths = check_all([case])
    assert widths[0] <= 1  # one representable step at most


def test_width_is_one_step_at_every_k():
    cases = [random_case(f"k{k}", 2, 2, k) for k in (8, 64, 512, 4096, 16384)]
    _, widths = check_all(cases)
    assert all(w <= 1 for w in widths), widths


def test_scalar_kernel_gives_the_same_bits():
    cases = [random_case("kern_a", 9, 17, 300), random_case("kern_b", 4, 3, 70, 32)]
    ifma = run(cases)
    scalar = run(cases, env={"CAIRN_ENCLOSE_KERNEL": "scalar"})
    assert all(r["kernel"] == "scalar" for r in scalar)
    for x, y in zip(ifma, scalar):
        assert (x["lo"], x["hi"]) == (y["lo"], y["hi"])


def test_integer_operands_give_the_plain_product():
    rng = rng_for("ints")
    m, n, k = 6, 5, 200
    ai = [rng.randint(-1000, 1000) for _ in range(m * k)]
    bi = [rng.randint(-1000, 1000) for _ in range(k * n)]
    case = Case("ints", 64, m, n, k, [to_bits(float(x), 64) for x in ai],
                [to_bits(float(x), 64) for x in bi])
    r = run([case])[0]
    assert r["tight"] == 1
    for i in range(m):
        for j in range(n):
            plain = sum(ai[i * k + t] * bi[t * n + j] for t in range(k))
            assert r["lo"][i * n + j] == r["hi"][i * n + j] == to_bits(float(plain), 64)


def test_catastrophic_cancellation():
    big, tiny = 2.0 ** 60, 2.0 ** -40
    a = [big, 1.0, -big, 3.0, big]
    b = [1.0, tiny, 1.0, tiny, -1.0]
    # [big, 1, -big, 3, big] . [1, tiny, 1, tiny, -1] = 4 tiny - big
    rng = rng_for("cancel")
    xs = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-30, 30) for _ in range(50)]
    ys = [rng.uniform(-1, 1) for _ in range(50)]
    # x.y - x.y + 2^-70: the random part cancels exactly
    a2 = xs + [-x for x in xs] + [2.0 ** -35]
    b2 = ys + ys + [2.0 ** -35]
    cases = [Case("cancel_small", 64, 1, 1, 5, [to_bits(x, 64) for x in a],
                  [to_bits(x, 64) for x in b]),
             Case("cancel_random", 64, 1, 1, 101, [to_bits(x, 64) for x in a2],
                  [to_bits(x, 64) for x in b2])]
    results, _ = check_all(cases)
    assert value(results[1]["lo"][0], 64) == Fraction(2) ** -70
    assert results[1]["lo"] == results[1]["hi"]


def test_subnormal_operands_and_results():
    sub = [to_bits(5e-324, 64), to_bits(3 * 5e-324, 64), to_bits(2.0 ** -1050, 64)]
    cases = [
        # subnormal x normal: representable subnormal and normal results
        Case("sub_x_norm", 64, 3, 1, 1, sub, [to_bits(3.0, 64)]),
        Case("sub_x_big", 64, 3, 1, 1, sub, [to_bits(2.0 ** 1000, 64)]),
        # subnormal x subnormal underflows: lo = 0, hi = the least subnormal
        Case("sub_x_sub", 64, 1, 1, 1, [sub[0]], [sub[1]]),
        Case("neg_sub_x_sub", 64, 1, 1, 1, [sub[0] | SIGN[64]], [sub[1]]),
        # a result just below the least normal, and one rounding up into it
        Case("near_min_normal", 64, 1, 1, 2, [to_bits(2.0 ** -1022, 64), to_bits(-5e-324, 64)],
             [to_bits(1.0, 64), to_bits(1.0, 64)]),
        Case("into_min_normal", 64, 1, 1, 1, [to_bits(2.0 ** -1022 - 5e-324, 64)],
             [to_bits(1.0 + 2.0 ** -52, 64)]),
        Case("sub_f32", 32, 2, 1, 2, [1, 7, 0x00400000, 0x80000003],
             [to_bits(0.75, 32), to_bits(2.0 ** -10, 32)]),
    ]
    results, _ = check_all(cases)
    lo, hi = results[2]["lo"][0], results[2]["hi"][0]
    assert (lo, hi) == (0, 1)
    assert (results[3]["lo"][0], results[3]["hi"][0]) == (SIGN[64] | 1, SIGN[64])


def test_overflow_goes_to_infinity_as_directed():
    mx = F64_MAX
    cases = [
        Case("over_pos", 64, 1, 1, 1, [mx], [to_bits(2.0, 64)]),
        Case("over_neg", 64, 1, 1, 1, [mx | SIGN[64]], [to_bits(2.0, 64)]),
        Case("over_sum", 64, 1, 1, 2, [mx, mx], [to_bits(1.0, 64), to_bits(2.0 ** -53, 64)]),
        Case("at_max", 64, 1, 1, 2, [mx, mx], [to_bits(1.0, 64), to_bits(0.0, 64)]),
        Case("over_f32", 32, 1, 1, 1, [0x7F7FFFFF], [to_bits(1.5, 32)]),
    ]
    results, _ = check_all(cases)
    assert (results[0]["lo"][0], results[0]["hi"][0]) == (mx, INF[64])
    assert (results[1]["lo"][0], results[1]["hi"][0]) == (SIGN[64] | INF[64], SIGN[64] | mx)
    assert (results[2]["lo"][0], results[2]["hi"][0]) == (mx, INF[64])
    assert (results[3]["lo"][0], results[3]["hi"][0]) == (mx, mx)
    assert (results[4]["lo"][0], results[4]["hi"][0]) == (0x7F7FFFFF, INF[32])


def test_f32_random_is_tight():
    cases = [random_case("f32_a", 7, 9, 50, 32), random_case("f32_b", 2, 3, 3000, 32)]
    _, widths = check_all(cases)
    assert all(w <= 1 for w in widths)


def spanning_case(name, m, n, k, lo_exp, hi_exp, wide_b):
    rng = rng_for(name)

    def draw(wide):
        e = rng.randint(lo_exp, hi_exp) if wide else rng.randint(-3, 3)
        return to_bits(rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** e, 64)

    return Case(name, 64, m, n, k, [draw(True) for _ in range(m * k)],
                [draw(wide_b) for _ in range(k * n)])


def test_operands_spanning_hundreds_of_binades_are_contained():
    cases = [spanning_case("span_a", 4, 5, 40, -500, 500, False),
             spanning_case("span_ab", 3, 4, 60, -260, 260, True),
             spanning_case("span_wide", 3, 3, 30, -1000, 1000, True)]
    results, _ = check_all(cases, expect_tight=False)
    for r in results:
        assert r["tight"] == 0 and r["need_a"] > r["bits_a"]
        assert r["bits_a"] + r["bits_b"] + r["lg"] <= 332
        assert r["bits_a"] <= 256 and r["bits_b"] <= 256


def test_mixed_rows_keep_tight_outputs_tight():
    # Row 0 spans 600 binades (lossy); row 1 is ordinary and must stay exact.
    wide_row = [to_bits(2.0 ** 300, 64), to_bits(2.0 ** -300 * 1.5, 64), to_bits(1.0, 64)]
    case = Case("mixed", 64, 2, 2, 3, wide_row + [to_bits(0.1, 64), to_bits(-0.3, 64),
                                                  to_bits(0.7, 64)],
                [to_bits(x, 64) for x in (1.0, 0.5, 1.0 / 3, -2.0, 1.0, 1e-5)])
    r = run([case])[0]
    assert r["tight"] == 0 and r["lossy_rows"] == 1 and r["tight_outputs"] == 2
    exact = exact_product(case.a, case.b, 2, 2, 3, 64)
    for idx, x in enumerate(exact):
        assert value(r["lo"][idx], 64) <= x <= value(r["hi"][idx], 64)
    for idx in (2, 3):
        assert (r["lo"][idx], r["hi"][idx]) == (floor_bits(exact[idx], 64),
                                                ceil_bits(exact[idx], 64))


def test_budget_boundary():
    # Each operand needs 150 magnitude bits (+1 sign); k = 16 adds 4: 151+151+4 = 306 fits.
    a = [to_bits(2.0 ** 75, 64), to_bits(2.0 ** -74, 64)] * 8
    b = [to_bits(2.0 ** -70, 64), to_bits(2.0 ** 79, 64)] * 8
    fits = Case("budget_fits", 64, 1, 1, 16, a, [b[t % 2] for t in range(16)])
    wide = Case("budget_over", 64, 1, 1, 16,
                [to_bits(2.0 ** 200, 64), to_bits(2.0 ** -200, 64)] * 8,
                [to_bits(2.0 ** -190, 64), to_bits(2.0 ** 190, 64)] * 8)
    results, _ = check_all([fits, wide], expect_tight=False)
    assert results[0]["tight"] == 1 and results[0]["need_a"] == 151
    assert results[1]["tight"] == 0


def test_zero_sizes_and_zero_operands():
    cases = [Case("k0", 64, 2, 3, 0, [], []),
             Case("zeros", 64, 2, 2, 2, [0, SIGN[64], 0, 0], [0, 0, SIGN[64], 0])]
    results, _ = check_all(cases)
    for r in results:
        assert set(r["lo"]) == {0} and set(r["hi"]) == {0}


@pytest.mark.parametrize("where,bits", [("a", 0x7FF8000000000000), ("a", INF[64]),
                                        ("b", SIGN[64] | INF[64])])
def test_nonfinite_operands_are_refused(where, bits):
    a = [to_bits(1.0, 64)] * 6
    b = [to_bits(1.0, 64)] * 6
    (a if where == "a" else b)[4] = bits
    r = run([Case("bad", 64, 2, 2, 3, a, b)])[0]
    assert r["rc"] == -1 and "NaN or infinite" in r["error"]
    # a is 2x3: element 4 is (1, 1); b is 3x2: element 4 is (2, 0)
    assert r["bad"] == (("a", 1, 1) if where == "a" else ("b", 2, 0))


def test_k_beyond_the_limit_is_refused():
    k = (1 << 17) + 1
    one = to_bits(1.0, 64)
    r = run([Case("k_too_big", 64, 1, 1, k, [one] * k, [one] * k)])[0]
    assert r["rc"] == -2 and "2^17" in r["error"]


@pytest.mark.matrix
def test_long_sweep_larger_shapes():
    cases = [random_case("big_a", 24, 24, 2048), random_case("big_b", 2, 2, 1 << 17),
             random_case("big_c", 40, 33, 257, 32)]
    _, widths = check_all(cases)
    assert all(w <= 1 for w in widths)


def test_model_floor_ceil_agree_with_python_floats():
    # The model's own rounding against Python's correctly rounded float() and nextafter.
    rng = rng_for("model")
    for _ in range(2000):
        x = Fraction(rng.randint(-10 ** 30, 10 ** 30), rng.randint(1, 10 ** 30)) * \
            Fraction(2) ** rng.randint(-1100, 1000)
        try:
            f = float(x)
        except OverflowError:
            continue
        lo = f if Fraction(f) <= x else math.nextafter(f, -math.inf)
        hi = f if Fraction(f) >= x else math.nextafter(f, math.inf)
        assert value(floor_bits(x, 64), 64) == (Fraction(lo) if math.isfinite(lo) else lo)
        assert value(ceil_bits(x, 64), 64) == (Fraction(hi) if math.isfinite(hi) else hi)
    assert FORMATS[32][0] == 24


def test_c_api_edge_cases():
    proc = subprocess.run([harness("enclose_api")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr


def test_c_api_strided_layouts():
    """cairn_enclose_strided (tests/c/enclose_strided.c): every layout against the
    contiguous call, canaries between strided outputs, refusals leaving outputs alone."""
    proc = subprocess.run([harness("enclose_strided")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
