"""mma_unordered on @device views for CUDA targets: cairn builds the program for sm_90
with nvcc (the .cu includes runtime/cairn_mma_device_cuda.h), and the generated device
half compiles to PTX for sm_80, sm_90 and sm_120 with the flags the driver uses. The PTX
must run the multiply on the tensor cores (wmma.mma.sync, the f16 instruction for f16
and both fp8 formats, the bf16 instruction for bf16), widen fp8 to f16 on the way in,
and contain no fused multiply-add (fma.). No GPU is needed; a run without one exits 126
with one line."""
import pathlib
import re
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import BIN, ROOT, run  # noqa: E402

NVCC = shutil.which("nvcc") or next((p for p in ["/usr/local/cuda/bin/nvcc"] if pathlib.Path(p).exists()), None)
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not installed: CUDA targets are skipped")

PROGRAM = """
fn multiply_{T}(m:usize, n:usize, k:usize) {{
  buffer c:f32[m * n] @device = zeroed;
  buffer a:{T}[m * k] @device = zeroed;
  buffer b:{T}[k * n] @device = zeroed;
  mma_unordered(m, n, k, c, a, b);
}}
"""
FORMATS = ["f16", "bf16", "f8e4m3", "f8e5m2"]
F16_MMA = "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32"
BF16_MMA = "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32"
NVCC_FLAGS = ["-std=c++17", "-O2", "--fmad=false", "-prec-div=true", "-prec-sqrt=true", "-ftz=false",
              "-DCAIRN_CUDA=1", "-ptx"]


@pytest.fixture(scope="module")
def device_half(tmp_path_factory):
    d = tmp_path_factory.mktemp("mma_cuda")
    src = d / "mm.cairn"
    src.write_text("".join(PROGRAM.format(T=t) for t in FORMATS) +
                   "fn main() -> i32 {\n" + "".join(f"  multiply_{t}(65, 70, 33);\n" for t in FORMATS) +
                   "  let done:i32 = 1;\n  observe(\"done\", done);\n  return 0;\n}\n")
    r = run([BIN / "cairn", "build", str(src), "--target", "sm_90", "-o", str(d / "mm"), "--emit-c", str(d / "c")],
            timeout=600)
    assert r.returncode == 0, r.stderr
    cu = d / "c" / "mm_dev.cu"
    assert '#include "cairn_mma_device_cuda.h"' in cu.read_text()
    assert "cairn_mma_device_f8e5m2(" in (d / "c" / "mm.c").read_text()
    return d, cu


def split_kernels(ptx):
    """{kernel name: body} for each .entry in the PTX."""
    parts = re.split(r"\n(?=\.visible \.entry |\.entry )", ptx)
    return {re.search(r"\.entry (\S+)\(", p)[1]: p for p in parts if ".entry" in p}


@pytest.mark.parametrize("arch", ["sm_80", "sm_90", "sm_120"])
def test_ptx_uses_the_tensor_cores_without_fma(device_half, arch):
    d, cu = device_half
    out = d / f"mm_{arch}.ptx"
    r = run([NVCC, f"-arch={arch}", *NVCC_FLAGS, f"-I{ROOT / 'runtime'}", str(cu), "-o", str(out)], timeout=600)
    assert r.returncode == 0, r.stderr
    ptx = out.read_text()
    assert "fma." not in ptx
    kernels = {name: body for name, body in split_kernels(ptx).items() if "tile_kernel" in name}
    assert len(kernels) == 4, list(kernels)
    for name, body in kernels.items():
        bf16 = "op_bf16" in name
        assert (BF16_MMA if bf16 else F16_MMA) in body, name
        assert (F16_MMA if bf16 else BF16_MMA) not in body, name
        assert body.count("wmma.mma.sync") == 8, name          # 2 x 2 fragments, two k steps of 16
        assert "wmma.load.a.sync" in body and "wmma.load.b.sync" in body, name
        if "op_f8" in name:                                      # fp8 widened to f16 as a stage fills
            assert "cvt.rn.f16.f32" in body, name


def test_without_a_gpu_the_program_says_so(device_half):
    d, _ = device_half
    r = run([d / "mm"], timeout=60)
    if r.returncode == 0:
        pytest.skip("this machine has a GPU: make gpu checks the device run")
    assert r.returncode == 126   # the runtime could not run it (docs/tools.md)
    assert r.stderr.startswith("cairn: no CUDA device") and r.stderr.count("\n") == 1
