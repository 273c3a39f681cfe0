"""The exact parallel sum (runtime/cairn_sum.*), bit for bit against an exact rational model.

The model is independent of the C code: Python `fractions` for the exact total, a
round-to-nearest-even into f64/f32 written here, the spec's special values table, and
`math.fsum` as a second opinion for finite f64. tests/c/sum_harness.c computes every case
seven ways (whole block, term by term, random block cuts merged in a shuffled order, the
pool with a random grain, the plain array entry point, and CAIRN_SUM_CHECKED's whole sum
as generated code calls it, with every block covered (its tiny path under 16 terms) and
with none) plus the ordered fold; each case
runs at every lane count 1..16 (CAIRN_THREADS) with a different block-cut seed, and every
way must give the model's bits. The fold is checked against its own model (left to
right, each partial sum rounded: Python floats for f64, numpy float32 for f32).
"""
import math
import random
import struct
from fractions import Fraction

import numpy as np
import pytest

from cairntest import SAN, harness, run


class Fmt:
    """A binary float format: precision p (with the implicit bit), exponent range, bit layout."""

    def __init__(self, name, p, emin, emax, width):
        self.name, self.p, self.emin, self.emax, self.width = name, p, emin, emax, width
        self.tiny = Fraction(2) ** (emin - p + 1)                     # least subnormal
        self.max = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax  # largest finite
        self.sign = 1 << (width - 1)
        self.inf = ((1 << (width - p)) - 1) << (p - 1)
        self.nan = self.inf | 1 << (p - 2)                            # canonical quiet NaN
        self.pack = "<d" if width == 64 else "<f"
        self.ipack = "<Q" if width == 64 else "<I"

    def bits(self, x):
        """Bits of a Python float that is exactly representable in this format."""
        b = struct.unpack(self.ipack, struct.pack(self.pack, x))[0]
        assert self.width == 64 or float(struct.unpack("<f", struct.pack("<I", b))[0]) == x or x != x
        return b

    def value(self, b):
        return struct.unpack(self.pack, struct.pack(self.ipack, b))[0]

    def ulp(self, q):
        """The spacing of this format's values at |q| (q a nonzero Fraction or float)."""
        e = exponent(abs(Fraction(q)))
        return Fraction(2) ** (max(e, self.emin) - self.p + 1)

    def round(self, q):
        """q (Fraction) rounded to nearest, ties to even; a float, or +-inf past the range."""
        if q == 0:
            return 0.0
        a = abs(q)
        ulp = self.ulp(a)
        m = a / ulp
        whole = m.numerator // m.denominator
        rest = m - whole
        if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2 == 1):
            whole += 1
        r = whole * ulp
        if r > self.max:
            return math.inf if q > 0 else -math.inf
        return float(r) if q > 0 else -float(r)


def exponent(a):
    """floor(log2(a)) for a positive Fraction, exactly."""
    e = a.numerator.bit_length() - a.denominator.bit_length()
    return e - 1 if Fraction(2) ** e > a else e


F64 = Fmt("f64", 53, -1022, 1023, 64)
F32 = Fmt("f32", 24, -126, 127, 32)


def model_sum(fmt, terms, copies=1):
    """The spec's contract: the bits reduce + parallel must give for these term bits
    (each term taken `copies` times)."""
    vals = [fmt.value(b) for b in terms]
    if any(v != v for v in vals) or (math.inf in vals and -math.inf in vals):
        return fmt.nan
    if math.inf in vals:
        return fmt.inf
    if -math.inf in vals:
        return fmt.sign | fmt.inf
    if not terms:
        return 0
    if all(b == fmt.sign for b in terms):
        return fmt.sign
    total = sum(Fraction(v) for v in vals) * copies
    if total == 0:
        return 0
    r = fmt.round(total)
    if math.isinf(r):
        return fmt.inf | (fmt.sign if r < 0 else 0)
    return fmt.bits(r)


