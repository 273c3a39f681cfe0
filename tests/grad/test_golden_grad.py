"""The refusal goldens of derive grad (tests/golden/grad/*.cairn), read by the front end's
golden driver (tests/frontend/frontlib.py: `//~ E-CODE` on the line it is reported at).
Accepted goldens with a main also run and must return 0: their mains check the
gradients they compute against values worked by hand."""
import pathlib
import re
import sys

import pytest

from cairntest import ROOT, cairn_cell_flags
from gradlib import cairn

sys.path.insert(0, str(ROOT / "tests" / "frontend"))
from frontlib import expectations, verdict  # noqa: E402  (the front end's driver)

GOLDEN = sorted((ROOT / "tests" / "golden" / "grad").glob("*.cairn"))
CODES = ["E-GRAD", "E-GRAD-FORM", "E-GRAD-CALL", "E-GRAD-RACE"]


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_golden(path):
    result, message = verdict(path)
    assert result == "pass", message
    expected, _ = expectations(path)
    if not expected and "fn main()" in path.read_text():
        proc = cairn("run", *cairn_cell_flags(), path, timeout=240)
        assert proc.returncode == 0, f"{path.name} exited {proc.returncode}\n{proc.stderr}"


@pytest.mark.parametrize("code", CODES)
def test_every_code_has_two_refused_and_one_accepted(code):
    stem = code[2:].lower().replace("-", "_")
    refused = [p for p in GOLDEN if any(c == code for c, _, _ in expectations(p)[0])]
    accepted = [p for p in GOLDEN if p.stem.startswith(stem) and p.stem.endswith("_ok")
                and not expectations(p)[0]]
    assert len(refused) >= 2 and accepted, (code, refused, accepted)


def test_spec_race_example_refused_with_exactly_that_code():
    path = ROOT / "tests" / "golden" / "grad" / "grad_race_spec.cairn"
    proc = cairn("check", path)
    codes = re.findall(r"error\[(E-[A-Z-]+)\]", proc.stderr)
    assert proc.returncode == 1 and codes == ["E-GRAD-RACE"], proc.stderr
    assert "read x at [i] in the region, or differentiate a sequential loop" in proc.stderr


def test_every_refusal_has_a_help_line():
    for path in GOLDEN:
        if expectations(path)[0]:
            proc = cairn("check", path)
            assert "\nhelp: " in proc.stderr, f"{path.name}: no help line\n{proc.stderr}"
