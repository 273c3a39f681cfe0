"""CUDA builds (docs/devices.md): every device test program and example builds for
--target sm_90 with nvcc (warnings are errors, host and device side) and compiles to PTX
for sm_80, sm_90 and sm_120, and the PTX keeps what the lowering promises: no fused
multiply-add anywhere (`fma.`), no flush-to-zero arithmetic (`.ftz`), IEEE division and
square root (div.rn, sqrt.rn), atom.global.add.f32/.f64 for atomic_add_unordered,
bar.sync for barriers and shfl.sync.bfly for the warp butterfly. No GPU is needed.

nvcc is slow, so the builds run two at a time and their results are cached under the
cell's build folder, keyed by what cairn generates (`--emit-only`, which runs no
compiler), the runtime headers, nvcc and the flags: a rerun whose generated code did not
change costs one lowering per program."""
import concurrent.futures
import hashlib
import pathlib
import re
import shutil

import pytest

from cairntest import BIN, ROOT, TBIN, run
from cudalib import NVCC, PTX_FLAGS, needs_nvcc
from devicelib import PROGRAMS, accepted, has_gpu

TARGETS = ["sm_80", "sm_90", "sm_120"]
SOURCES = sorted(PROGRAMS.glob("*.cairn")) + sorted((ROOT / "examples").glob("*.cairn"))
CACHE = TBIN.parent / "device-ptx"


def key(src, scratch):
    """What the build depends on: the generated C and CUDA C++ (cairn build --emit-only,
    no compiler runs), the runtime headers, nvcc and the flags."""
    res = run([BIN / "cairn", "build", src, "--target", "sm_90", "--emit-c", scratch, "--emit-only",
               "-o", scratch / src.stem])
    if res.returncode != 0:
        return None
    h = hashlib.sha256()
    for part in [*sorted(scratch.iterdir()), *sorted((ROOT / "runtime").glob("*.h")), NVCC]:
        h.update(pathlib.Path(part).read_bytes())
    h.update(" ".join(PTX_FLAGS + TARGETS).encode())
    return h.hexdigest()[:32]


def build_one(src):
    """Builds src for sm_90 and compiles its .cu to PTX for every target; returns the
    folder holding TARGET.ptx (cached: older entries of the same program are removed)."""
    scratch = CACHE / f"{src.stem}.emit"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    k = key(src, scratch)
    folder = CACHE / f"{src.stem}-{k}"
    if k and (folder / "done").exists():
        return folder, None
    for old in CACHE.glob(f"{src.stem}-*"):
        shutil.rmtree(old, ignore_errors=True)
    folder.mkdir(parents=True)
    res = run([BIN / "cairn", "build", src, "--target", "sm_90", "--emit-c", folder,
               "-o", folder / src.stem], timeout=900)
    if res.returncode != 0:
        return folder, f"cairn build --target sm_90 {src}: exit {res.returncode}\n{res.stderr}"
    cu = folder / f"{src.stem}_dev.cu"
    for target in TARGETS:
        res = run([NVCC, "-ptx", f"-arch={target}", *PTX_FLAGS, f"-I{ROOT / 'runtime'}", cu,
                   "-o", folder / f"{target}.ptx"], timeout=900)
        if res.returncode != 0:
            return folder, f"nvcc -ptx -arch={target} {cu}: exit {res.returncode}\n{res.stderr}"
    (folder / "done").write_text("ok\n")
    return folder, None


@pytest.fixture(scope="module")
def built():
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        return dict(zip(SOURCES, pool.map(build_one, SOURCES)))


def ptx(built, src, target):
    accepted(src)
    folder, error = built[src]
    assert error is None, error
    return (folder / f"{target}.ptx").read_text()


@needs_nvcc
@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.stem)
def test_builds_and_has_no_fma(built, src):
    for target in TARGETS:
        text = ptx(built, src, target)
        assert not re.search(r"\bfma\.", text), f"{src.name} {target}: a fused multiply-add"
        assert not re.search(r"\.ftz\b", text), f"{src.name} {target}: flush-to-zero arithmetic"


@needs_nvcc
def test_atomic_float_add_is_atom_global_add(built):
    for target in TARGETS:
        text = ptx(built, PROGRAMS / "atomics.cairn", target)
        assert "atom.global.add.f32" in text and "atom.global.add.f64" in text, target


@needs_nvcc
def test_division_and_sqrt_are_ieee(built):
    for target in TARGETS:
        text = ptx(built, PROGRAMS / "lanes_exact.cairn", target)
        assert re.search(r"\bdiv\.rn\.f32", text) and re.search(r"\bsqrt\.rn\.f32", text), target
        assert not re.search(r"\bdiv\.(approx|full)\.f32", text), target


@needs_nvcc
def test_barriers_and_butterfly(built):
    for target in TARGETS:
        text = ptx(built, PROGRAMS / "coop_block.cairn", target)
        assert re.search(r"\bbar\.sync\b|\bbarrier\.sync\b", text), target
        assert "shfl.sync.bfly" in text and "shfl.sync.idx" in text, target


def test_no_nvcc_is_one_line_and_exit_2(tmp_path):
    res = run([BIN / "cairn", "build", PROGRAMS / "trap_lane.cairn", "--target", "sm_90",
               "-o", tmp_path / "x"], env={"CAIRN_NVCC": "/nonexistent/nvcc"})
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "nvcc not found" in lines[0], res.stderr


@needs_nvcc
@pytest.mark.skipif(has_gpu(), reason="a GPU is here: make gpu runs the device half")
def test_no_gpu_at_run_time_is_one_line_and_exit_126(built):
    folder, error = built[PROGRAMS / "trap_lane.cairn"]
    assert error is None, error  # trap_lane uses only what the checker accepts
    res = run([folder / "trap_lane"])
    assert res.returncode == 126, res.stderr   # could not run: never main's own status
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("cairn: no CUDA device"), res.stderr


def test_emit_only_writes_both_halves_without_nvcc(tmp_path):
    out = tmp_path / "emit"
    res = run([BIN / "cairn", "build", PROGRAMS / "trap_lane.cairn", "--target", "sm_90", "--emit-c",
               out, "--emit-only", "-o", tmp_path / "x"], env={"CAIRN_NVCC": "/nonexistent/nvcc"})
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in out.iterdir()) == ["trap_lane.c", "trap_lane_dev.cu"]
    cu = (out / "trap_lane_dev.cu").read_text()
    assert "__global__" in cu and "cairn_launch" in (out / "trap_lane.c").read_text()
    assert not (tmp_path / "x").exists() and not (tmp_path / "x.receipt.json").exists()
