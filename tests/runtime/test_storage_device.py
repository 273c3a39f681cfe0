"""cairn_float.h is one text for host C, C++ and CUDA device code: it must compile as
device code with nvcc (--fmad=false, as CAIRN device builds use, no warnings) and as
C++ with the host compilers. No GPU is needed: this checks the compile only; the
values are held to the model by the host tests, since both sides run the same
integer routines."""
import pytest

from cairntest import NVCC_STRICT, ROOT, find_nvcc, header_compiles_as_cxx, run

DEVICE_SRC = ROOT / "tests" / "c" / "float_device.cu"


def test_header_compiles_as_cuda_device_code(tmp_path):
    nvcc = find_nvcc()
    if not nvcc:
        pytest.skip("nvcc not found: the CUDA toolkit is not installed here")
    res = run([nvcc, "-c", *NVCC_STRICT, str(DEVICE_SRC), "-o", str(tmp_path / "float_device.o")],
              timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_header_compiles_as_cxx(tmp_path, cxx):
    header_compiles_as_cxx(tmp_path, cxx, '#include "cairn_float.h"\n'
                           'int main() { return cairn_quantize_i8(-2.5f, 1.0f, CAIRN_NOLOC) == -2 &&\n'
                           '  cairn_f32_to_f16(1.0f) == 0x3C00 ? 0 : 1; }\n', link=False)
