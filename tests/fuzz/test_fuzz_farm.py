"""The coordinator API's fuzz corpus (tests/fuzz/corpus_farm: the seeds, and every input
tests/fuzz/fuzz_farm.sh ever found that crashed, hung or leaked) replayed through the
fuzz target built with a plain main (fuzz_farm_replay): each input must come back with no
sanitizer report, and the seeds must still reach what they were written to reach."""
import os
import pathlib
import re

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
