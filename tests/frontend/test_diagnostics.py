"""The diagnostic format (file:line:col: error[E-CODE]: message, the source line, a caret
run under the span, help:), several errors reported at once, and the limit."""
import pathlib
import re
import sys

import pytest

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


def test_while_names_the_loop_to_write(tmp_path):
    found, lines, path = lines_of(tmp_path, "fn main() -> i32 {\n  let mut k:i32 = 0;\n"
                                            "  while k < 3 { k += 1; }\n  return k;\n}\n")
    assert found == [("E-SYNTAX", 3, 3)]
    assert lines[0] == f"{path}:3:3: error[E-SYNTAX]: CAIRN has no while loop: write `for k in 0..K`"
    assert lines[3] == "  |   ^^^^^"
    assert lines[4].startswith("help: ") and "for k in 0..K" in lines[4]
    assert "explain" in lines[-1] and lines[-1].startswith("1 error")


def test_missing_semicolon_before_a_brace_is_on_its_statements_line(tmp_path):
    found, lines, path = lines_of(tmp_path, "fn main() -> i32 {\n  let mut x:i32 = 0;\n"
                                            "  x = 1\n}\n")
    assert found == [("E-SYNTAX", 3, 8)]
    assert lines[0] == f"{path}:3:8: error[E-SYNTAX]: expected ';', found '}}'"
    assert lines[2] == "3 |   x = 1" and lines[3] == "  |        ^"


def test_three_mistakes_are_three_errors(tmp_path):
    """Recovery at the next statement: in nested blocks, after a missing ';', after a bad
    expression, and across items; each mistake once, nothing invented between them."""
    src = ("fn a() -> i32 {\n"
           "  let x:i32 = (1;\n"                     # 2: ')' expected
           "  if x > 0 {\n"
           "    let y:i32 = x +;\n"                  # 4: an expression expected
           "    x = y\n"                             # 5: ';' expected (before '}')
           "  }\n"
           "  for i in 0..3 { let z = ; }\n"         # 7: an expression expected
           "  return x;\n"
           "}\n"
           "fn b( -> i32 = 1;\n"                     # 10: the item loop takes over
           "fn c() -> i32 { return 2; }\n")
    found, lines, _ = lines_of(tmp_path, src)
    assert [f[:2] for f in found] == [("E-SYNTAX", 2), ("E-SYNTAX", 4), ("E-SYNTAX", 5),
                                     ("E-SYNTAX", 7), ("E-SYNTAX", 10)]
    assert lines[-1].startswith("5 errors")


def test_a_mistake_inside_a_block_that_never_closes(tmp_path):
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n  let a:i32 = +;\n  return a;\n")
    assert [f[:2] for f in found] == [("E-SYNTAX", 2), ("E-SYNTAX", 4)]
    assert any("the block opened here" in line for line in lines)


def test_recovery_always_moves_on(tmp_path):
    """Garbage in every statement position ends, with a bounded list of errors."""
    body = "".join(f"  {junk}\n" for junk in [") ) )", "let", "} x {", "= = ;", "[", "1 +", ";;",
                                              "if {", "for in", "while", "{ } }"] * 20)
    found, lines, _ = lines_of(tmp_path, "fn main() -> i32 {\n" + body + "  return 0;\n}\n"
                               "fn ok() -> i32 = 1;\n")
    assert found and all(code == "E-SYNTAX" for code, _, _ in found)
    assert len(found) <= 50


def pty_stderr(args, env):
    """cairn's stderr when it is a terminal (a pseudo-terminal), with ENV set."""
    import os
    import pty
    import subprocess
    from frontlib import CAIRN
    master, slave = pty.openpty()
    full = dict(os.environ)
    full.pop("NO_COLOR", None)
    full.update(env)
    proc = subprocess.run([str(CAIRN), *map(str, args)], stderr=slave, stdout=subprocess.DEVNULL,
                          env=full, timeout=60)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.returncode, b"".join(chunks).decode()


ESC = "\x1b["


