"""Help lines that propose code are applied: following a help must never lead to the same
error again (issue 38: "write f32(...) on one side" narrowed the wrong side and failed the
assignment next; "write f16(1.0)" gave E-OPERATOR).

A golden whose help proposes code carries the fix, as a comment
  // FIX L: the fixed line L
This test substitutes every fix into its program and requires `cairn check` to accept it
or to refuse it only with other codes (never the fixed one on that line). A help proposes
code when it matches PROPOSES; such a help needs a FIX in its golden, and where the help
writes the code out in full (after "exactly:", "in f32:", "you mean:", or "add `code`", "with `code`"),
the fix must contain that code verbatim, so the test applies the help itself."""
import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from frontlib import check  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests/golden/check").glob("*.cairn")) + sorted((ROOT / "tests/frontend/spec").glob("*.cairn"))
DIAG = re.compile(r"^[^\n:]+:(?P<line>\d+):\d+: error\[(?P<code>E-[A-Z0-9-]+)\]: .*?^help: (?P<help>.*?)$",
                  re.M | re.S)
# help lines that propose code to write, with the code written out in group 1 when it is
PROPOSES = re.compile(r"(?:exactly|in f32|you mean): (.+)$|range instead \(|(?:add|with) `([^`]+)`|`|convert explicitly: |on one side|"
                      r"write the conversion|float literal with a point|converts with ")
FIX = re.compile(r"^\s*//\s*FIX\s+(\d+):\s?(.*)$", re.M)


def diagnostics(path):
    """[(code, line, help)] of cairn check on path (the help of each error, or '')."""
    _, _, err = check(path)
    out = []
    for block in re.split(r"(?m)^(?=[^\n:|]+:\d+:\d+: error\[)", err):
        m = DIAG.match(block)
        if m:
            out.append((m["code"], int(m["line"]), m["help"].strip()))
    return out


def fixes(path):
    return {int(m[1]): m[2] for m in FIX.finditer(path.read_text())}


def proposals():
    """(path, code, line, help, written-out code or None) for each help that proposes code."""
    for path in CASES:
        for code, line, help_ in diagnostics(path):
            m = PROPOSES.search(help_)
            if m:
                yield path, code, line, help_, (m[1] or m[2] or None)


PROPOSALS = list(proposals())


def test_the_three_helps_of_issue_38_are_among_them():
    """Each writes its fix out in full (f64(x[i]), f32(x[i]) > 0.0, let mut s:f32 = 0.0;)."""
    written = {p.stem for p, _, _, _, code in PROPOSALS if code}
    assert {"type_mismatch_widen", "operator_storage_literal", "type_mismatch_defaulted_let"} <= written


@pytest.mark.parametrize("case", PROPOSALS, ids=[f"{p.stem}:{line}" for p, _, line, _, _ in PROPOSALS])
def test_the_help_is_applied(case, tmp_path):
    path, code, line, help_, written = case
    fix = fixes(path)
    # the fix sits on the diagnostic's line, or (a note's fix, as a let) on another one
    assert fix, f"{path.name}:{line}: help '{help_}' proposes code, but the golden has no // FIX"
    if written:
        want = written.rstrip(";").strip()
        assert any(want in text for text in fix.values()), \
            f"{path.name}:{line}: no // FIX writes the help's code '{want}'"
    lines = path.read_text().splitlines()
    for n, text in fix.items():
        lines[n - 1] = re.sub(r"\S.*", lambda _: text, lines[n - 1], count=1)
    fixed = tmp_path / path.name
    fixed.write_text("\n".join(lines) + "\n")
    rc, found, err = check(fixed)
    assert rc in (0, 1), err
    assert (code, line) not in [(c, l) for c, l, _ in found], f"the fix did not move the error:\n{err}"
    assert rc == 0 or found, err


def test_every_fix_names_a_line_with_an_error():
    """A // FIX that fixes nothing is a stale annotation."""
    for path in CASES:
        lines = {line for _, line, _ in diagnostics(path)}
        for n in fixes(path):
            near = {n} | {line for line in lines if abs(line - n) <= 4}
            assert near & lines, f"{path.name}: // FIX {n} is not near an error"
