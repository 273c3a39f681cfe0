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
    lines += ["};", "", "/* 2/pi = 0.b1 b2 b3 ... in binary: bits 64w+1 .. 64w+64 in word w. */",
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
