"""cairn_float.h is one text for host C, C++ and CUDA device code: it must compile as
device code with nvcc (--fmad=false, as CAIRN device builds use, no warnings) and as
C++ with the host compilers. No GPU is needed: this checks the compile only; the
values are held to the model by the host tests, since both sides run the same
integer routines."""
import shutil

import pytest

from cairntest import ROOT, find_nvcc, run

RUNTIME = ROOT / "runtime"
DEVICE_SRC = ROOT / "tests" / "c" / "float_device.cu"


def test_header_compiles_as_cuda_device_code(tmp_path):
    nvcc = find_nvcc()
    if not nvcc:
        pytest.skip("nvcc not found: the CUDA toolkit is not installed here")
    res = run([nvcc, "-c", "--fmad=false", "-std=c++17", "-Werror", "all-warnings",
               "-Xcompiler", "-Wall,-Wextra", f"-I{RUNTIME}", str(DEVICE_SRC),
               "-o", str(tmp_path / "float_device.o")], timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_header_compiles_as_cxx(tmp_path, cxx):
    if not shutil.which(cxx):
        pytest.skip(f"{cxx} not found")
    src = tmp_path / "use.cpp"
    src.write_text('#include "cairn_float.h"\n'
                   'int main() { return cairn_quantize_i8(-2.5f, 1.0f, CAIRN_NOLOC) == -2 &&\n'
                   '  cairn_f32_to_f16(1.0f) == 0x3C00 ? 0 : 1; }\n')
    res = run([cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
               f"-I{RUNTIME}", "-c", str(src), "-o", str(tmp_path / "use.o")])
    assert res.returncode == 0, res.stdout + res.stderr
