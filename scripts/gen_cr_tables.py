#!/usr/bin/env python3
"""Writes runtime/cairn_cr_tables.h: the constants and tables of the correctly rounded
math (runtime/cairn_cr.h), computed here with exact integer and rational arithmetic.

usage: gen_cr_tables.py OUT.h

pi comes from Machin's formula and ln 2 from its series, both on integers scaled by
2^800 with every truncation bounded; 2^(j/512) and log(n/512) come from the decimal
module at 70 digits (its exp and ln are correctly rounded at that precision), far below
the 2^-110 the tables need. Doubles are rounded to nearest-even from exact fractions
(Python's int/int division is correctly rounded). tests/c/cr_check.c checks every entry
against MPFR, so this script is not trusted alone."""
import decimal
import os
import subprocess
import sys
from fractions import Fraction

STYLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".clang-format")
SCALE = 800  # bits of the fixed-point integers below
EXP_N = 512  # 2^(j/512) table
LOG_N = 256  # 1/r table indexed by the top 8 fraction bits
LOG_SPLIT = 107  # entries from here on stand for m/2 (m >= sqrt 2): exponent + 1
# The fast logs (cairn_cr_logf, log2f and cairn_cr_log's first stage) cut [OFF, 2 OFF),
# OFF near 1/sqrt 2, into N ranges of equal width in bit patterns; 1.0 lies in the middle
# of one of them (entry *_ONE), whose invc is 1 and log c 0.
LOGF_N, LOGF_OFF, LOGF_INVC_BITS = 256, 0x3F32C000, 29
LOG64_N, LOG64_OFF = 512, 0x3FE69C0000000000
LOG64_HI_GRID = Fraction(1, 1 << 42)  # log c's high part: a multiple of 2^-42, as ln2 hi