def model_fold(fmt, terms):
    """reduce + for: the first term, then each next added, each partial sum rounded."""
    if not terms:
        return 0.0
    if fmt is F64:
        s = fmt.value(terms[0])
        for b in terms[1:]:
            s += fmt.value(b)
        return s
    with np.errstate(all="ignore"):
        arr = np.array(terms, dtype=np.uint32).view(np.float32)
        s = arr[0]
        for v in arr[1:]:
            s = np.float32(s + v)
        return float(s)


def fsum_opinion(fmt, terms):
    """math.fsum of finite f64 terms (None where it does not apply)."""
    vals = [fmt.value(b) for b in terms]
    if fmt is not F64 or not all(math.isfinite(v) for v in vals):
        return None
    try:
        return math.fsum(vals)
    except OverflowError:
        return None


# ---- the cases ------------------------------------------------------------------------

def fixed_cases(fmt):
    """The boundaries, the special values table, subnormals, cancellation, overflow."""
    one, tiny, big = Fraction(1), fmt.tiny, fmt.max
    inf, nan = math.inf, math.nan
    f = float
    out = []
    add = out.append
    # The spec's example, and the fold's failure on it.
    add([1e16, 1.0, -1e16])
    # Ties to even, and a least subnormal either side of a tie.
    for base in [one, one + fmt.ulp(one), Fraction(3), Fraction(2) ** 60, Fraction(-5),
                 Fraction(2) ** (fmt.emin + 3) * 3]:
        half = fmt.ulp(base) / 2
        for extra in [[], [tiny], [-tiny]]:
            add([f(base), f(half)] + [f(e) for e in extra])
            add([f(base), f(-half)] + [f(e) for e in extra])
            add([f(half), f(base)] + [f(e) for e in extra] + [f(half / 2), f(half / 2)])
    # Ties broken only by a term far below: small sums join two expansions, and the
    # tiny part must survive the join (even and odd terms take different expansions).
    small = fmt.tiny * Fraction(2) ** 20
    for t in ([one, one, fmt.ulp(one), small], [one, one, fmt.ulp(one), -small],
              [one, small, fmt.ulp(one), one], [small, one, one, fmt.ulp(one)],
              [one, one, one, fmt.ulp(one) * 2, small, small]):
        add([f(v) for v in t])
    # An ulp around powers of two (the spacing changes there).
    for k in [fmt.emin, fmt.emin + 1, -1, 0, 1, fmt.p, 100 if fmt is F64 else 20, fmt.emax]:
        p2 = Fraction(2) ** k
        below = fmt.ulp(p2) / 2                       # spacing just under 2^k
        for d in [below / 2, below, below * 3 / 2, below * 2]:
            add([f(p2), f(-d)])
            add([f(-p2), f(d)])
            add([f(p2 - below), f(d / 2)])
        add([f(p2), f(-below / 2), f(-tiny)])
    # The largest finite value and the overflow threshold (max + half its ulp).
    hu = fmt.ulp(big) / 2
    add([f(big)])
    add([f(big), f(hu)])                              # tie at the threshold: inf
    add([f(big), f(hu), f(-tiny)])                    # just below: max
    add([f(big), f(hu / 2)])
    add([f(-big), f(-hu)])
    add([f(-big), f(-hu), f(tiny)])
    add([f(big), f(big)])
    add([f(-big), f(-big), f(-big)])
    # Overflow of intermediate sums that cancels back into range.
    add([f(big), f(big), f(-big), f(-big), 1.0])
    add([f(big)] * 9 + [f(-big)] * 9 + [f(tiny)])
    add([f(big)] * 8 + [1.0] * 8 + [f(-big)] * 8)
    add([f(big), f(big), f(-big)])
    add([f(big)] * 100 + [f(-big)] * 99 + [f(-hu)])
    add([f(big), 1.0] * 70 + [f(-big), -1.0] * 70 + [0.5])
    # Every row of the special values table.
    add([nan])
    add([1.0, nan, 2.0])
    add([inf, nan])
    add([inf, -inf])
    add([1.0, -inf, 2.0, inf])
    add([inf, 1.0, f(-big), f(-big)])
    add([-inf, f(big), f(big)])
    add([inf])
    add([-inf])
    add([inf, inf, 3.0])
    add([])
    add([-0.0])
    add([-0.0] * 3)
    add([-0.0] * 200)
    add([-0.0, 0.0])
    add([0.0, -0.0] * 50)
    add([0.0])
    add([1.0, -1.0])
    add([-1.0, 1.0])
    add([-0.0, 2.5, -2.5, -0.0])
    add([f(big), f(-big)])
    add([f(tiny), f(-tiny), -0.0])
    # Subnormals.
    add([f(tiny)])
    add([f(tiny)] * 7)
    add([f(Fraction(2) ** fmt.emin), f(-tiny)])          # the largest subnormal
    add([f(Fraction(2) ** fmt.emin - tiny), f(tiny)])    # up into the normals
    add([f(tiny * 12345), f(-tiny * 345), f(tiny * 3)])
    add([f(Fraction(2) ** fmt.emin * 3), f(-Fraction(2) ** (fmt.emin + 1)), f(-tiny * 5)])
    # Cancellation.
    add([f(Fraction(2) ** 60), 1.0, f(-Fraction(2) ** 60)])
    add([1.0, f(Fraction(2) ** (fmt.p + 10)), -1.0, f(-Fraction(2) ** (fmt.p + 10)), f(tiny)])
    def rep(v):                 # into the format (1e16 is not an f32); specials, zeros as they are
        return fmt.bits(v if not math.isfinite(v) or v == 0 else fmt.round(Fraction(v)))
    cases = [[rep(v) for v in c] for c in out]
    # NaNs with payloads and signs: the result is still the canonical quiet NaN.
    q = fmt.nan
    cases += [[q | 1], [fmt.inf | 1], [fmt.sign | q], [fmt.bits(1.0), fmt.sign | fmt.inf | 5]]
    assert [fmt.sign] in cases and [fmt.sign] * 200 in cases   # the -0.0 rows survived
    return cases


