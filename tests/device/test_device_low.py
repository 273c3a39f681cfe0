"""The low items of issue 36, each checked without a GPU: the fragment registers are as
aligned as the WMMA fragments they are viewed as (a static_assert nvcc compiles), the
cuBLAS bench checks cublasGemmEx's status and still compiles, and bench_mma_cublas.sh
builds for the GPU's own compute capability (stand-in nvidia-smi and nvcc on PATH)."""
import os
import pathlib
import subprocess

import pytest

from cairntest import ROOT, run
from cudalib import NVCC, needs_nvcc

PROBE = """#include <mma.h>
#include "cairn_fragment_cuda.h"
using namespace nvcuda;
static_assert(alignof(cairn_frag_regs) >=
              alignof(wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>), "a");
static_assert(alignof(cairn_frag_regs) >=
              alignof(wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major>), "b");
static_assert(alignof(cairn_frag_regs) >=
              alignof(wmma::fragment<wmma::accumulator, 16, 16, 16, float>), "c");
"""


@needs_nvcc
def test_fragment_registers_are_aligned_as_wmma_fragments(tmp_path):
    probe = tmp_path / "probe.cu"
    probe.write_text(PROBE)
    r = run([NVCC, "-std=c++17", "-arch=sm_90", "-DCAIRN_CUDA=1", f"-I{ROOT / 'runtime'}", "-c",
             probe, "-o", tmp_path / "probe.o"], timeout=900)
    assert r.returncode == 0, r.stderr


@needs_nvcc
def test_the_cublas_bench_checks_its_status_and_compiles(tmp_path):
    src = ROOT / "tests" / "bench" / "mma_cublas.cu"
    assert src.read_text().count("if (st != CUBLAS_STATUS_SUCCESS)") == 1
    r = run([NVCC, "-std=c++17", "-arch=sm_90", "--fmad=false", "-DCAIRN_CUDA=1",
             f"-I{ROOT / 'runtime'}", "-c", src, "-o", tmp_path / "b.o"], timeout=900)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("cap,arch", [("8.9", "sm_89"), ("12.0", "sm_120"), ("", "sm_90")])
def test_bench_mma_cublas_builds_for_the_gpus_capability(tmp_path, cap, arch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text(
        f"#!/bin/sh\ncase \"$*\" in *compute_cap*) [ -n '{cap}' ] && echo '{cap}' ;; esac\nexit 0\n")
    log = tmp_path / "nvcc.args"
    (bin_dir / "nvcc").write_text(f"#!/bin/sh\necho \"$@\" > {log}\nexit 1\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("ARCH", None)
    subprocess.run(["sh", ROOT / "tests" / "bench" / "bench_mma_cublas.sh", "16"], cwd=ROOT,
                   env=env, capture_output=True, text=True, timeout=120)
    assert f"-arch={arch} " in log.read_text()
