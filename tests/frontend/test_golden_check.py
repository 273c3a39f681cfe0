"""Golden tests: every tests/golden/check/*.cairn and tests/frontend/spec/*.cairn program
is checked against the codes and spans written in its comments (see frontlib.py)."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from frontlib import verdict  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests/golden/check").glob("*.cairn")) + sorted((ROOT / "tests/frontend/spec").glob("*.cairn"))


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_golden(path):
    result, message = verdict(path)
    if result == "later":
        pytest.xfail(message)
    assert result == "pass", message


def test_every_code_has_two_refused_and_one_accepted_golden():
    """At least two refused programs and one accepted program name each code."""
    import re
    from cairntest import BIN, run
    listing = run([BIN / "cairn", "explain", "--list"], check=True).stdout
    codes = [line.split()[0] for line in listing.splitlines()]
    golden = sorted((ROOT / "tests/golden/check").glob("*.cairn"))
    missing = []
    # Not the checker's: E-UNSUPPORTED is a build's refusal (test_explain_cli), and the
    # codes of files the commands read (compiler/file_codes.def) have scripts for
    # examples, run by test_explain_cli, and goldens in tests/golden/npy.
    files = set(re.findall(r'FILE_CODE\(\w+, "(E-[A-Z0-9-]+)"',
                           (ROOT / "compiler/file_codes.def").read_text()))
    assert files, "compiler/file_codes.def names no code: its rows' shape changed"
    for code in (c for c in codes if c != "E-UNSUPPORTED" and c not in files):
        stem = code[2:].lower().replace("-", "_")
        refused = [p for p in golden if re.search(rf"(//~|ERROR|EXPECT)\s*{code}\b", p.read_text())]
        accepted = [p for p in golden if p.stem.startswith(stem) and p.stem.endswith("_ok")]
        if len(refused) < 2 or not accepted:
            missing.append(f"{code}: {len(refused)} refused, {len(accepted)} accepted")
    assert not missing, "\n".join(missing)
