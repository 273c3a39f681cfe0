"""mm_enclose(m, n, k, lo, hi, a, b) from the language, against exact rational arithmetic.

Each program is generated here with its operands as literals (Python's repr of a double
or float reads back to the same value), run with `cairn run --observe`, and its
observations compared with digests this file computes independently: the exact product
with `fractions`, its floor and ceiling in the format found by integer arithmetic on
the significand (round_toward below), their bits packed with struct and hashed. Where
the operands span too many binades for the tight bracket, the raw observed bits are
checked for containment instead. Refusals and traps live in tests/golden/check and
tests/golden/run (mm_enclose_*.cairn, trap_mm_enclose_*.cairn)."""
import json
import pathlib
import random
import struct
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import EXAMPLES, build, cairn, read_log, run_exe, sha256
from cairntest import cairn_cell_flags

# precision (significand bits with the implicit one), least normal exponent, largest
FORMATS = {"f64": (53, -1022, 1023, "d"), "f32": (24, -126, 127, "f")}


def matmul_entry(t):
    return {"op": "matmul", "from": t, "to": t, "rounding": "outward", "sum": "exact"}


# ---- the model ----

def exponent(x):
    """floor(log2 x) for a positive Fraction."""
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def round_toward(q, t, up):
    """The largest value of format t <= q (up=False) or the least >= q (up=True), as
    a Fraction, or +-inf as a float. Zero gives +0."""
    p, emin, emax, _ = FORMATS[t]
    if q == 0:
        return Fraction(0)
    if q < 0:
        r = round_toward(-q, t, not up)
        return -r
    unit = Fraction(2) ** (max(exponent(q), emin) - p + 1)
    steps = q / unit
    steps = steps.numerator // steps.denominator + (1 if up and steps.denominator != 1 else 0)
    r = steps * unit
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    if r > largest:
        return float("inf") if up else largest
    return r


def pack(values, t):
    return struct.pack(f"<{len(values)}{FORMATS[t][3]}", *[float(v) for v in values])


def exact_product(m, n, k, a, b):
    return [sum(Fraction(a[i * k + s]) * Fraction(b[s * n + j]) for s in range(k))
            for i in range(m) for j in range(n)]


def observation(name, t, values):
    return {"name": name, "type": t, "count": len(values), "sha256": sha256(pack(values, t))}


# ---- the programs ----

def literal(x):
    return repr(float(x))


def program(t, m, n, k, a, b, extra_checks=""):
    fill = [f"  a[{i}] = {literal(x)};" for i, x in enumerate(a) if x != 0]
    fill += [f"  b[{i}] = {literal(x)};" for i, x in enumerate(b) if x != 0]
    return "\n".join([
        "fn main() -> i32 {",
        f"  let m:usize = {m};", f"  let n:usize = {n};", f"  let k:usize = {k};",
        f"  buffer a:{t}[m * k] = zeroed;", f"  buffer b:{t}[k * n] = zeroed;",
        f"  buffer lo:{t}[m * n] = zeroed;", f"  buffer hi:{t}[m * n] = zeroed;",
        *fill,
        "  let tight = mm_enclose(m, n, k, lo, hi, a, b);",
        '  observe("lo", lo);', '  observe("hi", hi);', '  observe("tight", tight);',
        extra_checks,
        "  return 0;", "}", ""])


def run_program(tmp_path, source, threads=None):
    path = tmp_path / "prog.cairn"
    path.write_text(source)
    log, raw = tmp_path / "obs.jsonl", tmp_path / "raw"
    env = {"CAIRN_THREADS": str(threads)} if threads else None
    result = cairn("run", path, *cairn_cell_flags(), "--observe", log, "--observe-raw", raw, env=env)
    assert result.returncode == 0, result.stderr
    return read_log(log), raw


def raw_values(raw, name, seq, t, count):
    data = (raw / f"{name}.{seq}.bin").read_bytes()
    return list(struct.unpack(f"<{count}{FORMATS[t][3]}", data))


def to_format(x, t):
    return struct.unpack(f"<{FORMATS[t][3]}", struct.pack(f"<{FORMATS[t][3]}", x))[0]


def random_operands(rng, count, t, binades):
    """Random values of format t spread over `binades` binades, some negative, some 0."""
    out = []
    for _ in range(count):
        x = rng.choice([0.0] + [1.0] * 9) * rng.uniform(1, 2) * 2.0 ** rng.randint(-binades, binades)
        out.append(to_format(x if rng.random() < 0.6 else -x, t))
    return out


def tight_case(t, seed, m=3, n=4, k=7):
    """Random operands within 20 binades, with a cancelling row: a[1] = [2^60, 0.5,
    -2^60, 0 ...] and rows 0 and 2 of b equal, so row 1 of the product is 0.5 b[1][j];
    and a zero row, whose outputs are +0."""
    rng = random.Random(seed)
    a, b = random_operands(rng, m * k, t, 20), random_operands(rng, k * n, t, 20)
    a[k:2 * k] = [2.0 ** 60, 0.5, -2.0 ** 60] + [0.0] * (k - 3)
    a[2 * k:3 * k] = [0.0] * k
    b[2 * n:3 * n] = b[0:n]
    return m, n, k, a, b


