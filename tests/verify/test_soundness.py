"""cairn verify never says "verified" where a run can trap (issue 22).

One test per class the issue lists, each made the same way: the program
(tests/verify/programs/*.cairn), the verdict, and a concrete `cairn run` of the same
function that traps, or does not, at the same line and column. Every counterexample's
replay is run. Each test failed on the code before the fix (checked against the tree at
228101b; the docstrings say what that code answered)."""
import pathlib
import re
import resource
import sys

import pytest

from cairntest import run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # verifylib.py
from verifylib import CAIRN, PROGRAMS, concrete, of, only, place, replay, trap, verdict_cache, verify  # noqa: E402


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """Every program here verified once (module scope)."""
    return verdict_cache(tmp_path_factory)


def traps_at(r, message, line, col):
    """Whether a run trapped at line:col with exactly `message`: the reason and what the
    runtime says failed (`division by zero: 100 / 0`), for inputs the test chose."""
    got = trap(r.stderr)
    return r.returncode != 0 and got is not None and got[0] == message and got[1:] == (line, col)


# ---- 1. extents under requires ----

def test_own_extent_guard_is_a_property(verdicts, tmp_path):
    """`x:ro<i32>[n * 4]` with `requires n > 0`: n * 4 overflows on entry, before the
    promise is checked. The old model assumed it away (verified)."""
    _, props = verdicts("extents")
    p = only(props, "ext", "integer overflow")
    assert p["verdict"] == "counterexample" and place(p["at"]) == (2, 27)
    replay(p)
    r, _ = concrete(tmp_path, PROGRAMS / "extents.cairn",
                    "fn main() -> i32 {\n  buffer b:i32[0] = zeroed;\n  return ext(1 << 62, b);\n}")
    assert traps_at(r, "integer overflow: 4611686018427387904 * 4 does not fit in u64", 2, 27), r.stderr


def test_a_caller_breaking_an_extent_is_a_counterexample(verdicts, tmp_path):
    _, props = verdicts("extents")
    assert only(props, "ext_kept", "integer overflow")["verdict"] == "verified"
    p = only(props, "ext_caller", "integer overflow")
    assert p["verdict"] == "counterexample" and place(p["at"]) == (3, 32)
    replay(p)
    r, _ = concrete(tmp_path, PROGRAMS / "extents.cairn", "fn main() -> i32 { return ext_caller(1 << 62); }")
    assert traps_at(r, "integer overflow: 4611686018427387904 * 4 does not fit in u64", 3, 32), r.stderr
    r, _ = concrete(tmp_path, PROGRAMS / "extents.cairn", "fn main() -> i32 { return ext_caller(1); }")
    assert r.returncode == 0, r.stderr


# ---- 5. allocation ----

def test_buffer_size_guard_is_a_property(verdicts, tmp_path):
    """`buffer b:i64[n]` traps "buffer too large" past 2^61 elements; the old model had no
    such property ("no guard to check")."""
    _, props = verdicts("extents")
    p = only(props, "alloc", "buffer too large")
    assert p["verdict"] == "counterexample" and place(p["at"]) == (9, 3)
    replay(p)
    assert only(props, "alloc_kept", "buffer too large")["verdict"] == "verified"
    r, _ = concrete(tmp_path, PROGRAMS / "extents.cairn", "fn main() -> i32 { return i32(alloc(1 << 61)); }")
    assert traps_at(r, "buffer too large", 9, 3), r.stderr
    r, _ = concrete(tmp_path, PROGRAMS / "extents.cairn", "fn main() -> i32 { return i32(alloc_kept(1 << 20)); }")
    assert r.returncode == 0, r.stderr


# ---- 2. what the model does not model ----

WRITES = [  # (function, main, the division's line): each run traps at 100 / out[0] or v
    ("scan_div", "buffer x:i32[2] = zeroed;\n  buffer o:i32[2] = zeroed;\n  return scan_div(2, x, o);", 6),
    ("rec_div", "buffer o:i32[4] = zeroed;\n  return rec_div(o);", 21),
    ("ref_div", "return ref_div();", 29),
    ("region_div", "buffer o:i32[32] @unified = zeroed;\n  return region_div(o);", 34),
]


