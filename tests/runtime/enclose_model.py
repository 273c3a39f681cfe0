"""Exact model of the bracket GEMM for the tests (no code shared with the C side).

Values are IEEE bit patterns (ints). The exact product is computed with Python
integers and `fractions.Fraction`; the floor and ceiling in a format are found by
integer arithmetic on the fraction, independently of how the runtime does it.
Also: writing case files (tools/enclose_casefile.h) and running the harness.
"""
import math
import os
import random
import struct
import subprocess
import tempfile
from fractions import Fraction

# width -> (precision, emin, emax)
FORMATS = {64: (53, -1022, 1023), 32: (24, -126, 127)}
INF = {64: 0x7FF0000000000000, 32: 0x7F800000}
SIGN = {64: 1 << 63, 32: 1 << 31}


def decode(bits, width):
    """Bits -> (mantissa, exponent) with value mantissa * 2^exponent; None for non-finite."""
    prec, emin, emax = FORMATS[width]
    frac = bits & ((1 << (prec - 1)) - 1)
    field = (bits >> (prec - 1)) & (2 * emax + 1)
    if field == 2 * emax + 1:
        return None
    mant = frac | (1 << (prec - 1)) if field else frac
    exp = (field if field else 1) - emax - (prec - 1)
    if bits & SIGN[width]:
        mant = -mant
    return mant, exp


def value(bits, width):
    """Bits -> Fraction, or +-math.inf."""
    d = decode(bits, width)
    if d is None:
        if bits & ((1 << (FORMATS[width][0] - 1)) - 1):
            raise ValueError("NaN")
        return -math.inf if bits & SIGN[width] else math.inf
    mant, exp = d
    return Fraction(mant) * Fraction(2) ** exp


def _round_positive(x, width, up):
    """Bits of the largest (up=False) / least (up=True) format value <= / >= x > 0."""
    prec, emin, emax = FORMATS[width]
    n, d = x.numerator, x.denominator
    e = n.bit_length() - d.bit_length()
    if Fraction(2) ** e > x:
        e -= 1  # now 2^e <= x < 2^(e+1)
    if e > emax:
        return INF[width] if up else INF[width] - 1
    q = max(e, emin) - (prec - 1)
    num, den = (n, d << q) if q >= 0 else (n << -q, d)
    m, rem = divmod(num, den)
    if up and rem:
        m += 1
    if m == 1 << prec:
        m >>= 1
        e += 1
        if e > emax:
            return INF[width]
    field = max(e, emin) + emax if m >= 1 << (prec - 1) else 0
    return field << (prec - 1) | (m & ((1 << (prec - 1)) - 1))


def directed_bits(x, width, up):
    """Bits of the least format value >= x (up) or the largest <= x; +0 for zero."""
    if x == 0:
        return 0
    if x > 0:
        return _round_positive(x, width, up)
    return SIGN[width] | _round_positive(-x, width, not up)


def floor_bits(x, width):
    return directed_bits(x, width, False)


def ceil_bits(x, width):
    return directed_bits(x, width, True)


def exact_product(a, b, m, n, k, width):
    """Exact A*B (row-major bit patterns) as a list of m*n Fractions."""
    da = [decode(x, width) for x in a]
    db = [decode(x, width) for x in b]
    out = []
    for i in range(m):
        row = da[i * k:(i + 1) * k]
        for j in range(n):
            terms = [(ma * mb, ea + eb) for (ma, ea), (mb, eb)
                     in zip(row, (db[t * n + j] for t in range(k))) if ma and mb]
            if not terms:
                out.append(Fraction(0))
                continue
            e0 = min(e for _, e in terms)
            s = sum(p << (e - e0) for p, e in terms)
            out.append(Fraction(s) * Fraction(2) ** e0)
    return out


