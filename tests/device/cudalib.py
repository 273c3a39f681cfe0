"""Helpers for the CUDA tests that need no GPU: a program's generated CUDA C++ (cairn build
--emit-only, no compiler runs) and its PTX for one target (nvcc -ptx with the flags a CUDA
build uses), read as text."""
import collections
import functools
import pathlib
import re
import shlex
import subprocess

import pytest

from cairntest import BIN, ROOT, find_nvcc, run

PTX_FLAGS = ["--fmad=false", "-prec-div=true", "-prec-sqrt=true", "-ftz=false", "-std=c++17",
             "-Werror", "all-warnings", "-DCAIRN_CUDA=1"]


NVCC = find_nvcc()
needs_nvcc = pytest.mark.skipif(not NVCC, reason="nvcc not found: the CUDA toolkit is not "
                                "installed here, so CUDA builds are not checked")


CudaDirs = collections.namedtuple("CudaDirs", "include lib bin")


@functools.lru_cache(maxsize=None)
def cuda_dirs():
    """The include, library and program folders of the toolkit NVCC belongs to, as nvcc
    itself says (its --dryrun TOP, INCLUDES and LIBRARIES lines): nvcc may be a wrapper
    script outside the toolkit (/usr/local/bin/nvcc execing /usr/local/cuda-13.0/bin/nvcc),
    so the parent of its own folder is not the toolkit's root."""
    res = subprocess.run([NVCC, "--dryrun", "-c", "-x", "cu", "/dev/null", "-o", "/dev/null"],
                         capture_output=True, text=True, timeout=120)
    said = {}
    for line in (res.stdout + res.stderr).splitlines():
        m = re.match(r"#\$ (TOP|INCLUDES|LIBRARIES)=(.*)", line)
        if m:
            said[m.group(1)] = [w for w in shlex.split(m.group(2)) if not w.endswith("stubs")]
    flag = {"INCLUDES": "-I", "LIBRARIES": "-L"}
    found = {key: next(w[2:] for w in said.get(key, []) if w.startswith(flag[key]))
             for key in flag}
    dirs = CudaDirs(pathlib.Path(found["INCLUDES"]), pathlib.Path(found["LIBRARIES"]),
                    pathlib.Path(said["TOP"][0]) / "bin")
    assert (dirs.include / "cuda_runtime.h").is_file(), (dirs, res.stderr)
    return dirs


def emit(src, folder, target="sm_90"):
    """The generated files of src for a CUDA target: {name: text} (STEM.c and STEM_dev.cu)."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    src = pathlib.Path(src)
    res = run([BIN / "cairn", "build", src, "--target", target, "--emit-c", folder, "--emit-only",
               "-o", folder / src.stem])
    assert res.returncode == 0, res.stderr
    return {p.name: p.read_text() for p in folder.iterdir() if p.suffix in (".c", ".cu")}


def ptx(src, folder, target="sm_90"):
    """src's device half compiled to PTX for target; returns the PTX text."""
    folder = pathlib.Path(folder)
    emit(src, folder, target)
    cu = folder / f"{pathlib.Path(src).stem}_dev.cu"
    out = folder / f"{target}.ptx"
    res = run([NVCC, "-ptx", f"-arch={target}", *PTX_FLAGS, f"-I{ROOT / 'runtime'}", cu, "-o", out],
              timeout=900)
    assert res.returncode == 0, res.stderr
    return out.read_text()


def functions(ptx_text):
    """{name: body} of every .entry and .func in the PTX."""
    out, name, body, depth = {}, None, [], 0
    for line in ptx_text.splitlines():
        s = line.strip()
        head = s.split("(")[0].split()
        if name is None and (".entry" in head or ".func" in head):
            name = s.split("(")[0].split()[-1]
            body, depth = [], 0
        if name is not None:
            body.append(line)
            depth += line.count("{") - line.count("}")
            if depth == 0 and "}" in line:
                out[name] = "\n".join(body)
                name = None
    return out