@pytest.fixture
def bad_file(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("fn main() -> i32 {\n  let x:i32 = 1\n  return y;\n}\n")
    return src


def test_color_always_never_and_plain_when_piped(bad_file):
    from frontlib import CAIRN
    from cairntest import run
    never = run([CAIRN, "check", "--color=never", bad_file])
    always = run([CAIRN, "check", bad_file, "--color=always"])
    piped = run([CAIRN, "check", bad_file])
    assert never.returncode == always.returncode == piped.returncode == 1
    assert ESC not in never.stderr and ESC not in piped.stderr and never.stderr == piped.stderr
    assert f"{ESC}1;31merror[E-SYNTAX]{ESC}0m" in always.stderr
    assert f"{ESC}1;31m^{ESC}0m" in always.stderr and f"{ESC}1;36mhelp{ESC}0m" in always.stderr
    # the colours are all it adds: without the escape sequences it is the plain text
    assert re.sub(r"\x1b\[[0-9;]*m", "", always.stderr) == never.stderr
    assert run([CAIRN, "check", "--color", bad_file]).stderr == always.stderr


@pytest.mark.parametrize("env,args,painted", [
    ({}, [], True),                                   # auto on a terminal
    ({"NO_COLOR": "1"}, [], False),                   # no-color.org
    ({"NO_COLOR": ""}, [], True),                     # set but empty: not a request
    ({"TERM": "dumb"}, [], False),
    ({"NO_COLOR": "1"}, ["--color=always"], True),    # the command line wins
    ({}, ["--color=never"], False),
    ({}, ["--color=auto"], True),
])
def test_color_on_a_terminal(bad_file, env, args, painted):
    env = {"TERM": "xterm", **env}
    rc, err = pty_stderr(["check", *args, bad_file], env)
    assert rc == 1 and "error[E-SYNTAX]" in err
    assert (ESC in err) == painted, err


def test_color_reaches_build_and_a_bad_value_is_refused(bad_file, tmp_path):
    from frontlib import CAIRN
    from cairntest import run
    built = run([CAIRN, "build", "--color=always", bad_file, "-o", tmp_path / "x"])
    assert built.returncode == 1 and ESC in built.stderr
    for cmd, status in (("check", 2), ("build", 2), ("run", 125)):
        r = run([CAIRN, cmd, "--color=sometimes", bad_file])
        assert r.returncode == status and r.stderr.count("\n") == 1, (cmd, r.stderr)
        assert "--color takes auto, always or never, not 'sometimes'" in r.stderr
    # after `--` a --color belongs to the program cairn run starts, not to cairn
    ok = tmp_path / "ok.cairn"
    ok.write_text("fn main() -> i32 { return 3; }\n")
    assert run([CAIRN, "run", ok, "--", "--color=sometimes"]).returncode == 3


def test_one_missing_brace_is_one_error_cause_first(tmp_path):
    """Issue 38: dropping one '}' in a 150-line file gave one 'expected an expression,
    found fn' per later function, the useful note last. A `fn` at column 1 closes what is
    open: one error, at the '{' still open, and the note names the next item."""
    fns = [f"fn g{k}(x:f64) -> f64 {{\n  let y:f64 = x * 2.0;\n  return y;\n}}\n" for k in range(30)]
    fns[3] = "fn g3(x:f64) -> f64 {\n  if x > 0.0 {\n    return x;\n  return 0.0;\n}\n"
    src = tmp_path / "f.cairn"
    src.write_text("".join(fns) + "fn main() -> i32 { let v:f64 = g3(1.0); return 0; }\n")
    assert len(src.read_text().splitlines()) > 120
    rc, found, err = check(src)
    assert rc == 1 and found == [("E-SYNTAX", 13, 21)], err
    lines = err.splitlines()
    assert "this '{' is not closed before line 18, where 'fn' starts the next item" in lines[0]
    assert "18:1: note: the next item starts here" in lines[4]


def test_a_syntax_error_hides_no_type_error(tmp_path):
    """docs/language.md: after a syntax error the items that parsed are still checked;
    the item the error abandoned is not (its name stays quiet where it is used)."""
    src = tmp_path / "f.cairn"
    src.write_text("const K:i32 = 3 +;\n"
                   "fn bad() -> i32 { let x:i32 = ; return x; }\n"
                   "fn g(a:f32) -> f64 { return a; }\n"
                   "fn main() -> i32 { return K + bad() + nope; }\n")
    rc, found, err = check(src)
    assert [f[:2] for f in found] == [("E-SYNTAX", 1), ("E-SYNTAX", 2), ("E-TYPE-MISMATCH", 3),
                                      ("E-UNKNOWN-NAME", 4)], err


@pytest.mark.parametrize("call,near", [("log(x)", "std.math.log"), ("sqroot(x)", "sqrt"),
                                       ("std.math.expp(x)", "std.math.exp"), ("std.cr.lg2(x)", "std.cr.log2")])
def test_did_you_mean_reaches_builtins_and_the_standard_library(tmp_path, call, near):
    """Issue 38: `log(x)` in fn lg suggested lg itself; sqroot, std.math.expp got nothing."""
    src = tmp_path / "f.cairn"
    src.write_text(f"fn lg(x:f64) -> f64 = {call};\n")
    rc, found, err = check(src)
    assert [f[0] for f in found] == ["E-UNKNOWN-NAME"], err
    assert f"help: a name that exists: {near}\n" in err


def test_a_type_keyword_as_a_function_name_says_it_is_a_type(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("fn f16(x:f32) -> f32 = x;\n")
    rc, found, err = check(src)
    assert found == [("E-SYNTAX", 1, 4)]
    assert "expected a function's name (f16 is a type), found 'f16'" in err


def test_observe_in_a_lane_says_how_to_observe_a_lane(tmp_path):
    src = tmp_path / "f.cairn"
    src.write_text("fn g(n:usize, x:ro<f32>[n]) {\n  parallel i in 0..n { observe(\"v\", x[i]); }\n}\n")
    rc, found, err = check(src)
    assert [f[0] for f in found] == ["E-PARALLEL-CALL"]
    assert "help: observe a lane's values through an array" in err and "sqrt" not in err


def test_an_unknown_command_gets_the_nearest_one():
    from cairntest import BIN, run
    r = run([BIN / "cairn", "chek", "x.cairn"])
    assert r.returncode == 2
    assert "unknown command 'chek': did you mean 'check'?" in r.stderr
    r = run([BIN / "cairn", "zzzzzz"])
    assert r.returncode == 2 and "did you mean" not in r.stderr


def test_explain_lane_race_shows_the_shifted_range():
    """Issue 38: y[i + 1] in a lane; the help and `cairn explain` shift the range."""
    from cairntest import BIN, run
    out = run([BIN / "cairn", "explain", "E-LANE-RACE"], check=True).stdout
    assert "parallel i in 0..n - 1 { y[i + 1] = x[i]; }" in out
    assert "parallel i in 1..n { y[i] = x[i - 1]; }" in out.split("Accepted:")[1]
