"""cairn verify: verdicts per property against programs whose answers are known.

Every counterexample is replayed: the replay program cairn verify writes is built and
run with `cairn run`, and must trap with the runtime's own message at the guard's line
and column (or exit 10/11 for an implementation that differs). So the Z3 model is held
to the built program, not to itself. Each of numerics.md's "cairn verify answers unknown
for ..." sentences has its own test."""
import json
import pathlib
import re
import sys

import pytest

from cairntest import BIN, ROOT, run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # verifylib.py
from verifylib import TRAPS, replay_text  # noqa: E402  the runtime's trap message for each property

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"
CAIRN = BIN / "cairn"

def verify(path, tmp_path, *args, timeout=1800):
    r = run([CAIRN, "verify", path, "--json", "--cex-dir", tmp_path / "cex", *args], timeout=timeout)
    assert r.returncode in (0, 5, 10), r.stderr
    props = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    return r.returncode, props


def of(props, function, prop=None):
    return [p for p in props if p["function"] == function and (prop is None or p["property"] == prop)]


@pytest.fixture(scope="module")
def guards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("guards")
    return verify(PROGRAMS / "guards.cairn", tmp)


BAD = [("bad_add", "integer overflow"), ("bad_div", "division by zero"), ("bad_div", "integer overflow"),
       ("bad_shl", "shift count out of range"), ("bad_shl", "integer overflow"),
       ("bad_index", "index out of bounds"), ("bad_convert", "integer conversion out of range"),
       ("bad_float_convert", "float to integer conversion out of range"),
       ("bad_scale", "quantize scale not positive and finite"), ("bad_scale", "quantize of NaN"),
       ("bad_e4m3", "f8e4m3 overflow"), ("bad_requires", "requires broken"),
       ("bad_extent", "view extent mismatch"), ("bad_sum", "integer overflow")]


@pytest.mark.parametrize("function,prop", BAD, ids=[f"{f}-{p}" for f, p in BAD])
def test_counterexample_replays_the_trap(guards, function, prop):
    rc, props = guards
    assert rc == 10
    found = of(props, function, prop)
    assert found and all(p["verdict"] == "counterexample" for p in found), found
    for p in found:
        replay = pathlib.Path(p["replay"])
        assert replay.exists() and p["inputs"] is not None
        r = run([CAIRN, "run", replay])
        line, col = p["at"].rsplit(":", 2)[1:]
        want = rf"^trap: {TRAPS[prop]} at {re.escape(str(replay))}:{line}:{col}$"
        assert r.returncode != 0 and re.search(want, r.stderr, re.M), (p, r.stderr)


OK = ["ok_add", "ok_div", "ok_shl", "ok_index", "ok_convert", "ok_float_convert", "ok_requires",
      "ok_extent", "ok_sum", "main"]


@pytest.mark.parametrize("function", OK)
def test_requires_makes_the_guards_verified(guards, function):
    _, props = guards
    found = of(props, function)
    assert found and all(p["verdict"] == "verified" for p in found), found


def test_guards_behind_unmodelled_values_still_verified(guards):
    """quantize's and f8e4m3's results are not modelled, but their guards are."""
    _, props = guards
    for fn, prop in [("ok_scale", "quantize scale not positive and finite"), ("ok_scale", "quantize of NaN"),
                     ("ok_e4m3", "f8e4m3 overflow")]:
        assert [p["verdict"] for p in of(props, fn, prop)] == ["verified"]
    assert [p["verdict"] for p in of(props, "ok_scale", "unmodelled construct")] == ["unknown"]


def test_loop_over_its_own_extent_is_verified_at_every_extent(guards):
    """`for i in 0..n { s += x[i]; }` over x of n elements: the index is proved for one
    arbitrary iteration (the inductive argument), so for every n, not "up to 8"."""
    _, props = guards
    idx = of(props, "bad_sum", "index out of bounds")
    assert [p["verdict"] for p in idx] == ["verified"]


