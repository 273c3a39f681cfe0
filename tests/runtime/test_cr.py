"""The correctly rounded math (runtime/cairn_cr.h) against MPFR, through the C harness
tests/c/cr_check.c (and cr_check_slow.c, the same checks with every input sent down the
accurate path).

`make test`: a stratified sample of 2^24 inputs per f32 function (2^20 under the
sanitizers), 10^6 random inputs for f64 exp and log, the published hard cases, the f64
fast paths' error bounds, every table entry, and the accurate path alone on samples.
`make matrix`: every one of the 2^32 f32 inputs per function in the plain cells (a
2^26-pattern slice under the sanitizers), and 10^8 random f64 inputs per function.
The device half: nvcc compiles every function for sm_90 with --fmad=false, and the PTX
holds no fused multiply-add and no libdevice call."""
import os
import re

import pytest

from cairntest import NVCC_STRICT, ROOT, SAN, find_nvcc, harness, header_compiles_as_cxx, run

F32 = ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"]
F64 = ["exp", "log"]
DATA = ROOT / "tests" / "data" / "cr"
THREADS = str(min(16, os.cpu_count() or 2))
SUMMARY = re.compile(r"(\d+) inputs, .*?(\d+) differ; accurate path (\d+) times, (\d+) undecided")


def check(args, timeout=600, binary="cr_check"):
    res = run([harness(binary), *args], timeout=timeout)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    m = SUMMARY.search(res.stdout)
    assert m, out[-4000:]
    inputs, differ, _slow, undecided = (int(g) for g in m.groups())
    assert differ == 0 and undecided == 0, out[-4000:]
    return inputs, res.stdout


def test_tables_match_mpfr():
    res = run([harness("cr_check"), "tables"])
    assert res.returncode == 0 and "tables: 0 wrong" in res.stdout, res.stdout + res.stderr


def test_tables_are_what_the_generator_writes(tmp_path):
    out = tmp_path / "tables.h"
    res = run(["/usr/bin/python3", ROOT / "scripts" / "gen_cr_tables.py", out])
    assert res.returncode == 0, res.stderr
    assert out.read_text() == (ROOT / "runtime" / "cairn_cr_tables.h").read_text()


@pytest.mark.parametrize("func", F32)
def test_f32_stratified_sample(func):
    log2n = "24" if SAN == "none" else "20"
    inputs, _ = check(["sample", func, log2n, THREADS])
    assert inputs == 1 << int(log2n)


@pytest.mark.parametrize("func", ["log", "log2"])
@pytest.mark.parametrize("stride", ["16", pytest.param("1", marks=pytest.mark.matrix)])
def test_f32_log_fast_path_bound(func, stride):
    """The f32 log's fast path in double against the 2^-47 its comment states, on every
    16th positive normal f32 (every one in `make matrix`), glibc's double log as the
    reference (within 2^-52.9: 2^-50 is allowed for it)."""
    res = run([harness("cr_check"), "fbound", func, stride], timeout=1200)
    assert res.returncode == 0, res.stdout + res.stderr
    worst = float(re.search(r"largest relative error 2\^(-?[\d.]+)", res.stdout).group(1))
    assert -60 < worst < -47 + 0.2, res.stdout  # 2^-47 + 2^-50 is 2^-46.83


@pytest.mark.parametrize("func", F32)
def test_f32_accurate_path_alone(func):
    """Every input through the 192-bit path: 2^16 strata."""
    inputs, out = check(["sample", func, "16", THREADS], binary="cr_check_slow")
    slow = int(SUMMARY.search(out).group(3))
    assert inputs == 1 << 16 and slow > inputs // 3  # the rest are NaN, infinity, ... cases


@pytest.mark.parametrize("func", F64)
def test_f64_random(func):
    inputs, out = check(["f64", func, "1000000", "26", THREADS])
    assert inputs == 1000000
    if func == "log":  # the first stage decides all but a few in a thousand (near 1 most)
        second = int(re.search(r"second stage (\d+) times", out).group(1))
        assert 0 < second < inputs // 100, out


@pytest.mark.parametrize("func", F64)
def test_f64_accurate_path_alone(func):
    inputs, out = check(["f64", func, "100000", "27", THREADS], binary="cr_check_slow")
    assert int(SUMMARY.search(out).group(3)) > inputs // 2


@pytest.mark.parametrize("func", F64)
@pytest.mark.parametrize("binary", ["cr_check", "cr_check_slow"])
def test_f64_published_hard_cases(func, binary):
    """Lefevre and Muller's worst cases and Lefevre's hard-case lists: the file must
    really be hard (a round-to-nearest case with 50 or more equal bits after the round
    bit), and every result right."""
    path = DATA / f"{func}_hard.txt"
    inputs, out = check(["file", func, str(path)], binary=binary)
    assert inputs >= 150
    hardest = int(re.search(r"the hardest has (\d+) equal bits", out).group(1))
    assert hardest >= 50, out


