#!/usr/bin/python3
"""Writes the frozen bracket GEMM case set, tests/data/enclose/cases.txt.

Run once; the file is committed together with the SHA-256 of its results (cases.sha256)
and must never change silently: the digest is what gcc and clang builds, every thread
count and the standalone checker are compared against. Usage: make_cases.py OUT
"""
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "runtime"))
from enclose_model import Case, SIGN, random_normal_bits, to_bits, write_cases  # noqa: E402


def normal(name, m, n, k, width=64):
    rng = random.Random(name)
    return Case(name, width, m, n, k, random_normal_bits(rng, m * k, width),
                random_normal_bits(rng, k * n, width))


def spread(name, m, n, k, lo, hi):
    rng = random.Random(name)

    def draw():
        return to_bits(rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** rng.randint(lo, hi), 64)

    return Case(name, 64, m, n, k, [draw() for _ in range(m * k)],
                [draw() for _ in range(k * n)])


def cases():
    rng = random.Random("frozen")
    sub = [rng.choice((1, 3, 0xFFFFF, 0x000FFFFFFFFFFFFF)) | rng.choice((0, SIGN[64]))
           for _ in range(4 * 9)]
    ints_a = [to_bits(float(rng.randint(-99, 99)), 64) for _ in range(6 * 40)]
    ints_b = [to_bits(float(rng.randint(-99, 99)), 64) for _ in range(40 * 7)]
    xs = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-20, 20) for _ in range(30)]
    return [
        normal("normal_16x16x256", 16, 16, 256),
        normal("tails_5x13x33", 5, 13, 33),
        normal("long_k_2x3x4096", 2, 3, 4096),
        normal("f32_8x8x128", 8, 8, 128, 32),
        Case("subnormal_4x3x9", 64, 4, 3, 9, sub,
             [to_bits(rng.choice((1.0, -0.5, 2.0 ** 60, 3.0)), 64) for _ in range(27)]),
        Case("cancel_1x1x61", 64, 1, 1, 61, [to_bits(x, 64) for x in xs + [-x for x in xs]]
             + [to_bits(2.0 ** -30, 64)], [to_bits(0.75, 64)] * 60 + [to_bits(2.0 ** -31, 64)]),
        spread("mixed_scale_6x5x40", 6, 5, 40, -300, 300),
        spread("wide_3x4x20", 3, 4, 20, -1000, 1000),
        Case("overflow_2x2x2", 64, 2, 2, 2,
             [0x7FEFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF, to_bits(1.0, 64)],
             [to_bits(1.0, 64), to_bits(-1.0, 64), to_bits(2.0 ** -60, 64), to_bits(3.0, 64)]),
        Case("ints_6x7x40", 64, 6, 7, 40, ints_a, ints_b),
        Case("budget_1x2x16", 64, 1, 2, 16, [to_bits(2.0 ** 75, 64), to_bits(2.0 ** -74, 64)] * 8,
             [to_bits(2.0 ** -70, 64), to_bits(2.0 ** 79, 64)] * 16),
    ]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_cases.py OUT")
    write_cases(sys.argv[1], cases())