@pytest.mark.parametrize("function,main,line", WRITES, ids=[w[0] for w in WRITES])
def test_what_unmodelled_code_writes_is_never_verified(verdicts, tmp_path, function, main, line):
    """After a scan, a recursive call (through a view or an rw reference) or a blocks
    region, `100 / out[0]` was verified by the old model (it kept out[0] = 5); a run traps
    there. Now: a counterexample where the model reaches (the scan), else unknown."""
    _, props = verdicts("writes")
    p = only(props, function, "division by zero", line)
    assert p["verdict"] in ("counterexample", "unknown"), p
    if p["verdict"] == "counterexample":
        replay(p)
    else:
        assert "not modelled" in p["reason"] or "is not modelled" in p["reason"], p
    r, _ = concrete(tmp_path, PROGRAMS / "writes.cairn", "fn main() -> i32 {\n  " + main + "\n}")
    assert traps_at(r, "division by zero: 100 / 0", line, 10), r.stderr


def test_a_scans_own_guards_are_properties(verdicts, tmp_path):
    """The prefix overflow and the `into` index check (the old model had neither)."""
    _, props = verdicts("writes")
    into = [p for p in of(props, "scan_short", "index out of bounds") if place(p["at"]) == (9, 37)][0]
    assert into["verdict"] == "counterexample"
    replay(into)
    prefix = [p for p in of(props, "scan_short", "integer overflow") if place(p["at"]) == (9, 3)]
    assert [p["verdict"] for p in prefix] == ["counterexample"]
    replay(prefix[0])
    r, _ = concrete(tmp_path, PROGRAMS / "writes.cairn",
                    "fn main() -> i32 {\n  buffer x:i32[3] = zeroed;\n  buffer o:i32[2] = zeroed;\n"
                    "  scan_short(3, x, o);\n  return 0;\n}")
    assert traps_at(r, "index 2 out of bounds for extent 2", 9, 37), r.stderr
    # a float scan's prefixes are not modelled: what depends on them is unknown
    conv = only(props, "scan_float", "float to integer conversion out of range")
    assert conv["verdict"] == "unknown" and "float scan" in conv["reason"]


# ---- 3. lanes are not a sequence ----

def test_a_lane_does_not_assume_another_lane_passed(verdicts, tmp_path):
    """Lane 1 divides by x[0] as lane 0 does: the old model ran lane 0 first, so lane 1's
    guard was unreachable when x[0] == 0 (bounded). Lanes run concurrently: with lane 0
    busy, lane 1 traps first, at its own line."""
    _, props = verdicts("lanes")
    p = only(props, "lanes", "division by zero", 9)
    assert p["verdict"] == "counterexample" and p["also"], p
    replay(p)
    wide = only(props, "lanes_wide", "division by zero", 20)
    assert wide["verdict"] == "counterexample", wide
    replay(wide)
    main = ("fn main() -> i32 {\n  buffer x:i32[128] = zeroed;\n  buffer y:i32[128] = zeroed;\n"
            "  lanes_wide(128, 400000000, x, y);\n  return 0;\n}")
    seen = set()
    for _ in range(4):  # lane 0 spins; blocks of 64 lanes: lanes 64.. run on the other worker
        r, _ = concrete(tmp_path, PROGRAMS / "lanes.cairn", main, env={"CAIRN_THREADS": "2"})
        got = trap(r.stderr)
        seen.add(got[1:] if got else None)
        if (20, 14) in seen:
            break
    assert (20, 14) in seen, seen
    r, _ = concrete(tmp_path, PROGRAMS / "lanes.cairn", main.replace("400000000", "0"),
                    env={"CAIRN_THREADS": "1"})
    assert traps_at(r, "division by zero: 100 / 0", 18, 14), r.stderr  # one worker: lane 0 first


def test_compare_and_swap_order_is_not_modelled(verdicts):
    """`atomic_cas` chains in a region: which lane wins depends on arrival; the old model
    took index order and verified 100 / (c[0] - 2) (c[0] == 2 when lane 1 wins)."""
    _, props = verdicts("lanes")
    p = only(props, "cas_order", "division by zero")
    assert p["verdict"] == "unknown" and "atomic_cas" in p["reason"]


