"""The exact sum as generated code computes it (`reduce + parallel` over f64/f32), bit for
bit against the exact rational model of tests/runtime/test_sum.py (Python fractions,
never cairn's own output).

Each program below fills a buffer from a xorshift generator written in CAIRN (the test
replays it in Python), sums ranges of it every way the lowering has a path for, and
compares each result with the model's bits, returning the number of the first case
that differs. The paths (docs/numerics.md, "The exact parallel sum"):
  - the tiny path, n < 16, in registers with no accumulator (`laneN_sum`);
  - the block function with its index checks hoisted (`laneN_covers` once per block),
    at the sizes around its groups of 16 and the pool's 64;
  - a block whose range is not covered but whose terms never read out of range (the
    yield reads x[i] only for odd i): term by term with the checks, no trap;
  - a range that starts past 0 (lo..hi), a dot product (two views), and the specials
    (subnormals, infinities, NaNs, -0.0) at chosen places;
and then the traps: a view too short for the range traps at the yield's index, with the
message and place the unhoisted check gives, in the tiny path and in the blocks."""
import functools
import pathlib
import random
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "runtime"))
from buildlib import build, cairn, run_exe
from cairntest import SAN, cairn_cell_flags
from test_sum import F32, F64, model_sum

MASK64 = (1 << 64) - 1


def xorshift(s):
    """next() of the programs: xorshift64 (13, 7, 17), shifts masked as the program does."""
    s ^= (s << 13) & MASK64
    s ^= s >> 7
    return s ^ ((s << 17) & MASK64)


# Which bits a case keeps of each random word, and which it sets: the term's bits are
# (word & keep) | set (f32: of the word's high half). Every kind keeps the exponent off
# all ones, so the specials come only from the `put` list of a case.
KINDS = {
    F64: {
        "narrow": (0x8003FFFFFFFFFFFF, 0x3FE0000000000000),  # [0.5, 8), both signs
        "wide": (0xFFEFFFFFFFFFFFFF, 0),                     # every even exponent, 0 too
        "tiny": (0x800FFFFFFFFFFFFF | 1 << 52, 0),           # subnormals and 2^-1022 binade
        "big": (0x800FFFFFFFFFFFFF | 1 << 52, 0x7FE0000000000000),  # near the largest
    },
    F32: {
        "narrow": (0x807FFFFF | 3 << 23, 0x3F000000),
        "wide": (0xFF7FFFFF, 0),
        "tiny": (0x807FFFFF | 1 << 23, 0),
        "big": (0x807FFFFF | 1 << 23, 0x7F000000),
    },
}
SPECIALS = {F64: [0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000001,
                  0x8000000000000000, 0x0000000000000001],
            F32: [0x7F800000, 0xFF800000, 0x7FC00001, 0x80000000, 0x00000001]}


def terms(fmt, seed, count, kind, put):
    keep, set_ = KINDS[fmt][kind]
    out, s = [], seed
    for _ in range(count):
        s = xorshift(s)
        word = s if fmt is F64 else s >> 32
        out.append((word & keep) | set_)
    for at, bits in put:
        out[at] = bits
    return out


def product_bits(fmt, a, b):
    """One rounded product in the format (numpy's IEEE multiply)."""
    dt, it = (np.float64, np.uint64) if fmt is F64 else (np.float32, np.uint32)
    with np.errstate(all="ignore"):
        p = np.array([a], dtype=it).view(dt) * np.array([b], dtype=it).view(dt)
    return int(p.view(it)[0])


SIZES = list(range(1, 18)) + [31, 32, 33, 47, 48, 63, 64, 65, 127, 128, 129, 1000, 8193]


def cases(fmt):
    """(call, model bits) pairs: a C-free description of what each case sums."""
    rng = random.Random(1616 + fmt.width)
    out = []
    for i, n in enumerate(SIZES * 2 + [70000]):
        kind = ["narrow", "wide", "tiny", "big"][i % 4]
        seed = rng.getrandbits(63) | 1
        put = []
        if i % 3 == 1:  # a special at a random place (a NaN, an infinity, -0.0, ...)
            put = [(rng.randrange(n), rng.choice(SPECIALS[fmt]))]
        lo = rng.choice([0, 0, 3])
        out.append(("sum", seed, n, kind, put, lo))
    for n in [1, 2, 7, 15, 16, 17, 64, 65, 300]:  # every term -0.0, and cancelling pairs
        out.append(("sum", 0, n, "negzero", [], 0))
    for i, n in enumerate([1, 5, 15, 16, 33, 64, 200, 9000]):
        out.append(("dot", rng.getrandbits(63) | 1, n, ["narrow", "wide"][i % 2], [], 0))
    for n in [2, 14, 16, 64, 130, 5000]:  # even: the last index (n) is never read
        out.append(("odd", rng.getrandbits(63) | 1, n, "narrow", [], 0))
    return out


def model(fmt, case):
    what, seed, n, kind, put, lo = case
    if kind == "negzero":
        return model_sum(fmt, [fmt.sign] * n)
    x = terms(fmt, seed, n + lo + 1, kind, [(lo + at, b) for at, b in put])
    if what == "sum":
        return model_sum(fmt, x[lo:lo + n])
    if what == "dot":
        y = terms(fmt, xorshift(seed), n, kind, [])
        return model_sum(fmt, [product_bits(fmt, a, b) for a, b in zip(x, y)])
    return model_sum(fmt, [x[i] if i % 2 else 0 for i in range(n + 1)])  # +0.0 for even i