def random_value(fmt, rng, kind):
    if kind == "narrow":
        return fmt.round(Fraction(rng.uniform(-1, 1)))
    if kind == "positive":
        return fmt.round(Fraction(rng.random() * 1000))
    if kind == "mid":          # exponents over a few hundred binades (f64) / tens (f32)
        span = 300 if fmt is F64 else 40
        return fmt.round(Fraction(rng.uniform(-1, 1)) * Fraction(2) ** rng.randint(-span, span))
    # "wide": any finite bit pattern, subnormals included
    while True:
        b = rng.getrandbits(fmt.width)
        v = fmt.value(b)
        if math.isfinite(v):
            return v


def random_cases(fmt, rng, count, max_n):
    cases = []
    for i in range(count):
        kind = ["narrow", "positive", "mid", "wide"][i % 4]
        n = rng.choice([1, 2, 3, 7, 8, 9, 63, 64, 65, 127, 500, rng.randint(0, max_n)])
        vals = [random_value(fmt, rng, kind) for _ in range(n)]
        if i % 5 == 4:          # heavy cancellation: every value and its negation, and a crumb
            vals = vals + [-v for v in vals] + [random_value(fmt, rng, "wide")]
            rng.shuffle(vals)
        cases.append([fmt.bits(v) for v in vals])
    return cases


def big_cases(fmt, rng, n):
    """Large enough that cairn_sum_fNN goes to the pool."""
    narrow = [fmt.bits(random_value(fmt, rng, "narrow")) for _ in range(n)]
    wide = [fmt.bits(random_value(fmt, rng, "wide")) for _ in range(n)]
    return [narrow, wide]


SMALL = SAN != "none"           # sanitizer cells: fewer and smaller random cases


def all_cases(fmt):
    rng = random.Random(20261130 + fmt.width)
    cases = fixed_cases(fmt)
    cases += random_cases(fmt, rng, 24 if SMALL else 80, 800 if SMALL else 3000)
    cases += big_cases(fmt, rng, 33000 if SMALL else 70000)
    return cases


_CACHE = {}