# ---- 6, 7. NaN bits ----

def test_nan_input_replays_with_its_payload(verdicts, tmp_path):
    """An input NaN with an odd payload: the old replay wrote the canonical NaN
    (0x7fc00000, even) and did not trap."""
    _, props = verdicts("nan_bits")
    p = only(props, "payload_odd", "division by zero")
    assert p["verdict"] == "counterexample" and int(p["inputs"]["x"].split("bits ")[1][:-1], 16) & 1
    replay(p)
    r, _ = concrete(tmp_path, PROGRAMS / "nan_bits.cairn",
                    "fn main() -> i32 { return payload_odd(from_bits[f32](0x7fc00001)); }")
    assert traps_at(r, "division by zero: 100 / 0", 5, 38), r.stderr
    q = only(props, "quiet_view", "division by zero")  # a signalling NaN in a view, bit for bit
    assert q["verdict"] == "counterexample"
    replay(q)


def test_a_made_nan_has_nan_bits(verdicts, tmp_path):
    """to_bits(x * 2.0) of a NaN: some NaN pattern. The old model made it any 64 bits and
    gave a counterexample that does not replay; it is verified."""
    _, props = verdicts("nan_bits")
    assert only(props, "nan_is_nan", "division by zero")["verdict"] == "verified"
    for bits in ("0x7ff8000000000000", "0xfff8000000000001", "0x7ff0000000000001"):
        r, _ = concrete(tmp_path, PROGRAMS / "nan_bits.cairn",
                        f"fn main() -> i32 {{ return nan_is_nan(from_bits[f64]({bits})); }}")
        assert r.returncode == 0, r.stderr


def test_a_made_nans_payload_is_unknown(verdicts, tmp_path):
    """Whether the payload of x * 2.0 is odd is the hardware's choice: unknown, never a
    counterexample that might not replay (the old answer)."""
    _, props = verdicts("nan_bits")
    p = only(props, "made_payload", "division by zero")
    assert p["verdict"] == "unknown" and "NaN" in p["reason"]


# ---- 8. counterexamples keep the requires ----

def test_counterexample_keeps_requires(verdicts, tmp_path):
    """A NaN whose requires rules out the canonical pattern, and a requires on element 5000:
    the old replays wrote the canonical NaN and only 4096 elements, and stopped at the
    requires instead of the guard."""
    _, props = verdicts("requires")
    for fn, line in [("nan_req", 5), ("far_req", 6), ("kept", 4)]:
        found = [p for p in of(props, fn) if p["verdict"] == "counterexample"]
        assert found and all(place(p["at"])[0] == line for p in found), (fn, found)
        for p in found:
            got = replay(p)
            assert "requires" not in got[0]


# ---- 9. replays reproduce the trap ----

@pytest.mark.parametrize("function", ["far", "far_loop", "dev", "uni"])
def test_replays_of_large_and_device_views(verdicts, function):
    """Views past 4096 elements (the old cap), @device views (the old replay passed a host
    buffer: E-PLACEMENT) and @unified ones, replayed emulated; extents as small as the
    property allows."""
    _, props = verdicts("replays")
    p = only(props, function, "division by zero")
    assert p["verdict"] == "counterexample"
    replay(p)
    if function == "far":
        assert p["inputs"]["n"] == "5001"


def test_no_counterexample_a_replay_cannot_allocate(verdicts):
    """A trap only views of 4 GiB reach: no replay could build them (the old replay
    wrote 4096 elements of a view it then failed to allocate). Unknown, with why."""
    _, props = verdicts("replays")
    p = only(props, "huge", "division by zero")
    assert p["verdict"] == "unknown" and "256 MiB" in p["reason"], p


# ---- 10. vacuous requires ----

