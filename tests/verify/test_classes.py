"""cairn verify never says "verified" where a run traps: issue 35's classes.

Each test is built as test_soundness.py's are: the program (tests/verify/programs), the
verdict, and a concrete `cairn run` of the same function that traps at the same line and
column. Every counterexample's replay is run. Each failed on the code before the fix
(main at 6390c68; the docstrings say what that code answered)."""
import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # verifylib.py
from verifylib import CAIRN, PROGRAMS, concrete, only, place, replay, run, trap, verdict_cache  # noqa: E402


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """Every program here verified once (module scope)."""
    return verdict_cache(tmp_path_factory)


def traps_at(r, message, line, col):
    got = trap(r.stderr)
    return r.returncode != 0 and got is not None and got[0] == message and got[1:] == (line, col)


# ---- 1, 2. writes in loop and region binders, a blocks region's shape ----

BINDERS = [  # (function, main, the division's line, its message)
    ("for_bound", "return for_bound(3);", 9, "division by zero: 10 / 0"),
    ("buffer_count", "return buffer_count(3);", 14, "division by zero: 10 / 0"),
    ("lanes_count", "return lanes_count(3);", 19, "division by zero: 10 / 0"),
    ("grid_reset", "buffer o:i32[32] @unified = zeroed;\n  return grid_reset(o);", 24, "division by zero: 10 / 0"),
    ("threads_reset", "buffer o:i32[32] @unified = zeroed;\n  return threads_reset(o);", 29,
     "division by zero: 10 / 0"),
]


@pytest.mark.parametrize("function,main,line,message", BINDERS, ids=[b[0] for b in BINDERS])
def test_writes_in_binders_are_seen(verdicts, tmp_path, function, main, line, message):
    """A call that writes `c` through an `rw` reference in a nested loop's bound, a
    buffer's count, a region's count or a blocks region's grid or threads: the old
    inductive step did not give c a fresh value (its walk skipped binders and counts), and
    the blocks region's shape was never evaluated, so `10 / (c - 3)` and `10 / c` were
    verified. Now: a counterexample that replays, or unknown through the region."""
    _, props = verdicts("binders")
    p = only(props, function, "division by zero", line)
    assert p["verdict"] in ("counterexample", "unknown"), p
    if p["verdict"] == "counterexample":
        replay(p)
    else:
        assert "blocks region is not modelled" in p["reason"], p
    r, _ = concrete(tmp_path, PROGRAMS / "binders.cairn", "fn main() -> i32 {\n  " + main + "\n}")
    assert traps_at(r, message, line, 10), r.stderr
    assert place(p["at"]) == (line, 10)


# ---- 8. replays whose names meet the program's ----

NAMES = [("result_k", "division by zero", (4, 57)), ("prefixed", "division by zero", (7, 10)),
         ("device_k", "division by zero", (9, 64)), ("main", "division by zero", (11, 25))]


@pytest.mark.parametrize("function,prop,at", NAMES, ids=[n[0] for n in NAMES])
def test_a_replays_names_never_meet_the_programs(verdicts, function, prop, at):
    """A parameter named `result` or `k` beside a view the fill loop writes, one named
    `x_host` beside a @device view x, a function named `cexm` beside a main with
    parameters: the old replays of result_k, device_k and main were E-DUPLICATE programs (they named inputs cex_NAME, the result cex_result,
    the fill loop's index cex_k, a device view's host copy NAME_host, the renamed main
    cexm). Now every name of a replay starts with a prefix no identifier of the source
    starts with (prefixed: the source holds cex_x and cex_k, so the replay's is cex1_)."""
    _, props = verdicts("replay_names")
    p = only(props, function, prop)
    assert p["verdict"] == "counterexample" and place(p["at"]) == at, p
    replay(p)


# ---- 3. a device lane's NaN bits ----

NANS = [("neg_nan", 4), ("abs_nan", 7), ("min_nan", 10), ("max_nan", 13)]


@pytest.mark.parametrize("function,line", NANS, ids=[n[0] for n in NANS])
def test_a_device_lanes_nan_has_the_devices_bits(verdicts, tmp_path, function, line):
    """In a device lane, `-y`, `abs(y)`, `min(y, y)` and `max(y, y)` of a NaN give the
    device's one NaN, 0x7fffffff (the lowering's lower_dnan); the old model kept the host's
    exact bits (the sign flipped or cleared, the operand's payload), so `100 /
    (to_bits(-y) ^ 0x7fffffff)` was verified, and an emulated run traps there."""
    _, props = verdicts("lanes35")
    p = only(props, function, "division by zero", line)
    assert p["verdict"] == "counterexample" and place(p["at"]) == (line, 66), p
    replay(p)
    main = "fn main() -> i32 {\n  buffer o:u32[4] @device = zeroed;\n  " + function + "(o);\n  return 0;\n}"
    r, _ = concrete(tmp_path, PROGRAMS / "lanes35.cairn", main)
    assert traps_at(r, "division by zero: 100 / 0", line, 66), r.stderr


# ---- 4. atomics in a pooled reduction ----

