"""The frozen bracket GEMM case set (tests/data/enclose): one committed SHA-256 of the
results, reproduced by the runtime at every pool width, by the other compiler, and by
the standalone checker that has no floating point; and the checker's own promises.
"""
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import BIN, CC, ROOT, SAN, harness, run  # noqa: E402
from enclose_model import (check_bracket, parse_results)  # noqa: E402

DATA = ROOT / "tests" / "data" / "enclose"
CASES = DATA / "cases.txt"
DIGEST = (DATA / "cases.sha256").read_text().split()[0]
CHECKER_SRCS = ["tools/enclose_check.c", "tools/enclose_casefile.c", "runtime/cairn_enclose.c"]
NOFP_FLAGS = ["-mgeneral-regs-only", "-DCAIRN_ENCLOSE_NO_SIMD", "-DCAIRN_ENCLOSE_SERIAL",
              "-DCAIRN_ENCLOSE_BITS_ONLY"]
STRICT = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
          "-fno-fast-math", "-D_GNU_SOURCE", "-Iruntime"]
OTHER_CC = "clang" if CC == "gcc" else "gcc"


def runtime_digest(threads, kernel=None, path=None):
    env = {"CAIRN_THREADS": str(threads)}
    if kernel:
        env["CAIRN_ENCLOSE_KERNEL"] = kernel
    out = run([path or harness("enclose_run"), "--digest", CASES], env=env, check=True)
    return out.stdout.split()[1]


def checker_digest(checker, tmp_path):
    out = tmp_path / "out.bin"
    run([checker, CASES, out], check=True)
    return hashlib.sha256(out.read_bytes()).hexdigest()


def test_frozen_cases_are_contained_and_tight_where_lossless():
    from enclose_model import Case
    text = CASES.read_text().split()
    cases, pos = [], 0
    while pos < len(text):  # the case file, read independently of the C reader
        _, name, fmt, m, n, k = text[pos:pos + 6]
        m, n, k, width = int(m), int(n), int(k), int(fmt[1:])
        a = [int(x, 16) for x in text[pos + 7:pos + 7 + m * k]]
        pos += 7 + m * k
        b = [int(x, 16) for x in text[pos + 1:pos + 1 + k * n]]
        pos += 1 + k * n
        cases.append(Case(name, width, m, n, k, a, b))
    results = parse_results(run([harness("enclose_run"), CASES], check=True).stdout)
    assert len(results) == len(cases) == 11
    for case, r in zip(cases, results):
        check_bracket(case, r, tight=bool(r["tight"]))
    assert sum(r["tight"] for r in results) >= 8


@pytest.mark.parametrize("threads", [1, 2, 3, 4, 7, 8, 13, 16])
def test_digest_is_the_committed_one_at_every_pool_width(threads):
    assert runtime_digest(threads) == DIGEST


def test_scalar_kernel_digest():
    assert runtime_digest(3, kernel="scalar") == DIGEST


def test_standalone_checker_digest(tmp_path):
    assert checker_digest(BIN / "enclose_check", tmp_path) == DIGEST


