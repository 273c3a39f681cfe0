"""Helpers for the front end's tests: run `cairn check`, read its diagnostics, and read
the expectations written in a test program's comments.

Expectation syntax (lit / rustc-UI style), in `//` comments of a .cairn file:
  //~ E-CODE               an error with this code on this same line
  // ERROR E-CODE at L:C   an error with this code at line L, column C
  // EXPECT E-CODE ...     an error with this code, anywhere
  // LATER E-CODE ...      until a later issue lands, the program is refused with exactly
                           this code instead (the test is then an expected failure)
A file with no ERROR/EXPECT/~ expectation must be accepted.
"""
import pathlib
import re

from cairntest import BIN, run

CAIRN = BIN / "cairn"
DIAG_RE = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>E-[A-Z0-9-]+)\]: ", re.M)


def check(path, *extra):
    """Runs cairn check on path; returns (exit status, [(code, line, col)], stderr)."""
    r = run([CAIRN, "check", *extra, str(path)], timeout=60)
    found = [(m["code"], int(m["line"]), int(m["col"])) for m in DIAG_RE.finditer(r.stderr)]
    return r.returncode, found, r.stderr


def expectations(path):
    """(expected: [(code, line or None, col or None)], later: code or None)."""
    expected, later = [], None
    for n, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        for m in re.finditer(r"//~\s*(E-[A-Z0-9-]+)", line):
            expected.append((m[1], n, None))
        m = re.search(r"//\s*ERROR\s+(E-[A-Z0-9-]+)\s+at\s+(\d+):(\d+)", line)
        if m:
            expected.append((m[1], int(m[2]), int(m[3])))
        m = re.search(r"//\s*EXPECT\s+(E-[A-Z0-9-]+)", line)
        if m:
            expected.append((m[1], None, None))
        m = re.search(r"//\s*LATER\s+(E-[A-Z0-9-]+)", line)
        if m:
            later = m[1]
    return expected, later


def matches(expected, found):
    """Whether the found diagnostics are exactly the expected ones (a multiset match)."""
    left = list(found)
    for code, line, col in expected:
        for i, (fc, fl, fcol) in enumerate(left):
            if fc == code and (line is None or fl == line) and (col is None or fcol == col):
                del left[i]
                break
        else:
            return False
    return not left


def verdict(path):
    """Returns ("pass" | "later" | "fail", message) for one test program."""
    expected, later = expectations(path)
    rc, found, stderr = check(path)
    if rc not in (0, 1):
        return "fail", f"exit {rc}\n{stderr}"
    if rc == 0 and found:
        return "fail", f"accepted yet printed errors\n{stderr}"
    if rc == 1 and not found:
        return "fail", f"refused without a diagnostic\n{stderr}"
    if matches(expected, found):
        return "pass", ""
    if later and found and all(code == later for code, _, _ in found):
        return "later", f"refused with {later} until its issue lands"
    return "fail", f"expected {expected}, found {found}\n{stderr}"