def test_a_pooled_reductions_terms_are_lanes(verdicts, tmp_path):
    """`reduce + parallel` runs its terms on the pool: the old value an atomic gives a
    term depends on the order the workers arrive in. The old model read it in index order
    (term i sees i, so `10 / (old - i + 64)` divides by 64: verified); with two workers
    term 64 can see 0. Now the old value is any value: not verified."""
    _, props = verdicts("lanes35")
    p = only(props, "pooled_atomic", "division by zero", 22)
    assert p["verdict"] in ("unknown", "counterexample") and place(p["at"]) == (22, 54), p
    if p["verdict"] == "counterexample":
        replay(p, env={"CAIRN_THREADS": "2"})
    else:
        assert "atomic" in p["reason"], p
    main = "fn main() -> i32 {\n  buffer x:u32[1] = zeroed;\n  return i32(pooled_atomic(128, 400000000, x));\n}"
    seen = set()
    for _ in range(4):  # term 0 spins, so the other worker's first term runs before it
        r, _ = concrete(tmp_path, PROGRAMS / "lanes35.cairn", main, env={"CAIRN_THREADS": "2"})
        got = trap(r.stderr)
        seen.add(got[1:] if got else None)
        if (22, 54) in seen:
            assert traps_at(r, "division by zero: 10 / 0", 22, 54), r.stderr
            break
    assert (22, 54) in seen, seen
    r, _ = concrete(tmp_path, PROGRAMS / "lanes35.cairn", main.replace("400000000", "0"),
                    env={"CAIRN_THREADS": "1"})
    assert r.returncode == 0, r.stderr  # one worker: index order, every divisor 64


# ---- 5. a lane reading another lane's element through a helper ----

def test_a_helpers_reads_are_its_callers_lanes_reads():
    """neighbour's lanes write y[i] and read y[i + 1] through next, which hands k + 1
    to at; counted's lanes update x atomically and read x[0] through first. Both race
    (lane i + 1 may write 1 before lane i reads it, and 10 / (1 - 1) traps), yet the old
    checker accepted both (a view passed as ro was no access at all), and verify, running
    lanes in index order, verified neighbour's `10 / (next(y, i) - 1)`. Now each
    function's read set by parameter (check_summary.c) is part of its call: refused."""
    r = run([CAIRN, "check", PROGRAMS / "races35.cairn"], timeout=300)
    got = re.findall(r"races35\.cairn:(\d+):(\d+): error\[(E-[A-Z-]+)\]: (.*)", r.stderr)
    assert r.returncode != 0 and [(int(a), int(b), code) for a, b, code, _ in got] == \
        [(8, 40, "E-LANE-RACE"), (13, 78, "E-LANE-RACE")], r.stderr
    assert "reads 'y' at another lane's element" in got[0][3], got
    assert "touches 'x' plainly while lanes update it atomically" in got[1][3], got


def test_a_helper_reading_the_lanes_own_element_is_accepted(verdicts, tmp_path):
    """The read set names the index parameter: own reads y only at [i] through mid and
    at, and other reads a neighbour of an array no lane writes; both are accepted, and
    the division gets a counterexample that replays and a run that traps there."""
    _, props = verdicts("helpers35")
    for function, line in (("own", 7), ("other", 10)):
        p = only(props, function, "division by zero", line)
        assert p["verdict"] == "counterexample" and place(p["at"]) == (line, 28), p
        replay(p)
    r, _ = concrete(tmp_path, PROGRAMS / "helpers35.cairn",
                    "fn main() -> i32 {\n  buffer y:i32[8] = zeroed;\n  own(y);\n  return 0;\n}")
    assert traps_at(r, "division by zero: 10 / 0", 7, 28), r.stderr


# ---- 7. the device launch's lane limit ----

def test_the_lane_limit_of_a_device_launch_is_a_property(verdicts, tmp_path):
    """A device region past 2^31 - 1 blocks of 256 lanes traps before the launch ("too
    many lanes for one device launch", the lowering's lower_lane_limit), emulated too;
    the old model listed no such property (the region's index guard was all it had)."""
    _, props = verdicts("lanes35")
    p = only(props, "launch", "device launch limit")
    assert p["verdict"] == "counterexample" and place(p["at"]) == (25, 3), p
    replay(p)
    for fn in ("neg_nan", "abs_nan"):  # four lanes: verified
        assert only(props, fn, "device launch limit")["verdict"] == "verified"
    main = ("fn main() -> i32 {\n  buffer x:u8[1] @device = zeroed;\n  launch(549755813632 + 1, x);\n"
            "  return 0;\n}")
    r, _ = concrete(tmp_path, PROGRAMS / "lanes35.cairn", main)
    assert traps_at(r, "too many lanes for one device launch", 25, 3), r.stderr


# ---- 6. guards in code the model does not walk ----

UNWALKED = [("mixed", "return mixed(1);", "recursive call"),
            ("in_region", "buffer o:i32[32] @unified = zeroed;\n  return in_region(o);", "blocks region")]


@pytest.mark.parametrize("function,main,why", UNWALKED, ids=[u[0] for u in UNWALKED])
def test_a_guard_also_reached_through_unwalked_code_is_never_verified(verdicts, tmp_path, function, main,
                                                                       why):
    """h's `100 / d` is reached from mixed both directly (d = 1) and through a recursive
    call the model does not walk (d = 0 at depth 2); in in_region both directly and from a
    blocks region's lanes (d = t). The old model verified the guard from the walked call
    alone. Now it is unknown, naming the unwalked code, in every context that reaches it;
    a counterexample a walked run finds still stands (down)."""
    _, props = verdicts("unwalked")
    p = only(props, function, "division by zero", 3)
    assert p["verdict"] == "unknown" and why in p["reason"] and "does not walk" in p["reason"], p
    assert only(props, "down", "division by zero", 3)["verdict"] == "counterexample"
    r, _ = concrete(tmp_path, PROGRAMS / "unwalked.cairn", "fn main() -> i32 {\n  " + main + "\n}")
    assert traps_at(r, "division by zero: 100 / 0", 3, 22), r.stderr
