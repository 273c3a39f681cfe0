/* cairn_cr_mp.h: the accurate path of the correctly rounded math (cairn_cr.h): a small
 * floating-point type with a 192-bit significand, and exp, log, sin and cos on it.
 *
 * A value is (-1)^neg * 0.M * 2^e, M = m[0] m[1] m[2] (most significant word first) with
 * the top bit of m[0] set, or zero (all words 0). Every operation truncates its exact
 * result to 192 bits, so each one adds a relative error below 2^-191 (an addition of
 * terms of opposite signs: below 2^-191 of the larger term). The functions below state
 * their total error from that; cairn__crm_round then rounds once to f32 or f64 and
 * says whether the bound is small enough to be sure of the rounding.
 *
 * Only integer instructions and a few double operations (estimates whose error the
 * Newton and Taylor steps absorb) are used, all CAIRN_HD: a CUDA lane runs this text.
 * It is slow (about a microsecond) and taken only where the fast path's rounding test
 * fails, for about one input in 2^14 (f64) to 2^20 (f32). Included by cairn_cr.h. */
#ifndef CAIRN_CR_MP_H
#define CAIRN_CR_MP_H

__extension__ typedef unsigned __int128 cairn__cr_u128;

typedef struct cairn__crm {
    uint64_t m[3];
    int e, neg;
} cairn__crm;

CAIRN__CR_FN cairn__crm cairn__crm_zero(void) {
    cairn__crm z = {{0, 0, 0}, 0, 0};
    return z;
}

CAIRN__CR_FN int cairn__crm_is_zero(cairn__crm a) { return (a.m[0] | a.m[1] | a.m[2]) == 0; }

/* The 4-word big-endian number w shifted right by d bits (d >= 0). */
CAIRN__CR_FN void cairn__crm_shr4(uint64_t w[4], int d) {
    int q = d / 64, s = d % 64;
    for (int i = 3; i >= 0; i--) {
        uint64_t hi = i - q >= 0 ? w[i - q] : 0, lo = i - q - 1 >= 0 ? w[i - q - 1] : 0;
        w[i] = s ? (hi >> s) | (lo << (64 - s)) : hi;
    }
}

/* Shifts the 4-word big-endian number w left until its top bit is set; returns the shift,
 * or -1 when w is zero. */
CAIRN__CR_FN int cairn__crm_norm4(uint64_t w[4]) {
    int sh = 0;
    while (w[0] == 0) {
        if ((w[1] | w[2] | w[3]) == 0) return -1;
        w[0] = w[1], w[1] = w[2], w[2] = w[3], w[3] = 0, sh += 64;
    }
    int s = cairn__clz64(w[0]);
    if (s) {
        for (int i = 0; i < 3; i++) w[i] = (w[i] << s) | (w[i + 1] >> (64 - s));
        w[3] <<= s;
    }
    return sh + s;
}

/* v * 2^scale, exactly. */
CAIRN__CR_FN cairn__crm cairn__crm_from_u64(uint64_t v, int scale, int neg) {
    cairn__crm r = cairn__crm_zero();
    if (!v) return r;
    int s = cairn__clz64(v);
    r.m[0] = v << s;
    r.e = 64 - s + scale;
    r.neg = neg;
    return r;
}

/* A finite double, exactly. */
CAIRN__CR_FN cairn__crm cairn__crm_from_d(double d) {
    uint64_t u = cairn__f64_bits(d);
    int be = (int)((u >> 52) & 0x7FF);
    uint64_t man = u & 0xFFFFFFFFFFFFFull;
    if (be) man |= 1ull << 52;
    return cairn__crm_from_u64(man, (be ? be : 1) - 1075, (int)(u >> 63));
}

/* 2^k as a double, for k in [-1074, 1023]. */
CAIRN__CR_FN double cairn__cr_pow2(int k) {
    if (k >= -1022) return cairn__f64_from_bits((uint64_t)(k + 1023) << 52);
    return cairn__f64_from_bits(1ull << (k + 1074));
}

/* An estimate of a: its top 53 bits (truncated), for 2^-1074 <= |a| < 2^1024 (a
 * subnormal result rounds once more). */
CAIRN__CR_FN double cairn__crm_to_d(cairn__crm a) {
    if (cairn__crm_is_zero(a)) return 0.0;
    double v = (double)(a.m[0] >> 11);
    if (a.e - 53 < -1022) v = v * cairn__cr_pow2(-600) * cairn__cr_pow2(a.e - 53 + 600);
    else v = v * cairn__cr_pow2(a.e - 53);
    return a.neg ? -v : v;
}

