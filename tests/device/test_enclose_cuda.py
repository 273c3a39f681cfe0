"""The bracket GEMM's CUDA backend (runtime/cairn_enclose_cuda.h), checked where no GPU
is needed: its PTX for sm_80, sm_90 and sm_120 holds no floating-point instruction
(no .f16/.bf16/.f32/.f64 type anywhere: no arithmetic, conversion, load or store of a
float) and no integer division (which lowers through the float reciprocal unit); the
GEMMs are int8 tensor-core instructions with int32 accumulators; a CAIRN program's
mm_enclose on @device views compiles into the same kernels; and the standalone CUDA
checker builds and says there is no device. On a GPU host the checker reproduces the
frozen case set's committed digest and the host's bits case by case (make gpu runs it
too). The emulated half of the same algorithm is tests/runtime/test_enclose_residue.py."""
import hashlib
import os
import re

import pytest

from cairntest import BIN, ROOT, run
from devicelib import find_nvcc, has_gpu

TARGETS = ["sm_80", "sm_90", "sm_120"]
FLAGS = ["--fmad=false", "-std=c++17", "-Werror", "all-warnings", "-DCAIRN_CUDA=1",
         f"-I{ROOT / 'runtime'}", f"-I{ROOT / 'tools'}"]
CASES = ROOT / "tests" / "data" / "enclose" / "cases.txt"
ENTRIES = {"scan_rows", "scan_cols", "first_bad", "residues", "gemm", "signed_sums", "finish"}


NVCC = find_nvcc()
pytestmark = pytest.mark.skipif(not NVCC, reason="nvcc not found: the CUDA toolkit is not "
                                "installed here, so CUDA builds are not checked")


def entries(ptx):
    """{mangled name: body} of every kernel in a PTX text."""
    out = {}
    for match in re.finditer(r"\.entry (\S+)\(", ptx):
        end = ptx.index("\n}\n", match.end())
        out[match.group(1)] = ptx[match.end():end]
    return out


def enclose_kernels(ptx):
    """The bracket GEMM's kernels (namespace cairn_enclose_cuda), by short name."""
    found = {}
    for name, body in entries(ptx).items():
        m = re.match(r"_ZN18cairn_enclose_cuda(\d+)", name)
        if m:
            found[name[m.end():m.end() + int(m.group(1))]] = body
    return found


FLOAT = re.compile(r"\.(f16|f16x2|bf16|bf16x2|f32|f64|tf32)\b")
DIVISION = re.compile(r"^\s*(div|rem)\.", re.M)


def assert_integer_only(kernels, where):
    assert set(kernels) == ENTRIES, (where, sorted(kernels))
    for name, body in kernels.items():
        assert not FLOAT.search(body), f"{where} {name}: {FLOAT.search(body).group(0)}"
        assert not DIVISION.search(body), f"{where} {name}: an integer division"
    mma = set(re.findall(r"\b(w?mma\.mma[\w.]*)", kernels["gemm"]))
    assert mma == {"wmma.mma.sync.aligned.row.row.m16n16k16.s32.s8.s8.s32"}, (where, mma)


