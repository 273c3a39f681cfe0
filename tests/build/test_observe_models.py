"""Independent Python models of the golden observation programs: they recompute the
digests written in tests/golden/run/*.cairn comments (struct + hashlib, math.fsum and
fractions for the exact sums), so a digest in a comment is never cairn's own output.

Run as a script to print the `// expect-observe:` lines for the models."""
import math
import struct
import pathlib
import sys
from fractions import Fraction

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import GOLDEN_RUN, expectations, sha256


def f32(x):
    """Round a double to the nearest f32 (ties to even), as C's (float) does."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def round_fraction_to_f32(q):
    """The exact rational q rounded once to f32, nearest with ties to even."""
    if q == 0:
        return 0.0
    sign = -1 if q < 0 else 1
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    e = max(e, -126)                      # subnormals share the least exponent
    unit = Fraction(2) ** (e - 23)
    m = q / unit
    r = round(m)                          # Python rounds a Fraction half to even
    return sign * float(r * unit)


def bf16_bits(x):
    u = struct.unpack("<I", struct.pack("<f", x))[0]
    keep, rest = u >> 16, u & 0xFFFF
    if rest > 0x8000 or (rest == 0x8000 and keep & 1):
        keep += 1
    return keep


def quantize(x, scale, lo, hi):
    q = Fraction(x) / Fraction(scale)
    return max(lo, min(hi, round(q)))


def line(name, typ, count, data):
    return {"name": name, "type": typ, "count": count, "sha256": sha256(data)}


def model_observe_exact_sum():
    n = 10000
    x, h = [], []
    for i in range(n):
        k = float(i % 97)
        x.append((k - 48.0) * 1000000000000000.0 + float(i) * 0.1)
        h.append(f32(f32(f32(k - 48.5) * 1048576.0) + f32(f32(float(i % 13)) * 0.0009765625)))
    s64 = math.fsum(v * 3.0 for v in x)
    s32 = round_fraction_to_f32(sum(Fraction(v) for v in h))
    ordered = -0.0
    for v in x:
        ordered += v
    return [line("x", "f64", n, struct.pack(f"<{n}d", *x)),
            line("s64", "f64", 1, struct.pack("<d", s64)),
            line("s32", "f32", 1, struct.pack("<f", s32)),
            line("ordered", "f64", 1, struct.pack("<d", ordered))]


def model_observe_storage():
    n = 256
    x = [f32(f32(float(i) - 128.0) * f32(0.3)) for i in range(n)]
    half = struct.pack(f"<{n}e", *x)
    brain = struct.pack(f"<{n}H", *[bf16_bits(v) for v in x])
    q = struct.pack(f"<{n}b", *[quantize(v, 0.25, -128, 127) for v in x])
    uq = struct.pack(f"<{n}B", *[quantize(v, 0.125, 0, 255) for v in x])
    return [line("x", "f32", n, struct.pack(f"<{n}f", *x)), line("half", "f16", n, half),
            line("brain", "bf16", n, brain), line("q", "i8", n, q), line("uq", "u8", n, uq)]


def model_observe_scalars():
    return [line("a", "i32", 1, struct.pack("<i", -7)),
            line("b", "u64", 1, struct.pack("<Q", 1234567890123)),
            line("c", "f64", 1, struct.pack("<d", 0.1)),
            line("d", "f32", 1, struct.pack("<f", round_fraction_to_f32(Fraction("0.1")))),
            line("e", "bool", 1, b"\x01")]


def model_scan_prefix():
    pre, acc = [], 0
    for i in range(100):
        acc += i * 3
        pre.append(acc)
    fpre, facc = [], -0.0
    for i in range(100):
        facc += float(i) * 0.1
        fpre.append(facc)
    return [line("pre", "i64", 100, struct.pack("<100q", *pre)),
            line("fpre", "f64", 100, struct.pack("<100d", *fpre))]


def model_language_tour():
    v = []
    for i in range(8):
        v.append(i * 0.25 if i % 3 == 0 else math.sqrt(i) if i % 3 == 1 else i / 8.0)
    acc = 1.0
    for i in range(1, 6):
        acc = f32(f32(f32(acc * i) - 0.5) / 2.0)
    return [line("v", "f64", 8, struct.pack("<8d", *v)), line("acc", "f32", 1, struct.pack("<f", acc))]


MODELS = {name[len("model_"):]: fn for name, fn in dict(globals()).items()
          if name.startswith("model_")}


def test_comments_match_models():
    for stem, model in MODELS.items():
        assert expectations(GOLDEN_RUN / f"{stem}.cairn")["observe"] == model(), stem


def test_f32_rounding_model_is_sound():
    # The f32 rounding model against the hardware on values a double holds exactly.
    for v in [0.1, 1 / 3, 1e-40, 3.4028234663852886e38, 0.30000001192092896 + 2.0 ** -30, 2.0 ** -149 * 1.5, 16777217.0]:
        assert round_fraction_to_f32(Fraction(v)) == f32(v)


if __name__ == "__main__":
    for stem, model in MODELS.items():
        print(stem)
        for d in model():
            print(f"// expect-observe: {d['name']} {d['type']} {d['count']} {d['sha256']}")
    sys.exit(0)