@pytest.mark.parametrize("t", ["f64", "f32"])
def test_tight_bracket_is_exact_floor_and_ceiling(t, tmp_path):
    m, n, k, a, b = tight_case(t, seed=7 if t == "f64" else 8)
    got, raw = run_program(tmp_path, program(t, m, n, k, a, b))
    exact = exact_product(m, n, k, a, b)
    lo = [round_toward(q, t, False) for q in exact]
    hi = [round_toward(q, t, True) for q in exact]
    # the model brackets, and is the tight bracket: equal or one step apart
    assert all(lo_ <= q <= hi_ for lo_, q, hi_ in zip(lo, exact, hi))
    assert any(lo_ != hi_ for lo_, hi_ in zip(lo, hi)) and any(lo_ == hi_ for lo_, hi_ in zip(lo, hi))
    got_lo = raw_values(raw, "lo", 0, t, m * n)
    got_hi = raw_values(raw, "hi", 1, t, m * n)
    for idx, (q, l, h, gl, gh) in enumerate(zip(exact, lo, hi, got_lo, got_hi)):
        assert (Fraction(gl), Fraction(gh)) == (l, h), (idx, float(q), gl, gh)
    assert pack(got_lo[2 * n:3 * n] + got_hi[2 * n:3 * n], t) == bytes(2 * n * struct.calcsize(FORMATS[t][3]))
    assert got == [observation("lo", t, lo), observation("hi", t, hi),
                   {"name": "tight", "type": "bool", "count": 1, "sha256": sha256(b"\x01")}]


@pytest.mark.parametrize("threads", [1, 3])
def test_bits_do_not_depend_on_the_pool_width(threads, tmp_path):
    m, n, k, a, b = tight_case("f64", seed=11, m=5, n=9, k=33)
    got, _ = run_program(tmp_path, program("f64", m, n, k, a, b), threads=threads)
    exact = exact_product(m, n, k, a, b)
    assert got[:2] == [observation("lo", "f64", [round_toward(q, "f64", False) for q in exact]),
                       observation("hi", "f64", [round_toward(q, "f64", True) for q in exact])]


@pytest.mark.parametrize("t", ["f64", "f32"])
def test_integer_operands_give_lo_equal_hi(t, tmp_path):
    """Small integers: every product and sum is representable, so lo == hi == the plain
    product (the program checks lo == hi itself too, and returns 3 otherwise)."""
    rng = random.Random(3)
    m, n, k = 4, 3, 50
    a = [float(rng.randint(-1000, 1000)) for _ in range(m * k)]
    b = [float(rng.randint(-1000, 1000)) for _ in range(k * n)]
    check = "  for i in 0..m * n { if lo[i] != hi[i] { return 3; } }"
    got, _ = run_program(tmp_path, program(t, m, n, k, a, b, check))
    exact = exact_product(m, n, k, a, b)
    assert all(q.denominator == 1 and abs(q) < 2 ** FORMATS[t][0] for q in exact)
    assert got[:2] == [observation("lo", t, exact), observation("hi", t, exact)]
    assert got[2]["sha256"] == sha256(b"\x01")


def test_wide_operands_still_bracket(tmp_path):
    """A row spanning 1e-300 .. 1e300 cannot scale losslessly: the bracket is wider than
    one step but still contains the exact product, and mm_enclose returns false."""
    m, n, k, a, b = tight_case("f64", seed=5, m=2, n=3, k=4)
    a[0:4] = [1e300, 3.0, 1e-300, -7e-250]
    got, raw = run_program(tmp_path, program("f64", m, n, k, a, b))
    exact = exact_product(m, n, k, a, b)
    got_lo, got_hi = raw_values(raw, "lo", 0, "f64", m * n), raw_values(raw, "hi", 1, "f64", m * n)
    for q, gl, gh in zip(exact, got_lo, got_hi):
        assert Fraction(gl) <= q <= Fraction(gh), (float(q), gl, gh)
    assert got[2] == {"name": "tight", "type": "bool", "count": 1, "sha256": sha256(b"\x00")}


def test_longer_views_use_their_first_elements(tmp_path):
    """Views longer than m*k, k*n, m*n are fine; the extra elements are neither read nor
    written (the tails of lo and hi keep what they held)."""
    source = "\n".join([
        "fn main() -> i32 {",
        "  buffer a:f64[7] = zeroed;", "  buffer b:f64[5] = zeroed;",
        "  buffer lo:f64[3] = zeroed;", "  buffer hi:f64[3] = zeroed;",
        "  a[0] = 3.0; a[1] = 0.1; a[6] = 1000.0; b[0] = 5.0; b[1] = 0.3; b[4] = 1000.0;",
        "  lo[1] = 42.0; hi[2] = 43.0;",
        "  let tight = mm_enclose(1, 1, 2, lo, hi, a, b);",
        '  observe("lo", lo);', '  observe("hi", hi);',
        "  if !tight { return 2; }",
        "  return 0;", "}", ""])
    got, _ = run_program(tmp_path, source)
    q = Fraction(3) * 5 + Fraction(0.1) * Fraction(0.3)
    assert got == [observation("lo", "f64", [round_toward(q, "f64", False), 42.0, 0.0]),
                   observation("hi", "f64", [round_toward(q, "f64", True), 0.0, 43.0])]


