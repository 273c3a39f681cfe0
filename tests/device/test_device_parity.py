"""Where the emulation and a device parted, mended (issue 23, part A), end to end: each
test builds a program fresh, runs it emulated at pool widths 1, 2, 7 and 16, and holds
the result to an independent model. Tests of the CUDA build's PTX are in
test_cuda_lanes.py; the device half of every new program runs under `make gpu`."""
import pathlib

import pytest

from cairntest import run
from devicelib import PROGRAMS, build, observe, values

WIDTHS = [1, 2, 7, 16]


def run_at(exe, width, **env):
    return run([exe], env={"CAIRN_THREADS": str(width), **env}, timeout=300)


# ---- item 5: a pooled integer product traps exactly when the index-order fold does ----

PRODUCT = """
fn host_prod(n:usize, x:ro<i64>[n]) -> i64 = reduce * parallel i in n yield x[i];
fn dev_prod(n:usize, x:ro<i64>[n]@device) -> i64 = reduce * parallel i in n yield x[i];
fn main() -> i32 {
  let n:usize = 200000;
  buffer h:i64[n] = zeroed;
  for i in 0..n { h[i] = 1; }
  for k in 1..40 { h[k * 5000] = 2147483648; }
  ZERO
  buffer d:i64[n]@device = zeroed;
  copy(d, h);
  observe("WHICH", WHICH_prod(n, WHICHARG));
  return 0;
}
"""


@pytest.mark.parametrize("which", ["host", "dev"])
@pytest.mark.parametrize("zero,traps", [("h[3] = 0;", False), ("h[199999] = 0;", True), ("", True),
                                        ("h[12000] = 0;", False)])
def test_pooled_product_traps_as_the_index_order_fold(tmp_path, which, zero, traps):
    """Factors 2^31 every 5000 indices (2^62 fits i64, 2^93 does not): the fold in index
    order reaches 2^93 at index 15000 unless a zero came first. Before, a worker's checked
    partial trapped by schedule where a zero came first (8 of 60 runs at widths 2, 7 and
    16 on the 2-core development machine); each width runs five times."""
    src = tmp_path / "prod.cairn"
    src.write_text(PRODUCT.replace("ZERO", zero).replace("WHICHARG", "h" if which == "host" else "d")
                   .replace("WHICH", which))
    exe = build(src, tmp_path / "prod")
    for w in [w for w in WIDTHS for _ in range(5)]:
        if traps:
            res = run_at(exe, w)
            line = 3 if which == "dev" else 2
            assert res.returncode != 0, (w, res.stderr)
            assert f"trap: integer overflow at {src}:{line}:" in res.stderr, (w, res.stderr)
        else:
            assert values(observe(exe, tmp_path / f"w{w}", w), which) == [0]


# ---- items 1 and 2: warp operations in loops and branches, each thread's own condition --

def test_warp_operations_in_loops_and_branches_follow_each_warp(tmp_path):
    """programs/warp_branches.cairn (its dev_ = ref_ checks run in test_emulate.py) held
    to a numpy model of what each warp computes: a loop of w + 1 rounds in warp w
    (before, every warp ran thread 0's bounds, and the program did not build: the
    per-block arrays were declared inside the loop), a loop bound and a condition made
    of warp reductions, and warps counted from thread 16 in a block of threads 16..80."""
    import numpy as np
    exe = build(PROGRAMS / "warp_branches.cairn", tmp_path / "wb")
    for w in WIDTHS:
        obs = observe(exe, tmp_path / f"w{w}", w)
        k = np.array(values(obs, "k"), dtype=np.int64).reshape(-1, 32)  # one row per warp
        warp = np.arange(k.shape[0]) % 4                                # T = 128: 4 warps
        sums = k.sum(axis=1)
        loop = np.array([sum(sums[b] + 32 * j for j in range(warp[b] + 1)) for b in range(len(k))])
        assert values(obs, "dev_warp_loop") == list(np.repeat(loop, 32))
        bound = [sum(j + 1 for j in range(int((row & 3).max()))) for row in k]
        assert values(obs, "dev_warp_bound") == list(np.repeat(bound, 32))
        cond = np.where(k.min(axis=1) > -40000, k.max(axis=1), -k.max(axis=1))
        assert values(obs, "dev_warp_cond") == list(np.repeat(cond, 32))
        offset = np.where(np.arange(12)[:, None] % 2 == 1, sums[:12, None], k[:12, :1])
        assert values(obs, "dev_offset")[:12 * 32] == list(np.broadcast_to(offset, (12, 32)).ravel())
