"""Device defects a GPU would hit, held here without one (issue 36):

- launch bounds: a block region's kernel carries __launch_bounds__(T) (T constant, else
  1024), so ptxas keeps a 1024-thread block's registers at 64 or fewer (65536 / 1024),
  checked on tests/device/programs/cr_lanes.cairn at T = 1024 with `ptxas -v`; and each
  launch asks cudaFuncGetAttributes first, trapping past the kernel's limit with the
  emulation's wording ("a block of more than N threads");
- a failed cudaMalloc: only cudaErrorMemoryAllocation is the trap "out of device memory
  for a buffer"; any other error (a sticky one) is reported as itself, exit 126;
- a device without concurrent managed access (WSL2): every launch waits;
the last three through tests/device/cuda_standin.cu, the runtime's host half over a
stand-in cudart."""
import pathlib
import re
import subprocess

import pytest

from cairntest import ROOT, TBIN, run
from cudalib import NVCC, PTX_FLAGS, cuda_dirs, emit, functions, needs_nvcc

PROGRAMS = ROOT / "tests" / "device" / "programs"
HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def cr1024(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cr1024")
    src = folder / "cr1024.cairn"
    text = (PROGRAMS / "cr_lanes.cairn").read_text()
    assert "const T:usize = 128;" in text
    src.write_text(text.replace("const T:usize = 128;", "const T:usize = 1024;"))
    return src


def test_block_kernels_carry_their_launch_bounds(tmp_path, cr1024):
    files = emit(cr1024, tmp_path / "e")
    cu = files["cr1024_dev.cu"]
    heads = re.findall(r"static __global__ void (__launch_bounds__\((\d+)\) )?kern\d+", cu)
    blocks = [h for h in heads if h[0]]
    assert [b[1] for b in blocks] == ["1024", "1024"]  # the two blocks regions, T = 1024
    launches = cu.count("<<<(unsigned)cairn_ng, (unsigned)cairn_nt")
    assert launches == 2 and cu.count("cairn_device_check_block((const void *)kern") == launches


def test_a_thread_count_known_only_at_run_time_is_bounded_by_1024(tmp_path):
    src = tmp_path / "t.cairn"
    src.write_text("fn f(t:usize, x:rw<f32>[t]@device) {\n  blocks g in 1 threads i in t {\n"
                   "    x[i] = 1.0;\n  }\n}\n"
                   "fn main() -> i32 {\n  buffer x:f32[96]@device = zeroed;\n  f(96, x);\n"
                   "  return 0;\n}\n")
    cu = emit(src, tmp_path / "e")["t_dev.cu"]
    assert "__launch_bounds__(1024) kern" in cu


@needs_nvcc
def test_ptxas_keeps_a_1024_thread_block_within_the_register_file(tmp_path, cr1024):
    emit(cr1024, tmp_path)
    ptx = tmp_path / "k.ptx"
    r = run([NVCC, "-ptx", "-arch=sm_90", *PTX_FLAGS, f"-I{ROOT / 'runtime'}",
             tmp_path / "cr1024_dev.cu", "-o", ptx], timeout=900)
    assert r.returncode == 0, r.stderr
    bounded = [name for name, body in functions(ptx.read_text()).items()
               if ".maxntid 1024, 1, 1" in body]
    assert len(bounded) == 2
    ptxas = cuda_dirs().bin / "ptxas"
    r = run([ptxas, "-v", "-arch=sm_90", ptx, "-o", tmp_path / "k.cubin"], timeout=900)
    assert r.returncode == 0, r.stderr
    regs = {}
    for name, count in re.findall(r"Compiling entry function '(\w+)'.*?Used (\d+) registers",
                                  r.stderr, re.S):
        regs[name] = int(count)
    assert set(bounded) <= set(regs), (bounded, regs)
    assert all(regs[name] <= 64 for name in bounded), regs


@pytest.fixture(scope="module")
def standin(tmp_path_factory):
    if not NVCC:
        pytest.skip("nvcc not found: the stand-in is CUDA C++")
    exe = tmp_path_factory.mktemp("standin") / "standin"
    r = run([NVCC, "-std=c++17", "-DCAIRN_CUDA=1", f"-I{ROOT / 'runtime'}",
             HERE / "cuda_standin.cu", pathlib.Path(TBIN).parent / "libcairnrt.a", "-lm",
             "-lcrypto", "-lcjson", "-Xcompiler", "-pthread", "-o", exe], timeout=900)
    assert r.returncode == 0, r.stderr
    return exe


def test_a_sticky_cuda_error_is_reported_as_itself_exit_126(standin):
    r = run([standin, "sticky"])
    assert r.returncode == 126, r.stderr
    assert r.stderr == ("cairn: cannot allocate a device buffer: an illegal memory access was "
                        "encountered (cudaErrorIllegalAddress)\n")


def test_only_a_real_shortage_is_the_out_of_memory_trap(standin):
    r = run([standin, "oom"])
    assert r.returncode not in (0, 126) and "allocated" not in r.stdout
    assert r.stderr.startswith("trap: out of device memory for a buffer at standin.cairn:3:7\n")


@pytest.mark.parametrize("mode,waits", [("managed0", 1), ("managed1", 0)])
def test_without_concurrent_managed_access_every_launch_waits(standin, mode, waits):
    r = run([standin, mode])
    assert r.returncode == 0 and r.stdout == f"waits={waits}\n", r.stderr


def test_a_block_past_the_kernels_limit_traps_before_the_launch(standin):
    assert run([standin, "bounds", "640"]).stdout == "launches\n"
    r = run([standin, "bounds", "641"])
    assert r.returncode != 0 and "launches" not in r.stdout
    assert r.stderr.startswith("trap: a block of more than 640 threads (this kernel's most on "
                               "this device: 96 registers a thread) at standin.cairn:3:7\n")


SHARED_VIA_FN = HERE / "shared_via_fn.cairn"


def test_a_shared_f32_atomic_through_a_function_flushes_in_the_emulation(tmp_path):
    """Two adds of 1e-39 (subnormal in f32) into a shared element: flushed, 0 + 0 = 0,
    in every block."""
    import struct
    from devicelib import build, observe
    exe = build(SHARED_VIA_FN, tmp_path / "sa", "--emulate")
    got = observe(exe, tmp_path / "obs", 2)
    assert struct.unpack("<4f", got["out"][3]) == (0.0, 0.0, 0.0, 0.0)


@needs_nvcc
def test_a_shared_f32_atomic_through_a_function_flushes_on_the_device(tmp_path):
    """The device's add takes any pointer: atom.global.add.f32 (which flushes) for global
    memory (test_cuda.py holds that), and for a shared one a compare-and-swap loop that
    flushes too, never atom.shared.add.f32 (which would keep the subnormal the emulation
    flushes)."""
    emit(SHARED_VIA_FN, tmp_path)
    ptx = tmp_path / "k.ptx"
    r = run([NVCC, "-ptx", "-arch=sm_90", *PTX_FLAGS, f"-I{ROOT / 'runtime'}",
             tmp_path / "shared_via_fn_dev.cu", "-o", ptx], timeout=900)
    assert r.returncode == 0, r.stderr
    text = ptx.read_text()
    assert "atom.shared.add.f32" not in text and "atom.add.f32" not in text
    assert "atom.shared.cas.b32" in text  # nvcc sees the shared array: the flushing loop
