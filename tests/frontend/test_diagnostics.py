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


# ---- issue 16: diagnostics to rustc's standard ----------------------------------------

def lines_of(tmp_path, text):
    src = tmp_path / "f.cairn"
    src.write_text(text)
    rc, found, err = check(src)
    assert rc == 1
    return found, err.splitlines(), str(src)


def test_misspelled_name_gets_the_nearest_name_in_scope(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  let sum:i32 = 1;\n"
                                         "  let total:i32 = 2;\n  return sun;\n}\n")
    assert found == [("E-UNKNOWN-NAME", 4, 10)]
    assert "help: a name that exists: sum" in lines


def test_misspelled_function_and_global_names(tmp_path):
    found, lines, _ = lines_of(tmp_path, "const LIMIT:i32 = 3;\nfn square(x:i32) -> i32 = x * x;\n"
                                         "fn main() -> i32 { return sqare(LIMTI); }\n")
    assert [f[0] for f in found] == ["E-UNKNOWN-NAME", "E-UNKNOWN-NAME"]
    assert "help: a name that exists: square" in lines
    assert "help: a name that exists: LIMIT" in lines


def test_a_name_far_from_every_name_gets_no_guess(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  let sum:i32 = 1;\n"
                                         "  return zebra;\n}\n")
    assert not any("a name that exists" in line for line in lines)
    assert "help: declare it before use" in lines


def test_a_name_out_of_scope_is_not_suggested(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  if true { let count:i32 = 1; }\n"
                                         "  return coun;\n}\n")
    assert not any("a name that exists" in line for line in lines)


def test_missing_semicolon_at_the_end_of_its_statement(tmp_path):
    found, lines, path = lines_of(tmp_path, "fn main() -> i32 {\n  let a:i32 = 1\n"
                                            "  let b:i32 = 2;\n  return a;\n}\n")
    assert found == [("E-SYNTAX", 2, 16)]
    assert lines[0] == f"{path}:2:16: error[E-SYNTAX]: expected ';', found 'let'"
    assert lines[2] == "2 |   let a:i32 = 1"
    assert lines[3] == "  | " + " " * 15 + "^"
    assert "help: add ';'" in lines


def test_unterminated_block_names_where_it_opened(tmp_path):
    found, lines, path = lines_of(tmp_path, "fn main() -> i32 {\n  let a:i32 = 1;\n  return a;\n")
    assert found == [("E-SYNTAX", 4, 1)]
    assert f"{path}:1:18: note: the block opened here" in lines
    note = lines.index(f"{path}:1:18: note: the block opened here")
    assert lines[note + 2] == "1 | fn main() -> i32 {"
    assert lines[note + 3] == "  | " + " " * 17 + "^"


def test_unterminated_comment_is_one_error(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  let a:i32 = 1; /* oops\n"
                                         "  return a;\n}\n")
    assert found == [("E-SYNTAX", 2, 18)]
    assert lines[-1].startswith("1 error")


def test_float_literal_needs_digits_after_the_point(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  let x:f64 = 2.;\n  return 0;\n}\n")
    assert found == [("E-SYNTAX", 2, 15)]
    assert any("a float literal needs digits after the point" in line for line in lines)
    assert "help: write 2.0" in lines


def test_range_after_an_integer_is_not_a_float(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("fn main() -> i32 {\n  for i in 2..5 { }\n  return 0;\n}\n")
    rc, found, err = check(src)
    assert rc == 0, err


def test_float_literal_where_an_integer_is_expected(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  let n:usize = 4.0;\n"
                                         "  let m:u8 = 2.5;\n  return 0;\n}\n")
    assert [f[0] for f in found] == ["E-TYPE-MISMATCH", "E-TYPE-MISMATCH"]
    assert "help: write the integer literal 4" in lines
    assert "help: a float converts with u8(2.5), truncating toward zero" in lines
    assert not any("i32(x)" in line for line in lines)