def program(fmt, all_cases):
    t, u = fmt.name, "u64" if fmt is F64 else "u32"
    word = "s" if fmt is F64 else "u32(s >> 32)"
    big = max(c[2] + c[5] + 2 for c in all_cases)
    lines = [f"""// generated by tests/build/test_reduce_exact.py
fn next(s:u64) -> u64 {{
  let a = s ^ ((s & 0x0007FFFFFFFFFFFF) << 13);
  let b = a ^ (a >> 7);
  return b ^ ((b & 0x00007FFFFFFFFFFF) << 17);
}}
fn fill(n:usize, x:rw<{t}>[n], len:usize, seed:u64, keep:{u}, set:{u}) {{
  let mut s = seed;
  for i in 0..len {{ s = next(s); x[i] = from_bits[{t}](({word} & keep) | set); }}
}}
fn sum(n:usize, x:ro<{t}>[n], lo:usize, hi:usize) -> {t} = reduce + parallel i in lo..hi yield x[i];
fn dot(n:usize, x:ro<{t}>[n], y:ro<{t}>[n], len:usize) -> {t} =
  reduce + parallel i in len yield x[i] * y[i];
fn odd(n:usize, x:ro<{t}>[n]) -> {t} =
  reduce + parallel i in n + 1 yield (reduce + for j in i % 2 yield x[i]);
fn main() -> i32 {{
  let big:usize = {big};
  buffer x:{t}[big] = zeroed;
  buffer y:{t}[big] = zeroed;"""]
    for k, case in enumerate(all_cases, 1):
        what, seed, n, kind, put, lo = case
        want = model(fmt, case)
        if kind == "negzero":
            lines.append(f"  for i in 0..{n} {{ x[i] = from_bits[{t}]({fmt.sign}); }}")
        else:
            keep, set_ = KINDS[fmt][kind]
            lines.append(f"  fill(big, x, {n + lo + 1}, {seed}, {keep}, {set_});")
        lines += [f"  x[{lo + at}] = from_bits[{t}]({b});" for at, b in put]
        if what == "sum":
            call = f"sum(big, x, {lo}, {lo + n})"
        elif what == "dot":
            lines.append(f"  fill(big, y, {n}, {xorshift(seed)}, {keep}, {set_});")
            call = f"dot(big, x, y, {n})"
        else:  # a view of exactly n elements, read at odd indexes up to n - 1
            lines.append(f"  buffer o{k}:{t}[{n}] = zeroed;")
            lines.append(f"  fill({n}, o{k}, {n}, {seed}, {keep}, {set_});")
            call = f"odd({n}, o{k})"
        lines.append(f"  if to_bits({call}) != {want} {{ return {k}; }}")
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=None)
def built(fmt_name, tmp):
    fmt = F64 if fmt_name == "f64" else F32
    all_cases = cases(fmt)
    src = pathlib.Path(tmp) / f"exact_{fmt_name}.cairn"
    src.write_text(program(fmt, all_cases))
    exe = pathlib.Path(tmp) / f"exact_{fmt_name}"
    build(src, exe)
    return exe, all_cases


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("fmt", [F64, F32], ids=["f64", "f32"])
def test_generated_exact_sum_every_path(fmt, threads, tmp_path_factory):
    exe, all_cases = built(fmt.name, str(tmp_path_factory.getbasetemp()))
    res = run_exe(exe, env={"CAIRN_THREADS": str(threads)}, timeout=300)
    assert res.returncode == 0, (
        f"case {res.returncode} ({all_cases[res.returncode - 1][:4] if 0 < res.returncode <= len(all_cases) else '?'})"
        f" differs from the model\n{res.stderr}")


def test_model_of_the_generator_is_not_trivial():
    """The replayed generator gives the kinds it claims (so a case tests what it says)."""
    for fmt in (F64, F32):
        wide = terms(fmt, 12345, 400, "wide", [])
        tiny = terms(fmt, 12345, 400, "tiny", [])
        expo = lambda b: (b >> (fmt.p - 1)) & ((1 << (fmt.width - fmt.p)) - 1)
        assert len({expo(b) for b in wide}) > 100 if fmt is F64 else len({expo(b) for b in wide}) > 60
        assert any(expo(b) == 0 for b in tiny) and any(expo(b) == 1 for b in tiny)
        assert all(expo(b) != expo(fmt.inf) for b in wide + tiny)


TRAPS = [  # (format, extent of x, range): x too short for the range traps at x[i]
    ("f64", 9, "10"), ("f32", 9, "10"), ("f64", 199, "200"), ("f32", 199, "200"),
    ("f64", 100, "90..101"), ("f64", 70000 - 1, "70000"),
]


@pytest.mark.parametrize("fmt,extent,span", TRAPS)
def test_short_view_traps_at_the_yields_index(fmt, extent, span, tmp_path):
    """The hoisted check fails the block, which then runs with the checks: the trap is
    the one the unhoisted code gives, at the yield's x[i]."""
    src = tmp_path / "short.cairn"
    first = f"fn total(n:usize, x:ro<{fmt}>[n]) -> {fmt} = reduce + parallel i in {span} yield 2.0 * x[i];"
    src.write_text(first + f"""
fn main() -> i32 {{
  let n:usize = {extent};
  buffer x:{fmt}[n] = zeroed;
  for i in 0..n {{ x[i] = 1.0; }}
  let s = total(n, x);
  if s > 0.0 {{ return 3; }}
  return 4;
}}
""")
    res = cairn("run", src, *cairn_cell_flags(), env={"CAIRN_THREADS": "2"})
    assert res.returncode != 0 and res.returncode not in (3, 4), res.stderr
    col = first.index("x[i]") + 1
    want = f"trap: index {extent} out of bounds for extent {extent} at {src}:1:{col}\n"
    assert want in res.stderr, res.stderr
