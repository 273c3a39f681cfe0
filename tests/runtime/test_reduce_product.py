"""A pooled integer `reduce * parallel` traps exactly when the index-order fold would
(issue 23 item 5; runtime/cairn_reduce.h), at every pool width: held to a Python model
of the fold (acc = 1; acc = acc * x[i] in index order, trapping at the first running
product outside the type's range), at CAIRN_THREADS 1, 2, 7 and 16.

Before, each worker multiplied its own blocks with checked multiplications: factors
2^31 spread across blocks traps in a worker's partial although a zero came first in
index order, and -1 factors after a product of magnitude 2^(bits-1) changed the verdict
with the schedule. tests/c/prod_harness.c runs the runtime exactly as generated code
does; end-to-end programs are in tests/device/test_device_parity.py."""
import random

import pytest

from cairntest import harness, run

TYPES = {f"{s}{b}": (s == "i", b) for s in "iu" for b in (8, 16, 32, 64)}
WIDTHS = [1, 2, 7, 16]


def limits(typ):
    signed, bits = TYPES[typ]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def fold(typ, xs):
    """The index-order fold: the product, or None where a running product leaves the range."""
    lo, hi = limits(typ)
    acc = 1
    for x in xs:
        acc *= x
        if not lo <= acc <= hi:
            return None
    return acc


def interesting(typ, rng):
    lo, hi = limits(typ)
    signed, bits = TYPES[typ]
    pool = [0, 1, 1, 1, 2, 3, hi, hi // 2, 1 << (bits - 2), 1 << (bits // 2)]
    if signed:
        pool += [-1, -1, -2, lo, lo // 2, -(1 << (bits // 2)), -3]
    return rng.choice(pool)


def cases(rng):
    out = []
    for typ in TYPES:
        lo, hi = limits(typ)
        for _ in range(60):
            n = rng.choice([0, 1, 5, 63, 64, 65, 200, 1000, 5000])
            xs = [1] * n
            for _ in range(rng.randint(0, 6)):
                if n:
                    xs[rng.randrange(n)] = interesting(typ, rng)
            out.append((typ, xs))
    # the program: factors 2^31 in different blocks, a zero before or after them
    for zero_at in (0, 10, 4000, 9999, None):
        xs = [1] * 10000
        for k in (1000, 3000, 6000, 9000):
            xs[k] = 1 << 31
        if zero_at is not None:
            xs[zero_at] = 0
        out.append(("i64", xs))
        out.append(("u64", xs))
    # magnitude 2^(bits-1) reached, then signs: -M is in range, M is not
    for typ in ("i8", "i16", "i32", "i64"):
        m = 1 << (TYPES[typ][1] - 1)
        for tail in ([], [-1], [-1, -1], [1, -1], [-1, 1, 1], [0, -1], [-1, 0]):
            for head in ([-m], [m // 2, -2], [-1, 2, -(m // 2)], [-(m // 2), 2]):
                xs = [1] * 300
                pos = rng.sample(range(300), len(head) + len(tail))
                pos.sort()
                for p, v in zip(pos, head + tail):
                    xs[p] = v
                out.append((typ, xs))
    return out


@pytest.fixture(scope="module")
def all_cases():
    return cases(random.Random(23))


@pytest.mark.parametrize("width", WIDTHS)
def test_pooled_product_is_the_index_order_fold(all_cases, width):
    text = "".join(f"{typ} {len(xs)} {' '.join(map(str, xs))}\n" for typ, xs in all_cases)
    res = run([harness("prod_harness")], input=text, env={"CAIRN_THREADS": str(width)},
              timeout=300)
    assert res.returncode == 0, res.stderr
    got = res.stdout.split("\n")[:-1]
    assert len(got) == len(all_cases)
    traps = 0
    for (typ, xs), line in zip(all_cases, got):
        want = fold(typ, xs)
        traps += want is None
        assert line == ("trap" if want is None else str(want)), (typ, [x for x in xs if x != 1])
    assert 0 < traps < len(all_cases)  # the cases hold both verdicts