def test_vacuous_requires_is_its_own_verdict(tmp_path):
    """`requires n < 0 && n > 0`: the old answer was "verified", exit 0."""
    r = run([CAIRN, "verify", PROGRAMS / "requires.cairn", "--function", "never", "--cex-dir", tmp_path])
    assert r.returncode == 5, r.stdout
    assert "never: requires of never can hold at" in r.stdout and ": vacuous" in r.stdout
    assert "requires can never hold: every property is vacuous" in r.stdout
    assert re.search(r"0 verified, 0 verified up to 8 iterations, 0 counterexamples, 0 unknown, 1 vacuous",
                     r.stdout)
    rc, props = verify(PROGRAMS / "requires.cairn", tmp_path / "cex", "--function", "never")
    assert rc == 5 and [p["verdict"] for p in props] == ["vacuous"]


# ---- 11. implements is refinement ----

def test_implementation_with_stronger_requires(verdicts, tmp_path):
    """half_strict promises less than half (n < 100 against n < 1000): a caller of half
    passing 500 would trap in it. The old model assumed both requires (verified)."""
    _, props = verdicts("refinement")
    p = only(props, "half_strict", "implements")
    assert p["verdict"] == "counterexample"
    r = run([CAIRN, "run", p["replay"]])
    assert r.returncode != 0 and "requires of half_strict" in r.stderr
    assert only(props, "half_loose", "implements")["verdict"] == "verified"


def test_implementation_with_other_extents(verdicts):
    """head_wide reads x:ro<i32>[n + 1] where head reads [n]: the same view traps on entry."""
    _, props = verdicts("refinement")
    p = only(props, "head_wide", "implements")
    assert p["verdict"] == "counterexample"
    r = run([CAIRN, "run", p["replay"]])
    assert r.returncode != 0 and "view extent mismatch" in r.stderr


# ---- 12. needlessly unknown ----

