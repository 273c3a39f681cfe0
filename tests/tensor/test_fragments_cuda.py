"""Tensor-core fragments for CUDA targets (compiler/lower/lower_mma.c, runtime/
cairn_fragment_cuda.h): the spec's one-warp WMMA program, examples/tensor/tile64 (WMMA)
and tile32 (mma.sync, A from a swizzled shared stage), tests/tensor/programs/mma_sync_swizzled (A from a swizzled stage too), and
the two other tests/tensor programs with f16 and with bf16 operands build for --target sm_90, and their device half compiles
to PTX for sm_80, sm_90 and sm_120 (warnings are errors). The PTX must hold what the
lowering promises: WMMA programs multiply with wmma.mma.sync (the bf16 form for bf16)
and load with wmma.load; mma.sync programs multiply with mma.sync.aligned.m16n8k16 (the
bf16 form for bf16) fed by ldmatrix (.x4 for A, .x2.trans for B) and no WMMA; and no
program has a fused multiply-add (fma.). No GPU is needed, and none ran these here.

nvcc is slow, so each program's PTX is cached under the cell's build folder, keyed by
what cairn generates (--emit-only runs no compiler), the runtime headers and nvcc."""
import hashlib
import pathlib
import re
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import BIN, ROOT, TBIN, cairn_cell_flags, find_nvcc, run  # noqa: E402

NVCC = find_nvcc()
pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not installed: CUDA targets are not checked")

TARGETS = ["sm_80", "sm_90", "sm_120"]
PTX_FLAGS = ["-std=c++17", "-O2", "--fmad=false", "-prec-div=true", "-prec-sqrt=true", "-ftz=false",
             "-Werror", "all-warnings", "-DCAIRN_CUDA=1", "-ptx"]
CACHE = TBIN.parent / "fragment-ptx"
TENSOR = pathlib.Path(__file__).resolve().parent / "programs"

EXAMPLE_MAIN = """
fn main() -> i32 {
  buffer c:f32[M * N] @device = zeroed;
  buffer a:f16[M * K] @device = zeroed;
  buffer b:f16[K * N] @device = zeroed;
  NAME(c, a, b);
  return 0;
}
"""
SPEC_MAIN = """
fn main() -> i32 {
  buffer out:f32[256] @device = zeroed;
  buffer c:f32[256] @device = zeroed;
  buffer a:f16[256] @device = zeroed;
  buffer b:f16[256] @device = zeroed;
  tile(out, c, a, b);
  return 0;
}
"""


def bf16(text):
    return re.sub(r"\bf16\b", "bf16", text)


def sources():
    """{name: (program text, family, bf16)}."""
    wmma = (TENSOR / "wmma_tile.cairn").read_text()
    mma = (TENSOR / "mma_sync_tile.cairn").read_text()
    return {
        "spec_fragments": ((ROOT / "tests/frontend/spec/fragments_tile.cairn").read_text() + SPEC_MAIN, "wmma", False),
        "tile64": ((ROOT / "examples/tensor/tile64.cairn").read_text() + EXAMPLE_MAIN.replace("NAME", "tile64"),
                   "wmma", False),
        "tile32": ((ROOT / "examples/tensor/tile32.cairn").read_text() + EXAMPLE_MAIN.replace("NAME", "tile32"),
                   "mma", False),
        "wmma_tile": (wmma, "wmma", False),
        "wmma_tile_bf16": (bf16(wmma), "wmma", True),
        "mma_sync_tile": (mma, "mma", False),
        "mma_sync_tile_bf16": (bf16(mma), "mma", True),
        "mma_sync_swizzled": ((TENSOR / "mma_sync_swizzled.cairn").read_text(), "mma", False),
    }


SOURCES = sources()


def device_ptx(name):
    """{target: PTX} of the program's device half, or an error message."""
    CACHE.mkdir(parents=True, exist_ok=True)
    src = CACHE / f"{name}.cairn"
    src.write_text(SOURCES[name][0])
    scratch = CACHE / f"{name}.emit"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    r = run([BIN / "cairn", "build", src, "--target", "sm_90", "--emit-c", scratch, "--emit-only",
             "-o", scratch / name], timeout=300)
    if r.returncode != 0:
        return f"cairn build --target sm_90 {name}: exit {r.returncode}\n{r.stderr}"
    h = hashlib.sha256()
    for part in [*sorted(scratch.iterdir()), *sorted((ROOT / "runtime").glob("*.h")), NVCC]:
        h.update(pathlib.Path(part).read_bytes())
    h.update(" ".join(PTX_FLAGS + TARGETS).encode())
    folder = CACHE / f"{name}-{h.hexdigest()[:32]}"
    if not (folder / "done").exists():
        for old in CACHE.glob(f"{name}-*"):
            shutil.rmtree(old, ignore_errors=True)
        folder.mkdir()
        for target in TARGETS:
            r = run([NVCC, f"-arch={target}", *PTX_FLAGS, f"-I{ROOT / 'runtime'}", scratch / f"{name}_dev.cu",
                     "-o", folder / f"{target}.ptx"], timeout=600)
            if r.returncode != 0:
                return f"nvcc -arch={target} {name}: exit {r.returncode}\n{r.stderr}"
        (folder / "done").write_text("ok\n")
    return {t: (folder / f"{t}.ptx").read_text() for t in TARGETS}


