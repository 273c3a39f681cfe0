"""The array forms of the correctly rounded math (runtime/cairn_cr_array.h) in each
vector kernel this machine runs (CAIRN_CR_KERNEL=avx512, avx2, scalar), bit for bit
against the scalar functions of runtime/cairn_cr.h (tests/c/cr_vec_check.c), and against
MPFR through the scalar tests' model (tests/c/cr_check.c with CR_CHECK_ARRAY).

`make test`: a stratified sample of 2^24 inputs per function and kernel (2^20 under the
sanitizers), a dense slice of the working range, MPFR on a 2^20 sample; a planted wrong
rounding in the vector path is caught (tests/c/cr_vec_plant.c), and lanes forced to the
fallback give the scalar bits. `make matrix`: every one of the 2^32 inputs per function
and kernel (the summary line names the kernel that ran)."""
import os
import re

import pytest

from cairntest import SAN, harness, run

F32 = ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"]
VECTOR = ["exp", "exp2", "expm1", "log", "log2", "tanh", "sigmoid", "sin", "cos"]  # log1p: a loop
KERNELS = ["avx512", "avx2", "scalar"]
THREADS = str(min(16, os.cpu_count() or 2))
SUMMARY = re.compile(r"kernel (\w+) force 0x([0-9a-f]+): (\d+) inputs, (\d+) differ; "
                     r"fallback (\d+) lanes")


def env_for(kernel, **extra):
    return {**os.environ, "CAIRN_CR_KERNEL": kernel, **extra}


def kernel_runs(kernel):
    """Skips unless this CPU runs the kernel (a forced kernel it cannot run falls back)."""
    res = run([harness("cr_vec_check"), "kernel"], env=env_for(kernel))
    assert res.returncode == 0, res.stderr
    if res.stdout.strip() != kernel:
        pytest.skip(f"this CPU does not run the {kernel} kernel (it runs {res.stdout.strip()})")


def vec_check(args, kernel, binary="cr_vec_check", timeout=600, **extra):
    res = run([harness(binary), *args], env=env_for(kernel, **extra), timeout=timeout)
    m = SUMMARY.search(res.stdout)
    assert m, res.stdout + res.stderr[-4000:]
    assert m.group(1) == kernel, res.stdout
    inputs, differ, fallback = (int(g) for g in m.groups()[2:])
    return res, inputs, differ, fallback


def cases():
    for k in KERNELS:
        for f in F32:
            if k == "avx512" or f in VECTOR:  # a scalar-loop function is the same loop everywhere
                yield k, f


@pytest.mark.parametrize("kernel,func", list(cases()))
def test_array_equals_scalar_on_a_stratified_sample(kernel, func):
    kernel_runs(kernel)
    log2n = "24" if SAN == "none" else "20"
    res, inputs, differ, _ = vec_check(["sample", func, log2n, THREADS], kernel)
    assert inputs == 1 << int(log2n) and differ == 0, res.stdout + res.stderr[-4000:]


@pytest.mark.parametrize("kernel", KERNELS[:2])
@pytest.mark.parametrize("func", VECTOR)
def test_array_takes_the_fast_path_on_the_working_range(kernel, func):
    """Every input of [0.5, 1) and of (-1, -0.5]: the vector steps decide nearly all (a
    step that sent everything to the fallback would pass the bit comparison)."""
    kernel_runs(kernel)
    for first, last in [("3f000000", "3f7fffff"), ("bf000000", "bf7fffff")]:
        res, inputs, differ, fallback = vec_check(["range", func, first, last, THREADS], kernel)
        assert inputs == 1 << 23 and differ == 0, res.stdout + res.stderr[-4000:]
        if func.startswith("log") and first.startswith("b"):
            continue  # the log of a negative number: every lane goes to the edge
        assert fallback < inputs // 1000, res.stdout


@pytest.mark.parametrize("kernel", KERNELS[:2])
@pytest.mark.parametrize("func", F32)
def test_array_against_mpfr_on_a_sample(kernel, func):
    kernel_runs(kernel)
    log2n = "20" if SAN == "none" else "16"
    res = run([harness("cr_check"), "sample", func, log2n, THREADS],
              env=env_for(kernel, CR_CHECK_ARRAY="1"), timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr[-4000:]
    assert re.search(r": %d inputs, \d+ decided by MPFR, 0 differ" % (1 << int(log2n)), res.stdout)


@pytest.mark.parametrize("kernel", KERNELS[:2])
@pytest.mark.parametrize("func", ["exp", "log", "tanh", "sin"])
def test_a_planted_wrong_rounding_is_caught_and_forced_lanes_are_scalar(kernel, func):
    """cr_vec_plant's vector lanes return one ulp off where the low 12 bits are 0x123: the
    comparison must see it; with every lane forced to the fallback, no lane is planted
    and every result is the scalar one; with half the lanes forced, fewer differ."""
    kernel_runs(kernel)
    _, inputs, planted, _ = vec_check(["sample", func, "20", THREADS], kernel, "cr_vec_plant")
    assert planted > 0
    res, _, differ, fallback = vec_check(["sample", func, "20", THREADS], kernel, "cr_vec_plant",
                                         CR_VEC_FORCE="ff")
    assert differ == 0 and fallback > inputs * 9 // 10, res.stdout
    _, _, half, _ = vec_check(["sample", func, "20", THREADS], kernel, "cr_vec_plant",
                              CR_VEC_FORCE="55")
    assert 0 < half < planted
    res, _, differ, fallback = vec_check(["sample", func, "20", THREADS], kernel,
                                         CR_VEC_FORCE="55")
    assert differ == 0 and fallback > inputs // 3, res.stdout


@pytest.mark.matrix
@pytest.mark.parametrize("kernel,func", list(cases()))
def test_array_equals_scalar_on_every_input(kernel, func):
    """All 2^32 inputs (a 2^26-pattern slice around 1 under the sanitizers); the summary
    line printed names the kernel that ran."""
    kernel_runs(kernel)
    first, last = ("0", "ffffffff") if SAN == "none" else ("3c000000", "3fffffff")
    res, inputs, differ, _ = vec_check(["range", func, first, last, THREADS], kernel, timeout=7200)
    print(res.stdout)
    assert inputs == int(last, 16) - int(first, 16) + 1 and differ == 0, res.stdout
