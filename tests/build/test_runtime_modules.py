"""The runtime a program links is what its lowering recorded (lower_use_runtime), plus
what those runtime sources call in turn (syntax/ops.def's MODULE rows): one program per runtime
module builds, links and runs, and its executable holds exactly the modules expected.

The expected sets below are written from the runtime's own needs (which source calls
which), not read from the compiler: a lowering that forgot to record a module fails to
link (undefined reference, exit 3), and one that records too much, or a table row that
pulls in too much, shows up as an extra module in the executable's symbols."""
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import build, run_exe  # noqa: E402
from cairntest import find_nvcc  # noqa: E402

# One symbol each runtime source defines, by module.
MARKERS = {
    "trap": "cairn_trap_at",
    "pool": "cairn_pool_run",
    "sum": "cairn_sum64_pooled",
    "float": "cairn_f32_to_f16_array",
    "observe": "cairn_observe",
    "enclose": "cairn_enclose_bits",
    "enclose_digest": "cairn_enclose_digest_begin",
    "mm_enclose": "cairn_mm_enclose_f64",
    "mma": "cairn_mma_check_extents",
    "mma_tiled": "cairn_mma_tiled_f16",
    "args": "cairn_args_read",
    "npy": "cairn_npy_parse",
    "dsum": "cairn_dsum_blocks",
}

MAIN_ONLY = "fn main() -> i32 { return 0; }\n"

PROGRAMS = {
    # Every program can trap (checked arithmetic, bounds, extents): cairn_trap.c always.
    "nothing": (MAIN_ONLY, {"trap"}),
    "parallel_for": ("""
fn main() -> i32 {
  let n:usize = 100;
  buffer x:f64[n] = zeroed;
  parallel i in n { x[i] = 2.0; }
  if x[99] != 2.0 { return 1; }
  return 0;
}
""", {"trap", "pool"}),
    "reduce_min_parallel": ("""
fn main() -> i32 {
  let n:usize = 100;
  buffer v:i32[n] = zeroed;
  for i in 0..n { v[i] = i32(n - i); }
  let small = reduce min parallel i in n yield v[i];
  if small != 1 { return 1; }
  return 0;
}
""", {"trap", "pool"}),
    # The exact sum runs on the pool.
    "exact_sum": ("""
fn main() -> i32 {
  let n:usize = 3;
  buffer x:f64[n] = zeroed;
  x[0] = 1e16; x[1] = 1.0; x[2] = -1e16;
  let s = reduce + parallel i in n yield x[i];
  if s != 1.0 { return 1; }
  return 0;
}
""", {"trap", "pool", "sum"}),
    "observe": ("""
fn main() -> i32 {
  let x = 1.5;
  observe("x", x);
  return 0;
}
""", {"trap", "observe"}),
    # The bracket GEMM on the pool; its digest (cairn_enclose_digest.c) is not linked.
    # A runtime name in the program's text is no call: the driver reads the records,
    # not the generated C (a scan of the text would link the pool here).
    "name_in_text": ("""
fn main() -> i32 {
  observe("cairn_pool_run", 1.5);
  return 0;
}
""", {"trap", "observe"}),
    "mm_enclose": ("""
fn main() -> i32 {
  buffer a:f64[1] = zeroed;
  buffer b:f64[1] = zeroed;
  buffer lo:f64[1] = zeroed;
  buffer hi:f64[1] = zeroed;
  a[0] = 3.0; b[0] = 0.5;
  let tight = mm_enclose(1, 1, 1, lo, hi, a, b);
  if !tight || lo[0] != 1.5 || hi[0] != 1.5 { return 1; }
  return 0;
}
""", {"trap", "pool", "enclose", "mm_enclose"}),
    "mma_host": ("""
fn main() -> i32 {
  buffer c:f32[1] = zeroed;
  buffer a:f16[1] = zeroed;
  buffer b:f16[1] = zeroed;
  a[0] = f16(2.0); b[0] = f16(3.0);
  mma_unordered(1, 1, 1, c, a, b);
  if c[0] != 6.0 { return 1; }
  return 0;
}
""", {"trap", "mma"}),
    # @device views on the host: the device tiling, emulated warp by warp on the pool.
    "mma_device_emulated": ("""
fn main() -> i32 {
  buffer c:f32[1] @device = zeroed;
  buffer a:f16[1] @device = zeroed;
  buffer b:f16[1] @device = zeroed;
  mma_unordered(1, 1, 1, c, a, b);
  return 0;
}
""", {"trap", "pool", "mma", "mma_tiled"}),
    # main's parameters: the command line's reader and the .npy files it reads.
    "main_params": ("""
fn main(k:i32) -> i32 { return k; }
""", {"trap", "args", "npy"}, ["k=0"]),
    "blocks_emulated": ("""
fn fill(out:rw<f32>[32]@device) {
  blocks g in 1 threads t in 32 { out[t] = 1.0; }
}

fn main() -> i32 {
  buffer out:f32[32] @device = zeroed;
  fill(out);
  return 0;
}
""", {"trap", "pool"}),
    # A device reduce + over floats: the exact device sum, emulated on the pool; its one
    # rounding is the host's exact sum's.
    "device_sum_emulated": ("""
fn total(x:ro<f32>[8]@device) -> f32 = reduce + parallel i in 8 yield x[i];

fn main() -> i32 {
  buffer h:f32[8] = zeroed;
  for i in 0..8 { h[i] = 0.5; }
  buffer x:f32[8] @device = zeroed;
  copy(x, h);
  if total(x) != 4.0 { return 1; }
  return 0;
}
""", {"trap", "pool", "sum", "dsum"}),
}