def arctan_inv(n, scale):
    """floor-ish arctan(1/n) * 2^scale; error below the number of terms."""
    total, term, k, sign = 0, (1 << scale) // n, 1, 1
    n2 = n * n
    while term:
        total += sign * (term // k)
        term //= n2
        k += 2
        sign = -sign
    return total


def pi_fixed():
    """pi * 2^SCALE within 2^-(SCALE - 20) (Machin: pi = 16 atan(1/5) - 4 atan(1/239))."""
    guard = 40
    p = 16 * arctan_inv(5, SCALE + guard) - 4 * arctan_inv(239, SCALE + guard)
    return p >> guard


def ln2_fixed():
    """ln 2 * 2^SCALE (ln 2 = sum 1/(k 2^k))."""
    guard = 40
    s, k = 0, 1
    while True:
        t = (1 << (SCALE + guard)) // (k << k)
        if not t:
            break
        s += t
        k += 1
    return s >> guard


def rn_double(q):
    return float(Fraction(q))


def hexd(x):
    return x.hex() if x != 0 else "0x0p+0"


def hexs(x):
    """x as a C hex float with the trailing zeros of its fraction dropped."""
    if x == 0:
        return "0x0p+0"
    mant, exp = x.hex().split("p")
    mant = mant.rstrip("0").rstrip(".")
    return f"{mant}p{exp}"


def binade(q):
    """(|q| / 2^e, e) with |q| / 2^e in [1/2, 1), for q != 0."""
    a, e = abs(Fraction(q)), 0
    while a >= 1:
        a /= 2
        e += 1
    while a < Fraction(1, 2):
        a *= 2
        e -= 1
    return a, e


def mp_const(name, q):
    """A positive rational as the runtime's 192-bit mantissa: value = 0.M * 2^e,
    M in [2^191, 2^192), truncated (the runtime's constants are truncations)."""
    q, e = binade(q)
    m = (q.numerator << 192) // q.denominator
    words = [(m >> (128 - 64 * i)) & ((1 << 64) - 1) for i in range(3)]
    body = ", ".join(f"0x{w:016x}u" for w in words)
    return f"#define CAIRN__CR_MP_{name} {{{{{body}}}, {e}, 0}}"


def exp_table():
    """(rows of the hi/lo table, rows of the nearest-double table)"""
    decimal.getcontext().prec = 70
    rows, rn = [], []
    for j in range(EXP_N):
        t = Fraction(decimal.Decimal(2) ** (decimal.Decimal(j) / EXP_N))
        hi = Fraction((t * (1 << 25)).numerator // (t * (1 << 25)).denominator, 1 << 25)
        lo = rn_double(t - hi)
        rows.append(f"    {{{hexd(float(hi))}, {hexd(lo)}}},")
        rn.append(f"    {hexd(rn_double(t))},")
    return rows, rn


def log_table(ln2):
    decimal.getcontext().prec = 70
    rows = []
    for i in range(LOG_N):
        lo_m, hi_m = Fraction(LOG_N + i, LOG_N), Fraction(LOG_N + i + 1, LOG_N)
        if i == 0:
            n = 512
        elif i == LOG_N - 1:
            n = 256
        else:
            n = round(Fraction(1024, lo_m + hi_m))
        bound = Fraction(1, 256)
        assert -bound < lo_m * n / 512 - 1 and hi_m * n / 512 - 1 <= bound, i  # m < hi_m
        a, odd = 0, n
        while odd % 2 == 0:
            odd //= 2
            a += 1
        ln_odd = Fraction(decimal.Decimal(odd).ln()) if odd > 1 else Fraction(0)
        big_l = -(ln_odd + (a - 9) * ln2)  # -log(n/512), exactly 0 for n = 512, 256
        if i >= LOG_SPLIT:
            big_l -= ln2
        lhi = rn_double(big_l)
        llo = rn_double(big_l - Fraction(lhi))
        rows.append(f"    {{{hexd(n / 512)}, {hexd(lhi)}, {hexd(llo)}}},")
    return rows


def f32_of(pattern):
    """The value of a positive normal f32 bit pattern, exactly."""
    return Fraction((pattern & 0x7FFFFF) | 0x800000) * Fraction(2) ** ((pattern >> 23) - 150)


def f64_of(pattern):
    """The value of a positive normal f64 bit pattern, exactly."""
    m = (pattern & ((1 << 52) - 1)) | (1 << 52)
    return Fraction(m) * Fraction(2) ** ((pattern >> 52) - 1075)


def ln(q):
    """log q for a positive rational q, within 10^-65 relative (decimal at 70 digits)."""
    decimal.getcontext().prec = 70
    q = Fraction(q)
    if q == 1:
        return Fraction(0)
    return Fraction((decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)).ln())


def round_sig(q, bits):
    """q rounded to nearest with `bits` significant bits."""
    unit = Fraction(2) ** (binade(q)[1] - bits)
    return round(Fraction(q) / unit) * unit


def ceil_double(q, bits=8):
    """The least double of at most `bits` significant bits that is >= q > 0."""
    unit = Fraction(2) ** (binade(q)[1] - bits)
    v = -(-Fraction(q) // unit) * unit
    assert float(v) == v and v >= q
    return float(v)


def log_ranges(n, off, shift, of):
    """The N ranges [z0, z1) of [OFF, 2 OFF), equal in bit patterns, and the index of the
    one holding 1.0 (in its middle)."""
    ranges = [(of(off + (i << shift)), of(off + ((i + 1) << shift))) for i in range(n)]
    one = [i for i, (z0, z1) in enumerate(ranges) if z0 < 1 < z1]
    assert len(one) == 1 and ranges[one[0]][0] - 1 == -(ranges[one[0]][1] - 1) / 2
    return ranges, one[0]


def logf_table():
    """cairn_cr_logf's table: invc (29 bits, so that z invc is exact for an f32 z) and
    log c = -log(invc) rounded; the range holding 1 has invc = 1, log c = 0."""
    ranges, one = log_ranges(LOGF_N, LOGF_OFF, 15, f32_of)
    rows = []
    for i, (z0, z1) in enumerate(ranges):
        invc = Fraction(1) if i == one else round_sig(2 / (z0 + z1), LOGF_INVC_BITS)
        u = max(abs(z0 * invc - 1), abs(z1 * invc - 1))
        assert u <= Fraction(1, 512) and (z1 > 1 or u * 1024 <= Fraction(1434, 1000)), i
        rows.append(f"    {hexs(float(invc))}, {hexd(rn_double(-ln(invc)))}, /* {i} */")
    return rows, one


D53 = Fraction(1, 1 << 53)
LOG64_EVAL = Fraction(101, 100) * D53  # p's evaluation error over u^2 (cairn_cr.h, step 4)
LOG64_KMIN = Fraction(345, 1000)  # |log x| >= 0.345 |k| when k != 0


def log64_eps(u, m, lhi, llo, dc, l2lo, dl2):
    """The relative error bound of cairn__cr_log_fast with its rounding test, for an entry,
    as that function's comment derives it: u bounds |u|, m bounds |log z| from below (None:
    the entry of 1), lhi and llo are log c's parts and dc their error; l2lo and dl2:
    LN2_LO and the error of LN2_HI + LN2_LO. Each case's absolute error over the least
    |log x| (or, for the entry of 1 with k = 0, the relative error of p against u), times
    the most |log x| / |h1| (the test scales e with h1), raised by 2^-40 for the test's own
    roundings (of e, and 2^-53 of e in lo +- e)."""
    D = D53
    trunc = u ** 8 / 8 / (1 - u)  # the Taylor tail past u^7
    pmax = Fraction(51, 100) * u * u  # |p|
    if m is None:  # k = 0: h1 = u, lo = p exactly; |log(1 + u)| <= |u| = |h1|
        rel0, gamma0 = (LOG64_EVAL * u + u ** 7 / 8 / (1 - u) + D * pmax / u) / (1 - u / 2), 1
    else:  # k = 0: t = clo
        s1 = (D * (abs(lhi) + u) * (1 + 2 * D) + abs(llo)) * (1 + D)  # |e1 + clo|
        lo = (s1 + pmax) * (1 + D)
        abs0 = dc + LOG64_EVAL * u * u + trunc + D * s1 + D * lo + D * lo * (1 + D)
        rel0 = abs0 / m
        gamma0 = 1 + (lo + abs0) / (m - lo - abs0)  # |log x| / |h1|
    # |k| >= 1: the error is a + b |k| and |log x| >= 0.345 |k|, so |k| = 1 is the worst
    t = (l2lo * (1 + D) + abs(llo)) * (1 + D)  # |k LN2_LO + clo|
    s1 = (D * (Fraction(7, 10) + abs(lhi) + u) * (1 + 2 * D) + t) * (1 + D)
    lo = (s1 + pmax) * (1 + D)
    absk = (dl2 + dc + D * l2lo + D * t + D * s1 + D * lo + D * lo * (1 + D) +
            LOG64_EVAL * u * u + trunc)
    relk = absk / LOG64_KMIN
    gammak = 1 + (lo + absk) / (LOG64_KMIN - lo - absk)
    rel = max(rel0 * gamma0, relk * gammak)
    return ceil_double(rel * (1 + Fraction(1, 1 << 40)))


def log64_invc(z0, z1):
    """The invc of cairn_cr_log's table for z in [z0, z1), and the bound on |z invc - 1|:
    the multiple of 2^-10 (of 2^-9 below 1, or of 2^-10 there too when |u| stays below
    2^-10) nearest 2 / (z0 + z1) or next to it, with the least bound."""
    def umax(c):
        return max(abs(z0 * c - 1), abs(z1 * c - 1))

    def best(grid):
        mid = round(2 / (z0 + z1) / grid)
        return min(((n * grid, umax(n * grid)) for n in (mid - 1, mid, mid + 1)),
                   key=lambda cu: cu[1])

    if z0 >= 1:
        return best(Fraction(1, 1024))
    fine = best(Fraction(1, 1024))
    return fine if fine[1] < Fraction(1, 1024) else best(Fraction(1, 512))


def log64_table(l2hi, l2lo, ln2):
    """cairn_cr_log's first-stage table: invc (a multiple of 2^-10 for z >= 1, of 2^-9
    below: 11 bits at most, so u = z invc - 1 is exact through the split of z), log c =
    -log(invc) as hi (a multiple of 2^-42) + lo, and the entry's relative error bound."""
    ranges, one = log_ranges(LOG64_N, LOG64_OFF, 43, f64_of)
    zmax = max(abs(ln(ranges[0][0])), abs(ln(ranges[-1][1])))
    assert zmax + LOG64_KMIN <= ln2  # |k ln2 + log z| >= 0.345 |k|
    dl2 = abs(Fraction(l2hi) + Fraction(l2lo) - ln2)
    rows = []
    for i, (z0, z1) in enumerate(ranges):
        invc, u = Fraction(1), max(1 - z0, z1 - 1)
        if i != one:
            invc, u = log64_invc(z0, z1)
        # u = z invc - 1 is exact: z lies on the grid 2^-52 (2^-53 below 1), u on that
        # grid times invc's, and |u| < 2^53 units of it
        gz = Fraction(1, 1 << (52 if z0 >= 1 else 53))
        g = next(Fraction(1, 1 << b) for b in range(12) if (invc * (1 << b)).denominator == 1)
        assert u < Fraction(1, 512) and u < (1 << 53) * gz * g and invc * 1024 < 2048, i
        logc = -ln(invc)
        lhi = round(logc / LOG64_HI_GRID) * LOG64_HI_GRID
        llo = rn_double(logc - lhi)
        dc = abs(lhi + Fraction(llo) - logc) + Fraction(1, 1 << 200)
        m = None
        if i != one:
            m = min(abs(ln(z0)), abs(ln(z1)))
            # the fast two-sums' conditions: |log c hi| >= |u|, |hi| > |lo|
            assert abs(lhi) >= u and m > 2 * (u * u + Fraction(1, 1 << 42)), i
        eps = log64_eps(u, m, lhi, llo, dc, abs(Fraction(l2lo)), dl2)
        rows.append(f"    {hexs(float(invc))}, {hexs(float(lhi))}, {hexd(llo)}, {hexs(eps)}, /* {i} */")
    return rows, one


def split(q, bits):
    """q rounded to `bits` significant bits, and the double nearest the rest."""
    q = Fraction(q)
    e = binade(q)[1]
    unit = Fraction(2) ** (e - bits)
    hi = round(q / unit) * unit
    return rn_double(hi), rn_double(q - hi)


def two_over_pi_words(pi):
    """The bits of 2/pi after the binary point, 64 to a word, most significant first."""
    nwords = 10
    bits = 64 * nwords
    q = (1 << (SCALE + 1 + bits)) // pi  # (2/pi) * 2^bits, pi scaled by 2^SCALE
    return [(q >> (64 * (nwords - 1 - i))) & ((1 << 64) - 1) for i in range(nwords)]


def constants(pi, ln2):
    c1, c2 = split(ln2 / EXP_N, 34)
    l2hi, l2lo = split(ln2, 42)
    out = [
        f"#define CAIRN__CR_EXP_N {EXP_N}",
        f"#define CAIRN__CR_LOG_SPLIT {LOG_SPLIT}",
        f"#define CAIRN__CR_INVLN2N {hexd(rn_double(EXP_N / ln2))} /* 512/ln2 */",
        f"#define CAIRN__CR_LN2N {hexd(rn_double(ln2 / EXP_N))} /* ln2/512 */",
        f"#define CAIRN__CR_LN2N_1 {hexd(c1)} /* ln2/512, 34 bits */",
        f"#define CAIRN__CR_LN2N_2 {hexd(c2)} /* ln2/512 - LN2N_1 */",
        f"#define CAIRN__CR_LN2_HI {hexd(l2hi)} /* ln2, 42 bits */",
        f"#define CAIRN__CR_LN2_LO {hexd(l2lo)}",
        f"#define CAIRN__CR_LN2 {hexd(rn_double(ln2))}",
        f"#define CAIRN__CR_INVLN2 {hexd(rn_double(1 / ln2))}",
        f"#define CAIRN__CR_PI_2 {hexd(rn_double(pi / 2))}",
        f"#define CAIRN__CR_2_PI {hexd(rn_double(2 / pi))}",
    ]
    p1, rest = split(pi / 2, 33)
    p2, _ = split(pi / 2 - Fraction(p1), 33)
    p3 = rn_double(pi / 2 - Fraction(p1) - Fraction(p2))
    out += [f"#define CAIRN__CR_PIO2_1 {hexd(p1)} /* pi/2, 33 bits */",
            f"#define CAIRN__CR_PIO2_2 {hexd(p2)} /* the next 33 bits */",
            f"#define CAIRN__CR_PIO2_3 {hexd(p3)} /* the rest, rounded */"]
    for n in range(1, 6):
        fact = 1
        for k in range(2, n + 1):
            fact *= k
        out.append(f"#define CAIRN__CR_EXP2_C{n} {hexd(rn_double(ln2 ** n / fact))}"
                   f" /* ln2^{n}/{n}! */")
    for n in (3, 5, 6, 7, 9):
        out.append(f"#define CAIRN__CR_INV{n} {hexd(rn_double(Fraction(1, n)))} /* 1/{n} */")
    fact = [1]
    for n in range(1, 19):
        fact.append(fact[-1] * n)
    for n in (3, 4, 5):
        out.append(f"#define CAIRN__CR_INVF{n} {hexd(rn_double(Fraction(1, fact[n])))} /* 1/{n}! */")
    for k in range(1, 8):
        out.append(f"#define CAIRN__CR_SIN{k} {hexd(rn_double(Fraction((-1) ** k, fact[2 * k + 1])))}"
                   f" /* (-1)^{k}/{2 * k + 1}! */")
    for k in range(1, 9):
        out.append(f"#define CAIRN__CR_COS{k} {hexd(rn_double(Fraction((-1) ** k, fact[2 * k])))}"
                   f" /* (-1)^{k}/{2 * k}! */")
    out.append(mp_const("LN2", ln2))
    out.append(mp_const("INVLN2", 1 / ln2))
    out.append(mp_const("PI_2", pi / 2))
    return out


def main():
    out = sys.argv[1]
    pi = Fraction(pi_fixed(), 1 << SCALE)
    ln2 = Fraction(ln2_fixed(), 1 << SCALE)
    words = two_over_pi_words(pi_fixed())
    lines = [
        "/* cairn_cr_tables.h: constants and tables of the correctly rounded math.",
        " * Generated by scripts/gen_cr_tables.py: do not edit; tests/c/cr_check.c checks",
        " * every entry against MPFR. Included by cairn_cr.h only. */",
        "#ifndef CAIRN_CR_TABLES_H",
        "#define CAIRN_CR_TABLES_H",
        "",
    ]
    lines += constants(pi, ln2)
    lines += ["", "/* 2^(j/512) = hi + lo: hi keeps 26 significant bits (truncated), lo is the",
              " * double nearest the rest. */",
              "CAIRN__CR_TABLE double cairn__cr_exp_tab[512][2] = {"]
    hilo, rn = exp_table()
    lines += hilo
    lines += ["};", "", "/* 2^(j/512) rounded to the nearest double (the f32 functions). */",
              "CAIRN__CR_TABLE double cairn__cr_exp_rn[512] = {"]
    lines += rn
    lines += ["};", "",
              "/* For m in [1 + i/256, 1 + (i+1)/256): r = n/512 with |m r - 1| < 2^-8, and",
              " * -log(r) (minus ln 2 from entry LOG_SPLIT on) as hi + lo. */",
              "CAIRN__CR_TABLE double cairn__cr_log_tab[256][3] = {"]
    lines += log_table(ln2)
    l2hi, l2lo = split(ln2, 42)
    frows, fone = logf_table()
    drows, done = log64_table(l2hi, l2lo, ln2)
    lines += ["};", "",
              f"#define CAIRN__CR_LOGF_N {LOGF_N}",
              f"#define CAIRN__CR_LOGF_OFF 0x{LOGF_OFF:08x}u",
              f"#define CAIRN__CR_LOGF_ONE {fone} /* the entry of 1.0 */",
              f"#define CAIRN__CR_LOG64_N {LOG64_N}",
              f"#define CAIRN__CR_LOG64_OFF 0x{LOG64_OFF:016x}ull",
              f"#define CAIRN__CR_LOG64_ONE {done} /* the entry of 1.0 */",
              "",
              f"/* logf: entry i (elements 2i, 2i + 1) stands for the f32 patterns OFF + [i, i + 1)",
              " * 2^15, values z in [OFF, 2 OFF): invc (29 bits) and log c = -log(invc) rounded. */",
              f"CAIRN__CR_TABLE double cairn__cr_logf_tab[{2 * LOGF_N}] = {{"]
    lines += frows
    lines += ["};", "",
              "/* log (f64) first stage: entry i (elements 4i .. 4i + 3) stands for the patterns",
              " * OFF + [i, i + 1) 2^43: invc (a multiple of 2^-10, or of 2^-9 for some z < 1),",
              " * log c = -log(invc) as hi (a multiple of 2^-42) + lo, and the entry's relative",
              " * error bound. */",
              "/* clang-format off */",
              f"CAIRN__CR_TABLE double cairn__cr_log64_tab[{4 * LOG64_N}] = {{"]
    lines += drows
    lines += ["};", "/* clang-format on */", "", "/* 2/pi = 0.b1 b2 b3 ... in binary: bits 64w+1 .. 64w+64 in word w. */",
              "CAIRN__CR_TABLE uint64_t cairn__cr_2_pi[10] = {"]
    lines += [f"    0x{w:016x}u," for w in words]
    lines += ["};", "", "#endif"]
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    # the tree's style (.clang-format), so the committed file is what this writes
    subprocess.run(["clang-format", "-i", "--style=file:" + STYLE, out + ".tmp"], check=True)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