def prepared(fmt):
    """Cases, their input text and their model answers, computed once per format."""
    if fmt.name not in _CACHE:
        cases = all_cases(fmt)
        digits = fmt.width // 4
        text = "".join(" ".join(f"{b:0{digits}x}" for b in c) + "\n" for c in cases)
        _CACHE[fmt.name] = (cases, text, [model_sum(fmt, c) for c in cases],
                            [model_fold(fmt, c) for c in cases])
    return _CACHE[fmt.name]


def run_harness(fmt, threads, seed, text):
    res = run([harness("sum_harness"), fmt.name, seed], input=text, timeout=600,
              env={"CAIRN_THREADS": str(threads)})
    assert res.returncode == 0, res.stderr
    return [[int(w, 16) for w in line.split()] for line in res.stdout.splitlines()]


WAYS = ["block", "terms", "cuts", "pooled", "array", "whole", "checked"]


def check_rows(fmt, cases, expected, folds, rows, label):
    assert len(rows) == len(cases), f"{label}: {len(rows)} results for {len(cases)} cases"
    for i, (case, want, fold, row) in enumerate(zip(cases, expected, folds, rows)):
        show = " ".join(f"{b:x}" for b in case[:6]) + (" ..." if len(case) > 6 else "")
        assert len(row) == len(WAYS) + 1, f"{label} case {i}: {len(row)} columns"
        for way, got in zip(WAYS, row):
            assert got == want, (f"{label} case {i} [{show}] ({len(case)} terms) way {way}: "
                                 f"got {got:x}, model {want:x}")
        got_fold = fmt.value(row[-1])
        assert got_fold == fold or (fold != fold and got_fold != got_fold), \
            f"{label} case {i}: fold {got_fold!r}, model {fold!r}"


@pytest.mark.parametrize("threads", range(1, 17))
@pytest.mark.parametrize("fmt", [F64, F32], ids=["f64", "f32"])
def test_exact_sum_every_lane_count(fmt, threads):
    cases, text, expected, folds = prepared(fmt)
    rows = run_harness(fmt, threads, 1000 + threads, text)
    check_rows(fmt, cases, expected, folds, rows, f"{fmt.name} CAIRN_THREADS={threads}")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_block_cuts_do_not_change_bits(seed):
    """Same lane count, other random cuts and grains: still the model's bits."""
    for fmt in (F64, F32):
        cases, text, expected, folds = prepared(fmt)
        rows = run_harness(fmt, 3, 77 * seed, text)
        check_rows(fmt, cases, expected, folds, rows, f"{fmt.name} seed {seed}")


def test_model_agrees_with_fsum():
    """Second opinion on the model itself: math.fsum for finite f64 cases."""
    cases, _, expected, _ = prepared(F64)
    checked = 0
    for case, want in zip(cases, expected):
        fs = fsum_opinion(F64, case)
        if fs is None or math.isinf(fs):
            continue
        if fs == 0:
            assert F64.value(want) == 0
        else:
            assert F64.bits(fs) == want, [hex(b) for b in case[:6]]
        checked += 1
    assert checked > 50


def test_spec_example_and_fold_differ():
    """1e16 + 1 - 1e16: exact sum 1.0, the ordered fold 0.0 (the spec's example)."""
    text = " ".join(f"{F64.bits(v):016x}" for v in [1e16, 1.0, -1e16]) + "\n"
    row = run_harness(F64, 2, 5, text)[0]
    assert len(row) == len(WAYS) + 1
    assert all(F64.value(b) == 1.0 for b in row[:-1])
    assert F64.value(row[-1]) == 0.0


def test_model_rounding_is_not_the_code_under_test():
    """The model can fail: a few hand-checked roundings of the Python model itself."""
    assert F64.round(1 + Fraction(1, 2 ** 53)) == 1.0
    assert F64.round(1 + Fraction(3, 2 ** 53)) == 1 + 2.0 ** -51
    assert F32.round(1 + Fraction(1, 2 ** 24)) == 1.0
    assert F32.round(1 + Fraction(3, 2 ** 24)) == 1 + 2.0 ** -22
    assert math.isinf(F64.round(F64.max + F64.ulp(F64.max) / 2))
    assert F64.round(F64.max + F64.ulp(F64.max) / 2 - F64.tiny) == float(F64.max)
    assert F32.round(F32.tiny / 2) == 0.0 and F32.round(F32.tiny * 3 / 2) == 2 * float(F32.tiny)