# A CUDA build: the region becomes a kernel (no pool on the host), and the .cu's
# cairn_device_cuda.h traps and copies device views back for cairn_observe.
CUDA_PROGRAM = ("""
fn bump(n:usize, x:rw<i32>[n]@device) {
  parallel i in n { x[i] = x[i] + 1; }
}

fn main() -> i32 {
  buffer d:i32[64]@device = zeroed;
  bump(64, d);
  return 0;
}
""", {"trap", "observe"})

# A CUDA build's device reduce runs on the GPU; the host rounds its record with the
# exact sum (cairn_dsum.c, which calls cairn_sum.c, whose pool is linked with it).
CUDA_REDUCE = ("""
fn total(x:ro<f64>[64]@device) -> f64 = reduce + parallel i in 64 yield x[i];

fn main() -> i32 {
  buffer d:f64[64]@device = zeroed;
  observe("t", total(d));
  return 0;
}
""", {"trap", "observe", "dsum", "sum", "pool"})


def linked_modules(exe):
    symbols = subprocess.run(["nm", "--defined-only", str(exe)], capture_output=True, text=True,
                             check=True).stdout.split()
    return {module for module, marker in MARKERS.items() if marker in symbols}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_links_exactly_its_runtime_modules(name, tmp_path):
    text, expected, *args = PROGRAMS[name]
    src = tmp_path / f"{name}.cairn"
    src.write_text(text)
    exe = tmp_path / name
    build(src, exe)
    assert run_exe(exe, args=args[0] if args else ()).returncode == 0
    assert linked_modules(exe) == expected


@pytest.mark.skipif(not find_nvcc(), reason="nvcc not found: no CUDA build to link")
@pytest.mark.parametrize("program", [CUDA_PROGRAM, CUDA_REDUCE], ids=["region", "reduce"])
def test_cuda_build_links_the_device_runtime(program, tmp_path):
    text, expected = program
    src = tmp_path / "cuda.cairn"
    src.write_text(text)
    exe = tmp_path / "cuda"
    build(src, exe, "--target", "sm_90", cell=False, env={"CAIRN_NVCC": find_nvcc()})
    assert linked_modules(exe) == expected


def test_every_module_has_a_program():
    """The programs above cover every module the lowering records."""
    covered = set().union(*(entry[1] for entry in PROGRAMS.values()))
    assert covered == set(MARKERS) - {"float", "enclose_digest"}  # no generated code calls these
