"""The coordinator API's fuzz corpus (tests/fuzz/corpus_farm: the seeds, and every input
tests/fuzz/fuzz_farm.sh ever found that crashed, hung or leaked) replayed through the
fuzz target built with a plain main (fuzz_farm_replay): each input must come back with no
sanitizer report, and the seeds must still reach what they were written to reach. The
"#answer" inputs hold the parsers of the coordinator's answers (what agents and client
verbs read) to the types and bounds docs/farm.md gives, input by input."""
import json
import os
import pathlib
import re

import pytest

from cairntest import TBIN, run

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus_farm"


def replay(*paths, verbose=True):
    """Runs the inputs; with VERBOSE, stdout has a "METHOD PATH -> STATUS CODE" line per
    request (only the seeds: found inputs spell paths in arbitrary bytes)."""
    env = dict(os.environ, **({"FUZZ_FARM_VERBOSE": "1"} if verbose else {}))
    r = run([TBIN / "fuzz_farm_replay", *paths], timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    return r.stdout


def test_the_whole_corpus_replays_cleanly():
    inputs = [p for p in CORPUS.iterdir() if p.is_file()]
    assert len(inputs) >= 15
    out = replay(CORPUS, verbose=False)
    assert f"replayed {len(inputs)} inputs" in out


def test_a_job_is_claimed_heartbeated_and_its_signed_bundle_filed():
    lines = replay(CORPUS / "full_job").splitlines()
    upload = [l for l in lines if re.match(r"POST /api/v1/jobs/\d+/bundle -> ", l)]
    assert upload == [upload[0]] * 2 and upload[0].endswith("-> 200 "), lines
    for want in ("POST /api/v1/runs -> 201", "POST /api/v1/claim -> 200",
                 "GET /api/v1/status -> 200", "GET / -> 200"):
        assert any(l.startswith(want) for l in lines), (want, lines)


def test_refusals_carry_the_code_their_status_means():
    lines = [l for l in replay(CORPUS / "errors").splitlines() if " -> " in l][3:]  # after the set-up's three
    got = [l.split(" -> ")[1].split() for l in lines]
    assert got == [["404", "no_route"], ["405", "method_not_allowed"], ["401", "no_token"],
                   ["401", "unknown_agent"], ["400", "bad_json"], ["400", "bad_field"],
                   ["400", "bad_id"], ["400", "bad_id"], ["404", "not_found"],
                   ["404", "not_found"]], lines


def accepted(tmp_path, answer):
    """The parsers (farm/proto/api.c) that accept ANSWER, and the view rows they read."""
    path = tmp_path / "answer"
    path.write_text("#answer\n" + (answer if isinstance(answer, str) else json.dumps(answer)))
    [line] = [l for l in replay(path).splitlines() if l.startswith("answer:")]
    words = line.split()[1:]
    return set(words[:-1]), int(words[-1].split("=")[1])


def seed(name):
    return json.loads((CORPUS / name).read_text().split("\n", 1)[1])


@pytest.mark.parametrize("name,parser,rows", [
    ("answer_job", "job", 0), ("answer_enrolled", "enrolled", 0), ("answer_filed", "filed", 0),
    ("answer_error", "error", 0), ("answer_run_view", "run_view", 2),
    ("answer_status", "status", 3)])
def test_each_answer_is_read_by_its_own_parser_alone(tmp_path, name, parser, rows):
    assert accepted(tmp_path, seed(name)) == ({parser}, rows)


@pytest.mark.parametrize("change", [
    {"attempt": 1.5}, {"attempt": -1}, {"job": 0}, {"job": 1e300}, {"run": "2"},
    {"cell_id": "../x"}, {"cell_id": "a" * 129}, {"cell": []}, {"cases": []},
    {"cases": ["/etc/passwd"]}, {"cases": ["a/../../b"]}, {"cases": [7]},
    {"source": {"sha256": "ab", "size": 1}}, {"source": {"sha256": "ab" * 32, "size": -1}},
    {"timeout_s": "300"}, {"lease_seconds": float("nan")}])
def test_a_job_answer_outside_its_types_and_bounds_is_refused(tmp_path, change):
    text = json.dumps({**seed("answer_job"), **change}).replace("NaN", "1e999")
    assert accepted(tmp_path, text) == (set(), 0)


def test_view_rows_outside_their_bounds_are_skipped_one_by_one(tmp_path):
    view = seed("answer_run_view")
    view["jobs"][0]["attempt"] = 0.5
    assert accepted(tmp_path, view) == ({"run_view"}, 1)
    status = seed("answer_status")
    status["runs"][0]["queued"] = "x"
    status["events"][0]["kind"] = None
    assert accepted(tmp_path, status) == ({"status"}, 1)
    for bad in ({"lease_expires": 1, "cancel": "yes"}, {"agent": 0, "token": "t", "keyid": "ab" * 32,
                                                        "lease_seconds": 1}):
        assert accepted(tmp_path, bad) == (set(), 0)
    assert accepted(tmp_path, {"error": "x", "code": "no_such_code", "status": 409}) == (set(), 0)


def test_the_bounds_of_issue_24_are_reached_by_a_seed():
    """The seed "bounds" reaches each bound issue 24 added on the routes the target runs
    (its config sets them low): a body on a route that takes none, capabilities over
    max_capabilities_bytes, challenges over max_challenges_per_address, a file name over
    max_path_depth, files over max_bundle_inodes, statements about another farm, source
    or attempt, and a comparison over max_compare_observations (its page still 200)."""
    lines = [l for l in replay(CORPUS / "bounds").splitlines() if " -> " in l][3:]
    got = [" ".join(l.split(" -> ")[1].split()) for l in lines]
    assert got == ["413 too_large", "413 too_large", "400 bad_field", "200", "200", "200", "200",
                   "429 too_many_requests", "201", "200", "400 bad_field", "400 bad_field",
                   "409 replayed", "409 replayed", "409 replayed", "200", "200"], lines


def faults(fail_at):
    """tests/fuzz/corpus_farm/full_job (filing and comparison, through serve_route) with
    the FAIL_AT-th allocation after setup failing (fuzz_farm_faults): its stdout."""
    env = dict(os.environ, FUZZ_FARM_FAIL_AT=str(fail_at))
    r = run([TBIN / "fuzz_farm_faults", CORPUS / "full_job"], timeout=120, env=env)
    assert r.returncode == 0, (fail_at, r.stderr[-3000:])
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    return r.stdout


@pytest.mark.parametrize("every", [False, pytest.param(True, marks=pytest.mark.matrix)])
def test_every_allocation_failure_in_filing_and_comparison_is_an_error_value(every):
    """Issue 39, item 10: an allocation that fails anywhere in enrolling, filing a bundle
    and comparing its run (the coordinator's handlers, store and comparison, and the
    libraries under them) is answered as an error and the process goes on; the run's
    comparison is then not stored half made. Before, a failed calloc in util_nameset_add
    (the comparison's index of cases) crashed the coordinator, again at each restart, and
    a claim was answered 200 without its source digest or farm. Sampled here (41 points
    over the input's allocations); `make matrix` tries every one."""
    total = int(re.search(r"faults: (\d+) allocations", faults(0)).group(1))
    assert total > 1000
    step = 1 if every else max(1, total // 40)
    for n in range(1, total + 1, step):
        out = faults(n)
        assert "the chosen one failed" in out, (n, out)