@pytest.mark.matrix
@pytest.mark.parametrize("fmt", [F64, F32], ids=["f64", "f32"])
def test_long_random_sweep(fmt):
    """make matrix only: many more random cases (every kind, many sizes) at widths 1, 2, 7, 16."""
    rng = random.Random(99 + fmt.width)
    count = 150 if SMALL else 1500
    cases = random_cases(fmt, rng, count, 300 if SMALL else 2000)
    digits = fmt.width // 4
    text = "".join(" ".join(f"{b:0{digits}x}" for b in c) + "\n" for c in cases)
    expected = [model_sum(fmt, c) for c in cases]
    folds = [model_fold(fmt, c) for c in cases]
    for threads in (1, 2, 7, 16):
        rows = run_harness(fmt, threads, 5000 + threads, text)
        check_rows(fmt, cases, expected, folds, rows, f"{fmt.name} sweep CAIRN_THREADS={threads}")


# ---- merges up to and past 2^64 terms --------------------------------------------------

def selfmerge(fmt, cases, doublings):
    """sum_harness selfmerge: each case's accumulator merged into a copy of itself."""
    digits = fmt.width // 4
    text = "".join(" ".join(f"{b:0{digits}x}" for b in c) + "\n" for c in cases)
    return run([harness("sum_harness"), fmt.name, "selfmerge", str(doublings)], input=text,
               timeout=120)


def selfmerge_cases(fmt):
    big, mid = float(fmt.max), float(2 ** (fmt.emax // 2))
    return [[fmt.bits(v) for v in c] for c in
            ([1.0, 2.0 ** -30, 3.0], [big, big / 2, -big / 4], [-big, -big, -big],
             [mid, -1.0, 2.0 ** -20], [float(fmt.tiny), float(fmt.tiny), 1.0],
             [big, -big, float(fmt.tiny)])]


@pytest.mark.parametrize("fmt", [F64, F32], ids=["f64", "f32"])
def test_self_merges_up_to_2_64_terms(fmt):
    """Three terms doubled by self-merges 62 times (3 * 2^62 terms, under 2^64): after
    every doubling, the exact sum of 2^k copies of each term, rounded once (finite
    totals, and totals far past the largest finite that must round to infinity)."""
    cases = selfmerge_cases(fmt)
    res = selfmerge(fmt, cases, 62)
    assert res.returncode == 0, res.stderr
    rows = [[int(w, 16) for w in line.split()] for line in res.stdout.splitlines()]
    assert len(rows) == len(cases)
    for case, row in zip(cases, rows):
        assert len(row) == 63
        for k, got in enumerate(row):
            want = model_sum(fmt, case, 2 ** k)
            assert got == want, f"{[hex(b) for b in case]} after {k} doublings: {got:x} {want:x}"


@pytest.mark.parametrize("fmt", [F64, F32], ids=["f64", "f32"])
def test_merge_past_2_64_terms_traps(fmt):
    """xsum's section P: three terms merged into a copy of itself 1,015 times once gave
    a wrong finite sum (the count wrapped, later merges were dropped). Past 2^64 - 1
    terms it now traps with a message, having printed the right sums before that."""
    case = [fmt.bits(float(fmt.max)), fmt.bits(float(fmt.max)), fmt.bits(1.0)]
    res = selfmerge(fmt, [case], 1015)
    assert res.returncode != 0
    assert "more than 2^64 - 1 terms" in res.stderr, res.stderr
    printed = [int(w, 16) for w in res.stdout.split()]
    assert len(printed) == 63  # 0..62 doublings; the 63rd would be 3 * 2^63 terms
    assert printed[-1] == fmt.inf and printed[0] == fmt.inf
