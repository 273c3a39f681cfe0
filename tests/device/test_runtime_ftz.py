"""The emulated device f32 atomic add flushes subnormal operands and results to the zero
of their sign, as PTX atom.add.f32 does (docs/devices.md), against a model in exact
rationals: flush each operand, the exact sum rounded once to nearest even (numpy's f32
add rounds correctly), flush the result. Boundary patterns around the smallest normal,
both signs, subnormal sums that become normal, normal sums that become subnormal, and
random pairs."""
import random
import struct
from fractions import Fraction

import numpy as np
import warnings

from cairntest import harness, run

TINY = Fraction(1, 2 ** 126)   # smallest normal f32


def f32(bits):
    return np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]


def bits(x):
    return struct.unpack("<I", np.float32(x).tobytes())[0]


def flush(bits_):
    return bits_ & 0x80000000 if (bits_ & 0x7F800000) == 0 else bits_


def model(a, b):
    x, v = f32(flush(a)), f32(flush(b))
    with warnings.catch_warnings():   # inf - inf and overflow are values here, not errors
        warnings.simplefilter("ignore")
        s = np.float32(x + v)
    if np.isfinite(x) and np.isfinite(v) and np.isfinite(s):  # one rounding, to the nearest
        exact = Fraction(float(x)) + Fraction(float(v))
        assert abs(Fraction(float(s)) - exact) <= abs(exact) * Fraction(1, 2 ** 24) + Fraction(1, 2 ** 150)
    return flush(bits(s))


def test_flushes_like_atom_add_f32():
    edge = [0x00000001, 0x00000002, 0x007FFFFF, 0x00400000, 0x00800000, 0x00800001, 0x01000000,
            0x3F800000, 0x00000000, 0x33800000, 0x7F7FFFFF, 0x7F800000]
    edge += [e | 0x80000000 for e in edge]
    rng = random.Random(11)
    pairs = [(a, b) for a in edge for b in edge]
    pairs += [(rng.getrandbits(32) & 0x80FFFFFF, rng.getrandbits(32) & 0x80FFFFFF) for _ in range(3000)]
    pairs += [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(2000)]
    pairs = [(a, b) for a, b in pairs if not (np.isnan(f32(a)) or np.isnan(f32(b)))]
    text = "".join(f"{a:08x} {b:08x}\n" for a, b in pairs)
    res = run([harness("device_ftz")], input=text, check=True)
    got = [int(w, 16) for w in res.stdout.split()]
    assert len(got) == len(pairs)
    for (a, b), g in zip(pairs, got):
        want = model(a, b)
        if np.isnan(f32(want)):
            assert np.isnan(f32(g)), (hex(a), hex(b))
        else:
            assert g == want, (hex(a), hex(b), hex(g), hex(want))
    # the flush is observable: 2^-149 + 2^-149 stays +0 on the device, 2^-148 on the host
    assert got[pairs.index((0x00000001, 0x00000001))] == 0