/* a + b. */
CAIRN__CR_FN cairn__crm cairn__crm_add(cairn__crm a, cairn__crm b) {
    if (cairn__crm_is_zero(b)) return a;
    if (cairn__crm_is_zero(a)) return b;
    int swap = b.e > a.e;
    for (int i = 0; !swap && b.e == a.e && i < 3; i++) {
        if (a.m[i] != b.m[i]) {
            swap = b.m[i] > a.m[i];
            break;
        }
    }
    if (swap) {
        cairn__crm t = a;
        a = b, b = t;
    }
    uint64_t x[4] = {a.m[0], a.m[1], a.m[2], 0}, y[4] = {b.m[0], b.m[1], b.m[2], 0};
    int d = a.e - b.e;
    if (d >= 256) return a;
    cairn__crm_shr4(y, d);
    cairn__crm r = a;
    if (a.neg == b.neg) {
        cairn__cr_u128 c = 0;
        for (int i = 3; i >= 0; i--) {
            c += (cairn__cr_u128)x[i] + y[i];
            x[i] = (uint64_t)c;
            c >>= 64;
        }
        if (c) {
            cairn__crm_shr4(x, 1);
            x[0] |= 1ull << 63;
            r.e++;
        }
    } else {
        uint64_t borrow = 0;
        for (int i = 3; i >= 0; i--) {
            uint64_t t = x[i] - y[i] - borrow;
            borrow = (x[i] < y[i]) || (x[i] - y[i] < borrow);
            x[i] = t;
        }
        int sh = cairn__crm_norm4(x);
        if (sh < 0) return cairn__crm_zero();
        r.e -= sh;
    }
    r.m[0] = x[0], r.m[1] = x[1], r.m[2] = x[2];
    return r;
}

CAIRN__CR_FN cairn__crm cairn__crm_neg(cairn__crm a) {
    a.neg ^= 1;
    return a;
}

CAIRN__CR_FN cairn__crm cairn__crm_sub(cairn__crm a, cairn__crm b) {
    return cairn__crm_add(a, cairn__crm_neg(b));
}

/* a * b (schoolbook on 64-bit words, the top 192 bits of the 384-bit product). */
CAIRN__CR_FN cairn__crm cairn__crm_mul(cairn__crm a, cairn__crm b) {
    if (cairn__crm_is_zero(a) || cairn__crm_is_zero(b)) return cairn__crm_zero();
    uint64_t p[6] = {0, 0, 0, 0, 0, 0}; /* little-endian */
    for (int i = 0; i < 3; i++) {
        cairn__cr_u128 c = 0;
        for (int j = 0; j < 3; j++) {
            c += (cairn__cr_u128)a.m[2 - i] * b.m[2 - j] + p[i + j];
            p[i + j] = (uint64_t)c;
            c >>= 64;
        }
        p[i + 3] = (uint64_t)c;
    }
    cairn__crm r;
    r.e = a.e + b.e;
    r.neg = a.neg ^ b.neg;
    if (!(p[5] >> 63)) { /* the product of two values in [1/2, 1) is at least 1/4 */
        for (int i = 5; i >= 3; i--) p[i] = (p[i] << 1) | (p[i - 1] >> 63);
        r.e--;
    }
    r.m[0] = p[5], r.m[1] = p[4], r.m[2] = p[3];
    return r;
}

/* a / n for 0 < n < 2^32: long division on 32-bit pieces, one piece past the end. */
CAIRN__CR_FN cairn__crm cairn__crm_div_u32(cairn__crm a, uint32_t n) {
    if (cairn__crm_is_zero(a)) return a;
    uint64_t rem = 0, q[4] = {0, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        uint64_t piece = i < 6 ? (a.m[i / 2] >> (i % 2 ? 0 : 32)) & 0xFFFFFFFFu : 0;
        uint64_t cur = (rem << 32) | piece;
        q[i / 2] |= (cur / n) << (i % 2 ? 0 : 32);
        rem = cur % n;
    }
    /* q = floor(M 2^64 / n); value = q 2^(e - 256) */
    int sh = cairn__crm_norm4(q);
    cairn__crm r = a;
    r.m[0] = q[0], r.m[1] = q[1], r.m[2] = q[2];
    r.e = a.e - sh;
    return r;
}