def test_index_arithmetic_from_extents_is_quick(tmp_path):
    """a[row * k + t] with row < m, t < k over m * k elements: unknown at 10 s and 30 s
    before; verified now in well under a second of CPU (the product abstraction,
    verify_solve.c). CPU, not wall clock: the development machine is shared."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    rc, props = verify(PROGRAMS / "index_math.cairn", tmp_path, "--function", "tile", "--budget", "80000000")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    body = [p for p in props if place(p["at"]) in ((4, 10), (4, 12))]
    assert len(body) == 3 and all(p["verdict"] == "verified" for p in body), body
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 3, cpu  # the whole function, the extent's counterexample and its shrinking included


def test_loop_over_its_extent_is_verified_for_every_extent(verdicts):
    _, props = verdicts("index_math")
    assert only(props, "total", "index out of bounds")["verdict"] == "verified"
    over = only(props, "total", "integer overflow")
    assert over["verdict"] == "bounded"  # s carries: 2^32 elements overflow it


# ---- 13. two guards at one place ----

def test_guards_at_one_place_are_told_apart(verdicts):
    """a / b * c: a zero divisor, MIN / -1 and the product, all at 2:42; x[i] * x[i] * 7:
    two products at 6:55. The old replays overwrote each other (one file name)."""
    _, props = verdicts("same_place")
    at = [p for p in props if place(p["at"]) == (2, 42)]
    assert sorted(p["title"] for p in at) == ["no division by zero (/)", "no integer overflow (*)",
                                             "no integer overflow (/)"]
    two = [p for p in of(props, "twice_idx", "integer overflow") if place(p["at"]) == (6, 55)]
    assert sorted(p["title"] for p in two) == ["no integer overflow (*) [1 of 2]",
                                              "no integer overflow (*) [2 of 2]"]
    assert sorted((p["occurrence"], p["of"]) for p in two) == [(1, 2), (2, 2)]
    replays = [p["replay"] for p in props if p.get("replay")]
    assert len(replays) == len(set(replays))
    for p in at + two:
        replay(p)


@pytest.mark.parametrize("call,message,col", [
    ("div_mul(1, -1, -2147483648)", "integer overflow: -1 * -2147483648 does not fit in i32", 42),
    ("div_mul(-2147483648, -1, 1)", "integer overflow: -2147483648 / -1 does not fit in i32", 42),
    ("div_mul(1, 0, 1)", "division by zero: 1 / 0", 42),
    ("add_sub(2147483647)", "integer overflow: 2147483647 + 1 does not fit in i32", 28),
])
def test_trap_message_names_the_operator(tmp_path, call, message, col):
    """The three guards of a / b * c at 2:42 trap with three messages: each names its
    operator and operands (the runtime's message since issue 25)."""
    r, _ = concrete(tmp_path, PROGRAMS / "same_place.cairn", f"fn main() -> i32 {{ return {call}; }}")
    line = 3 if call.startswith("add_sub") else 2
    assert traps_at(r, message, line, col), r.stderr


# ---- 14. --unwind's limit, a[usize(row)] ----

def test_conversion_in_an_index_parses(verdicts, tmp_path):
    _, props = verdicts("index_math")
    assert only(props, "signed_row", "index out of bounds")["verdict"] == "verified"
    r, _ = concrete(tmp_path, PROGRAMS / "index_math.cairn",
                    "fn main() -> i32 {\n  buffer a:i32[3] = zeroed;\n  a[2] = 7;\n  return signed_row(3, a, 2) - 7;\n}")
    assert r.returncode == 0, r.stderr


def test_unwind_limit_in_help():
    text = run([CAIRN, "verify", "--help"]).stdout
    assert re.search(r"--unwind N .*1\.\.1024", text), text
    assert run([CAIRN, "verify", PROGRAMS / "index_math.cairn", "--unwind", "1025"]).returncode == 2


# ---- 4. pooled folds (the runtime's half: issue 23 item 5) ----

def test_pooled_integer_product_is_the_index_order_fold(verdicts):
    """verify's model of `reduce * parallel` over integers is the index-order fold: a zero
    first factor makes every product 0, whatever follows."""
    _, props = verdicts("pooled")
    p = only(props, "pooled", "integer overflow")
    assert p["verdict"] == "bounded", p  # 128 lanes, unwound 8
    _, props = verdicts("pooled", "--unwind", "128", "--function", "pooled")
    p = only(props, "pooled", "integer overflow")
    assert p["verdict"] == "verified", p


def test_pooled_integer_product_runs_as_verified(verdicts, tmp_path):
    """The same fold over 2^24 terms, x[0] = 0 and the rest 65536: the index-order result
    is 0, so no run may trap, at pool widths 1, 2, 7 and 16. Before issue 23 item 5 every
    width above 1 trapped: a worker whose blocks miss x[0] overflowed its partial product
    (the pool's blocks are large enough here that every worker takes some). The runtime
    now traps a pooled integer product exactly when the index-order result would, so
    verify's index-order model is right."""
    _, props = verdicts("pooled")
    assert only(props, "pooled_big", "integer overflow")["verdict"] in ("bounded", "verified")
    main = ("fn main() -> i32 {\n  buffer x:i32[16777216] = zeroed;\n"
            "  parallel i in 16777216 { if i > 0 { x[i] = 65536; } }\n"
            "  return pooled_big(16777216, x);\n}")
    traps = []
    for threads in ["1", "2", "7", "16"]:
        r, _ = concrete(tmp_path, PROGRAMS / "pooled.cairn", main, env={"CAIRN_THREADS": threads})
        if r.returncode != 0:
            traps.append((threads, r.stderr.strip()[-200:]))
    assert not traps, traps


# ---- found by the differential harness ----

def test_signed_products_of_known_values(verdicts, tmp_path):
    """Z3 4.8.12 folds bvsmul_noovfl of constants as if unsigned, so -1 * 7 "overflowed":
    the old verdict was a counterexample whose replay does not trap. The product now fits
    exactly when the runtime says it does."""
    _, props = verdicts("found")
    assert props and all(p["verdict"] == "verified" for p in props), props
    main = "fn main() -> i32 {\n  let mut s:i32 = i32(neg_product());\n" \
           "  for k in 0..7 { s += neg_products(i32(k) - 3); }\n  return s + 203;\n}"
    r, _ = concrete(tmp_path, PROGRAMS / "found.cairn", main)
    assert r.returncode == 0, r.stderr  # -7 + -7 * (9 + 4 + 1 + 0 + 1 + 4 + 9) = -203
