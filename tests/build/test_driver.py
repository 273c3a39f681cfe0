"""`cairn build` / `cairn run` as a user meets them: --help, one-line errors with exit 2
for a bad flag, a missing compiler or an unwritable output, exit 1 for a refused
program (cairn run: 125, 126, 127 and the program's own status, test_run_status.py), --emit-c, and a copy of the binary working from any folder (the runtime
travels inside it)."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import CAIRN, EXAMPLES, SAN_ENV, cairn

SOURCE = EXAMPLES / "parallel_sum.cairn"


@pytest.mark.parametrize("command", ["build", "run"])
def test_help(command):
    result = cairn(command, "--help")
    assert result.returncode == 0 and result.stdout.startswith(f"usage: cairn {command} FILE")


@pytest.mark.parametrize("args,message", [
    (["build", SOURCE, "--bogus"], "unknown flag '--bogus'"),
    (["build", SOURCE, "-O7"], "unknown optimization flag '-O7'"),
    (["build", SOURCE, "--sanitize", "memory"], "--sanitize takes address,undefined or thread"),
    (["build", SOURCE, "--sanitize", "address,thread"], "--sanitize takes"),
    (["build", SOURCE, "--cc"], "--cc needs a value"),
    (["build", SOURCE, "--cc", "/nonexistent/cc"], "C compiler '/nonexistent/cc' not found"),
    (["build", SOURCE, "--cc", "no-such-cc-anywhere"], "C compiler 'no-such-cc-anywhere' not found"),
    (["build", SOURCE, "-o", "/nonexistent-dir/prog"], "cannot write /nonexistent-dir/prog"),
    (["build", "/nonexistent.cairn"], "cannot read /nonexistent.cairn"),
    (["build"], "no source file given"),
    (["run", SOURCE, "-o", "x"], "cairn run builds into its cache"),
    (["run", SOURCE, "--frobnicate"], "unknown flag '--frobnicate'"),
    (["build", SOURCE, "--target", "gfx90a"], "--target takes host or a CUDA architecture sm_NN"),
    (["build", SOURCE, "--target", "sm_9"], "--target takes host or a CUDA architecture sm_NN"),
    (["build", SOURCE, "--target", "sm_90", "--sanitize", "thread"], "add --emulate"),
])
def test_usage_errors_are_one_line_exit_2(args, message):
    """cairn build's usage errors exit 2; cairn run's own failures exit 125, a status a
    program's main is not taken for (env's and timeout's convention)."""
    result = cairn(*args)
    assert result.returncode == (125 if args[0] == "run" else 2), result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert lines[0].startswith(f"cairn {args[0]}: error: ")


def test_output_that_is_a_folder(tmp_path):
    result = cairn("build", SOURCE, "-o", tmp_path)
    assert result.returncode == 2 and "it is a folder" in result.stderr


def test_refused_program_exits_1_with_diagnostics(tmp_path):
    bad = tmp_path / "bad.cairn"
    bad.write_text("fn main() -> i32 { return x; }\n")
    result = cairn("build", bad, "-o", tmp_path / "bad")
    assert result.returncode == 1
    assert "error[E-UNKNOWN-NAME]" in result.stderr
    assert not (tmp_path / "bad").exists() and not (tmp_path / "bad.receipt.json").exists()


def test_program_without_main_is_refused(tmp_path):
    lib = tmp_path / "lib.cairn"
    lib.write_text("fn twice(x:f64) -> f64 = x * 2.0;\n")
    result = cairn("build", lib, "-o", tmp_path / "lib")
    assert result.returncode == 1 and "error[E-MAIN]" in result.stderr, result.stderr


def test_emit_c(tmp_path):
    result = cairn("build", SOURCE, "-o", tmp_path / "ps", "--emit-c", tmp_path / "c")
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "c" / "parallel_sum.c").read_text()
    assert '#include "cairn.h"' in text and "cairn_sum64" in text  # the exact sum (cairn_sum.h)


def test_binary_works_from_any_folder(tmp_path):
    """A copy of cairn, alone in a folder, builds and runs an example from another one."""
    lone = tmp_path / "bin"
    lone.mkdir()
    shutil.copy(CAIRN, lone / "cairn")
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(SOURCE, work / "p.cairn")
    env = dict(SAN_ENV, CAIRN_CACHE=str(tmp_path / "cache"))
    full = dict(os.environ, **env)
    built = subprocess.run([str(lone / "cairn"), "build", "p.cairn"], cwd=work, env=full,
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert (work / "p").exists() and (work / "p.receipt.json").exists()
    ran = subprocess.run([str(lone / "cairn"), "run", "p.cairn"], cwd=work, env=full,
                         capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    assert subprocess.run([str(work / "p")], env=full).returncode == 0
