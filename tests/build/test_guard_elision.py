"""Guards proved for a whole loop (compiler/lower/lower_guard.c, issue 33): a check before
a loop proves the index and overflow guards its bounds allow, and the loop runs without
them; when the check fails, the loop runs with every guard, as it always did.

The promise tried here: every program gives the same bits, the same trap, at the same
line:col, with elision on and off (`--no-elide`), at pool widths 1, 2, 7 and 16, for
traps at the first, the middle and the last index of a loop, out of bounds and integer
overflow at the boundary, one past it and one before it. Where the trap lands is also
held to a Python model of the program (the first index whose guard fails, in written
order), not only to the unelided build. And the receipt's guard list (what was proved,
what is kept) is held to a hand count."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import cairn, read_log  # noqa: E402
from cairntest import ROOT, cairn_cell_flags  # noqa: E402

U64 = 2**64

# name: (program, [(args, model)]): the model gives the trap ("REASON at L:C") or None.
ROW = """fn fill(n:usize, k:usize, m:usize, s:usize, a:rw<u64>[m]) {
  for i in k..n { a[i * s - k] = u64(i); }
}
fn main(n:usize, k:usize, m:usize, s:usize) -> i32 {
  buffer a:u64[m] = zeroed;
  fill(n, k, m, s, a);
  observe("a", a);
  return 0;
}
"""
NEST = """fn mm(n:usize, p:usize, a:ro<u64>[p], c:rw<u64>[p]) {
  for i in 0..n {
    for j in 0..n {
      let mut s:u64 = 0;
      for k in 0..n { s = s + a[i * n + k] * a[k * n + j]; }
      c[i * n + j] = s;
    }
  }
}
fn main(n:usize, p:usize) -> i32 {
  buffer a:u64[p] = zeroed;
  buffer c:u64[p] = zeroed;
  for i in 0..p { a[i] = u64(i % 5); }
  mm(n, p, a, c);
  observe("c", c);
  return 0;
}
"""
SIGNED = """fn shift(lo:i64, hi:i64, m:usize, d:i64, a:rw<i64>[m]) {
  for j in lo..hi { a[usize(j + d)] = j * j; }
}
fn main(lo:i64, hi:i64, m:usize, d:i64) -> i32 {
  buffer a:i64[m] = zeroed;
  shift(lo, hi, m, d, a);
  observe("a", a);
  return 0;
}
"""
LANES = """fn rows(n:usize, w:usize, m:usize, x:ro<u64>[m], y:rw<u64>[n]) {
  parallel i in n {
    let mut s:u64 = 0;
    for k in 0..w { s = s + x[i * w + k]; }
    y[i] = s;
  }
}
fn main(n:usize, w:usize, m:usize) -> i32 {
  buffer x:u64[m] = zeroed;
  buffer y:u64[n] = zeroed;
  for i in 0..m { x[i] = u64(i); }
  rows(n, w, m, x, y);
  observe("y", y);
  return 0;
}
"""
SCAN = """fn pre(n:usize, m:usize, x:ro<u64>[n], o:rw<u64>[m]) { scan + for i in n yield x[i] into o; }
fn total(n:usize, x:ro<u64>[n]) -> u64 = reduce + for i in 1..n yield x[i - 1] * x[i];
fn main(n:usize, m:usize, v:u64) -> i32 {
  buffer x:u64[n] = zeroed;
  buffer o:u64[m] = zeroed;
  for i in 0..n { x[i] = v + u64(i); }
  pre(n, m, x, o);
  observe("o", o);
  observe("t", total(n, x));
  return 0;
}
"""
PREFIX = """fn pre(n:usize, x:ro<i64>[n], o:rw<i64>[n]) { scan + for i in n yield x[i] into o; }
fn main(n:usize, p:usize, v:i64, w:i64) -> i32 {
  buffer x:i64[n] = zeroed;
  buffer o:i64[n] = zeroed;
  for i in 0..n { x[i] = w; }
  if p < n { x[p] = v; }
  pre(n, x, o);
  observe("o", o);
  return 0;
}
"""
HISTO = """fn his(n:usize, m:usize, x:ro<i64>[n], h:rw<u32>[m]) {
  for i in 0..n { let k = usize(x[i]); h[k] = h[k] + 1; }
}
fn main(n:usize, m:usize, p:usize, k:i64, c:u32) -> i32 {
  buffer x:i64[n] = zeroed;
  buffer h:u32[m] = zeroed;
  for i in 0..n { x[i] = i64(i % m); }
  if p < n { x[p] = k; }
  for j in 0..m { h[j] = c; }
  his(n, m, x, h);
  observe("h", h);
  return 0;
}
"""


def row_model(n, k, m, s):
    """ROW's trap: for i in k..n, i * s (overflow at 2:25), then - k (2:25), then the
    index (2:23)."""
    for i in range(k, n):
        if i * s >= U64:
            return f"integer overflow: {i} * {s} does not fit in u64 at 2:21"
        if i * s - k < 0:
            return f"integer overflow: {i * s} - {k} does not fit in u64 at 2:21"
        if i * s - k >= m:
            return f"index {i * s - k} out of bounds for extent {m} at 2:19"
    return None


def nest_model(n, p):
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if i * n + k >= p:
                    return f"index {i * n + k} out of bounds for extent {p} at 5:31"
                if k * n + j >= p:
                    return f"index {k * n + j} out of bounds for extent {p} at 5:46"
            if i * n + j >= p:
                return f"index {i * n + j} out of bounds for extent {p} at 6:7"
    return None


def signed_model(lo, hi, m, d):
    for j in range(lo, hi):  # the value first, then the place
        if not -2**63 <= j * j < 2**63:
            return f"integer overflow: {j} * {j} does not fit in i64 at 2:39"
        if not -2**63 <= j + d < 2**63:
            return f"integer overflow: {j} + {d} does not fit in i64 at 2:29"
        if j + d < 0:
            return f"integer conversion out of range: {j + d} does not fit in u64 at 2:23"
        if j + d >= m:
            return f"index {j + d} out of bounds for extent {m} at 2:21"
    return None


def lanes_model(n, w, m):
    for i in range(n):
        for k in range(w):
            if i * w + k >= m:
                return f"index {i * w + k} out of bounds for extent {m} at 4:29"
    return None


def scan_model(n, m, v):
    acc = 0
    for i in range(n):  # each prefix, then its store into o[i]
        if acc + v + i >= U64:
            return f"integer overflow: {acc} + {v + i} does not fit in u64 at 1:56"
        acc += v + i
        if i >= m:
            return f"index {i} out of bounds for extent {m} at 1:90"
    acc = 0
    for i in range(1, n):
        p = (v + i - 1) * (v + i)
        if p >= U64:
            return f"integer overflow: {v + i - 1} * {v + i} does not fit in u64 at 2:71"
        if acc + p >= U64:
            return f"integer overflow: {acc} + {p} does not fit in u64 at 2:42"
        acc += p
    return None


def prefix_model(n, p, v, w):
    """PREFIX's running i64 sum (its unchecked copy is unrolled: lower_guard.c)."""
    acc = 0
    for i in range(n):
        x = v if i == p else w
        if not -2**63 <= acc + x < 2**63:
            return f"integer overflow: {acc} + {x} does not fit in i64 at 1:47"
        acc += x
    return None


