"""An independent model of mma_unordered(m, n, k, c, a, b) for the tensor-core tests.

- The reference loop, bit for bit: numpy float32 arrays, c then one product at a time in
  increasing k, each product and each partial sum rounded by numpy's float32 arithmetic
  (IEEE round to nearest-even; numpy never fuses a multiply and an add).
- The exact sum, as Python integers: every operand is a dyadic rational, so scaling by a
  power of two makes c, a and b integers, and an object-dtype matmul sums the products
  with no rounding at all.
- The contract's bound: |result - exact| <= (k + 1) * 2^-22 * (|c| + sum |a b|).

Operands are decoded by test_storage_model.py's format tables (written from the format
definitions), never by the runtime.
"""
import pathlib
import random
import struct
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "runtime"))
from test_storage_model import FORMATS  # noqa: E402

# Exponent ranges the generator draws from (unbiased), so every product stays inside
# f32's normal range (the contract's products are exact there) and sums stay finite.
EXPONENTS = {"f16": (-10, 10), "bf16": (-40, 40), "f8e4m3": (-6, 8), "f8e5m2": (-12, 12)}
FORMAT_NAMES = list(EXPONENTS)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", float(x)))[0]


def f32_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def random_bits(rng, fmt, count, zeros=0.05):
    """Finite bit patterns of `fmt`: random sign and fraction, exponent inside EXPONENTS,
    some zeros and some subnormals."""
    f = FORMATS[fmt]
    lo, hi = EXPONENTS[fmt]
    out = []
    for _ in range(count):
        sign = f.sign_bit if rng.random() < 0.5 else 0
        roll = rng.random()
        if roll < zeros:
            out.append(sign)
            continue
        frac = rng.randrange(1 << f.man)
        if roll < 2 * zeros:
            out.append(sign | max(frac, 1))          # a subnormal
            continue
        e = rng.randint(max(lo + f.bias, 1), min(hi + f.bias, (1 << f.ebits) - 2)) if f.ieee else \
            rng.randint(max(lo + f.bias, 1), min(hi + f.bias, (1 << f.ebits) - 1))
        bits = sign | (e << f.man) | frac
        if not f.ieee and (bits & ~f.sign_bit) == (1 << (f.ebits + f.man)) - 1:
            bits -= 1                                # E4M3's only NaN: take the largest finite
        out.append(bits)
    return out


def random_c(rng, count):
    """f32 bits of moderate magnitude (and some zeros, and one -0.0 in a while)."""
    out = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.03:
            out.append(0x80000000 if roll < 0.015 else 0)
        else:
            out.append(f32_bits((rng.random() * 2 - 1) * 2.0 ** rng.randint(-8, 8)))
    return out


def values(fmt, bits):
    f = FORMATS[fmt]
    return [f.decode(b) for b in bits]


def reference_bits(fmt, m, n, k, c_bits, a_bits, b_bits):
    """The reference loop's result bits, computed with numpy float32."""
    c = np.array([f32_value(b) for b in c_bits], dtype=np.float32).reshape(m, n)
    a = np.array([float(v) for v in values(fmt, a_bits)], dtype=np.float32).reshape(m, k)
    b = np.array([float(v) for v in values(fmt, b_bits)], dtype=np.float32).reshape(k, n)
    for p in range(k):
        prod = np.multiply.outer(a[:, p], b[p, :]).astype(np.float32)
        c = (c + prod).astype(np.float32)
    return [int(x) for x in c.reshape(-1).view(np.uint32)]


def bound_violations(fmt, m, n, k, c_bits, a_bits, b_bits, result_bits):
    """Outputs outside (k + 1) * 2^-22 * (|c| + sum |a b|) of the exact sum: a list of
    (index, result, exact) for each one (empty when the contract holds)."""
    scale = 300                                      # 2^300 makes every value an integer
    def ints(vals):
        return np.array([int(Fraction(v) * 2 ** scale) for v in vals], dtype=object)
    a = ints(values(fmt, a_bits)).reshape(m, k)
    b = ints(values(fmt, b_bits)).reshape(k, n)
    c = ints([f32_value(x) for x in c_bits]).reshape(m, n) * (2 ** scale)
    exact = c + (a.dot(b) if k else 0)               # scaled by 2^600
    size = abs(c) + (np.abs(a).dot(np.abs(b)) if k else 0)
    bad = []
    for idx in range(m * n):
        r = f32_value(result_bits[idx])
        r_int = int(Fraction(r) * 2 ** (2 * scale))
        e = exact.reshape(-1)[idx]
        if abs(r_int - e) * 2 ** 22 > (k + 1) * size.reshape(-1)[idx]:
            bad.append((idx, r, Fraction(e, 2 ** (2 * scale))))
    return bad


def case(name, fmt, m, n, k):
    """A generated case: (fmt, m, n, k, c_bits, a_bits, b_bits), seeded by its name."""
    rng = random.Random(name)
    return (fmt, m, n, k, random_c(rng, m * n), random_bits(rng, fmt, m * k), random_bits(rng, fmt, k * n))


def harness_input(cases, mode):
    lines = []
    for fmt, m, n, k, cb, ab, bb in cases:
        lines.append(f"{fmt} {mode} {m} {n} {k}")
        lines.append(" ".join(f"{x:x}" for x in cb + ab + bb))
    return "\n".join(lines) + "\n"
