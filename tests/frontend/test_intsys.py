"""The integer solver under the phase rule (compiler/base/intsys.c), through
tests/c/intsys_check.c, on systems whose feasibility is known without it.

The phase rule (E-COOP-PHASE) accepts a region only when the solver says a system is
infeasible, so the promise tested is exactly: "infeasible" is never said of a system
that has an integer solution, whatever the coefficients (an overflow answers "maybe").
The independent knowledge is an integer point found by enumerating a bounded box in
Python (numpy), or one planted when the system was made. The solver may say "maybe" of
an infeasible system (Fourier-Motzkin over the integers is not complete); the hand-made
systems the phase rule depends on (divisibility, tightening, tied threads) must be
proven infeasible, and so must most small boxed systems, so that a solver answering
"maybe" to everything fails here too."""
import itertools
import random

import numpy as np
import pytest

from cairntest import harness, run

CHECK = harness("intsys_check")
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def ge(c, *a):
    """Row sum(a_i x_i) + c >= 0."""
    return (False, c, list(a))


def eq(c, *a):
    """Row sum(a_i x_i) + c == 0."""
    return (True, c, list(a))


def box(nv, lo, hi, first=None):
    """lo <= x_i <= hi for every unknown (or the first ones)."""
    rows = []
    for i in range(nv if first is None else first):
        unit = [0] * nv
        unit[i] = 1
        rows.append(ge(-lo, *unit))
        rows.append(ge(hi, *[-u for u in unit]))
    return rows


def solve(systems):
    """The solver's answers, [(answer, overflow)], for [(nv, rows)], in one run."""
    lines = []
    for nv, rows in systems:
        lines.append(f"{nv} {len(rows)}")
        for is_eq, c, a in rows:
            assert len(a) == nv
            lines.append(" ".join(str(v) for v in [int(is_eq), c, *a]))
    r = run([CHECK], input="\n".join(lines) + "\n", timeout=600, check=True)
    out = [line.split() for line in r.stdout.splitlines()]
    assert len(out) == len(systems)
    return [(words[0], words[1:] == ["overflow"]) for words in out]


def satisfies(rows, x):
    for is_eq, c, a in rows:
        v = c + sum(ai * xi for ai, xi in zip(a, x))
        if (v != 0) if is_eq else (v < 0):
            return False
    return True


def has_point(nv, rows, lo, hi):
    """Whether some integer point of the box [lo, hi]^nv satisfies every row (numpy)."""
    if nv == 0:
        return satisfies(rows, [])
    assert (hi - lo + 1) ** nv <= 1 << 21, "a box too large to enumerate"
    grid = np.array(list(itertools.product(range(lo, hi + 1), repeat=nv)), dtype=np.int64)
    ok = np.ones(len(grid), dtype=bool)
    for is_eq, c, a in rows:
        v = grid @ np.array(a, dtype=np.int64) + c
        ok &= (v == 0) if is_eq else (v >= 0)
    return bool(ok.any())


# (name, nv, rows, has an integer solution): each answer checked by hand and by has_point.
HAND = [
    ("empty", 0, [], True),
    ("false constant", 0, [ge(-1)], False),
    ("true constant", 0, [ge(0), eq(0)], True),
    ("x >= 1 and x <= -1", 1, [ge(-1, 1), ge(-1, -1)], False),
    ("2x = 1 (parity)", 1, [eq(-1, 2)], False),
    ("2x - 2y = 1 (gcd)", 2, [eq(-1, 2, -2)], False),
    ("2x = 1 as inequalities (tightening)", 1, [ge(-1, 2), ge(1, -2)], False),
    ("1 <= 3x - 3y <= 2 (tightening)", 2, [ge(-1, 3, -3), ge(2, -3, 3)], False),
    ("1 <= 3x - 3y <= 3", 2, [ge(-1, 3, -3), ge(3, -3, 3)], True),
    # The phase rule's two threads: t1 < t2 touching s[t1] and s[t2].
    ("distinct threads, one element", 2,
     box(2, 0, 20) + [ge(-1, -1, 1), eq(0, 1, -1)], False),
    ("distinct threads, s[t / 2]", 4,  # (t1, t2, q1, q2): q_i = t_i / 2, q1 = q2
     box(4, 0, 15, 2) + [ge(-1, -1, 1, 0, 0), eq(0, 0, 0, 1, -1),
                         ge(0, 1, 0, -2, 0), ge(1, -1, 0, 2, 0),
                         ge(0, 0, 1, 0, -2), ge(1, 0, -1, 0, 2)], True),
    ("distinct threads, s[t / 2] of even threads", 4,  # ... and t_i = 2 q_i
     box(4, 0, 15, 2) + [ge(-1, -1, 1, 0, 0), eq(0, 0, 0, 1, -1),
                         eq(0, 1, 0, -2, 0), eq(0, 0, 1, 0, -2)], False),
    # 16 t1 - 16 t2 - 31 b + 2 = 0: divisibility, decided by trying b's values.
    ("divisibility", 3,
     box(3, 0, 15, 2) + [ge(0, 0, 0, 1), ge(1, 0, 0, -1), eq(2, 16, -16, -31)], False),
    ("divisibility, solvable", 3,
     box(3, 0, 15, 2) + [ge(0, 0, 0, 1), ge(1, 0, 0, -1), eq(-16, 16, -16, 0)], True),
    # Pugh's Omega-test example: real solutions, no integer one; boxed, it is decided.
    ("Pugh, boxed", 2,
     box(2, -8, 8) + [ge(-27, 11, 13), ge(45, -11, -13), ge(10, 7, -9), ge(4, -7, 9)],
     False),
    ("Pugh, shifted to a solution", 2,
     box(2, -8, 8) + [ge(-24, 11, 13), ge(45, -11, -13), ge(10, 7, -9), ge(4, -7, 9)],
     True),
]