def to_bits(x, width):
    """A Python float (binary64) to bits; for width 32 it must be exactly representable."""
    if width == 64:
        return struct.unpack("<Q", struct.pack("<d", x))[0]
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    assert value(bits, 32) == Fraction(x), f"{x} is not a binary32 value"
    return bits


def random_normal_bits(rng, count, width):
    """Random normal operands, rounded to the width by the exact model's floor."""
    return [floor_bits(Fraction(rng.gauss(0.0, 1.0)), width) for _ in range(count)]


class Case:
    def __init__(self, name, width, m, n, k, a, b):
        assert len(a) == m * k and len(b) == k * n
        self.name, self.width, self.m, self.n, self.k, self.a, self.b = name, width, m, n, k, a, b

    def text(self):
        digits = self.width // 4
        fmt = f"{{:0{digits}x}}"
        lines = [f"case {self.name} f{self.width} {self.m} {self.n} {self.k}", "a"]
        for start in range(0, len(self.a), 8):
            lines.append(" ".join(fmt.format(x) for x in self.a[start:start + 8]))
        lines.append("b")
        for start in range(0, len(self.b), 8):
            lines.append(" ".join(fmt.format(x) for x in self.b[start:start + 8]))
        return "\n".join(lines) + "\n"


def write_cases(path, cases):
    with open(path, "w") as f:
        for c in cases:
            f.write(c.text())


def parse_results(stdout):
    """Harness output -> list of dicts: info fields, and lo/hi bit lists (or the error)."""
    results = []
    for line in stdout.splitlines():
        words = line.split()
        if words[0] == "case":
            r = {"name": words[1], "rc": int(words[3])}
            if r["rc"] == 0:
                it = iter(words[4:])
                for key in it:
                    if key in ("scale_a", "scale_b"):
                        r[key] = (int(next(it)), int(next(it)))
                    elif key == "kernel":
                        r[key] = next(it)
                    else:
                        r[key] = int(next(it))
            else:
                r["bad"] = (words[5], int(words[6]), int(words[7]))
                r["error"] = " ".join(words[9:])
            results.append(r)
        elif words[0] in ("lo", "hi"):
            results[-1][words[0]] = [int(w, 16) for w in words[1:]]
    return results


def run_cases(harness_path, cases, env=None, digest=False, extra_args=()):
    """Writes the cases to a temporary file and runs the harness on it (extra_args go
    before the file, e.g. --residue)."""
    with tempfile.NamedTemporaryFile("w", suffix=".cases", delete=False) as f:
        for c in cases:
            f.write(c.text())
        path = f.name
    try:
        full_env = dict(os.environ)
        full_env.update(env or {})
        args = [harness_path] + (["--digest"] if digest else []) + list(extra_args) + [path]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=600,
                              env=full_env)
    finally:
        os.unlink(path)
    return proc


def check_bracket(case, result, tight):
    """Containment for every output; exact floor/ceiling where `tight`. Returns the
    largest width in representable steps."""
    exact = exact_product(case.a, case.b, case.m, case.n, case.k, case.width)
    widest = 0
    for idx, x in enumerate(exact):
        lo, hi = result["lo"][idx], result["hi"][idx]
        assert value(lo, case.width) <= x <= value(hi, case.width), \
            f"{case.name}[{idx}]: {lo:x} {hi:x} do not contain {x}"
        if tight:
            assert (lo, hi) == (floor_bits(x, case.width), ceil_bits(x, case.width)), \
                f"{case.name}[{idx}]: got {lo:x} {hi:x}, exact floor/ceil " \
                f"{floor_bits(x, case.width):x} {ceil_bits(x, case.width):x}"
        widest = max(widest, steps_between(lo, hi, case.width))
    return widest


def ordinal(bits, width):
    """Bits -> an integer that orders like the values (+0 and -0 both 0)."""
    return -(bits & ~SIGN[width]) if bits & SIGN[width] else bits


def steps_between(lo, hi, width):
    return ordinal(hi, width) - ordinal(lo, width)


def rng_for(name):
    return random.Random(name)