CAIRN__CR_FN cairn__crm cairn__crm_ldexp(cairn__crm a, int k) {
    if (!cairn__crm_is_zero(a)) a.e += k;
    return a;
}

CAIRN__CR_FN cairn__crm cairn__crm_one(void) { return cairn__crm_from_u64(1, 0, 0); }

/* 1 / b by two Newton steps from a double estimate: relative error below 2^-188. */
CAIRN__CR_FN cairn__crm cairn__crm_inv(cairn__crm b) {
    cairn__crm bm = b;
    bm.e = 0, bm.neg = 0; /* in [1/2, 1) */
    cairn__crm y = cairn__crm_from_d(1.0 / cairn__crm_to_d(bm));
    for (int i = 0; i < 2; i++) {
        cairn__crm s = cairn__crm_sub(cairn__crm_one(), cairn__crm_mul(bm, y));
        y = cairn__crm_add(y, cairn__crm_mul(y, s));
    }
    y.e -= b.e;
    y.neg = b.neg;
    return y;
}

CAIRN__CR_FN cairn__crm cairn__crm_div(cairn__crm a, cairn__crm b) {
    return cairn__crm_mul(a, cairn__crm_inv(b));
}

/* Nearest integer to a double of magnitude below 2^51, as a double (no libm). */
CAIRN__CR_FN double cairn__cr_round_int(double z) {
    const double shift = 0x1.8p52;
    return (z + shift) - shift;
}

/* exp(x) for |x| < 1100, relative error below 2^-170: x = k ln2 + r with |r| < 0.35,
 * r / 2^12 in a Taylor sum to the 14th power, squared 12 times.
 *   |r - (x - k ln2)| < 2^-178 (ln 2 truncated at 2^-192 relative, times |k| < 1600;
 *   the product and the difference truncated at 2^-191 of terms below 2^11);
 *   the Taylor sum: 14 steps of three operations, each below 2^-191 relative since every
 *   partial sum is near 1, and the tail below 2^-200: below 2^-185 in all;
 *   each squaring doubles the relative error and adds 2^-191: below 2^12 2^-184.9.
 * Sum: below 2^-172.8 + 2^-178 < 2^-172. */
CAIRN__CR_FN cairn__crm cairn__crm_exp(cairn__crm x) {
    const cairn__crm ln2 = CAIRN__CR_MP_LN2;
    double kd = cairn__cr_round_int(cairn__crm_to_d(x) * CAIRN__CR_INVLN2);
    int k = (int)kd;
    cairn__crm kl = cairn__crm_mul(cairn__crm_from_u64((uint64_t)(k < 0 ? -k : k), 0, k < 0), ln2);
    cairn__crm r = cairn__crm_ldexp(cairn__crm_sub(x, kl), -12);
    cairn__crm p = cairn__crm_one();
    for (uint32_t n = 14; n >= 1; n--)
        p = cairn__crm_add(cairn__crm_one(), cairn__crm_div_u32(cairn__crm_mul(p, r), n));
    for (int i = 0; i < 12; i++) p = cairn__crm_mul(p, p);
    return cairn__crm_ldexp(p, k);
}

/* log(1 + u) for |u| < 2^-5 (u exact), relative error below 2^-183: with
 * v = u / (2 + u), log(1 + u) = 2 (v + v^3/3 + v^5/5 + ...), |v| < 2^-5.9, 18 terms
 * (the tail below 2^-210 relative); about 40 operations near 1, each below 2^-190. */
CAIRN__CR_FN cairn__crm cairn__crm_log1p_small(cairn__crm u) {
    cairn__crm two = cairn__crm_from_u64(2, 0, 0);
    cairn__crm v = cairn__crm_div(u, cairn__crm_add(two, u));
    cairn__crm v2 = cairn__crm_mul(v, v);
    cairn__crm s = cairn__crm_div_u32(cairn__crm_one(), 35);
    for (uint32_t k = 16;; k--) {
        s = cairn__crm_add(cairn__crm_div_u32(cairn__crm_one(), 2 * k + 1), cairn__crm_mul(v2, s));
        if (k == 0) break;
    }
    return cairn__crm_ldexp(cairn__crm_mul(v, s), 1);
}

/* Forward declaration: a double estimate of log x (cairn_cr.h). */
CAIRN__CR_FN double cairn__cr_log_estimate(double x);