def test_implements(tmp_path):
    rc, props = verify(PROGRAMS / "implements.cairn", tmp_path)
    assert rc == 10
    verdict = {p["function"]: p for p in props if p["property"] == "implements"}
    for fn in ["total_fast", "twice_fast", "same_div"]:
        assert verdict[fn]["verdict"] == "verified", verdict[fn]
    # a wrong implementation is caught, and its replay shows the difference
    for fn, code in [("total_wrong", 10), ("twice_wrong", 10), ("plus_zero", 10), ("fill_wrong", 11)]:
        p = verdict[fn]
        assert p["verdict"] == "counterexample", p
        r = run([CAIRN, "run", p["replay"]])
        assert r.returncode == code, (p, r.stdout, r.stderr)
    # -0.0 + 0.0 is +0.0: the inputs name the negative zero
    assert verdict["plus_zero"]["inputs"]["x"].endswith("(bits 0x80000000)")


def test_requires_traps_at_the_call_in_built_programs(tmp_path):
    src = tmp_path / "calls.cairn"
    src.write_text("fn half(n:u32) -> u32 requires n <= 100 = n / 2;\n"
                   "fn main() -> i32 {\n  let a = half(50);\n  return i32(half(a * 10));\n}\n")
    r = run([CAIRN, "run", src])
    assert r.returncode != 0
    assert f"trap: requires of half (line 1) does not hold at {src}:4:14" in r.stderr
    rc, props = verify(src, tmp_path)
    kept = {p["at"].split(":", 1)[1]: p["verdict"] for p in of(props, "main", "requires broken")}
    assert rc == 10 and kept == {"3:11": "verified", "4:14": "counterexample"}


# ---- unknown: one test for each of numerics.md's sentences ----

def unknown_reasons(props, function):
    return [p["reason"] for p in of(props, function) if p["verdict"] == "unknown"]


