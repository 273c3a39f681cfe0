"""The pretty printer: print(parse(x)) parses back and prints the same text, checks the
same, and keeps the meaning that precedence gives."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from frontlib import CAIRN, check  # noqa: E402
from cairntest import run  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests/golden/check").glob("*.cairn")) + sorted((ROOT / "tests/frontend/spec").glob("*.cairn"))


def printed(path):
    return run([CAIRN, "check", "--print", path])


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_roundtrip(path, tmp_path):
    first = printed(path)
    if first.returncode != 0:
        assert first.returncode == 1 and "E-SYNTAX" in first.stderr
        return
    again = tmp_path / "again.cairn"
    again.write_text(first.stdout)
    second = printed(again)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    # The printed program is refused with the same codes (positions move: comments go).
    codes = lambda found: sorted(c for c, _, _ in found)
    assert codes(check(path)[1]) == codes(check(again)[1])


def test_precedence_is_kept(tmp_path):
    src = tmp_path / "p.cairn"
    src.write_text("fn f(a:i32, b:i32, c:i32, x:f64, n:usize, v:ro<f64>[n]) -> bool {\n"
                   "  let p = a - (b - c);\n  let q = (a - b) - c;\n  let r = -(a * b) + (c << (a & 3));\n"
                   "  let s = (reduce + for i in n yield v[i]) * x;\n"
                   "  return !(p == q) && (r > 0 || s < 1.0);\n}\n")
    out = printed(src).stdout
    assert "let p = a - (b - c);" in out
    assert "let q = a - b - c;" in out
    assert "let r = -(a * b) + (c << (a & 3));" in out
    assert "let s = (reduce + for i in n yield v[i]) * x;" in out
    assert "return !(p == q) && (r > 0 || s < 1.0);" in out
