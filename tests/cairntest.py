"""Shared test helpers (import as `from cairntest import ...`): where this matrix cell's binaries are, and how to run them.

The Makefile exports CAIRN_BIN (bin/cairn, bin/cairn-farm, bin/cairn-agent),
CAIRN_TBIN (C test and bench harnesses), CAIRN_CC (gcc|clang) and CAIRN_SAN
(none|asan|tsan). Tests marked `matrix` run only under `make matrix`.
"""
import os
import pathlib
import shutil
import subprocess

import pytest



ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = pathlib.Path(os.environ.get("CAIRN_BIN", ROOT / "bin"))
TBIN = pathlib.Path(os.environ.get("CAIRN_TBIN", ROOT / "build" / "obj" / "tbin"))
CC = os.environ.get("CAIRN_CC", "gcc")
SAN = os.environ.get("CAIRN_SAN", "none")
MATRIX = os.environ.get("CAIRN_MATRIX") == "1"

# What `cairn build --sanitize` takes for this cell.
SANITIZE_FLAG = {"none": None, "asan": "address,undefined", "tsan": "thread"}[SAN]


def cairn_cell_flags():
    """The `cairn build`/`cairn run` flags that put a program in this matrix cell."""
    flags = ["--cc", CC]
    if SANITIZE_FLAG:
        flags += ["--sanitize", SANITIZE_FLAG]
    return flags


def find_nvcc():
    """nvcc as a CUDA build finds it ($CAIRN_NVCC, PATH, the CUDA toolkit's usual folder);
    None without the toolkit."""
    for path in (os.environ.get("CAIRN_NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if path and os.access(path, os.X_OK):
            return path
    return None


# What every CUDA and C++ compile of the runtime's headers in the tests adds: strict
# floating point (no fused multiply-add) and warnings as errors.
NVCC_STRICT = ["--fmad=false", "-std=c++17", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra",
               f"-I{ROOT / 'runtime'}"]
CXX_STRICT = ["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
              f"-I{ROOT / 'runtime'}"]


def header_compiles_as_cxx(tmp_path, cxx, source, link=True):
    """Compiles SOURCE (C++ text using runtime/ headers) with CXX and CXX_STRICT, asserting it
    succeeds; with LINK, also links and runs it (a header that calls the runtime's .c files
    is compiled only); skips when CXX is not installed."""
    if not shutil.which(cxx):
        pytest.skip(f"{cxx} not found")
    src = tmp_path / "use.cpp"
    src.write_text(source)
    out = tmp_path / ("use" if link else "use.o")
    res = run([cxx, *CXX_STRICT, *([] if link else ["-c"]), str(src), "-o", str(out)])
    assert res.returncode == 0, res.stdout + res.stderr
    if link:
        assert run([out]).returncode == 0


def harness(name):
    """Path of a C harness built from tests/c/NAME.c; fails loudly when missing."""
    path = TBIN / name
    assert path.exists(), f"{path} not built: run make first"
    return str(path)


def run(cmd, *, input=None, timeout=300, check=False, env=None):
    """Run a command, capturing text output; returns CompletedProcess."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    result = subprocess.run([str(c) for c in cmd], input=input, capture_output=True,
                            text=True, timeout=timeout, env=full_env)
    if check and result.returncode != 0:
        raise AssertionError(f"{cmd} exited {result.returncode}\n"
                             f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result