@pytest.fixture(scope="module")
def runtime_ptx(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ptx")
    out = {}
    for target in TARGETS:
        path = folder / f"{target}.ptx"
        res = run([NVCC, "-ptx", f"-arch={target}", *FLAGS, ROOT / "runtime" / "cairn_enclose_cuda.cu",
                   "-o", path], timeout=900)
        assert res.returncode == 0, res.stderr
        out[target] = path.read_text()
    return out


@pytest.mark.parametrize("target", TARGETS)
def test_kernels_are_integer_only(runtime_ptx, target):
    assert_integer_only(enclose_kernels(runtime_ptx[target]), target)
    # and the whole file: nothing else in it computes in floating point either
    assert not FLOAT.search(runtime_ptx[target]), target


def test_the_checks_catch_floating_point_and_division(tmp_path):
    """The checks above, shown to fail on a kernel that divides or uses a float."""
    src = tmp_path / "bad.cu"
    src.write_text("namespace cairn_enclose_cuda {\n"
                   "__global__ void gemm(unsigned *x, unsigned d) { x[0] = x[1] / d; }\n"
                   "__global__ void finish(float *x) { x[0] = x[1] * 0.5f; }\n}\n")
    res = run([NVCC, "-ptx", "-arch=sm_90", *FLAGS, src, "-o", tmp_path / "bad.ptx"], timeout=600)
    assert res.returncode == 0, res.stderr
    kernels = enclose_kernels((tmp_path / "bad.ptx").read_text())
    assert DIVISION.search(kernels["gemm"]) and FLOAT.search(kernels["finish"])


def test_program_on_device_views_compiles_the_same_kernels(tmp_path):
    """cairn build --target sm_90 of a program with mm_enclose on @device views: its
    .cu includes cairn_enclose_cuda.h once, calls the device entries, and the PTX
    of its enclose kernels is integer-only."""
    src = ROOT / "tests" / "device" / "programs" / "enclose_device.cairn"
    res = run([BIN / "cairn", "build", src, "--target", "sm_90", "--emit-c", tmp_path,
               "--emit-only", "-o", tmp_path / "prog"])
    assert res.returncode == 0, res.stderr
    cu = (tmp_path / "enclose_device_dev.cu").read_text()
    c = (tmp_path / "enclose_device.c").read_text()
    assert cu.count('#include "cairn_enclose_cuda.h"') == 1
    assert "cairn_mm_enclose_device_f64(" in c and "cairn_mm_enclose_device_f32(" in c
    assert "cairn_mm_enclose_f64(" in c  # the host reference call stays on the CPU
    res = run([NVCC, "-ptx", "-arch=sm_90", *FLAGS, tmp_path / "enclose_device_dev.cu", "-o",
               tmp_path / "prog.ptx"], timeout=900)
    assert res.returncode == 0, res.stderr
    assert_integer_only(enclose_kernels((tmp_path / "prog.ptx").read_text()), "program")


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    exe = tmp_path_factory.mktemp("checker") / "enclose_check_cuda"
    arch = os.environ.get("ARCH", "sm_90")
    srcs = ["tools/enclose_check_cuda.cu", "runtime/cairn_enclose_cuda.cu", "tools/enclose_casefile.c",
            "runtime/cairn_enclose.c", "runtime/cairn_enclose_x86.c", "runtime/cairn_enclose_amx.c",
            "runtime/cairn_enclose_residue.c", "runtime/cairn_pool.c"]
    res = run([NVCC, f"-arch={arch}", "-O2", *FLAGS, "-Xcompiler", "-Wall,-Wextra,-pthread",
               *[ROOT / s for s in srcs], "-o", exe], timeout=900)
    assert res.returncode == 0, res.stderr
    return exe


def test_checker_help(checker):
    res = run([checker, "--help"])
    assert res.returncode == 0 and "--check-host" in res.stdout


@pytest.mark.skipif(has_gpu(), reason="a GPU is here: the device test below runs instead")
def test_checker_without_a_gpu_says_so(checker, tmp_path):
    """cairn_enclose_cuda_bits returns CAIRN_ENCLOSE_ENODEV with the CUDA runtime's
    message; the checker prints it on one line and exits 3, writing nothing."""
    res = run([checker, CASES, tmp_path / "out.bin"])
    assert res.returncode == 3, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("enclose_check_cuda: no CUDA device (")
    assert not (tmp_path / "out.bin").exists()


@pytest.mark.skipif(not has_gpu(), reason="no GPU here: the device's bits need one")
def test_device_reproduces_the_frozen_digest(checker, tmp_path):
    digest = (ROOT / "tests" / "data" / "enclose" / "cases.sha256").read_text().split()[0]
    res = run([checker, "--check-host", CASES, tmp_path / "out.bin"], timeout=900)
    assert res.returncode == 0, res.stderr
    assert hashlib.sha256((tmp_path / "out.bin").read_bytes()).hexdigest() == digest


@pytest.mark.skipif(not has_gpu(), reason="no GPU here: the device's bits need one")
def test_device_matches_the_host_on_every_family(checker, tmp_path):
    cases = tmp_path / "families.txt"
    run(["/usr/bin/python3", ROOT / "tests" / "data" / "enclose" / "make_families.py", cases],
        check=True)
    res = run([checker, "--check-host", cases, tmp_path / "out.bin"], timeout=900)
    assert res.returncode == 0, res.stderr
