"""The GPU kernels of device reductions and scans run where no GPU is lent
(runtime/cairn_dred_kernels.h; tests/c/dred_sim.cpp): compiled for the host as they are,
each block's threads std::threads, __syncthreads and shuffles barriers, atomics __atomic
builtins. The exact device sum's two passes must give the host exact sum's bits at every
launch shape; every integer reduction's tree the index-order fold's partial (products:
the same summary); every scan the fold's prefixes, and where a prefix of the fold in
index order leaves its type, the kernel must trap. This checks the kernels' logic (slices,
orders of combination, carries), not the GPU's memory model: make gpu runs them on one."""
import shutil
import subprocess

import pytest

from cairntest import ROOT, SAN, TBIN, run

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(not GXX or SAN != "none",
                                reason="the simulation builds with g++ against the plain runtime")


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    exe = tmp_path_factory.mktemp("sim") / "dred_sim"
    cmd = [GXX, "-std=c++20", "-O1", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
           "-fno-fast-math", "-D_GNU_SOURCE", f"-I{ROOT / 'runtime'}", "-pthread",
           ROOT / "tests" / "c" / "dred_sim.cpp", TBIN.parent / "libcairnrt.a", "-o", exe]
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return exe


def run_cases(sim, lines):
    res = run([sim], input="".join(f"{ln}\n" for ln in lines), timeout=900)
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout.splitlines()
    assert len(out) == len(lines)
    return out


def test_exact_device_sum_kernels(sim):
    lines = [f"sum {fmt} {b} {t} {n} {seed} {kind}"
             for fmt in ("f64", "f32") for kind in ("wide", "special", "cancel")
             for (b, t) in ((1, 32), (3, 64), (8, 256), (5, 96)) for n in (1, 31, 1000, 20000)
             for seed in (n * 7 + b,)]
    for line, got in zip(lines, run_cases(sim, lines)):
        assert got == "ok", (line, got)


def test_integer_reduction_trees(sim):
    lines = [f"red {op} {ty} {b} {n} {n + b}"
             for op in ("add", "min", "max", "and", "or", "xor")
             for ty in ("i8", "u8", "i32", "i64", "u64") for b in (1, 2, 5) for n in (1, 255, 257, 5000)]
    lines += [f"red mul {ty} {b} {n} {n * 3 + b}" for ty in ("i32", "u8") for b in (1, 3, 7)
              for n in (1, 40, 600, 30000)]
    for line, got in zip(lines, run_cases(sim, lines)):
        assert got == "ok", (line, got)


def test_float_min_max_trees(sim):
    """Float min and max (softmax's largest term) on the device tree: the index-order fold's
    bits over +-0.0, subnormals, infinities and, in one seed of three, a NaN with a payload
    (the quiet NaN comes out, whichever block holds it)."""
    lines = [f"red {op} {ty} {b} {n} {seed}"
             for op in ("fmin", "fmax") for ty in ("f32", "f64") for b in (1, 3, 8)
             for n in (1, 33, 257, 5000) for seed in (n + b, 3 * (n + b))]
    assert any(int(ln.split()[-1]) % 3 == 0 for ln in lines)  # some cases hold a NaN
    for line, got in zip(lines, run_cases(sim, lines)):
        assert got == "ok", (line, got)


def test_integer_scans(sim):
    lines = [f"scan {op} {ty} {b} {n} {n + 2 * b}"
             for op, types in (("add", ("i32", "i64", "u64")), ("min", ("i8", "u8", "i32")),
                               ("max", ("i8", "i64")), ("and", ("u8", "u64")), ("or", ("i32",)),
                               ("xor", ("u64", "i8")))
             for ty in types for b in (1, 3, 6) for n in (1, 100, 257, 9000)]
    for line, got in zip(lines, run_cases(sim, lines)):
        assert got == "ok", (line, got)


@pytest.mark.parametrize("ty,n,seed", [("i32", 5000, 4), ("i32", 300, 11), ("u8", 600, 9),
                                       ("u8", 40, 2), ("i32", 30000, 7), ("i32", 1, 1)])
def test_product_scans_trap_where_the_fold_does(sim, ty, n, seed):
    """Factors 1, -1, 2, 0 and a few large ones: where the fold in index order leaves the
    type at some prefix the kernel traps (the process aborts after "expect-trap"),
    otherwise every prefix equals the fold's."""
    res = run([sim], input=f"scan mul {ty} 3 {n} {seed}\n", timeout=300)
    if res.stdout.startswith("expect-trap"):
        assert res.returncode != 0 and "trap: integer overflow at dred_sim:1:1" in res.stderr
    else:
        assert res.returncode == 0 and res.stdout == "ok\n", res.stdout + res.stderr
