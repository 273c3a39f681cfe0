"""Fragments emulated on the host: a WMMA tile (the spec's one-warp program) and an
mma.sync tile (ldmatrix operands, the accumulator set through the ISA's share, mma_get)
give the reference loop's bits for every output (each program compares itself with
mma_unordered on host views and exits 1 on a difference), at every pool width, and
the receipt names each family's instruction."""
import json
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import BIN, cairn_cell_flags, run  # noqa: E402

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


@pytest.mark.parametrize("name", ["wmma_tile", "mma_sync_tile"])
def test_fragments_equal_the_reference_at_every_width(tmp_path, name):
    digests = set()
    for threads in ["1", "3", "8"]:
        log = tmp_path / f"obs{threads}.jsonl"
        r = run([BIN / "cairn", "run", *cairn_cell_flags(), str(PROGRAMS / f"{name}.cairn"), "--observe", str(log)],
                env={"CAIRN_THREADS": threads}, timeout=300)
        assert r.returncode == 0, f"{name} at {threads} threads: exit {r.returncode}\n{r.stderr}"
        digests.add(log.read_text())
    assert len(digests) == 1


@pytest.mark.parametrize("name,instruction", [
    ("wmma_tile", "wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32"),
    ("mma_sync_tile", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32")])
def test_the_receipt_names_the_family(tmp_path, name, instruction):
    out = tmp_path / name
    r = run([BIN / "cairn", "build", str(PROGRAMS / f"{name}.cairn"), "-o", str(out)], timeout=300)
    assert r.returncode == 0, r.stderr
    receipt = json.loads((tmp_path / f"{name}.receipt.json").read_text())
    entries = [e for e in receipt["numerics"]["tile"] if e.get("op") == "mma"]
    assert [e["instruction"]["sm_90"] for e in entries] == [instruction]


def test_a_fragment_past_its_array_traps(tmp_path):
    src = tmp_path / "short.cairn"
    src.write_text("fn f(n:usize, a:ro<f16>[n]@device, out:rw<f32>[32]@device) {\n"
                   "  blocks g in 1 threads t in 32 {\n"
                   "    let x = mma_load[WmmaA[f16, 16, 16, 16]](a, rows(16, 16), 0, 0);\n"
                   "    out[t] = 1.0;\n  }\n}\n"
                   "fn main() -> i32 {\n  buffer a:f16[100] @device = zeroed;\n"
                   "  buffer out:f32[32] @device = zeroed;\n  f(100, a, out);\n  return 0;\n}\n")
    r = run([BIN / "cairn", "run", *cairn_cell_flags(), str(src)], timeout=300)
    assert r.returncode != 0
    assert "trap: a fragment past the end of its array" in r.stderr and "short.cairn:3:" in r.stderr


@pytest.mark.parametrize("name,calls", [
    ("wmma_tile", ["cairn_wmma_load<cairn_wmma_a<16, 16, 16, __half>, __half>(",
                   "cairn_wmma_load_acc<cairn_wmma_acc<16, 16, 16>>(", "cairn_wmma_mma<", "cairn_wmma_store<"]),
    ("mma_sync_tile", ["cairn_mma_load_a<1>(", "cairn_mma_load_b<1>(", "cairn_mma_fill(", "cairn_mma_sync<0>(",
                       "cairn_mma_store(", "__uint_as_float("])])
def test_a_cuda_target_lowers_fragments(tmp_path, name, calls):
    """A CUDA build lowers fragments to the device helpers (runtime/cairn_fragment_cuda.h;
    tests/tensor/test_fragments_cuda.py checks the PTX), with no compiler run here."""
    r = run([BIN / "cairn", "build", str(PROGRAMS / f"{name}.cairn"), "--target", "sm_90", "--emit-c",
             str(tmp_path / "c"), "--emit-only", "-o", str(tmp_path / name)], timeout=300)
    assert r.returncode == 0, r.stderr
    cu = (tmp_path / "c" / f"{name}_dev.cu").read_text()
    assert cu.count('#include "cairn_fragment_cuda.h"') == 1
    for call in calls:
        assert call in cu, call
    assert "cairn_frag_mma(" not in cu and "cairn_frag_load_" not in cu   # not the emulation's