@pytest.mark.parametrize("name,nv,rows,solvable", HAND, ids=[h[0] for h in HAND])
def test_hand_made_systems(name, nv, rows, solvable):
    assert has_point(nv, rows, -12, 20 if nv < 4 else 16) == solvable
    answer, overflow = solve([(nv, rows)])[0]
    assert not overflow
    assert answer == ("maybe" if solvable else "infeasible"), name


BIG = (1 << 62) + 1  # odd, so no gcd divides it away


def test_overflow_answers_maybe():
    """Eliminating y multiplies BIG by BIG: the solver gives up with "maybe", on a
    system with a solution (0, 0) and on one without (x >= 1 and x <= 0)."""
    base = [ge(0, BIG, -1), ge(0, -3, BIG)]
    infeasible = base + [ge(-1, 1, 0), ge(0, -1, 0)]
    assert satisfies(base, [0, 0]) and not has_point(2, infeasible, -3, 3)
    assert solve([(2, base), (2, infeasible)]) == [("maybe", True), ("maybe", True)]


@pytest.mark.parametrize("rows", [[ge(I64_MIN, 1)], [ge(0, I64_MIN)], [eq(I64_MIN, 2)],
                                  [ge(0, 1, I64_MIN), ge(-1, 0, 0)]])
def test_int64_min_answers_maybe(rows):
    """INT64_MIN has no negation in int64: refused as an overflow, even where the system
    is plainly infeasible (the last has a false row 0 >= 1)."""
    nv = len(rows[0][2])
    assert solve([(nv, rows)]) == [("maybe", True)]


def random_row(rng, nv, coef, const, p_eq):
    return (rng.random() < p_eq, rng.randint(-const, const),
            [rng.choice([0, 0] + list(range(-coef, coef + 1))) for _ in range(nv)])


def boxed_systems(rng, count):
    """Small systems inside a box, with the box's rows: feasibility by enumeration."""
    out = []
    for _ in range(count):
        nv = rng.randint(1, 4)
        lo, hi = -rng.randint(0, 4), rng.randint(0, 4)
        rows = box(nv, lo, hi) + [random_row(rng, nv, 6, 12, 0.3)
                                  for _ in range(rng.randint(1, 5))]
        rng.shuffle(rows)
        out.append((nv, rows, has_point(nv, rows, lo, hi)))
    return out


def test_random_boxed_systems_against_enumeration():
    rng = random.Random(2104)
    systems = boxed_systems(rng, 3000)
    answers = solve([(nv, rows) for nv, rows, _ in systems])
    wrong = [(nv, rows) for (nv, rows, solvable), (ans, _) in zip(systems, answers)
             if solvable and ans == "infeasible"]
    assert not wrong, f"'infeasible' said of solvable systems, e.g. {wrong[:3]}"
    infeasible = [ans for (_, _, solvable), (ans, _) in zip(systems, answers) if not solvable]
    proven = infeasible.count("infeasible")
    # Both kinds are well represented, and the solver is not a "maybe" for everything.
    assert len(infeasible) > 500 and len(systems) - len(infeasible) > 500
    assert proven >= 0.95 * len(infeasible), f"{proven} of {len(infeasible)} proven"


def test_random_unbounded_systems_with_a_point_are_maybe():
    """Unbounded unknowns (Fourier-Motzkin's inexact eliminations, no splits): every
    system with an integer point in [-6, 6]^nv must get "maybe"."""
    rng = random.Random(2105)
    systems = []
    while len(systems) < 1500:
        nv = rng.randint(1, 4)
        rows = [random_row(rng, nv, 9, 20, 0.25) for _ in range(rng.randint(2, 7))]
        if has_point(nv, rows, -6, 6):
            systems.append((nv, rows))
    answers = solve(systems)
    wrong = [s for s, (ans, _) in zip(systems, answers) if ans == "infeasible"]
    assert not wrong, f"'infeasible' said of solvable systems, e.g. {wrong[:3]}"


def planted_systems(rng, count):
    """Systems of up to 12 unknowns built around a planted integer point, coefficients up
    to 2^k for k up to 62 (so that eliminations overflow), every row true at the point."""
    out = []
    while len(out) < count:
        nv = rng.randint(1, 12)
        mag = 1 << rng.choice([3, 8, 20, 31, 40, 50, 62])
        x = [rng.randint(-5, 5) for _ in range(nv)]
        rows = []
        for _ in range(rng.randint(1, 14)):
            a = [rng.choice([0, rng.randint(-mag, mag), rng.randint(-3, 3)]) for _ in range(nv)]
            at = sum(ai * xi for ai, xi in zip(a, x))
            is_eq = rng.random() < 0.3
            c = -at + (0 if is_eq else rng.randint(0, 3))
            if I64_MIN < c <= I64_MAX and all(I64_MIN < ai for ai in a):
                rows.append((is_eq, c, a))
        assert satisfies(rows, x)
        out.append((nv, rows))
    return out


def test_planted_solutions_are_maybe_even_through_overflow():
    rng = random.Random(2106)
    systems = planted_systems(rng, 1500)
    answers = solve(systems)
    wrong = [s for s, (ans, _) in zip(systems, answers) if ans == "infeasible"]
    assert not wrong, f"'infeasible' said of solvable systems, e.g. {wrong[:3]}"
    # The overflow path is exercised, not only the small-number one.
    assert sum(overflow for _, overflow in answers) > 50


def test_malformed_input_is_refused():
    r = run([CHECK], input="2 1\n0 1 x\n")
    assert r.returncode == 2 and "bad row" in r.stderr
    r = run([CHECK], input=f"{97} 0\n")
    assert r.returncode == 2 and "bad header" in r.stderr