@pytest.fixture(scope="module")
def unknowns(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("unknown")
    return verify(PROGRAMS / "unknown.cairn", tmp, "--budget", "4000000", "--unwind", "4")


def test_unknown_for_a_storage_float(unknowns):
    """numerics.md: 'answers unknown for a function that uses a storage float'."""
    reasons = unknown_reasons(unknowns[1], "widen")
    assert reasons and all("storage float" in r for r in reasons)
    assert of(unknowns[1], "widen", "index out of bounds")[0]["verdict"] == "unknown"


def test_unknown_for_a_float_reduction_of_either_kind(unknowns):
    assert any("reduce for" in r for r in unknown_reasons(unknowns[1], "fold_for"))
    assert any("reduce parallel" in r for r in unknown_reasons(unknowns[1], "fold_parallel"))


def test_unknown_for_an_atomic_float_add(unknowns):
    """The reason is the builtin's and its ROUNDING row's (syntax/ops.def)."""
    why = "atomic_add_unordered (its order is the hardware's)"
    assert any(why in r for r in unknown_reasons(unknowns[1], "accumulate"))


def test_unknown_for_the_multiply(tmp_path):
    """numerics.md: 'cairn verify answers unknown for the multiply'."""
    rc, props = verify(PROGRAMS / "multiply.cairn", tmp_path)
    assert rc == 5 and any("mma_unordered" in r for r in unknown_reasons(props, "layer"))


def test_unwind_bounds_the_verdict(unknowns, tmp_path):
    """`c += 1` carries c from iteration to iteration: past --unwind nothing is claimed
    (a real overflow needs 2^31 positive elements); the index needs no unwinding."""
    counts = {p["property"]: p for p in of(unknowns[1], "count")}
    assert counts["integer overflow"]["verdict"] == "bounded" and counts["integer overflow"]["unwind"] == 4
    assert counts["index out of bounds"]["verdict"] == "verified"
    small = of(unknowns[1], "count_small")
    assert small and all(p["verdict"] == "verified" for p in small)
    rc, props = verify(PROGRAMS / "unknown.cairn", tmp_path, "--function", "count_small", "--unwind", "1")
    verdicts = {p["property"]: p for p in props}
    assert rc == 5 and verdicts["integer overflow"]["verdict"] == "bounded"
    assert verdicts["integer overflow"]["unwind"] == 1 and verdicts["index out of bounds"]["verdict"] == "verified"


def test_budget_is_honoured(tmp_path):
    """f64 multiplication commuted: too hard for a budget of 2000000 units, so unknown for
    the budget (the wall clock: test_deterministic.py)."""
    rc, props = verify(PROGRAMS / "unknown.cairn", tmp_path, "--function", "ratio_swapped", "--budget", "2000000")
    assert rc == 5 and props[0]["verdict"] == "unknown" and "solver's budget" in props[0]["reason"]


# ---- every spec program and example gets a verdict ----

def accepted_programs():
    progs = sorted((ROOT / "examples").glob("*.cairn"))
    progs += [p for p in sorted((ROOT / "tests/frontend/spec").glob("*.cairn")) if "refused" not in p.stem]
    return progs


@pytest.mark.parametrize("path", accepted_programs(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_function_gets_verdicts(path, tmp_path):
    r = run([CAIRN, "verify", path, "--budget", "8000000", "--cex-dir", tmp_path], timeout=1200)
    assert r.returncode in (0, 5, 10), r.stderr
    names = set(re.findall(r"^fn (\w+)", path.read_text(), re.M))
    for name in names:
        assert re.search(rf"^{name}: ", r.stdout, re.M), (name, r.stdout)
    summary = r.stdout.strip().splitlines()[-1]
    assert re.match(r"\d+ verified, \d+ verified up to 8 iterations, \d+ counterexamples, \d+ unknown", summary)
    # every counterexample replays (issue 22 item 9): its trap, at its place
    replay_text(r.stdout)


def test_usage_errors(tmp_path):
    assert run([CAIRN, "verify"]).returncode == 2
    assert run([CAIRN, "verify", PROGRAMS / "guards.cairn", "--unwind", "0"]).returncode == 2
    assert run([CAIRN, "verify", PROGRAMS / "guards.cairn", "--timeout", "soon"]).returncode == 2
    assert run([CAIRN, "verify", tmp_path / "missing.cairn"]).returncode == 2
    r = run([CAIRN, "verify", PROGRAMS / "guards.cairn", "--function", "nope"])
    assert r.returncode == 2 and "no function 'nope'" in r.stderr
    bad = tmp_path / "bad.cairn"
    bad.write_text("fn main() -> i32 { return 0.5; }\n")
    assert run([CAIRN, "verify", bad]).returncode == 1
    assert "cairn verify FILE" in run([CAIRN, "verify", "--help"]).stdout


def test_replay_folder_made_or_its_failure_told(tmp_path):
    """--cex-dir is made with its parents; where no replay can be written (the folder's
    parent is a file), the counterexample keeps its verdict and inputs, the output says
    why it has no replay, and the exit status is 2 (an I/O error), never 10 with a replay
    missing silently."""
    src = tmp_path / "add.cairn"
    src.write_text("fn add(a:i32, b:i32) -> i32 = a + b;\nfn main() -> i32 { return 0; }\n")
    deep = tmp_path / "a" / "b" / "c"
    r = run([CAIRN, "verify", src, "--function", "add", "--cex-dir", deep])
    assert r.returncode == 10, r.stderr
    assert replay_text(r.stdout) == 1
    assert [x.name for x in deep.iterdir()] == ["add_1_31_overflow_add.cairn"]
    blocker = tmp_path / "file"
    blocker.write_text("")
    for args in ([], ["--json"]):
        r = run([CAIRN, "verify", src, "--function", "add", "--cex-dir", blocker / "cex", *args])
        assert r.returncode == 2, (r.stdout, r.stderr)
        why = f"cannot create {blocker / 'cex'}: Not a directory"
        assert r.stderr == f"cairn verify: error: 1 replay program not written ({why})\n"
        if args:
            (p,) = [json.loads(line) for line in r.stdout.splitlines()]
            assert p["verdict"] == "counterexample" and "replay" not in p and p["replay_error"] == why
            assert set(p["inputs"]) == {"a", "b"}
        else:
            assert "counterexample" in r.stdout and f"    replay: not written: {why}\n" in r.stdout
            assert "replay: cairn run" not in r.stdout
