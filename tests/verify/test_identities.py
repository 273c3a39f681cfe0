"""cairn verify and exact float identities (issue 35, completeness): x * 2.0 against x + x
(returned, or written into a one-element view), a product or quotient by another power of
two, a negative one, and the operands of + and * swapped are verified, while near misses
(a sum that rounds more than once, a clamp at the overflow, x * 0.1 for x / 10.0) get a
counterexample whose replay shows the difference.

Each verdict is held to an independent model, numpy's IEEE arithmetic: a verified pair
gives the same value (all NaNs one value, +0 and -0 two, as verify compares) on every
exponent, sign and edge mantissa of its type and seeded random ones, and the identity's
shape holds exhaustively over all 65536 f16 inputs (numpy rounds an f16 operation once:
f32 holds its exact product and sum, and 24 >= 2 * 11 + 2 bits make the quotient's
double rounding innocuous); a counterexample's inputs give different values in numpy.
Before this change (3aaf43f) the view pairs and the swapped product came back unknown
(the solver's budget ran out proving a multiplier circuit equal to an adder)."""
import pathlib
import re
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # verifylib.py
from verifylib import CAIRN, PROGRAMS, only, run, verify  # noqa: E402

PROGRAM = PROGRAMS / "exact35.cairn"
F32, F64, F16 = np.float32, np.float64, np.float16
MAX32 = float(np.finfo(F32).max)

# (implementation, type, its reference's value, its own, the verdict): the functions of
# exact35.cairn, written again in numpy. T is the type: constants are T's (as the
# program's literals are).
PAIRS = [
    ("twice_add", F32, lambda x, T: x * T(2.0), lambda x, T: x + x, "verified"),
    ("twice_left", F32, lambda x, T: x * T(2.0), lambda x, T: T(2.0) * x, "verified"),
    ("twice_div", F32, lambda x, T: x * T(2.0), lambda x, T: x / T(0.5), "verified"),
    ("twice_view_add", F32, lambda x, T: x * T(2.0), lambda x, T: x + x, "verified"),
    ("twice64_view_add", F64, lambda x, T: x * T(2.0), lambda x, T: x + x, "verified"),
    ("negtwice_add", F64, lambda x, T: x * T(-2.0), lambda x, T: -(x + x), "verified"),
    ("half_div", F32, lambda x, T: x * T(0.5), lambda x, T: x / T(2.0), "verified"),
    ("tiny_div", F64, lambda x, T: x * T(0.0009765625), lambda x, T: x / T(1024.0), "verified"),
    ("quad_add", F32, lambda x, T: x * T(4.0), lambda x, T: (x + x) + (x + x), "verified"),
    ("thrice_add", F32, lambda x, T: x * T(3.0), lambda x, T: x + x + x, "verified"),
    ("twice_kept", F32, lambda x, T: x * T(2.0),
     lambda x, T: np.minimum(x + x, T(np.finfo(T).max)), "counterexample"),
    ("six_add", F32, lambda x, T: x * T(6.0), lambda x, T: x + x + x + x + x + x, "counterexample"),
    ("thrice_split", F32, lambda x, T: x * T(3.0), lambda x, T: x * T(1.5) * T(2.0), "counterexample"),
    ("tenth_div", F32, lambda x, T: x * T(0.1), lambda x, T: x / T(10.0), "counterexample"),
]
# the pairs verify proves by rewriting (one term for both spellings), not by search
REWRITTEN = ["twice_add", "twice_left", "twice_div", "twice_view_add", "twice64_view_add",
             "negtwice_add", "half_div", "tiny_div", "prod_swapped"]

UINT = {F16: np.uint16, F32: np.uint32, F64: np.uint64}


def same(a, b):
    """verify's equality, elementwise: one NaN value; +0 and -0 differ."""
    u = UINT[a.dtype.type]
    return (a.view(u) == b.view(u)) | (np.isnan(a) & np.isnan(b))


