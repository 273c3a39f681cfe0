"""examples/tensor: tile64 (the tiling mma_unordered fixes: WMMA) and tile32 (64 x 32
tiles of mma.sync fragments, a swizzled A stage) run emulated must give the reference
loop's bits for every output of a 130 x 70 x 97 f16 multiply (partial tiles in every
direction): the program below compares itself with mma_unordered on host views and
exits 1 on a difference. The values round: 7,346 of the 9,100 outputs of a loop in
increasing p differ from the same loop in decreasing p (numpy, float32), so equal bits
say the emulation adds in the reference's order, not only that it indexes right. Each
example runs with f16 operands as written and with bf16 (every f16 of it renamed).

The checker's phase rule (compiler/check/check_phase.c) accepts both: tile32's swizzled
stage is written through STAGE_A.at and read by fragments of STAGE_A, which the rule
decides on coordinates (a proved layout is injective)."""
import pathlib
import re
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import BIN, ROOT, cairn_cell_flags, run  # noqa: E402
from frontlib_path import check_codes  # noqa: E402
from tilelib import compare_main  # noqa: E402


@pytest.mark.parametrize("operand", ["f16", "bf16"])
@pytest.mark.parametrize("name", ["tile64", "tile32"])
def test_tile_equals_the_reference(tmp_path, name, operand):
    src = tmp_path / f"{name}_{operand}_main.cairn"
    text = (ROOT / f"examples/tensor/{name}.cairn").read_text() + compare_main(name)
    src.write_text(re.sub(r"\bf16\b", operand, text))
    assert not check_codes(src)
    r = run([BIN / "cairn", "run", *cairn_cell_flags(), str(src)], timeout=600)
    assert r.returncode == 0, r.stderr
