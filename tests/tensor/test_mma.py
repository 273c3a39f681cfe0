"""mma_unordered against an independent model (mma_model.py): the host's reference loop
and the device tiling emulated on the host (runtime/cairn_mma_tiled.c) give the numpy
float32 model's bits exactly, and lie within the contract's bound of the exact rational
sum, for f16, bf16, f8e4m3 and f8e5m2 operands, on shapes with partial 64 x 64 tiles and
partial 32-deep k steps in every direction."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import harness, run  # noqa: E402
from mma_model import (FORMAT_NAMES, bound_violations, case, harness_input,  # noqa: E402
                       reference_bits)

# (m, n, k): tiny, one full tile, and partial tiles in m, n and k (k % 32 and k % 16).
SHAPES = [(1, 1, 1), (2, 3, 5), (1, 9, 0), (64, 64, 32), (65, 63, 33), (70, 129, 47), (3, 66, 100)]


def run_cases(cases, mode):
    r = run([harness("mma_run")], input=harness_input(cases, mode), timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == len(cases)
    return [[int(x, 16) for x in line.split()] for line in lines]


@pytest.fixture(scope="module")
def cases():
    return [case(f"{fmt}-{m}x{n}x{k}", fmt, m, n, k) for fmt in FORMAT_NAMES for m, n, k in SHAPES]


@pytest.mark.parametrize("mode", ["ref", "tiled"])
def test_bit_for_bit_against_the_model_and_within_the_bound(cases, mode):
    results = run_cases(cases, mode)
    for (fmt, m, n, k, cb, ab, bb), got in zip(cases, results):
        want = reference_bits(fmt, m, n, k, cb, ab, bb)
        diff = [i for i in range(m * n) if got[i] != want[i]]
        assert not diff, f"{mode} {fmt} {m}x{n}x{k}: {len(diff)} outputs differ, first at {diff[0]}"
        bad = bound_violations(fmt, m, n, k, cb, ab, bb, got)
        assert not bad, f"{mode} {fmt} {m}x{n}x{k}: {bad[:3]}"


def test_the_model_sees_a_wrong_order():
    """The model is not blind: adding the products in decreasing k changes some bits."""
    fmt, m, n, k, cb, ab, bb = case("order", "f16", 8, 8, 64)
    want = reference_bits(fmt, m, n, k, cb, ab, bb)
    rev_a = [ab[i * k + (k - 1 - p)] for i in range(m) for p in range(k)]
    rev_b = [bb[(k - 1 - p) * n + j] for p in range(k) for j in range(n)]
    assert reference_bits(fmt, m, n, k, cb, rev_a, rev_b) != want


def test_the_bound_catches_an_error_of_one_bound():
    """A result moved past the bound is reported (the check can fail)."""
    fmt, m, n, k, cb, ab, bb = case("bound", "bf16", 2, 2, 4)
    got = run_cases([(fmt, m, n, k, cb, ab, bb)], "ref")[0]
    assert not bound_violations(fmt, m, n, k, cb, ab, bb, got)
    moved = list(got)
    moved[0] ^= 0x00100000             # far past (k + 1) * 2^-22 relative
    assert bound_violations(fmt, m, n, k, cb, ab, bb, moved)


@pytest.mark.matrix
@pytest.mark.parametrize("fmt", FORMAT_NAMES)
def test_larger_shapes_tiled(fmt):
    cases = [case(f"big-{fmt}-{s}", fmt, *s) for s in [(130, 127, 161), (64, 200, 95)]]
    for (f, m, n, k, cb, ab, bb), got in zip(cases, run_cases(cases, "tiled")):
        assert got == reference_bits(f, m, n, k, cb, ab, bb)