/* log x for x > 0 with |x - 1| >= 2^-5, relative error below 2^-157: y0, an estimate
 * within 2^-40 (cairn__cr_log_estimate); t = x exp(-y0) - 1 (|t| < 2^-39, absolute
 * error below 2^-169); log x = y0 + log(1 + t), the series to t^5 (tail below 2^-230).
 * The absolute error, below 2^-163, is below 2^-157 of |log x| >= 2^-5.05. */
CAIRN__CR_FN cairn__crm cairn__crm_log_far(cairn__crm x) {
    double y0 = cairn__cr_log_estimate(cairn__crm_to_d(x));
    cairn__crm t = cairn__crm_mul(x, cairn__crm_exp(cairn__crm_from_d(-y0)));
    t = cairn__crm_sub(t, cairn__crm_one());
    cairn__crm s = cairn__crm_div_u32(cairn__crm_one(), 5);
    for (uint32_t k = 4; k >= 1; k--)
        s = cairn__crm_sub(cairn__crm_div_u32(cairn__crm_one(), k), cairn__crm_mul(t, s));
    return cairn__crm_add(cairn__crm_from_d(y0), cairn__crm_mul(t, s));
}

/* log x for x > 0: relative error below 2^-157 (log 1 = 0 exactly). */
CAIRN__CR_FN cairn__crm cairn__crm_log(cairn__crm x) {
    cairn__crm u = cairn__crm_sub(x, cairn__crm_one()); /* exact when |u| < 2^-5 */
    if (cairn__crm_is_zero(u)) return u;
    if (u.e <= -5) return cairn__crm_log1p_small(u);
    return cairn__crm_log_far(x);
}

/* log(1 + u) for u > -1, u != 0, given exactly: relative error below 2^-157. */
CAIRN__CR_FN cairn__crm cairn__crm_log1p(cairn__crm u) {
    if (u.e <= -5) return cairn__crm_log1p_small(u);
    return cairn__crm_log_far(cairn__crm_add(cairn__crm_one(), u));
}

/* exp(y) - 1 for |y| < 200, y != 0: relative error below 2^-149 for |y| >= 2^-20 (exp's
 * 2^-172 times e^y / |e^y - 1| < 2^21), below 2^-108 under it (the series to y^5). */
CAIRN__CR_FN cairn__crm cairn__crm_expm1(cairn__crm y) {
    if (y.e > -20) return cairn__crm_sub(cairn__crm_exp(y), cairn__crm_one());
    cairn__crm s = cairn__crm_one();
    for (uint32_t n = 5; n >= 2; n--)
        s = cairn__crm_add(cairn__crm_one(), cairn__crm_div_u32(cairn__crm_mul(y, s), n));
    return cairn__crm_mul(y, s);
}

/* sin r (want_cos = 0) or cos r (1) for |r| <= 0.8, relative error below 2^-184: the
 * Taylor sums to r^45 and r^44 (tails below 2^-200), 22 steps near 1. */
CAIRN__CR_FN cairn__crm cairn__crm_sincos(cairn__crm r, int want_cos) {
    cairn__crm z = cairn__crm_mul(r, r), s = cairn__crm_one();
    for (uint32_t k = 22; k >= 1; k--) {
        uint32_t d = want_cos ? (2 * k - 1) * (2 * k) : (2 * k) * (2 * k + 1);
        s = cairn__crm_sub(cairn__crm_one(), cairn__crm_div_u32(cairn__crm_mul(z, s), d));
    }
    return want_cos ? s : cairn__crm_mul(r, s);
}

/* Bits i0 .. i0 + 64 n - 1 of 2/pi (bit i weighs 2^-i), most significant word first. */
CAIRN__CR_FN void cairn__cr_2_pi_window(int i0, uint64_t *w, int n) {
    int q = (i0 - 1) / 64, s = (i0 - 1) % 64;
    for (int k = 0; k < n; k++) {
        uint64_t hi = cairn__cr_2_pi[q + k], lo = cairn__cr_2_pi[q + k + 1];
        w[k] = s ? (hi << s) | (lo >> (64 - s)) : hi;
    }
}

/* |x| = m 2^ex >= pi/4 (m < 2^24, ex <= 104): x 2/pi = N + f with N an integer and
 * |f| <= 1/2; returns N mod 4 and f pi/2 with relative error below 2^(lz - 228) +
 * 2^-189, where *lz says how far |f| lies below 1/2 (|f| >= 2^(-1 - lz)). The 2/pi bits
 * before i0 add multiples of 4 to x 2/pi; those after i0 + 255 add less than 2^-230,
 * and the bits shifted out below 2^-254 less than 2^-254. */
