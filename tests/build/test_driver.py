"""`cairn build` / `cairn run` as a user meets them: --help, one-line errors with exit 2
for a bad flag, a missing compiler or an unwritable output, exit 1 for a refused
program (cairn run: 125, 126, 127 and the program's own status, test_run_status.py),
--emit-c, a copy of the binary working from any folder (the runtime travels inside it),
and one list of link libraries for the host and the nvcc link."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import CAIRN, EXAMPLES, SAN_ENV, cairn
from cairntest import ROOT

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


# A C compiler and an nvcc that log their arguments (one JSON list a line) to LOG; the
# compiler then runs gcc, the nvcc writes a stand-in for its -o (so no CUDA toolkit is
# needed) and answers --version as nvcc does.
LOGGING_CC = """#!/usr/bin/python3
import json, os, sys
with open(os.environ["LINK_TEST_LOG"], "a") as f:
    f.write(json.dumps(["cc", *sys.argv[1:]]) + "\\n")
os.execvp("gcc", ["gcc", *sys.argv[1:]])
"""
FAKE_NVCC = """#!/usr/bin/python3
import json, os, sys
with open(os.environ["LINK_TEST_LOG"], "a") as f:
    f.write(json.dumps(["nvcc", *sys.argv[1:]]) + "\\n")
if sys.argv[1:] == ["--version"]:
    print("Cuda compilation tools, release 13.0, V13.0.88")
else:
    open(sys.argv[sys.argv.index("-o") + 1], "wb").write(b"stand-in")
"""


def link_tail(calls, tool, out):
    """What follows `-o OUT.tmp.PID` in the one call of tool that writes out: the libraries."""
    links = [c for c in calls if c[0] == tool and "-o" in c
             and c[c.index("-o") + 1].startswith(f"{out}.tmp.")]
    assert len(links) == 1, calls
    return links[0][links[0].index("-o") + 2:]


def test_host_and_nvcc_links_name_the_same_libraries(tmp_path):
    """The host link, the nvcc link (-Xcompiler passes a driver option such as -pthread
    to the host compiler nvcc runs) and both receipts name one list of libraries."""
    for name, text in (("cc", LOGGING_CC), ("nvcc", FAKE_NVCC)):
        (tmp_path / name).write_text(text)
        (tmp_path / name).chmod(0o755)
    log = tmp_path / "log"
    env = {"LINK_TEST_LOG": str(log), "CAIRN_NVCC": str(tmp_path / "nvcc"),
           "CAIRN_CACHE": str(tmp_path / "cache")}
    host, dev = tmp_path / "host", tmp_path / "dev"
    r = cairn("build", SOURCE, "--cc", tmp_path / "cc", "-o", host, env=env)
    assert r.returncode == 0, r.stderr
    r = cairn("build", ROOT / "tests/device/programs/wide.cairn", "--target", "sm_90",
              "--cc", tmp_path / "cc", "-o", dev, env=env)
    assert r.returncode == 0, r.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    receipts = [json.loads(pathlib.Path(f"{o}.receipt.json").read_text()) for o in (host, dev)]
    libs = receipts[0]["compiler"]["link"]
    assert "-lm" in libs and "-pthread" in libs
    assert receipts[1]["compiler"]["link"] == libs
    assert link_tail(calls, "cc", host) == libs
    nvcc_tail = link_tail(calls, "nvcc", dev)
    assert [a for a in nvcc_tail if a != "-Xcompiler"] == libs
    assert nvcc_tail[nvcc_tail.index("-pthread") - 1] == "-Xcompiler"


# A C compiler whose --version banner names NAME, logging each --version it answers.
BANNER_CC = """#!/usr/bin/python3
import os, sys
if sys.argv[1:] == ["--version"]:
    open(os.environ["BANNER_LOG"], "a").write("version\\n")
    print("gcc (NAME) 12.2.0")
else:
    os.execvp("gcc", ["gcc", *sys.argv[1:]])
"""


def test_a_cached_run_remembers_the_banner_until_the_compiler_changes(tmp_path):
    """Issue 33: a cached `cairn run` neither hashes cairn nor runs CC --version again;
    both are remembered under the file's identity (device, inode, size, mtime), so a
    compiler rewritten in place is asked again, and its new banner gives a new cache
    entry (the banner is part of the key)."""
    cc, log = tmp_path / "mycc", tmp_path / "log"
    cc.write_text(BANNER_CC.replace("NAME", "first"))
    cc.chmod(0o755)
    (tmp_path / "p.cairn").write_text("fn main() -> i32 { return 3; }\n")
    env = dict(os.environ, **SAN_ENV)
    env.update(CAIRN_CACHE=str(tmp_path / "cache"), BANNER_LOG=str(log))

    def run():
        r = subprocess.run([str(CAIRN), "run", "p.cairn", "--cc", str(cc)], cwd=tmp_path,
                           env=env, capture_output=True, text=True)
        assert r.returncode == 3, r.stderr
        return log.read_text().count("version")

    assert run() == 1 and run() == 1 and run() == 1
    assert len(list((tmp_path / "cache" / "bin").iterdir())) == 1
    cc.write_text(BANNER_CC.replace("NAME", "second"))  # a new size and mtime
    assert run() == 2 and run() == 2
    assert len(list((tmp_path / "cache" / "bin").iterdir())) == 2
    memos = sorted(p.read_text() for p in (tmp_path / "cache" / "memo").iterdir())
    assert len(memos) == 3  # cairn's digest, then each banner
    assert any(len(m) == 64 and all(c in "0123456789abcdef" for c in m) for m in memos)


def test_cairn_loads_libz3_only_to_verify(tmp_path):
    """Issue 33: libz3 (and the libstdc++ it needs) is not among cairn's NEEDED libraries,
    so no command but cairn verify pays for loading it; verify dlopens it and answers."""
    needed = subprocess.run(["readelf", "-d", str(CAIRN)], capture_output=True, text=True,
                            check=True).stdout
    assert "libcrypto" in needed and "libz3" not in needed and "libstdc++" not in needed
    (tmp_path / "v.cairn").write_text("fn f(x:i32) -> i32 = x / 2;\nfn main() -> i32 { return 0; }\n")
    r = cairn("verify", tmp_path / "v.cairn")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified" in r.stdout