def test_k_beyond_the_limit_traps(tmp_path):
    path = tmp_path / "bigk.cairn"
    path.write_text("fn main() -> i32 {\n  let k:usize = 131073;\n  buffer a:f32[k] = zeroed;\n"
                    "  buffer b:f32[k] = zeroed;\n  buffer lo:f32[1] = zeroed;\n"
                    "  buffer hi:f32[1] = zeroed;\n  mm_enclose(1, 1, k, lo, hi, a, b);\n"
                    "  return 0;\n}\n")
    result = cairn("run", path, *cairn_cell_flags())
    assert result.returncode != 0
    assert "trap: mm_enclose: E-ENCLOSE-K: " in result.stderr and f" at {path}:7:3\n" in result.stderr


# ---- the receipt and the build ----

def test_receipt_lists_matmul_per_format(tmp_path):
    source = tmp_path / "two.cairn"
    source.write_text(
        "fn b64(m:usize, n:usize, k:usize, lo:rw<f64>[m * n], hi:rw<f64>[m * n], a:ro<f64>[m * k],"
        " b:ro<f64>[k * n]) -> bool = mm_enclose(m, n, k, lo, hi, a, b);\n"
        "fn b32(m:usize, n:usize, k:usize, lo:rw<f32>[m * n], hi:rw<f32>[m * n], a:ro<f32>[m * k],"
        " b:ro<f32>[k * n]) { mm_enclose(m, n, k, lo, hi, a, b); }\n"
        "fn main() -> i32 { return 0; }\n")
    cache = tmp_path / "cache"
    receipt = build(source, tmp_path / "two", env={"CAIRN_CACHE": str(cache)})
    assert receipt["numerics"] == {"b64": [matmul_entry("f64")], "b32": [matmul_entry("f32")],
                                   "main": []}
    # the runtime objects compiled for it: the bracket GEMM and what it calls, not the
    # digest helpers (which only C users who link -lcrypto for them need)
    objects = {p.name for p in cache.glob("rt/*/*.o")}
    assert {"cairn_mm_enclose.o", "cairn_enclose.o", "cairn_pool.o", "cairn_trap.o"} <= objects
    assert "cairn_enclose_digest.o" not in objects


def test_programs_without_it_do_not_compile_it(tmp_path):
    source = tmp_path / "plain.cairn"
    source.write_text("fn main() -> i32 { return 0; }\n")
    cache = tmp_path / "cache"
    build(source, tmp_path / "plain", env={"CAIRN_CACHE": str(cache)})
    objects = {p.name for p in cache.glob("rt/*/*.o")}
    assert "cairn_trap.o" in objects and not objects & {"cairn_enclose.o", "cairn_mm_enclose.o"}


def test_example_brackets_what_the_ordered_fold_misses(tmp_path):
    exe = tmp_path / "enclose"
    receipt = build(EXAMPLES / "enclose.cairn", exe)
    assert matmul_entry("f64") in receipt["numerics"]["main"]
    log = tmp_path / "ex.jsonl"
    result = run_exe(exe, env={"CAIRN_OBSERVE": str(log)})
    assert result.returncode == 0, result.stderr
    # the example's operands, as its comments give them
    a = [1e16, 1.0, -1e16, 0.1, 0.2, 0.3]
    b = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    exact = exact_product(2, 2, 3, a, b)
    assert read_log(log)[:2] == [observation("lo", "f64", [round_toward(q, "f64", False) for q in exact]),
                                 observation("hi", "f64", [round_toward(q, "f64", True) for q in exact])]


def test_model_rounds_like_the_hardware():
    """The model's floor/ceiling agree with IEEE round-to-nearest, which must pick one
    of them (checked on random quotients against Python's correctly rounded division)."""
    rng = random.Random(1)
    for _ in range(2000):
        x, y = rng.randint(1, 10 ** 30), rng.randint(1, 10 ** 30)
        q = Fraction(x, y) * Fraction(2) ** rng.randint(-1070, 1000)
        lo, hi = round_toward(q, "f64", False), round_toward(q, "f64", True)
        nearest = Fraction(q.numerator / q.denominator) if q < 2 ** 1023 else None
        if nearest is not None and nearest != 0:
            assert nearest in (lo, hi), (float(q), float(lo), float(hi))
        assert lo <= q <= hi
    tenth = (round_toward(Fraction(1, 10), "f32", False), round_toward(Fraction(1, 10), "f32", True))
    assert Fraction(to_format(0.1, "f32")) in tenth and tenth[0] != tenth[1]
    assert round_toward(Fraction(2) ** 200, "f32", True) == float("inf")