def compile_with(cc, sources, out, extra, libs=()):
    if not shutil.which(cc):
        pytest.skip(f"{cc} is not installed")
    proc = subprocess.run([cc] + STRICT + extra + sources + ["-o", str(out)] + list(libs),
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_other_compiler_gives_the_same_digest(tmp_path):
    """This cell's CC built the harness above; the other compiler builds the runtime
    path (pool, IFMA or scalar kernel) and the checker here, from the same sources."""
    run_exe = tmp_path / "enclose_run"
    compile_with(OTHER_CC, ["tests/c/enclose_run.c", "tools/enclose_casefile.c",
                            "runtime/cairn_enclose.c", "runtime/cairn_enclose_x86.c",
                            "runtime/cairn_enclose_amx.c",
                            "runtime/cairn_enclose_residue.c", "runtime/cairn_enclose_digest.c",
                            "runtime/cairn_pool.c"], run_exe,
                 ["-pthread"], ["-lcrypto"])
    assert runtime_digest(4, path=run_exe) == DIGEST
    out = run([run_exe, "--residue", "--digest", CASES], check=True)
    assert out.stdout.split()[1] == DIGEST
    checker = tmp_path / "enclose_check"
    compile_with(OTHER_CC, CHECKER_SRCS, checker, NOFP_FLAGS)
    assert checker_digest(checker, tmp_path) == DIGEST


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_checker_code_has_no_floating_point(cc, tmp_path):
    """The checker's objects use no vector, SSE or x87 register or instruction, and no
    floating type survives preprocessing of its own sources."""
    for src in CHECKER_SRCS:
        obj = tmp_path / (pathlib.Path(src).stem + ".o")
        compile_with(cc, ["-c", src], obj, NOFP_FLAGS)
        dis = run(["objdump", "-d", "--no-show-raw-insn", obj], check=True).stdout
        bad = [line for line in dis.splitlines()
               if re.search(r"%[xyz]mm|%st\b|%st\(|\bf(ld|st|add|mul|div|sub|ild|istp)\w*\s",
                            line)]
        assert not bad, f"{src}: floating-point code:\n" + "\n".join(bad[:5])
        pre = subprocess.run([cc] + STRICT + NOFP_FLAGS + ["-E", src], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        ours, own = [], False
        for line in pre.splitlines():
            marker = re.match(r'# \d+ "([^"]+)"', line)
            if marker:
                own = not marker.group(1).startswith("/")
            elif own:
                ours.append(line)
        assert not re.search(r"\b(float|double)\b", "\n".join(ours)), src


def test_checker_refuses_bad_input(tmp_path):
    checker = BIN / "enclose_check"
    assert run([checker, "--help"]).returncode == 0
    bad = tmp_path / "bad.txt"
    bad.write_text("case x f64 1 1 2\na 3ff0000000000000 zz\nb 0 0\n")
    proc = run([checker, bad, tmp_path / "out.bin"])
    assert proc.returncode == 1 and "line 2" in proc.stderr and "hex" in proc.stderr
    nan = tmp_path / "nan.txt"
    nan.write_text("case n f64 1 1 1\na 7ff8000000000000\nb 3ff0000000000000\n")
    proc = run([checker, nan, tmp_path / "out.bin"])
    assert proc.returncode == 1 and "NaN or infinite" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("src", ["runtime/cairn_enclose.c", "runtime/cairn_enclose_x86.c",
                                 "runtime/cairn_enclose_amx.c"])
def test_runtime_core_has_no_floating_point_arithmetic(src, tmp_path):
    """The runtime's own objects, as the library builds them (IFMA and ADX kernels
    included), move data through vector registers but perform no floating-point
    operation."""
    obj = tmp_path / "enclose.o"
    compile_with(CC, ["-c", src], obj, [])
    dis = run(["objdump", "-d", "--no-show-raw-insn", obj], check=True).stdout
    # bitwise xorps/andps (clang zeroes registers so) are not arithmetic: not listed
    fp = re.compile(r"v?(add|sub|mul|div|sqrt|min|max|cmp|round|rcp|rsqrt)[sp][sdh]"
                    r"|v?u?comis[sdh]|v?cvt\w+|vfn?m(add|sub)\w+|f\w+")
    mnemonics = [line.split("\t")[1].split()[0] for line in dis.splitlines()
                 if line.count("\t") >= 1 and line.split("\t")[1].strip()]
    bad = [m for m in mnemonics if fp.fullmatch(m)]
    assert mnemonics and not bad, sorted(set(bad))[:10]
    if src.endswith("_x86.c"):  # the kernels are there
        assert {"vpmadd52luq", "vpmadd52huq", "mulx", "adcx", "adox"} <= set(mnemonics)