@pytest.mark.parametrize("func", F64)
def test_f64_fast_path_error_bound(func):
    """The bound the rounding test assumes (2^-68 exp, 2^-67 the log's second stage)
    against MPFR's exact value, on the fast path's own unrounded result; for the log's
    first stage, each input's error against its table entry's bound, on random inputs and
    on the ends of every entry's range (where |u| is largest)."""
    res = run([harness("cr_check"), "fast", func, "300000", "28"], timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    worst = float(re.search(r"largest relative error 2\^(-?[\d.]+)", res.stdout).group(1))
    assert worst < (-68 if func == "exp" else -67), res.stdout
    if func == "log":
        over = float(re.search(r"over its entry's bound 2\^(-?[\d.]+)", res.stdout).group(1))
        assert over < 0, res.stdout


@pytest.mark.matrix
@pytest.mark.parametrize("func", F32)
def test_f32_every_input(func):
    """All 2^32 inputs in the plain cells (split over threads); a 2^26-pattern slice
    around 1 under the sanitizers, which check the same code for memory and undefined
    behaviour."""
    first, last = ("0", "ffffffff") if SAN == "none" else ("3c000000", "3fffffff")
    inputs, out = check(["f32", func, first, last, THREADS], timeout=7200)
    print(out)
    assert inputs == int(last, 16) - int(first, 16) + 1


@pytest.mark.matrix
@pytest.mark.parametrize("func", F64)
def test_f64_random_1e8(func):
    count = "100000000" if SAN == "none" else "1000000"
    inputs, out = check(["f64", func, count, "29", THREADS], timeout=7200)
    print(out)
    assert inputs == int(count)


# ---- the device half ----------------------------------------------------------------

DEVICE_SRC = """#include "cairn_cr.h"
__global__ void k32(float *o, const float *x, int f) {
    int i = threadIdx.x;
    float v = x[i];
    switch (f) {
    case 0: o[i] = cairn_cr_expf(v); break;
    case 1: o[i] = cairn_cr_exp2f(v); break;
    case 2: o[i] = cairn_cr_expm1f(v); break;
    case 3: o[i] = cairn_cr_logf(v); break;
    case 4: o[i] = cairn_cr_log2f(v); break;
    case 5: o[i] = cairn_cr_log1pf(v); break;
    case 6: o[i] = cairn_cr_tanhf(v); break;
    case 7: o[i] = cairn_cr_sigmoidf(v); break;
    case 8: o[i] = cairn_cr_sinf(v); break;
    default: o[i] = cairn_cr_cosf(v); break;
    }
}
__global__ void k64(double *o, const double *x, int f) {
    int i = threadIdx.x;
    o[i] = f ? cairn_cr_log(x[i]) : cairn_cr_exp(x[i]);
}
"""


@pytest.fixture(scope="module")
def nvcc():
    path = find_nvcc()
    if not path:
        pytest.skip("nvcc not found: the CUDA toolkit is not installed here")
    return path


def test_device_ptx_has_no_fma_and_no_libdevice(tmp_path, nvcc):
    src = tmp_path / "cr_device.cu"
    src.write_text(DEVICE_SRC)
    ptx = tmp_path / "cr_device.ptx"
    res = run([nvcc, "-ptx", "--fmad=false", "-arch=sm_90", "-std=c++17", "-Werror",
               "all-warnings", f"-I{ROOT / 'runtime'}", str(src), "-o", str(ptx)], timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    text = ptx.read_text()
    assert ".entry" in text and "k32" in text and "k64" in text
    assert not re.search(r"\bfma\.", text), "a fused multiply-add in the device code"
    assert "__nv_" not in text, "a libdevice call in the device code"
    # the division and reciprocal the source writes, correctly rounded as on the host
    assert not re.search(r"\b(div|rcp|sqrt)\.(approx|full)", text)


def test_device_object_compiles_with_warnings_as_errors(tmp_path, nvcc):
    src = tmp_path / "cr_device.cu"
    src.write_text(DEVICE_SRC)
    res = run([nvcc, "-c", "-arch=sm_90", *NVCC_STRICT, str(src), "-o", str(tmp_path / "cr_device.o")],
              timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_header_compiles_as_cxx(tmp_path, cxx):
    header_compiles_as_cxx(tmp_path, cxx, '#include "cairn_cr.h"\nint main() { return '
                           'cairn_cr_expf(0.0f) == 1.0f && cairn_cr_log(1.0) == 0.0 ? 0 : 1; }\n')