def histo_model(n, m, p, k, c):
    """HISTO's h[k] + 1: the conversion, then the read h[k] (2:47), then the add."""
    h = [c] * m
    for i in range(n):
        x = k if i == p else i % m
        if x < 0:
            return f"integer conversion out of range: {x} does not fit in u64 at 2:27"
        if x >= m:
            return f"index {x} out of bounds for extent {m} at 2:47"
        if h[x] + 1 >= 2**32:
            return f"integer overflow: {h[x]} + 1 does not fit in u32 at 2:47"
        h[x] += 1
    return None


I64_MAX, I64_MIN, U32_MAX = 2**63 - 1, -2**63, 2**32 - 1
BIG = U64 // 6 + 1  # 6 * BIG overflows, 5 * BIG does not
CASES = {
    "row": (ROW, row_model, [
        (10, 0, 10, 1), (11, 0, 10, 1), (10, 0, 9, 1), (10, 9, 10, 1), (10, 9, 8, 1),
        (10, 0, 10, 2), (6, 0, 11, 2), (7, 0, 11, 2), (1, 0, 1, 1), (0, 0, 1, 1),
        (6, 1, 1, BIG), (7, 1, 1, BIG), (7, 6, 1, BIG), (3, 1, 4, 0), (3, 2, 4, 1),
    ]),
    "nest": (NEST, nest_model, [(6, 36), (6, 35), (6, 30), (6, 6), (1, 1), (1, 0), (0, 0)]),
    "signed": (SIGNED, signed_model, [
        (-3, 5, 8, 3), (-4, 5, 8, 3), (-3, 6, 8, 3), (-3, 5, 7, 3), (0, 3, 3, 0),
        (2**31 - 2, 2**31, 2, 2 - 2**31), (3037000499, 3037000501, 2, -3037000499),
        (2**62, 2**62 + 1, 1, -2**62), (2**62, 2**62 + 1, 1, 2**62),
    ]),
    "lanes": (LANES, lanes_model, [(16, 3, 48), (16, 3, 47), (16, 3, 46), (7, 1, 7), (1, 5, 5)]),
    "scan": (SCAN, scan_model, [(8, 8, 3), (8, 7, 3), (8, 9, 3), (3, 3, U64 // 3),
                                (3, 3, 2**32 - 1), (3, 3, 2**32), (1, 1, 0)]),
    # overflow at the first, a middle and the last element, n a multiple of the unrolling
    # and not, INT64_MAX and INT64_MIN, one short of overflowing
    "prefix": (PREFIX, prefix_model, [
        (7, 0, I64_MAX, 1), (7, 3, I64_MAX, 1), (7, 6, I64_MAX, 1), (8, 7, I64_MAX, 1),
        (7, 0, I64_MIN, -1), (7, 6, I64_MIN, -1), (8, 7, I64_MAX, 0), (9, 4, I64_MAX - 4, 1),
        (9, 4, I64_MAX - 3, 1), (7, 9, 0, 1), (1, 0, I64_MIN, 0), (1, 0, I64_MAX, 0),
    ]),
    # index -1 and m at the first, a middle and the last element; h[k] + 1 overflowing
    # at the first, a middle and the last element
    "histo": (HISTO, histo_model, [
        (7, 3, 9, 0, 0), (7, 3, 0, 3, 0), (7, 3, 3, 3, 0), (7, 3, 6, 3, 0), (7, 3, 0, -1, 0),
        (7, 3, 3, -1, 0), (7, 3, 6, -1, 0), (7, 3, 9, 0, U32_MAX), (7, 3, 9, 0, U32_MAX - 1),
        (7, 3, 9, 0, U32_MAX - 2), (8, 3, 9, 0, U32_MAX - 2), (6, 3, 9, 0, U32_MAX - 2),
        (1, 1, 9, 0, 0), (1, 1, 0, 1, U32_MAX),
    ]),
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    root = tmp_path_factory.mktemp("elision")
    out = {}
    for name, (text, _, _) in CASES.items():
        path = root / f"{name}.cairn"
        path.write_text(text)
        out[name] = path
    return out


ARG_NAMES = {"row": "n k m s", "nest": "n p", "signed": "lo hi m d", "lanes": "n w m",
             "scan": "n m v", "prefix": "n p v w", "histo": "n m p k c"}


def run(source, args, tmp, threads, *flags):
    names = ARG_NAMES[source.stem].split()
    log = tmp / f"obs{len(list(tmp.iterdir()))}.jsonl"
    res = cairn("run", source, *cairn_cell_flags(), *flags, "--observe", log, "--",
                *(f"{k}={v}" for k, v in zip(names, args)), env={"CAIRN_THREADS": str(threads)})
    trap = [ln for ln in res.stderr.splitlines() if ln.startswith("trap:")]
    return res.returncode, trap, read_log(log) if log.exists() else []


@pytest.mark.parametrize("threads", [1, 2, 7, 16])
@pytest.mark.parametrize("name", sorted(CASES))
def test_same_bits_and_traps_with_elision_on_and_off(sources, tmp_path, name, threads):
    _, model, cases = CASES[name]
    source = sources[name]
    for args in cases:
        want = model(*args)
        on = run(source, args, tmp_path, threads)
        off = run(source, args, tmp_path, threads, "--no-elide")
        assert on == off, (args, on, off)
        if want:
            assert on[1] == [f"trap: {want.replace(' at ', f' at {source}:')}"], (args, on)
        else:
            assert on[0] == 0 and on[1] == [], (args, on)


def guards(tmp_path, text, *flags):
    src = tmp_path / "g.cairn"
    src.write_text(text)
    res = cairn("build", src, "-o", tmp_path / "g", "--emit-c", tmp_path, "--emit-only",
                "--explain-guards", *flags)
    assert res.returncode == 0, res.stderr
    return res.stdout


def receipt_guards(tmp_path, text, *flags):
    src = tmp_path / "r.cairn"
    src.write_text(text)
    res = cairn("build", src, "-o", tmp_path / "r", *cairn_cell_flags(), *flags)
    assert res.returncode == 0, res.stderr
    return json.loads(pathlib.Path(f"{tmp_path / 'r'}.receipt.json").read_text())["guards"]


def test_receipt_lists_the_guards_by_hand_count(tmp_path):
    g = receipt_guards(tmp_path, NEST)
    # a[i * n + k], a[k * n + j], c[i * n + j]: 3 indexes, 6 operations (a * and a + each)
    proved = sorted((p["at"], p["guard"]) for p in g["mm"]["proved"])
    assert proved == sorted([("5:31", "index"), ("5:33", "overflow"), ("5:33", "overflow"),
                             ("5:46", "index"), ("5:48", "overflow"), ("5:48", "overflow"),
                             ("6:7", "index"), ("6:9", "overflow"), ("6:9", "overflow")])
    assert all("checked once before the loop at 2:3" in p["by"] for p in g["mm"]["proved"])
    # s + a * a is the product of two data values: kept (overflow of * and of +)
    assert sorted(g["mm"]["kept"]) == ["5:27", "5:31"], g["mm"]
    off = receipt_guards(tmp_path, NEST, "--no-elide")
    assert off["mm"]["proved"] == []
    assert sorted(off["mm"]["kept"]) == sorted({"5:27", "5:31", "5:33", "5:46", "5:48", "6:7",
                                                "6:9"})


def test_explain_guards_prints_each_by_line_col(tmp_path):
    out = guards(tmp_path, ROW)
    assert "fill: 3 guards proved, 1 kept" in out, out  # u64(i): a conversion's
    assert "2:19  proved  index" in out and "2:21  proved  overflow" in out, out
    off = guards(tmp_path, ROW, "--no-elide")
    assert "fill: 0 guards proved, 3 kept" in off, off


def test_the_fast_copy_holds_no_check_the_loop_proved(tmp_path):
    guards(tmp_path, NEST)
    c = (tmp_path / "g.c").read_text()
    body = c[c.index("static void cairn_fn_mm("):]
    body = body[:body.index("\n}\n")]
    fast, slow = body.split("} else {", 1)
    fast = fast[fast.index("if (t"):]
    assert "cairn_index_u" not in fast and "cairn_mul_u64(v_i" not in fast, fast
    assert fast.count("cairn_add_u64") == 1 and fast.count("cairn_mul_u64") == 1  # s + a * a
    assert slow.count("cairn_index_u") == 3, slow


def test_loops_with_lanes_are_not_copied(tmp_path):
    text = """fn f(n:usize, x:rw<f32>[n]) {
  for r in 0..2 { parallel i in n { x[i] = x[i] + 1.0; } }
}
fn main() -> i32 { return 0; }
"""
    out = guards(tmp_path, text)
    c = (tmp_path / "g.c").read_text()
    assert c.count("static void lane") == 1, c
    assert "f: 0 guards proved" in out, out


SAXPY = """fn saxpy(n:usize, a:f32, x:ro<f32>[n], y:rw<f32>[n]) {
  for i in 0..n { y[i] = a * x[i] + y[i]; }
}
fn main() -> i32 { return 0; }
"""


def vectorized_loops(tmp_path, *flags):
    """The loops gcc -O3 reports vectorized in the generated C (static functions kept)."""
    guards(tmp_path, SAXPY, *flags)
    res = subprocess.run(["gcc", "-std=c11", "-O3", "-fkeep-static-functions", "-ffp-contract=off",
                          "-fno-fast-math", f"-I{ROOT / 'runtime'}", "-c", tmp_path / "g.c", "-o",
                          tmp_path / "g.o", "-fopt-info-vec-optimized"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return [ln for ln in res.stderr.splitlines() if "loop vectorized" in ln]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_proved_loop_on_restrict_views_vectorizes(tmp_path):
    assert vectorized_loops(tmp_path), "saxpy's proved loop did not vectorize"
    c = (tmp_path / "g.c").read_text()
    assert "const float *restrict v_x_2" in c and "float *restrict v_y_3" in c, c
    assert vectorized_loops(tmp_path, "--no-elide") == []  # the checks keep it scalar


def test_a_library_gets_no_restrict(tmp_path):
    """A library's C callers may pass overlapping arrays: nothing checks them."""
    src = tmp_path / "k.cairn"
    src.write_text(SAXPY.replace("fn saxpy", "pub fn saxpy").replace("fn main() -> i32 { return 0; }\n", ""))
    res = cairn("build", src, "--lib", "-o", tmp_path / "libk", "--emit-c", tmp_path, "--emit-only")
    assert res.returncode == 0, res.stderr
    assert "restrict" not in (tmp_path / "k.c").read_text()

