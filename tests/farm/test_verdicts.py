"""Verdicts of `cairn-farm compare` against hand-computed cases (docs/farm.md, "Verdicts").

Each case is a results file written here by hand: cells with digests, receipts'
unordered flags, measured bounds and checks, and the verdict the spec's table gives
(numerics.md, "Emulated device runs"). compare reads it offline (`compare FILE`), the
same code the coordinator's pages and `compare RUN` use."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import FARM  # noqa: E402

A, B = "a" * 64, "b" * 64


def obs(name, sha, type_="f64", count=1):
    return {"name": name, "type": type_, "count": count, "sha256": sha}


def case(name, observations, unordered=False, bounds=None, exit_status=0, checks=None,
         build_status=0, trap=None):
    c = {"case": name, "build_status": build_status, "exit_status": exit_status,
         "unordered": unordered, "observations": observations,
         "checks": [{"name": "build", "ok": build_status == 0},
                    {"name": "exit_status_0", "ok": exit_status == 0},
                    {"name": "no_trap", "ok": trap is None}] + (checks or []),
         "bounds": bounds or []}
    if trap:
        c["trap"] = trap
    return c


def bound(name, ratio):
    return {"observation": name, "ratio": ratio, "ok": ratio <= 1, "promise": "the test's bound"}


def compare(tmp_path, *cells):
    """cells: lists of case dicts, one list per column (machine m, cells emulated/device...)."""
    results = [{"machine": "m", "cell_id": f"cell{i}", "predicate": {"cases": cases}}
               for i, cases in enumerate(cells)]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    r = subprocess.run([FARM, "compare", path, "--json"], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    return r.returncode, {c["case"]: c for c in report["cases"]}, report


def test_identical_names_the_fixed_bits_promise(tmp_path):
    rc, rows, report = compare(tmp_path, [case("k", [obs("x", A)])], [case("k", [obs("x", A)])])
    assert rc == 0 and rows["k"]["verdict"] == "identical"
    assert "fixed bits" in rows["k"]["promise"]
    assert report["counts"]["identical"] == 1 and report["ok"] is True


def test_fixed_bits_that_differ_fail_the_run(tmp_path):
    rc, rows, _ = compare(tmp_path, [case("k", [obs("x", A)])], [case("k", [obs("x", B)])])
    assert rc == 1 and rows["k"]["verdict"] == "differs-where-fixed"
    assert rows["k"]["observations"][0]["digests"] == {"m/cell0": A, "m/cell1": B}


def test_unordered_and_measured_in_every_cell_is_within_bound_with_the_worst_ratio(tmp_path):
    rc, rows, _ = compare(tmp_path,
                          [case("k", [obs("acc", A)], True, [bound("acc", 0.25)])],
                          [case("k", [obs("acc", B)], True, [bound("acc", 0.5)])])
    assert rc == 0 and rows["k"]["verdict"] == "within-bound"
    assert rows["k"]["error_over_bound"] == 0.5 and rows["k"]["promise"] == "the test's bound"


def test_a_measured_ratio_over_one_violates_the_contract(tmp_path):
    rc, rows, _ = compare(tmp_path,
                          [case("k", [obs("acc", A)], True, [bound("acc", 0.25)])],
                          [case("k", [obs("acc", B)], True, [bound("acc", 1.5)])])
    assert rc == 1 and rows["k"]["verdict"] == "violates-contract"
    assert rows["k"]["error_over_bound"] == 1.5


def test_a_violation_counts_even_where_bits_agree(tmp_path):
    cells = [case("k", [obs("acc", A)], True, [bound("acc", 2.0)])] * 2
    rc, rows, _ = compare(tmp_path, *[[c] for c in cells])
    assert rc == 1 and rows["k"]["verdict"] == "violates-contract"


def test_unordered_but_unmeasured_differences_are_no_evidence_not_agreement(tmp_path):
    rc, rows, report = compare(tmp_path,
                               [case("k", [obs("acc", A)], True, [bound("acc", 0.25)])],
                               [case("k", [obs("acc", B)], True)])
    assert rc == 0 and rows["k"]["verdict"] == "no-evidence"
    assert report["counts"]["no-evidence"] == 1 and report["counts"]["identical"] == 0


def test_a_case_that_observes_nothing_is_no_evidence(tmp_path):
    rc, rows, _ = compare(tmp_path, [case("k", [])], [case("k", [])])
    assert rc == 0 and rows["k"]["verdict"] == "no-evidence"
    assert rows["k"]["detail"] == "the case observes nothing"


def test_an_observation_missing_in_one_cell_differs_where_fixed(tmp_path):
    rc, rows, _ = compare(tmp_path, [case("k", [obs("x", A), obs("y", A)])],
                          [case("k", [obs("x", A)])])
    assert rc == 1 and rows["k"]["verdict"] == "differs-where-fixed"


def test_exit_statuses_that_differ_are_differs_where_fixed(tmp_path):
    rc, rows, _ = compare(tmp_path, [case("k", [obs("x", A)])],
                          [case("k", [obs("x", A)], exit_status=134, trap="trap: overflow")])
    assert rc == 1 and rows["k"]["verdict"] == "differs-where-fixed"
    assert "guard" in rows["k"]["promise"]


def test_the_same_failure_everywhere_violates_the_clean_run_promise(tmp_path):
    rc, rows, _ = compare(tmp_path, [case("k", [], build_status=1)], [case("k", [], build_status=1)])
    assert rc == 1 and rows["k"]["verdict"] == "violates-contract"


def test_a_failed_contract_check_violates_the_contract(tmp_path):
    bad = [{"name": "bracket_holds", "ok": False}]
    rc, rows, _ = compare(tmp_path, [case("k", [obs("x", A)], checks=bad)], [case("k", [obs("x", A)])])
    assert rc == 1 and rows["k"]["verdict"] == "violates-contract"
    assert rows["k"]["detail"] == "bracket_holds"


def test_repeated_names_are_matched_by_occurrence(tmp_path):
    rc, rows, _ = compare(tmp_path, [case("k", [obs("x", A), obs("x", A)])],
                          [case("k", [obs("x", A), obs("x", B)])])
    assert rc == 1 and rows["k"]["verdict"] == "differs-where-fixed"
    verdicts = {o["observation"]: o["verdict"] for o in rows["k"]["observations"]}
    assert verdicts == {"x": "identical", "x#2": "differs-where-fixed"}


def test_the_worst_observation_decides_the_case(tmp_path):
    rc, rows, _ = compare(
        tmp_path,
        [case("k", [obs("acc", A), obs("n", A)], True, [bound("acc", 0.1)])],
        [case("k", [obs("acc", B), obs("n", B)], True, [bound("acc", 0.2)])])
    # acc is measured; n differs in an unordered program and nobody measured it.
    verdicts = {o["observation"]: o["verdict"] for o in rows["k"]["observations"]}
    assert verdicts == {"acc": "within-bound", "n": "no-evidence"}
    assert rc == 0 and rows["k"]["verdict"] == "no-evidence"


def test_text_table_names_promises_and_the_failure(tmp_path):
    results = [{"machine": "m", "cell_id": f"c{i}", "predicate": {"cases": [case("k", [obs("x", s)])]}}
               for i, s in enumerate((A, B))]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(results))
    r = subprocess.run([FARM, "compare", path], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "differs-where-fixed" in r.stdout and "fixed bits" in r.stdout
    assert "compare: FAILED" in r.stdout


def test_unreadable_results_are_refused(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{")
    r = subprocess.run([FARM, "compare", path], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "cairn-farm compare:" in r.stderr


def test_a_declared_fixed_observation_in_an_unordered_case_must_keep_its_bits(tmp_path):
    declared = case("k", [obs("n", A)], True)
    declared["fixed"] = ["n"]
    other = case("k", [obs("n", B)], True)
    rc, rows, _ = compare(tmp_path, [declared], [other])
    assert rc == 1 and rows["k"]["verdict"] == "differs-where-fixed"


def test_a_status_out_of_range_is_a_failed_case_not_a_cast(tmp_path):
    """A results file (or a bundle filed before uploads were bounded) may carry a status no
    int holds: compare reads it as malformed (a failed build) instead of casting 1e300."""
    bad = case("k", [obs("x", A)])
    bad["build_status"] = 1e300
    rc, rows, _ = compare(tmp_path, [bad], [case("k", [obs("x", A)])])
    assert rc == 1 and rows["k"]["verdict"] != "identical"
    bad = case("k", [obs("x", A)])
    bad["exit_status"] = -1e300
    rc, rows, _ = compare(tmp_path, [bad], [case("k", [obs("x", A)])])
    assert rc == 1 and rows["k"]["verdict"] != "identical"
