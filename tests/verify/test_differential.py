"""The differential harness (tests/verify/differential.py), bounded for `make test`:
verdicts attacked with concrete runs at boundary inputs and pool widths 1, 2 and 7, and
every counterexample replayed. Zero wrong verdicts. `make fuzz` runs it for longer
(tests/fuzz/fuzz_verify.sh). The harness is itself tested: a verdict flipped to
"verified" on a guard that traps must be caught."""
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import differential  # noqa: E402

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


def test_no_wrong_verdict(tmp_path, capsys):
    """One random program and four hand-written ones (cr.cairn: verdicts that rest on
    std.cr's range facts, attacked at NaN, the infinities and the other boundaries), six
    cases a function."""
    argv = ["--seeds", "1..1", "--cases", "6", "--keep", str(tmp_path), "--programs",
            str(PROGRAMS / "found.cairn"), str(PROGRAMS / "same_place.cairn"), str(PROGRAMS / "extents.cairn"),
            str(PROGRAMS / "cr.cairn")]
    rc = differential.main(argv)
    out = capsys.readouterr().out
    summary = json.loads(out.splitlines()[0])
    assert rc == 0 and summary["wrong"] == 0, out
    # it did attack something: verdicts, runs at every width, replays
    assert summary["programs"] == 5 and summary["properties"] > 30, summary
    assert summary["runs"] >= 3 * summary["builds"] - 3 and summary["replays"] > 5, summary
    assert summary["verdicts"].get("verified", 0) > 10 and summary["traps"] > 0, summary


def test_the_harness_catches_a_wrong_verdict(tmp_path):
    """extents.cairn's alloc traps "buffer too large" for n = 2^61: told that the guard is
    verified, the harness must call that wrong; told that a replay traps where it does
    not, likewise."""
    program = PROGRAMS / "extents.cairn"
    source = program.read_text()
    sig = differential.signatures(source)["alloc"]
    at = f"{program}:9:3"
    props = [{"function": "alloc", "property": "buffer too large", "title": "no buffer too large",
              "at": at, "verdict": "verified"}]
    tally = differential.Tally()
    differential.run_cases(tally, program, source, "alloc", sig, props, [{"n": 1 << 61}], tmp_path)
    assert tally.traps >= 1 and tally.traps_at_verified >= 1 and tally.wrong, tally.summary()
    # a replay that does not trap where its verdict says
    fake = tmp_path / "fake_replay.cairn"
    fake.write_text(source.replace("fn main() -> i32 { return 0; }",
                                   "fn main() -> i32 { return i32(alloc(4)); }"))
    tally = differential.Tally()
    differential.replay_all(tally, program, [dict(props[0], verdict="counterexample", replay=str(fake))])
    assert tally.wrong and tally.replays == 1, tally.summary()


def test_issue_35s_class_generators(tmp_path, capsys):
    """ClassGen's programs (tests/verify/differential.py): calls in loop bounds and buffer
    counts, blocks regions with calls in their shape, device NaN paths, atomics in pooled
    reductions, recursion, and helpers reading a neighbour. Today: no wrong verdict, and
    the races program is refused (E-LANE-RACE)."""
    rc = differential.main(["--seeds", "1..0", "--classes", "1..1", "--cases", "2", "--keep", str(tmp_path)])
    out = capsys.readouterr().out
    summary = json.loads(out.splitlines()[0])
    assert rc == 0 and summary["wrong"] == 0, out
    assert summary["programs"] == 1 and summary["refused"] == 1, summary
    assert summary["traps"] >= 4 and summary["replays"] >= 3, summary


def test_the_class_generators_trap_where_the_old_model_said_verified(tmp_path):
    """The old model (main at 6390c68) verified each class's guard; every generated class
    function (but the racing ones) traps on the harness's inputs, so told "verified" at
    the trap, as the old model said, the harness calls it wrong: the generators find the
    classes (`differential.py --classes` run with the old binary finds them too)."""
    source = differential.ClassGen(1).programs()[0]
    program = tmp_path / "classes1.cairn"
    program.write_text(source)
    r = differential.sh([differential.CAIRN, "verify", program, "--json", "--cex-dir", tmp_path / "cex"],
                        timeout=1800)
    assert r is not None and r.returncode in (0, 5, 10), r
    props = [dict(json.loads(line), verdict="verified") for line in r.stdout.splitlines() if line.strip()]
    sigs = differential.signatures(source)
    for stem, case in (("binder", {"n": 8}), ("grid", {"o": "zero"}), ("dnan", {"out": "zero"}),
                       ("mixed", {"k": 1})):
        fn = next(f for f in sigs if f.startswith(stem))
        tally = differential.Tally()
        case_list = [case, dict(case)]
        differential.run_cases(tally, program, source, fn, sigs[fn], props, case_list, tmp_path)
        assert tally.traps_at_verified >= 1, (fn, tally.summary(), tally.wrong)