CAIRN__CR_FN int cairn__crm_reduce_pi_2(uint32_t m, int ex, cairn__crm *r, int *lz) {
    int i0 = ex - 1 > 1 ? ex - 1 : 1;
    uint64_t w[4], p[5] = {0, 0, 0, 0, 0}; /* p little-endian: m times the window */
    cairn__cr_2_pi_window(i0, w, 4);
    cairn__cr_u128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (cairn__cr_u128)m * w[3 - i];
        p[i] = (uint64_t)c;
        c >>= 64;
    }
    p[4] = (uint64_t)c;
    int sh = i0 + 255 - ex - 254; /* fraction bits past 254, 0 .. 26 */
    for (int i = 0; i < 4; i++) p[i] = sh ? (p[i] >> sh) | (p[i + 1] << (64 - sh)) : p[i];
    int quadrant = (int)(p[3] >> 62);
    uint64_t f[4] = {p[3] & 0x3FFFFFFFFFFFFFFFull, p[2], p[1], p[0]}; /* big-endian */
    int neg = (int)(f[0] >> 61) & 1;
    if (neg) { /* f >= 1/2: take N + 1 and f - 1, whose magnitude is 2^254 - f */
        quadrant = (quadrant + 1) & 3;
        uint64_t borrow = 0;
        for (int i = 3; i >= 0; i--) {
            uint64_t t = 0 - f[i] - borrow;
            borrow = (f[i] | borrow) != 0;
            f[i] = t;
        }
        f[0] &= 0x3FFFFFFFFFFFFFFFull;
    }
    int z = cairn__crm_norm4(f); /* f is never 0: pi/2 is irrational */
    *lz = z - 2;
    cairn__crm fr = {{f[0], f[1], f[2]}, -(z - 2), neg};
    const cairn__crm pi_2 = CAIRN__CR_MP_PI_2;
    *r = cairn__crm_mul(fr, pi_2);
    return quadrant;
}

/* Rounds a (relative error below 2^-prec, 100 <= prec <= 190) once to nearest-even in
 * the format of p significant bits whose smallest normal is 2^emin (f64: 53, -1022;
 * f32: 24, -126), subnormals and overflow included; returns it as a double (exact in
 * that format). *ok = 1 when a's error bound leaves no doubt about the rounding: the
 * bits below the rounding position are not within 2^(193 - prec) units of a half. */
CAIRN__CR_FN double cairn__crm_round(cairn__crm a, int prec, int p, int emin, int *ok) {
    *ok = 1;
    if (cairn__crm_is_zero(a)) return 0.0;
    int lead = a.e - 1, k = lead >= emin ? p : p - (emin - lead);
    double mag;
    if (lead > 1 - emin) { /* at least 2^(emax + 1): past the largest finite value */
        mag = cairn__f64_from_bits(0x7FF0000000000000ull);
    } else if (k < 0) {
        *ok = k < -1 || a.m[0] != ~0ull;
        mag = 0.0;
    } else {
        uint64_t mask = k ? (~0ull >> k) : ~0ull, hb = 1ull << (63 - k);
        uint64_t K = k ? a.m[0] >> (64 - k) : 0, r0 = a.m[0] & mask, d[3];
        int up = r0 >= hb;
        if (up) {
            d[0] = r0 - hb, d[1] = a.m[1], d[2] = a.m[2];
        } else { /* hb - (r0, m1, m2) */
            uint64_t any = (a.m[1] | a.m[2]) != 0;
            d[2] = 0 - a.m[2];
            d[1] = 0 - a.m[1] - (a.m[2] != 0);
            d[0] = hb - r0 - any;
        }
        int t = 193 - prec; /* |D| must reach 2^t units */
        *ok = d[0] != 0 || (t < 64 ? (d[1] != 0 || (d[2] >> t) != 0) : (d[1] >> (t - 64)) != 0);
        if (up && (d[0] | d[1] | d[2]) == 0) up = (int)(K & 1); /* a tie (never decided) */
        double scale = a.e - k >= -1022 ? 1.0 : cairn__cr_pow2(-1074);
        int sk = a.e - k >= -1022 ? a.e - k : a.e - k + 1074;
        mag = (double)(K + (uint64_t)up);
        if (sk > 1023) mag = mag * cairn__cr_pow2(1023) * cairn__cr_pow2(sk - 1023);
        else mag = mag * cairn__cr_pow2(sk) * scale;
    }
    return a.neg ? -mag : mag;
}

#endif
