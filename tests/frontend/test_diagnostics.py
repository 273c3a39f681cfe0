"""The diagnostic format (file:line:col: error[E-CODE]: message, the source line, a caret
run under the span, help:), several errors reported at once, and the limit."""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from frontlib import check  # noqa: E402


def test_format_caret_and_help(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("fn mean(a:bf16, b:bf16) -> bf16 = (a + b) / bf16(2.0);\n")
    rc, found, err = check(src)
    assert rc == 1 and found == [("E-OPERATOR", 1, 36)]
    lines = err.splitlines()
    assert lines[0] == f"{src}:1:36: error[E-OPERATOR]: '+' on the storage float bf16"
    assert lines[1] == "  |"
    assert lines[2] == "1 | fn mean(a:bf16, b:bf16) -> bf16 = (a + b) / bf16(2.0);"
    # the caret run sits under `a + b` exactly: column 36, five characters
    assert lines[3] == "  | " + " " * 35 + "^^^^^"
    assert lines[4].startswith("help: ") and "f32(x)" in lines[4]
    assert lines[-1].startswith("1 error")


def test_tabs_and_wide_gutters(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("\n" * 120 + "fn f() -> i32 {\n\treturn x;\n}\n")
    rc, found, err = check(src)
    assert found == [("E-UNKNOWN-NAME", 122, 9)]
    lines = err.splitlines()
    assert lines[2] == "122 |  return x;"          # a tab prints as one space: carets stay aligned
    assert lines[3] == "    |         ^"


def test_several_errors_reported_in_source_order(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text(
        "fn a() -> i32 { return nope; }\n"
        "fn b(x:f16) -> f16 = x * x;\n"
        "fn c() -> u8 { return 300; }\n"
        "fn d() -> i32 { let y:i32 = 1; y = 2; return y; }\n"
        "fn main() -> i32 { return a(1); }\n")
    rc, found, err = check(src)
    assert rc == 1
    assert [f[:2] for f in found] == [("E-UNKNOWN-NAME", 1), ("E-OPERATOR", 2), ("E-LITERAL-RANGE", 3),
                                      ("E-IMMUTABLE", 4), ("E-ARG-COUNT", 5)]
    assert err.splitlines()[-1].startswith("5 errors")


def test_syntax_errors_recover_at_the_next_item(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("fn a() -> i32 { return 1 }\nfn b( -> i32 = 2;\nfn c() -> i32 = 3 +;\nfn d() -> i32 = 4;\n")
    rc, found, err = check(src)
    assert [f[:2] for f in found] == [("E-SYNTAX", 1), ("E-SYNTAX", 2), ("E-SYNTAX", 3)]
    assert "expected ';', found '}'" in err


def test_error_limit(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("".join(f"fn g{i}() -> i32 = missing{i};\n" for i in range(300)))
    rc, found, err = check(src)
    assert rc == 1 and len(found) == 50
    assert re.search(r"\.\.\. and 250 more errors not shown", err)
    assert err.splitlines()[-1].startswith("300 errors")


def test_unsupported_is_reported_only_alone(tmp_path):
    """A deferred E-UNSUPPORTED never hides, or is mixed with, a real error."""
    src = tmp_path / "f.cairn"
    src.write_text("fn f(n:usize, x:rw<f32>[n]@device) { parallel i in n { x[i] = 0.0; } }\n"
                   "fn g() -> i32 { return 1.5; }\n")
    rc, found, err = check(src)
    assert [c for c, _, _ in found] == ["E-TYPE-MISMATCH"]
