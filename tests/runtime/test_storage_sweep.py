"""Exhaustive f32 -> storage float sweeps (tests/c/float_sweep.c): the runtime against an
independent reference over f32 bit patterns, and f32 -> f16 against the CPU's F16C
instruction where it has one. `make matrix` sweeps all 2^32 inputs per format in the
plain cells (10-25 s each on one core); the sanitizer cells and `make test` sweep
slices around every boundary of each format."""
import pytest

from cairntest import SAN, harness, run

FORMATS = ["f16", "bf16", "f8e4m3", "f8e5m2"]

# Magnitude slices (f32 bits) around the smallest subnormal, the smallest normal and
# the largest finite value of each format, plus f32's own top and NaNs.
SLICES = {
    "f16": [(0x32F00000, 0x33900000), (0x38700000, 0x38900000), (0x477E0000, 0x47900000)],
    "bf16": [(0x00000000, 0x00100000), (0x007F0000, 0x00810000), (0x7F700000, 0x7F900000)],
    "f8e4m3": [(0x3A700000, 0x3B900000), (0x3C700000, 0x3C900000), (0x43D00000, 0x43F00000)],
    "f8e5m2": [(0x36F00000, 0x37900000), (0x38700000, 0x38900000), (0x475F0000, 0x47710000)],
}
TOP = (0x7F7F0000, 0x7FFFFFFF)


def sweep(fmt, first, last, timeout=600):
    res = run([harness("float_sweep"), fmt, f"{first:x}", f"{last:x}"], timeout=timeout)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert " 0 differ from the reference" in res.stdout
    return res.stdout


@pytest.mark.parametrize("fmt", FORMATS)
def test_sweep_slices_around_every_boundary(fmt):
    for first, last in SLICES[fmt] + [TOP]:
        sweep(fmt, first, last)


@pytest.mark.matrix
@pytest.mark.parametrize("fmt", FORMATS)
def test_sweep_every_f32(fmt):
    """All 2^32 inputs in the plain cells; a 2^26-magnitude slice under the sanitizers,
    which check the same code paths for memory and undefined behaviour."""
    first, last = (0, 0x7FFFFFFF) if SAN == "none" else (0x36000000, 0x3A000000)
    out = sweep(fmt, first, last, timeout=1200)
    if fmt == "f16" and "F16C differs on 0" not in out:
        assert "F16C not checked" in out  # a CPU without F16C
