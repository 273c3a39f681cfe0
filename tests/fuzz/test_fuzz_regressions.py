"""Inputs that once crashed, hung or stressed the front end (tests/fuzz/crashes/): each
must come back as accepted or refused, quickly, with no sanitizer report."""
import pathlib

import pytest

from cairntest import BIN, run

CASES = sorted((pathlib.Path(__file__).resolve().parent / "crashes").glob("*"))


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_no_crash(path):
    r = run([BIN / "cairn", "check", path], timeout=20)
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr
    if r.returncode == 1:
        assert "error[E-" in r.stderr


def test_nesting_limit_is_a_syntax_error():
    r = run([BIN / "cairn", "check", CASES[0].parent / "deep_parens.cairn"])
    assert r.returncode == 1 and "error[E-SYNTAX]" in r.stderr and "nesting limit" in r.stderr
