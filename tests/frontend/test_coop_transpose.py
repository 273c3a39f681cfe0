"""The tiled transpose with a stride that is not a constant (issue 38): the phase rule
accepts it (tests/golden/check/coop_phase_stride_ok.cairn), and run emulated it is
numpy's .T exactly, for several tile counts (a transpose moves bits, it never rounds).
Its near misses stay refused (coop_phase_stride.cairn, through test_golden_check.py)."""
import numpy as np
import pytest

from cairntest import BIN, ROOT, cairn_cell_flags, run

PROGRAM = ROOT / "tests/golden/check/coop_phase_stride_ok.cairn"


@pytest.mark.parametrize("tn", [1, 2, 3])
def test_transpose_is_numpys(tmp_path, tn):
    n = 32 * tn
    x = np.random.default_rng(tn).standard_normal(n * n).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    r = run([BIN / "cairn", "run", PROGRAM, "--target", "sm_90", "--emulate", *cairn_cell_flags(),
             "--out", tmp_path / "out", "--", f"tn={tn}", f"x={tmp_path / 'x.npy'}", "y=zeros"],
            timeout=600)
    assert r.returncode == 0, r.stderr
    y = np.load(tmp_path / "out" / "y.npy")
    assert np.array_equal(y.view(np.uint32), x.reshape(n, n).T.reshape(-1).view(np.uint32))


def test_the_rule_does_not_need_the_stride():
    r = run([BIN / "cairn", "check", PROGRAM])
    assert r.returncode == 0, r.stderr


def test_a_refused_stride_says_the_limit():
    """The near misses name what the rule needs: the rests below a stride that is not a
    constant (the stores), or a barrier (the tile read before it is stored)."""
    r = run([BIN / "cairn", "check", ROOT / "tests/golden/check/coop_phase_stride.cairn"])
    helps = [line for line in r.stderr.splitlines() if line.startswith("help: ")]
    assert len(helps) == 4, r.stderr
    assert sum("row stride is not a constant" in h for h in helps) == 3, r.stderr
    assert sum("put a barrier" in h for h in helps) == 1, r.stderr