@pytest.fixture(scope="module")
def built():
    return {}


def ptx_of(built, name):
    if name not in built:
        built[name] = device_ptx(name)
    assert isinstance(built[name], dict), built[name]
    return built[name]


F16_WMMA = "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32"
BF16_WMMA = "wmma.mma.sync.aligned.row.row.m16n16k16.f32.bf16.bf16.f32"
F16_MMA = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
BF16_MMA = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_fragments_reach_the_tensor_cores_without_fma(built, name):
    _, family, is_bf16 = SOURCES[name]
    for target, text in ptx_of(built, name).items():
        where = f"{name} {target}"
        assert not re.search(r"\bfma\.", text), f"{where}: a fused multiply-add"
        if family == "wmma":
            assert (BF16_WMMA if is_bf16 else F16_WMMA) in text, where
            assert (F16_WMMA if is_bf16 else BF16_WMMA) not in text, where
            assert "wmma.load.a.sync" in text and "wmma.load.b.sync" in text, where
            assert "wmma.load.c.sync" in text and "wmma.store.d.sync" in text, where
            assert "m16n8k16" not in text and "ldmatrix" not in text, where
            continue
        mma = BF16_MMA if is_bf16 else F16_MMA
        assert mma in text and (F16_MMA if is_bf16 else BF16_MMA) not in text, where
        assert "wmma." not in text, where
        # fed by ldmatrix: A's four 8 x 8 matrices, B's two transposed, before the product
        a = text.find("ldmatrix.sync.aligned.m8n8.x4.shared.b16")
        b = text.find("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16")
        assert 0 <= a < text.find(mma) and 0 <= b < text.find(mma), where


def test_swizzled_stages_are_read_by_ldmatrix(tmp_path):
    """The lowering asks for ldmatrix only where the layout keeps 16-byte runs intact
    (both swizzles do); the generated call says which it chose, with the swizzle."""
    for name, swizzle in [("mma_sync_swizzled", ["1", "3", "3"]), ("tile32", ["2", "3", "3"])]:
        src = tmp_path / f"{name}.cairn"
        src.write_text(SOURCES[name][0])
        r = run([BIN / "cairn", "build", src, "--target", "sm_90", "--emit-c", tmp_path / "c", "--emit-only",
                 "-o", tmp_path / name], timeout=300)
        assert r.returncode == 0, r.stderr
        cu = (tmp_path / "c" / f"{name}_dev.cu").read_text()
        assert cu.count('#include "cairn_fragment_cuda.h"') == 1
        loads = re.findall(r"cairn_mma_load_(a|b)<(\d)>\(\w+, \w+, \w+, \(\(cairn_layout\)\{([^}]*)\}", cu)
        assert sorted({(k, runs) for k, runs, _ in loads}) == [("a", "1"), ("b", "1")], name
        a_layout = [lit for k, _, lit in loads if k == "a"][0].replace("u", "").split(", ")
        assert a_layout[4:7] == swizzle, name


def test_the_swizzled_program_equals_the_reference_emulated():
    """mma_sync_swizzled's own check (every bit against mma_unordered on host views) run
    emulated: the swizzled stage it fills by offset is the A the fragments read."""
    r = run([BIN / "cairn", "run", *cairn_cell_flags(), str(TENSOR / "mma_sync_swizzled.cairn")], timeout=300)
    assert r.returncode == 0, r.stderr


def test_a_cuda_build_links_and_says_when_there_is_no_gpu(tmp_path):
    """The whole build (nvcc for the device half, the host's compiler, the link) of an
    mma.sync program; without a GPU the program exits 126 (could not run) with one line."""
    out = tmp_path / "mst"
    r = run([BIN / "cairn", "build", TENSOR / "mma_sync_tile.cairn", "--target", "sm_90", "-o", out], timeout=600)
    assert r.returncode == 0, r.stderr
    r = run([out], timeout=60)
    if r.returncode == 0:
        pytest.skip("this machine has a GPU: make gpu checks the device run")
    assert r.returncode == 126 and r.stderr.startswith("cairn: no CUDA device"), r.stderr