def inputs(T, seed=35):
    """Every sign and exponent of T with edge mantissas and seeded random ones."""
    u, bits = UINT[T], np.finfo(T).bits
    mant = np.finfo(T).nmant
    top = (1 << mant) - 1
    rng = np.random.default_rng(seed)
    edges = [0, 1, 2, 3, 1 << (mant - 1), (1 << (mant - 1)) + 1, top - 2, top - 1, top]
    exps = np.arange(1 << (bits - 1 - mant), dtype=np.uint64)
    out = []
    for sign in (0, 1):
        m = np.concatenate([np.array(edges, dtype=np.uint64),
                            rng.integers(0, top + 1, 256 if T is F64 else 512, dtype=np.uint64)])
        grid = (np.uint64(sign) << np.uint64(bits - 1)) | (exps[:, None] << np.uint64(mant)) | m[None, :]
        out.append(grid.ravel().astype(u))
    return np.concatenate(out).view(T)


def every_f16():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(F16)


@pytest.fixture(scope="module")
def props(tmp_path_factory):
    rc, found = verify(PROGRAM, tmp_path_factory.mktemp("exact35") / "cex")
    assert rc == 10  # the near misses
    return found


def input_value(text, T):
    """'1.83e+38 (bits 0x7f0a1400)' -> that value of T, from its bits."""
    bits = int(re.search(r"bits 0x([0-9a-f]+)", text).group(1), 16)
    return np.array([bits], dtype=UINT[T]).view(T)


@pytest.mark.parametrize("fn,T,ref,impl,expected", PAIRS, ids=[p[0] for p in PAIRS])
def test_identity_verdict_against_numpy(props, fn, T, ref, impl, expected):
    p = only(props, fn, "implements")
    assert p["verdict"] == expected, p
    with np.errstate(all="ignore"):
        if expected == "verified":
            x = inputs(T)
            bad = ~same(ref(x, T), impl(x, T))
            assert not bad.any(), (fn, x[bad][:4])
            return
        x = input_value(p["inputs"]["x"], T)
        assert not same(ref(x, T), impl(x, T)).all(), (fn, p["inputs"])
    r = run([CAIRN, "run", p["replay"]])
    assert r.returncode == 10, (p, r.stdout, r.stderr)


@pytest.mark.parametrize("fn,T,ref,impl,expected", PAIRS, ids=[p[0] for p in PAIRS])
def test_identity_shape_exhaustively_in_f16(fn, T, ref, impl, expected):
    """The same identities over every f16 input: each verified one holds for all of
    them (its argument is the format's, not f32's), and each near miss fails somewhere."""
    x = every_f16()
    with np.errstate(all="ignore"):
        equal = same(ref(x, F16), impl(x, F16))
    assert equal.all() if expected == "verified" else not equal.all(), fn


def test_swapped_operands_against_numpy(props):
    """a * b + b against b + b * a: verified, and equal on pairs of the input set."""
    assert only(props, "prod_swapped", "implements")["verdict"] == "verified"
    x = inputs(F64)
    a, b = x, np.random.default_rng(3).permutation(x)
    with np.errstate(all="ignore"):
        assert same(a * b + b, b + b * a).all()


def test_the_guard_between_them_is_verified(props):
    """n / (1 + i32(x * 2.0 - (x + x))) for finite x within 1e30: the difference is 0, so
    no division by zero or conversion out of range; numpy agrees on the input set."""
    for prop in ("division by zero", "float to integer conversion out of range"):
        assert only(props, "no_gap", prop)["verdict"] == "verified"
    x = inputs(F32)
    x = x[np.abs(x) < F32(1.0e30)]
    assert (x * F32(2.0) - (x + x) == 0).all()


def test_rewritten_identities_need_almost_no_budget(tmp_path):
    """The rewritten pairs are one term on both sides, so a twentieth of the default
    budget decides them (before this change three were unknown at the full one)."""
    for fn in REWRITTEN:
        rc, found = verify(PROGRAM, tmp_path / fn, "--function", fn, "--budget", "2000000")
        assert only(found, fn, "implements")["verdict"] == "verified", fn
