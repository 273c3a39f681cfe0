/* cairn_cr.h: correctly rounded math, the runtime of std.cr.
 *
 *   f32: cairn_cr_expf exp2f expm1f logf log2f log1pf tanhf sigmoidf sinf cosf
 *   f64: cairn_cr_exp cairn_cr_log
 *
 * Each returns the exact value of its function rounded once to nearest, ties to even,
 * for every input: subnormals, signed zeros and infinities included (sigmoid(x) is the
 * correctly rounded 1 / (1 + e^-x)). A correctly rounded result has one right answer,
 * so every machine that runs this text gets the same bits: host C, a parallel lane,
 * --emulate, and a CUDA lane (nvcc --fmad=false: every routine is static inline and
 * CAIRN_HD, uses only IEEE double and integer operations, never libm, libdevice or a
 * fused multiply-add).
 *
 * NaN: every NaN result, whether from a NaN input (its sign and payload are dropped) or
 * from an invalid input (log of a negative number, sin of an infinity), is the one
 * pattern 0x7FFFFFFF (f32) or 0x7FFFFFFFFFFFFFFF (f64): the canonical NaN an NVIDIA GPU
 * gives for f32, built from its bits here, so host and device agree.
 *
 * How (Ziv's strategy, as in CORE-MATH and LLVM's libc, written anew here):
 * - a fast path evaluates the function in double (f32 functions) or as an unevaluated
 *   sum of two doubles (f64 exp and log) with a proved error bound;
 * - a rounding test asks whether every value within that bound of the approximation
 *   rounds to the same result; it passes for all but about one input in 2^20 (f32) or
 *   2^13 (f64), and then that result is the correctly rounded one (the f64 log has two
 *   fast stages: a cheap one whose bound is per table entry, passing for all but one
 *   random double in 2^14, then for those a tighter one, 2^-67);
 * - otherwise the accurate path (cairn_cr_mp.h) computes the value with a 192-bit
 *   significand, relative error below 2^-100 (f32 series) to 2^-150, and rounds once.
 *   For f32 the exhaustive test over all 2^32 inputs shows it always decides; for f64
 *   the worst cases known (Lefevre and Muller: at most 64 equal bits after the rounding
 *   bit of exp and log) need 2^-118, which it has.
 * The tables and constants are in cairn_cr_tables.h (scripts/gen_cr_tables.py). */
#ifndef CAIRN_CR_H
#define CAIRN_CR_H

#include <float.h>
#include <stdint.h>
#include <string.h>

#include "cairn_float.h"

#if !defined(__CUDA_ARCH__) && defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "cairn_cr.h needs double arithmetic rounded to double (FLT_EVAL_METHOD 0, e.g. SSE2)"
#endif

#define CAIRN__CR_FN static inline CAIRN_HD
/* The f64 fast paths, inlined into their one caller even where they are used twice. */
#if defined(__CUDA_ARCH__)
#define CAIRN__CR_INLINE static __forceinline__ CAIRN_HD
#elif defined(__GNUC__)
#define CAIRN__CR_INLINE static inline __attribute__((always_inline)) CAIRN_HD
#else
#define CAIRN__CR_INLINE static inline CAIRN_HD
#endif
#ifdef __CUDA_ARCH__
#define CAIRN__CR_TABLE static __device__ const
#else
#define CAIRN__CR_TABLE static const
#endif

/* Test builds (tests/c/cr_check.c) count accurate-path entries [0], accurate-path
 * results whose error bound did not decide the rounding [1] (never seen), and entries
 * into the f64 log's second stage [2]. */
#if defined(CAIRN_CR_STATS) && !defined(__CUDA_ARCH__)
static _Thread_local unsigned long long cairn__cr_stats[3];
#define CAIRN__CR_COUNT(i) (cairn__cr_stats[i]++)
#else
#define CAIRN__CR_COUNT(i) ((void)0)
#endif

#include "cairn_cr_tables.h"
#include "cairn_cr_mp.h"

#define CAIRN_CR_NAN32 0x7FFFFFFFu
#define CAIRN_CR_NAN64 0x7FFFFFFFFFFFFFFFull

/* ---- building blocks ------------------------------------------------------------- */

/* The accurate paths are called out of line (cold), keeping the fast paths small. */
#if defined(__CUDA_ARCH__)
#define CAIRN__CR_SLOW static __noinline__ __attribute__((unused)) CAIRN_HD
#elif defined(__GNUC__)
#define CAIRN__CR_SLOW static __attribute__((noinline, cold, unused)) CAIRN_HD
#else
#define CAIRN__CR_SLOW static inline CAIRN_HD
#endif

CAIRN__CR_FN float cairn__cr_nanf(void) { return cairn__f32_from_bits(CAIRN_CR_NAN32); }
CAIRN__CR_FN double cairn__cr_nan(void) { return cairn__f64_from_bits(CAIRN_CR_NAN64); }
CAIRN__CR_FN float cairn__cr_inff(void) { return cairn__f32_from_bits(0x7F800000u); }

/* s + *lo = a + b exactly, for |a| >= |b| or a = 0. */
CAIRN__CR_FN double cairn__cr_fast_two_sum(double a, double b, double *lo) {
    double s = a + b;
    *lo = b - (s - a);
    return s;
}

/* s + *lo = a + b exactly (Knuth). */
CAIRN__CR_FN double cairn__cr_two_sum(double a, double b, double *lo) {
    double s = a + b, bb = s - a;
    *lo = (a - (s - bb)) + (b - bb);
    return s;
}

/* (double)k for |k| < 2^51, exactly. clang (14) converts with cvtsi2sd without first
 * clearing its destination, whose old contents the instruction keeps in the upper half:
 * in the logs that chains one call to the next through whatever the caller left in the
 * register (measured under clang: logf 1.75x and log 2.34x glibc's instead of 1.33x and
 * 1.60x). Under clang the integer goes into the significand of 1.5 2^52 instead; gcc
 * clears the register itself, and its conversion is the shorter. */
CAIRN__CR_FN double cairn__cr_i2d(int64_t k) {
#if defined(__clang__) && !defined(__CUDA_ARCH__)
    return cairn__f64_from_bits(0x4338000000000000ull + (uint64_t)k) - 0x1.8p52;
#else
    return (double)k;
#endif
}

/* |x|, without a branch. */
CAIRN__CR_FN double cairn__cr_abs(double x) {
    return cairn__f64_from_bits(cairn__f64_bits(x) & 0x7FFFFFFFFFFFFFFFull);
}

/* c ? a : b without a branch (c is 0 or 1): the fast paths pick by data the branch
 * predictor cannot learn (a sign, a quadrant). */
CAIRN__CR_FN double cairn__cr_pick(int c, double a, double b) {
    uint64_t m = 0 - (uint64_t)c;
    return cairn__f64_from_bits((cairn__f64_bits(a) & m) | (cairn__f64_bits(b) & ~m));
}

/* -x when c is 1, x when c is 0, without a branch. */
CAIRN__CR_FN double cairn__cr_negate_if(int c, double x) {
    return cairn__f64_from_bits(cairn__f64_bits(x) ^ ((uint64_t)c << 63));
}

/* The f32 rounding test: 1 when every real within e of y (|y| < 2^129, e < 2^-30 |y|)
 * rounds to the same f32, which is then (float)y. Only the f32 midpoint nearest y can
 * lie that close: y - mid is exact (Sterbenz), and the test is |y - mid| > e, compared
 * on the bits (both non-negative) so that the sign of y - mid costs no branch. */
CAIRN__CR_FN int cairn__cr_f32_sure(double y, double e) {
#ifdef CAIRN_CR_FORCE_SLOW /* tests/c/cr_check_slow.c: every input takes the accurate path */
    return 0;
#endif
    uint64_t u = cairn__f64_bits(y) & 0x7FFFFFFFFFFFFFFFull;
    int ey = (int)(u >> 52) - 1023;
    double mid = 0x1p-150; /* between 0 and the least subnormal */
    if (ey > -150) {
        int sh = ey >= -126 ? 29 : 29 + (-126 - ey); /* bits below the f32's last */
        mid = cairn__f64_from_bits((u & ~((1ull << sh) - 1)) | (1ull << (sh - 1)));
    }
    double d = cairn__f64_from_bits(u) - mid;
    return (cairn__f64_bits(d) & 0x7FFFFFFFFFFFFFFFull) > cairn__f64_bits(e);
}

/* The f32 fast paths bound their relative error below 2^-47 (each says why) and are
 * tested against 2^-45; the sweep over all 2^32 inputs in tests/c/cr_check.c is what
 * proves them. For |y| >= 2^-126 the test is on y's bits: relative error 2^-45 is less
 * than 2^8 units of y's last place, so the 29 bits below the f32's last place must lie
 * more than 256 from the midpoint pattern 2^28. */
#define CAIRN__CR_EPS32 0x1p-45
CAIRN__CR_FN int cairn__cr_f32_sure_normal(double y) {
#ifdef CAIRN_CR_FORCE_SLOW
    return 0;
#endif
    /* the 29 bits times 8 fill 32; 2^28 +- 256 is then 2^31 +- 2^11: one lea and a compare */
    return (uint32_t)((uint32_t)cairn__f64_bits(y) * 8u - 0x7FFFF800u) > 0x1000u;
}

/* The same for any y: the bits test where |y| >= 2^-126, cairn__cr_f32_sure below. */
CAIRN__CR_FN int cairn__cr_f32_sure_rel(double y) {
    if (((cairn__f64_bits(y) >> 52) & 0x7FF) >= 1023 - 126) return cairn__cr_f32_sure_normal(y);
    return cairn__cr_f32_sure(y, cairn__cr_abs(y) * CAIRN__CR_EPS32);
}

/* A 192-bit accurate value (relative error below 2^-prec) rounded once to f32. */
CAIRN__CR_FN float cairn__cr_f32_finish(cairn__crm v, int prec) {
    int ok;
    double d = cairn__crm_round(v, prec, 24, -126, &ok);
    CAIRN__CR_COUNT(0);
    if (!ok) CAIRN__CR_COUNT(1);
    return (float)d;
}

/* ... rounded once to f64. */
CAIRN__CR_FN double cairn__cr_f64_finish(cairn__crm v, int prec) {
    int ok;
    double d = cairn__crm_round(v, prec, 53, -1022, &ok);
    CAIRN__CR_COUNT(0);
    if (!ok) CAIRN__CR_COUNT(1);
    return d;
}

CAIRN__CR_FN cairn__crm cairn__crm_from_f(float x) { return cairn__crm_from_d((double)x); }

/* ---- exp and its relatives, f32 ------------------------------------------------------ */

/* For x with |x| <= 160 whose double value is an f32's (or twice one): x = kd ln2/512 +
 * r, kd = 512 k + j with 0 <= j < 512, |r| <= 2^-10.5 + 2^-40, r within 2^-53 |r| +
 * 2^-80 of exact: kd ln2/512 splits into LN2N_1 (34 bits: kd LN2N_1 is exact for
 * |kd| < 2^19) and LN2N_2; x - kd LN2N_1 is exact, x and kd LN2N_1 being within a
 * factor 2 of each other (Sterbenz) or kd = 0. *ki gets the bits of kd + 1.5 2^52,
 * whose low bits are kd + 2^51: j = *ki & 511, and (*ki >> 9) << 52 is k << 52 modulo
 * 2^64 (cairn__cr_scale_ki). */
CAIRN__CR_FN double cairn__cr_exp_reduce(double x, uint64_t *ki) {
    double s = x * CAIRN__CR_INVLN2N + 0x1.8p52, kd = s - 0x1.8p52;
    *ki = cairn__f64_bits(s);
    return (x - kd * CAIRN__CR_LN2N_1) - kd * CAIRN__CR_LN2N_2;
}

/* y 2^k for the k of *ki (cairn__cr_exp_reduce), y and the product normal: an integer
 * add on the exponent. */
CAIRN__CR_FN double cairn__cr_scale_ki(double y, uint64_t ki) {
    return cairn__f64_from_bits(cairn__f64_bits(y) + ((ki >> 9) << 52));
}

/* y 2^k for normal y and y 2^k: an integer add on the exponent. */
CAIRN__CR_FN double cairn__cr_scale(double y, int k) {
    return cairn__f64_from_bits(cairn__f64_bits(y) + ((uint64_t)(int64_t)k << 52));
}

/* e^r - 1 for |r| <= 2^-10.4: the Taylor sum to r^4, whose tail (r^5/120) is below
 * 2^-59.4 of r; evaluated with relative error below 2^-51. */
CAIRN__CR_FN double cairn__cr_expm1_poly(double r) {
    double r2 = r * r;
    return r + r2 * ((0.5 + r * CAIRN__CR_INVF3) + r2 * CAIRN__CR_INVF4);
}

/* e^x for the x of cairn__cr_exp_reduce: 2^k T (1 + p(r)), T = 2^(j/512) rounded
 * (within 2^-53), relative error below 2^-50.5 (p within 2^-51, three more roundings). */
CAIRN__CR_FN double cairn__cr_exp_d(double x) {
    uint64_t ki;
    double r = cairn__cr_exp_reduce(x, &ki), t = cairn__cr_exp_rn[ki & 511];
    return cairn__cr_scale_ki(t + t * cairn__cr_expm1_poly(r), ki);
}

/* e^x - 1 for the x of cairn__cr_exp_reduce, relative error below 2^-49: with
 * T = hi + lo, e^x - 1 = (2^k hi - 1) + 2^k (lo + T p). 2^k hi - 1 is exact for k in
 * {0, -1} (Sterbenz; hi has 26 bits) and otherwise at least 1/2 in magnitude, so its
 * rounding is relative; both terms are at most twice the result (k = j = 0 gives the
 * first as 0 and r = x exactly). */
CAIRN__CR_FN double cairn__cr_expm1_d(double x) {
    uint64_t ki;
    double r = cairn__cr_exp_reduce(x, &ki);
    double hi = cairn__cr_exp_tab[ki & 511][0], lo = cairn__cr_exp_tab[ki & 511][1];
    double s = cairn__cr_scale_ki(1.0, ki), p = cairn__cr_expm1_poly(r);
    return (hi * s - 1.0) + s * (lo + (hi + lo) * p);
}

/* Every input of exp outside |x| <= 87: NaN, infinities, overflow, results below 2^-126
 * (subnormal or zero); and the accurate path. */
CAIRN__CR_SLOW float cairn__cr_expf_edge(float x) {
    uint32_t b = cairn__f32_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return cairn__cr_nanf();
    if (x > 89.0f) return cairn__cr_inff(); /* e^89 > 2^128, infinity included */
    if (x < -104.0f) return 0.0f;           /* e^-104 < 2^-150: below half the least subnormal */
    double y = cairn__cr_exp_d((double)x);
    if (cairn__cr_f32_sure(y, y * CAIRN__CR_EPS32)) return (float)y;
    return cairn__cr_f32_finish(cairn__crm_exp(cairn__crm_from_f(x)), 160);
}

/* e^x for an f32 |x| <= 87 with one multiply in the reduction (expf's fast path):
 * z = x 512/ln2 rounded, kd = nearest(z), r = (z - kd) ln2/512 (z - kd exact). z's
 * rounding (below 2^-38, |z| < 2^16) and 512/ln2's (2^-44 times |x| < 2^6.5) move the
 * exponent by at most 2^-36.8 units of ln2/512, a relative error below 2^-46.3 in e^x;
 * with cairn__cr_exp_d's other errors (2^-50.5), below 2^-46.2. */
CAIRN__CR_FN double cairn__cr_expf_d(double x) {
    double z = x * CAIRN__CR_INVLN2N, s = z + 0x1.8p52;
    uint64_t ki = cairn__f64_bits(s);
    double r = (z - (s - 0x1.8p52)) * CAIRN__CR_LN2N, t = cairn__cr_exp_rn[ki & 511];
    return cairn__cr_scale_ki(t + t * cairn__cr_expm1_poly(r), ki);
}

CAIRN__CR_FN float cairn_cr_expf(float x) {
    if ((cairn__f32_bits(x) & 0x7FFFFFFFu) > 0x42AE0000u) return cairn__cr_expf_edge(x);
    double y = cairn__cr_expf_d((double)x); /* |x| <= 87: y > 2^-126 */
    if (cairn__cr_f32_sure_normal(y)) return (float)y;
    return cairn__cr_expf_edge(x);
}

/* 2^x: x = (512 k + j)/512 + r exactly (x an f32), 2^r = 1 + p2(r), the Taylor sum of
 * e^(r ln2) to r^5 (tail below 2^-72); relative error below 2^-50.5. An integer x gives
 * 2^x exactly (r = 0, j = 0); 2^-150 is the one exact tie (between 0 and 2^-149) and
 * goes to the even 0. */
CAIRN__CR_FN double cairn__cr_exp2_d(double x) {
    double s = x * 512.0 + 0x1.8p52, r = x - (s - 0x1.8p52) * 0x1p-9, r2 = r * r;
    uint64_t ki = cairn__f64_bits(s);
    double p = (CAIRN__CR_EXP2_C1 + r * CAIRN__CR_EXP2_C2) +
               r2 * (CAIRN__CR_EXP2_C3 + r * (CAIRN__CR_EXP2_C4 + r * CAIRN__CR_EXP2_C5));
    double t = cairn__cr_exp_rn[ki & 511];
    return cairn__cr_scale_ki(t + t * (r * p), ki);
}

CAIRN__CR_SLOW float cairn__cr_exp2f_edge(float x) {
    uint32_t b = cairn__f32_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return cairn__cr_nanf();
    if (x >= 128.0f) return cairn__cr_inff();
    if (x <= -150.0f) return 0.0f;
    double y = cairn__cr_exp2_d((double)x);
    if (cairn__cr_f32_sure(y, y * CAIRN__CR_EPS32)) return (float)y;
    const cairn__crm ln2 = CAIRN__CR_MP_LN2;
    return cairn__cr_f32_finish(cairn__crm_exp(cairn__crm_mul(cairn__crm_from_f(x), ln2)), 160);
}

CAIRN__CR_FN float cairn_cr_exp2f(float x) {
    if ((cairn__f32_bits(x) & 0x7FFFFFFFu) >= 0x42FC0000u) return cairn__cr_exp2f_edge(x);
    double y = cairn__cr_exp2_d((double)x); /* |x| < 126: y > 2^-126 */
    if (cairn__cr_f32_sure_normal(y)) return (float)y;
    return cairn__cr_exp2f_edge(x);
}

CAIRN__CR_SLOW float cairn__cr_expm1f_edge(float x) {
    uint32_t b = cairn__f32_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return cairn__cr_nanf();
    if ((b & 0x7FFFFFFFu) == 0) return x; /* keeps the sign of zero */
    if (x > 89.0f) return cairn__cr_inff();
    if (x < -20.0f) return -1.0f; /* -1 + e^x with e^x < 2^-28: above -1 by less than 2^-25 */
    double y = cairn__cr_expm1_d((double)x);
    if (cairn__cr_f32_sure_rel(y)) return (float)y;
    return cairn__cr_f32_finish(cairn__crm_expm1(cairn__crm_from_f(x)), 100);
}

CAIRN__CR_FN float cairn_cr_expm1f(float x) {
    uint32_t ab = cairn__f32_bits(x) & 0x7FFFFFFFu;
    if (ab - 1 >= 0x41A00000u - 1) return cairn__cr_expm1f_edge(x); /* 0, |x| >= 20 */
    double y = cairn__cr_expm1_d((double)x);
    if (cairn__cr_f32_sure_rel(y)) return (float)y;
    return cairn__cr_expm1f_edge(x);
}

/* tanh |x| = E / (E + 2) with E = e^(2|x|) - 1: E's relative error passes on scaled by
 * 2 / (E + 2) <= 1, plus two roundings; 2|x| is an f32 value (|x| < 9.1). */
CAIRN__CR_FN double cairn__cr_tanh_d(double ax) {
    double e = cairn__cr_expm1_d(2.0 * ax);
    return e / (e + 2.0);
}

CAIRN__CR_SLOW float cairn__cr_tanhf_edge(float x) {
    uint32_t b = cairn__f32_bits(x), ab = b & 0x7FFFFFFFu;
    if (ab > 0x7F800000u) return cairn__cr_nanf();
    if (ab == 0) return x;
    float one = b >> 31 ? -1.0f : 1.0f;
    if (ab >= 0x4111999Au) return one; /* |x| >= 9.1: 1 - tanh < 2^-25.2 */
    double ax = (double)cairn__f32_from_bits(ab), y = cairn__cr_tanh_d(ax);
    if (!cairn__cr_f32_sure_rel(y)) {
        cairn__crm ew = cairn__crm_expm1(cairn__crm_from_d(2.0 * ax));
        cairn__crm t = cairn__crm_div(ew, cairn__crm_add(ew, cairn__crm_from_u64(2, 0, 0)));
        y = (double)cairn__cr_f32_finish(t, 100);
    }
    return (float)y * one;
}

CAIRN__CR_FN float cairn_cr_tanhf(float x) {
    uint32_t b = cairn__f32_bits(x), ab = b & 0x7FFFFFFFu;
    if (ab - 1 >= 0x4111999Au - 1) return cairn__cr_tanhf_edge(x); /* 0, |x| >= 9.1, NaN */
    double y = cairn__cr_tanh_d((double)cairn__f32_from_bits(ab));
    if (!cairn__cr_f32_sure_rel(y)) return cairn__cr_tanhf_edge(x);
    return b >> 31 ? -(float)y : (float)y;
}

/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) for x < 0, given e = e^-|x| (<= 1): e's
 * relative error passes on scaled by at most 1, plus two roundings. From
 * cairn__cr_exp_d (2^-50.5) below 2^-50.4; from cairn__cr_expf_d (2^-46.2, an f32 x with
 * |x| <= 87) below 2^-46.1. */
CAIRN__CR_FN double cairn__cr_sigmoid_d(double x, double e) {
    return cairn__cr_pick(x < 0, e, 1.0) / (1.0 + e);
}

CAIRN__CR_SLOW float cairn__cr_sigmoidf_edge(float x) {
    uint32_t b = cairn__f32_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return cairn__cr_nanf();
    if (x > 30.0f) return 1.0f;   /* 1 - sigmoid < e^-30 < 2^-25 */
    if (x < -105.0f) return 0.0f; /* sigmoid < e^-105 < 2^-151 */
    double y = cairn__cr_sigmoid_d((double)x, cairn__cr_exp_d(-cairn__cr_abs((double)x)));
    if (cairn__cr_f32_sure_rel(y)) return (float)y;
    int neg = x < 0.0f;
    cairn__crm one = cairn__crm_one();
    cairn__crm em = cairn__crm_exp(cairn__crm_from_d(neg ? (double)x : -(double)x));
    cairn__crm s = cairn__crm_div(neg ? em : one, cairn__crm_add(one, em));
    return cairn__cr_f32_finish(s, 160);
}

CAIRN__CR_FN float cairn_cr_sigmoidf(float x) {
    if ((cairn__f32_bits(x) & 0x7FFFFFFFu) > 0x41F00000u) return cairn__cr_sigmoidf_edge(x);
    double ax = (double)cairn__f32_from_bits(cairn__f32_bits(x) & 0x7FFFFFFFu);
    double y = cairn__cr_sigmoid_d((double)x, cairn__cr_expf_d(-ax)); /* |x| <= 30: y > 2^-44 */
    if (cairn__cr_f32_sure_normal(y)) return (float)y;
    return cairn__cr_sigmoidf_edge(x);
}

/* ---- log and its relatives, f32 ------------------------------------------------------ */

/* log x (want_log2 0) or log2 x (1) for the positive normal f32 x = bits b, times
 * 2^kadj (the subnormals' scaling). As glibc's logf, with more terms:
 *  1. t = b - OFF: x = 2^k z with k = t >> 23 (arithmetic) and z in [OFF, 2 OFF),
 *     OFF = 0.698; i = the 8 bits of t below the exponent picks one of 256 ranges of z,
 *     equal in bit patterns: width 2^-8 above 1 and 2^-9 below, and the range of 1.0 is
 *     [1 - 2^-10, 1 + 2^-9) (entry LOGF_ONE).
 *  2. r = z invc - 1 is exact: z has 24 bits and invc 29, so z invc has at most 53, and
 *     z invc lies within 2^-9 of 1 (Sterbenz). invc is 2 / (z0 + z1) rounded to 29 bits
 *     for the range [z0, z1), so |r| <= 2^-9 (the generator checks each entry; below 1,
 *     |r| <= 2^-9.48), and 1 for the range of 1.0: there r = z - 1, log c = 0, and k = 0
 *     near x = 1.
 *  3. log x = k ln2 + log c + log(1 + r), log c = -log(invc) rounded (2^-53 relative);
 *     log(1 + r) = r + p, p = r^2 (-1/2 + r/3 + r^2 (-1/4 + r/5)): the tail is below
 *     |r|^6/6 (1 + 2^-8), that is 2^-47.58 |r| near 1 (|r| <= 2^-9); p's roundings are
 *     below 1.6 2^-53 r^2, and the result is ((k ln2 + log c) + r) + p.
 *  Near 1 (the range of 1.0, k = 0) the result is that polynomial alone: relative error
 *  below 2^-47.58 + 2^-52.4 < 2^-47.4, and x = 1 gives 0 exactly. Elsewhere with k = 0,
 *  |log x| >= 2^-9.01 above 1 (log c within 2^-8 of it, the tail below 2^-56.58: relative
 *  2^-47.57, with the roundings of log c, p and the sum, 3.5 2^-53: below 2^-47.3) and
 *  |log x| >= 2^-10.01 below (|r| <= 2^-9.48: the tail 2^-59.5, relative 2^-49.5). With
 *  k != 0, |log x| >= 0.333 |k| and every error is a few 2^-53 of a term within a factor
 *  3 of it: below 2^-50.5. For log2, (log c + p) / ln2 adds two roundings and 1/ln2's,
 *  and k + that, whose terms are at most 2.1 times the result, one more. So the bound
 *  is 2^-47 throughout (the rounding test assumes 2^-45). */
CAIRN__CR_FN double cairn__cr_logf_d(uint32_t b, int kadj, int want_log2) {
    uint32_t t = b - CAIRN__CR_LOGF_OFF;
    const double *e = cairn__cr_logf_tab + ((t >> 14) & 0x1FE); /* entry i: 2i, 2i + 1 */
    int k = ((int32_t)t >> 23) + kadj; /* >> of a negative int: arithmetic in gcc, clang, nvcc */
    /* z from its f32 bits by an exponent rebias (z is normal): no float-to-double
     * conversion, which writes half a register and so can chain one call to the next */
    double z = cairn__f64_from_bits(((uint64_t)(b - (t & 0xFF800000u)) << 29) +
                                    ((uint64_t)(1023 - 127) << 52));
    double r = z * e[0] - 1.0, r2 = r * r;
    double p = r2 * ((-0.5 + r * CAIRN__CR_INV3) + r2 * (-0.25 + r * CAIRN__CR_INV5));
    double kd = cairn__cr_i2d(k);
    if (want_log2) return kd + ((e[1] + r) + p) * CAIRN__CR_INVLN2;
    return ((kd * CAIRN__CR_LN2 + e[1]) + r) + p;
}

/* log and log2 for inputs that are not positive normal f32 values (NaN, negative, zero,
 * subnormal, infinity), and their accurate path. */
CAIRN__CR_SLOW float cairn__cr_logf_edge(float x, int want_log2) {
    uint32_t b = cairn__f32_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u || (b >> 31 && (b & 0x7FFFFFFFu))) return cairn__cr_nanf();
    if ((b & 0x7FFFFFFFu) == 0) return cairn__f32_from_bits(0xFF800000u); /* -inf */
    if (b == 0x7F800000u) return x;
    double y = b < 0x00800000u /* subnormal: x 2^24 is normal */
                   ? cairn__cr_logf_d(cairn__f32_bits(x * 0x1p24f), -24, want_log2)
                   : cairn__cr_logf_d(b, 0, want_log2);
    if (cairn__cr_f32_sure(y, cairn__cr_abs(y) * CAIRN__CR_EPS32)) return (float)y;
    cairn__crm l = cairn__crm_log(cairn__crm_from_f(x));
    const cairn__crm il2 = CAIRN__CR_MP_INVLN2;
    return cairn__cr_f32_finish(want_log2 ? cairn__crm_mul(l, il2) : l, 150);
}

CAIRN__CR_FN float cairn_cr_logf(float x) {
    uint32_t b = cairn__f32_bits(x);
    if (b - 0x00800000u >= 0x7F000000u) return cairn__cr_logf_edge(x, 0);
    double y = cairn__cr_logf_d(b, 0, 0); /* |y| >= 2^-25, or 0 for x = 1 */
    if (cairn__cr_f32_sure_normal(y)) return (float)y;
    return cairn__cr_logf_edge(x, 0);
}

CAIRN__CR_FN float cairn_cr_log2f(float x) {
    uint32_t b = cairn__f32_bits(x);
    if (b - 0x00800000u >= 0x7F000000u) return cairn__cr_logf_edge(x, 1);
    double y = cairn__cr_logf_d(b, 0, 1);
    if (cairn__cr_f32_sure_normal(y)) return (float)y;
    return cairn__cr_logf_edge(x, 1);
}

/* Forward: the f64 log's fast path, hi + *lo (cairn_cr_log below). */
CAIRN__CR_INLINE double cairn__cr_log_dd(double x, double *lo);

/* log(1 + x): for |x| < 2^-29 the series x - x^2/2 + x^3/3 (tail below 2^-87 of x);
 * otherwise 1 + x is exact in double (x < 2^53; beyond, its rounding moves the log by
 * less than 2^-53) and the f64 log's fast path gives log(1 + x) within 2^-66. */
CAIRN__CR_FN double cairn__cr_log1p_d(double x) {
    double lo;
    if (cairn__cr_abs(x) < 0x1p-29) return x - x * x * (0.5 - x * CAIRN__CR_INV3);
    return cairn__cr_log_dd(1.0 + x, &lo) + lo;
}

CAIRN__CR_SLOW float cairn__cr_log1pf_edge(float x) {
    uint32_t b = cairn__f32_bits(x), ab = b & 0x7FFFFFFFu;
    if (ab > 0x7F800000u || (b >> 31 && ab > 0x3F800000u)) return cairn__cr_nanf();
    if (b == 0xBF800000u) return cairn__f32_from_bits(0xFF800000u); /* log1p(-1) = -inf */
    if (ab == 0 || ab == 0x7F800000u) return x;
    double y = cairn__cr_log1p_d((double)x);
    if (cairn__cr_f32_sure_rel(y)) return (float)y;
    return cairn__cr_f32_finish(cairn__crm_log1p(cairn__crm_from_f(x)), 150);
}

CAIRN__CR_FN float cairn_cr_log1pf(float x) {
    uint32_t b = cairn__f32_bits(x);
    /* 0, -0, x <= -1, infinities and NaN go to the edge */
    if ((b & 0x7FFFFFFFu) - 1 >= 0x7F800000u - 1 || b >= 0xBF800000u)
        return cairn__cr_log1pf_edge(x);
    double y = cairn__cr_log1p_d((double)x);
    if (cairn__cr_f32_sure_rel(y)) return (float)y;
    return cairn__cr_log1pf_edge(x);
}

/* ---- sin and cos, f32 ---------------------------------------------------------------- */

/* |x| = m 2^ex >= 2^20: x 2/pi = N + f, |f| <= 1/2, from 128 bits of 2/pi (the bits
 * before them add multiples of 4; those after, less than 2^-101.9); returns N mod 4 and
 * r = f pi/2 with relative error below 2^-51.4 and absolute error below 2^-101. */
CAIRN__CR_FN int cairn__cr_reduce_big(uint32_t m, int ex, double *r) {
    int i0 = ex - 1 > 1 ? ex - 1 : 1;
    uint64_t w[2];
    cairn__cr_2_pi_window(i0, w, 2);
    cairn__cr_u128 lo = (cairn__cr_u128)m * w[1], hi = (cairn__cr_u128)m * w[0];
    cairn__cr_u128 v = (hi << 64) + lo; /* the low 128 bits of m times the window */
    uint64_t top = (uint64_t)(hi >> 64) + (v < lo);
    int sh = i0 + 1 - ex; /* fraction bits past 126, 0 .. 26 */
    if (sh) v = (v >> sh) | ((cairn__cr_u128)top << (128 - sh));
    int quadrant = (int)(v >> 126);
    cairn__cr_u128 f = v & (((cairn__cr_u128)1 << 126) - 1);
    int neg = (int)(f >> 125) & 1;
    if (neg) {
        quadrant = (quadrant + 1) & 3;
        f = ((cairn__cr_u128)1 << 126) - f;
    }
    uint64_t fh = (uint64_t)(f >> 64), fl = (uint64_t)f;
    int z = fh ? cairn__clz64(fh) : 64 + cairn__clz64(fl); /* f != 0: pi is irrational */
    cairn__cr_u128 g = f << z;
    double d = (double)(uint64_t)(g >> 64) * cairn__cr_pow2(-62 - z) * CAIRN__CR_PI_2;
    *r = neg ? -d : d;
    return quadrant;
}

/* pi/4 <= |x| < 2^20 (x >= 0 here): k = nearest(x 2/pi) < 2^19.4 and r = x - k pi/2 by
 * Cody and Waite's three parts of pi/2 (PIO2_1 and PIO2_2 of 33 bits, so k PIO2_1 and
 * k PIO2_2 are exact; x - k PIO2_1 is exact by Sterbenz): r within 2^-52 |r| + 2^-98. */
CAIRN__CR_FN int cairn__cr_reduce_mid(double x, double *r) {
    double k = cairn__cr_round_int(x * CAIRN__CR_2_PI);
    *r = ((x - k * CAIRN__CR_PIO2_1) - k * CAIRN__CR_PIO2_2) - k * CAIRN__CR_PIO2_3;
    return (int)(int64_t)k & 3;
}

/* sin r (want_cos 0) and cos r (1) for |r| <= pi/4 (1 + 2^-30): Taylor sums to r^15
 * and r^14, tails below 2^-53.9 and 2^-49.8 relative; evaluated with relative error
 * below 2^-51. */
CAIRN__CR_FN double cairn__cr_sincos_poly(double r, int want_cos) {
    double z = r * r;
    if (want_cos) {
        double c =
            CAIRN__CR_COS4 + z * (CAIRN__CR_COS5 + z * (CAIRN__CR_COS6 + z * CAIRN__CR_COS7));
        return 1.0 + z * (CAIRN__CR_COS1 + z * (CAIRN__CR_COS2 + z * (CAIRN__CR_COS3 + z * c)));
    }
    double s = CAIRN__CR_SIN4 + z * (CAIRN__CR_SIN5 + z * (CAIRN__CR_SIN6 + z * CAIRN__CR_SIN7));
    return r + r * z * (CAIRN__CR_SIN1 + z * (CAIRN__CR_SIN2 + z * (CAIRN__CR_SIN3 + z * s)));
}

/* sin and cos: every input's accurate path, and the inputs the fast path leaves (NaN,
 * infinities, 0, |x| >= 2^20, and results whose reduced argument is below 2^-40, where
 * the reduction's absolute error must be counted). */
CAIRN__CR_SLOW float cairn__cr_sincosf_edge(float x, int want_cos) {
    uint32_t b = cairn__f32_bits(x), ab = b & 0x7FFFFFFFu;
    if (ab >= 0x7F800000u) return cairn__cr_nanf();
    if (ab == 0) return want_cos ? 1.0f : x;
    uint32_t m = (ab & 0x7FFFFFu) | (ab >= 0x00800000u ? 0x800000u : 0);
    int ex = (int)(ab >> 23) - 150 + (ab < 0x00800000u), quadrant = 0;
    double r = (double)cairn__f32_from_bits(ab), eabs = 0.0;
    if (ab >= 0x49800000u) quadrant = cairn__cr_reduce_big(m, ex, &r), eabs = 0x1p-100;
    else if (ab > 0x3F490FDAu) quadrant = cairn__cr_reduce_mid(r, &r), eabs = 0x1p-97;
    int which = (quadrant + want_cos) & 1,
        neg = (((quadrant + want_cos) >> 1) & 1) ^ (!want_cos && b >> 31);
    double y = cairn__cr_sincos_poly(r, which);
    if (cairn__cr_f32_sure(y, cairn__cr_abs(y) * CAIRN__CR_EPS32 + eabs))
        return neg ? -(float)y : (float)y;
    cairn__crm rm = cairn__crm_from_d(r);
    int lz = 0, prec = 180;
    if (ab > 0x3F490FDAu) {
        quadrant = cairn__crm_reduce_pi_2(m, ex, &rm, &lz);
        prec = 225 - lz < 180 ? 225 - lz : 180;
    }
    cairn__crm v = cairn__crm_sincos(rm, which);
    return cairn__cr_f32_finish(neg ? cairn__crm_neg(v) : v, prec < 100 ? 100 : prec);
}

/* sin x (want_cos 0) and cos x (1) for |x| < 2^20. Below pi/4 no reduction (r = x);
 * above, sin x = +-sin r or +-cos r by the quadrant. With |r| >= 2^-40 the reduction's
 * 2^-98 is below 2^-58 of r, inside the relative bound. */
CAIRN__CR_FN float cairn__cr_sincosf(float x, int want_cos) {
    uint32_t b = cairn__f32_bits(x), ab = b & 0x7FFFFFFFu;
    if (ab - 1 >= 0x49800000u - 1) return cairn__cr_sincosf_edge(x, want_cos);
    double r = (double)cairn__f32_from_bits(ab);
    int quadrant = 0;
    if (ab > 0x3F490FDAu) { /* |x| > pi/4 */
        quadrant = cairn__cr_reduce_mid(r, &r);
        if (cairn__cr_abs(r) < 0x1p-40) return cairn__cr_sincosf_edge(x, want_cos);
    }
    int which = (quadrant + want_cos) & 1;
    double y = cairn__cr_pick(which, cairn__cr_sincos_poly(r, 1), cairn__cr_sincos_poly(r, 0));
    if (!cairn__cr_f32_sure_rel(y)) return cairn__cr_sincosf_edge(x, want_cos);
    int neg = (((quadrant + want_cos) >> 1) & 1) ^ (!want_cos && b >> 31);
    return (float)cairn__cr_negate_if(neg, y);
}

CAIRN__CR_FN float cairn_cr_sinf(float x) { return cairn__cr_sincosf(x, 0); }
CAIRN__CR_FN float cairn_cr_cosf(float x) { return cairn__cr_sincosf(x, 1); }

/* ---- f64 exp ---------------------------------------------------------------------------- */

/* The fast path's relative error bound, proved at cairn__cr_exp_dd; the test below uses
 * 2^-67.9 for the rounding of its own arithmetic (2^-106 of the result). */
#define CAIRN__CR_EPS64_EXP 0x1.07p-68

/* e^x = 2^k (hi + *lo) for |x| <= 707, |*lo| <= ulp(hi)/2, relative error below 2^-68:
 *  1. kd = nearest(x 512/ln2), |kd| < 2^19, kd = 512 k + j. r1 = x - kd LN2N_1 is exact
 *     (kd LN2N_1 has at most 53 bits; Sterbenz, or kd = 0); (rh, rl) = r1 - RN(kd LN2N_2)
 *     exactly (two_sum). |rh| < 2^-10.52 and |rh + rl - (x - kd ln2/512)| < 2^-77
 *     (the product's rounding 2^-78, LN2N's tail 2^-98 times 2^19).
 *  2. e^r - 1 = rh + rl + q(rh) + d1 with q = rh^2 (1/2 + rh/6 + rh^2/24 + rh^3/120):
 *     the Taylor tail r^6/720 < 2^-72.7, rl's effect on the square < 2^-73, q's four
 *     roundings 5 2^-53 |q| < 2^-73.7: |d1| < 2^-71.4.
 *  3. T = 2^(j/512) = Th + Tl within 2^-78 (Th: 26 bits). rh = rhh + rhl with rhh on
 *     the 2^-37 grid (27 bits), so Th rhh is exact; (h0, l0) = Th + Th rhh exactly.
 *  4. T e^r = h0 + l0 + Th rhl + Th s + Tl (1 + rh + s) + d2, s = RN(rl + q): the
 *     roundings of Th rhl (2^-91), s (2^-74.5), Th s (2^-73.5), the Tl terms (2^-78)
 *     and of the three additions into lo (each below 2^-53 of |lo| < 2^-23.9: 2^-76.9),
 *     with T's error and d1 (times T < 2: 2^-70.4): |d2| < 2^-69.6.
 *  5. (hi, lo) = fast_two_sum(h0, lo): exact. T e^r > 0.998, so the relative error is
 *     below 2^-69.5, under the 2^-68 the test assumes. */
CAIRN__CR_INLINE double cairn__cr_exp_dd(double x, int *k, double *lo) {
    double kd = cairn__cr_round_int(x * CAIRN__CR_INVLN2N);
    int64_t ki = (int64_t)kd + ((int64_t)1 << 40);
    int j = (int)(ki & 511);
    *k = (int)((ki >> 9) - ((int64_t)1 << 31));
    double rl, rh = cairn__cr_two_sum(x - kd * CAIRN__CR_LN2N_1, -(kd * CAIRN__CR_LN2N_2), &rl);
    double q =
        rh * rh * (0.5 + rh * (CAIRN__CR_INVF3 + rh * (CAIRN__CR_INVF4 + rh * CAIRN__CR_INVF5)));
    double rhh = (rh + 0x1.8p15) - 0x1.8p15, rhl = rh - rhh;
    double th = cairn__cr_exp_tab[j][0], tl = cairn__cr_exp_tab[j][1], l0;
    double h0 = cairn__cr_fast_two_sum(th, th * rhh, &l0);
    double s = rl + q;
    double l = l0 + (th * rhl + (th * s + tl * (1.0 + (rh + s))));
    return cairn__cr_fast_two_sum(h0, l, lo);
}

/* 1 when hi + lo, within eps |hi| of the exact value, rounds to hi whatever that value
 * is: hi + (lo -+ e) rounds to one double, and rounding is monotonic. */
CAIRN__CR_FN int cairn__cr_f64_sure(double hi, double lo, double eps) {
#ifdef CAIRN_CR_FORCE_SLOW
    return 0;
#endif
    double e = hi * eps; /* the test is the same for -e */
    return hi + (lo - e) == hi + (lo + e);
}

/* The same test where lo may exceed half a unit of hi's last place: 1 when every real
 * within eps |hi| of hi + lo rounds to one double, then *y. The roundings of lo -+ e
 * (2^-53 of |lo| + e) are the caller's to count in eps. */
CAIRN__CR_FN int cairn__cr_f64_sure_sum(double hi, double lo, double eps, double *y) {
#ifdef CAIRN_CR_FORCE_SLOW
    return 0;
#endif
    double e = hi * eps; /* the test is the same for -e */
    *y = hi + (lo - e);
    return *y == hi + (lo + e);
}

/* exp outside 2^-54 <= |x| <= 707 (NaN, infinities, tiny x, results past 2^1022 or
 * below 2^-1022), and the accurate path. */
CAIRN__CR_SLOW double cairn__cr_exp_edge(double x) {
    uint64_t b = cairn__f64_bits(x), ab = b & 0x7FFFFFFFFFFFFFFFull;
    if (ab >= 0x7FF0000000000000ull) {
        if (ab > 0x7FF0000000000000ull) return cairn__cr_nan();
        return b >> 63 ? 0.0 : x;
    }
    if (ab < 0x3C90000000000000ull) return 1.0; /* |x| < 2^-54: e^x rounds to 1 */
    if (x > 709.79) return cairn__f64_from_bits(0x7FF0000000000000ull); /* past 2^1024 */
    if (x < -745.14) return 0.0; /* e^x < 2^-1075, half the least subnormal */
    return cairn__cr_f64_finish(cairn__crm_exp(cairn__crm_from_d(x)), 165);
}

CAIRN__CR_FN double cairn_cr_exp(double x) {
    uint64_t ab = cairn__f64_bits(x) & 0x7FFFFFFFFFFFFFFFull;
    if (ab - 0x3C90000000000000ull > 0x4086180000000000ull - 0x3C90000000000000ull)
        return cairn__cr_exp_edge(x); /* outside 2^-54 <= |x| <= 707 */
    int k;
    double lo, hi = cairn__cr_exp_dd(x, &k, &lo);
    if (cairn__cr_f64_sure(hi, lo, CAIRN__CR_EPS64_EXP)) return cairn__cr_scale(hi, k);
    return cairn__cr_exp_edge(x);
}

/* ---- f64 log ---------------------------------------------------------------------------- */

#define CAIRN__CR_EPS64_LOG 0x1.07p-67

/* log x = hi + *lo for positive finite x (subnormals too), relative error below 2^-67:
   *  1. x = 2^e m, m in [1, 2); i = the top 8 fraction bits; r = n/512 and L from the
 *     table; K = e + (i >= LOG_SPLIT). u = m r - 1 is exact: m = mh + ml (mh: 21 bits),
 *     mh r and ml r are exact, mh r - 1 is exact (Sterbenz), and u itself fits 53 bits
 *     (|u| < 2^-8 on the 2^-61 grid). log x = K ln2 + L + log(1 + u).
  *  2. log(1 + u) = u - u^2/2 + u^3 P(u), P the Taylor sum 1/3 - u/4 ... + u^6/9: tail
   *     below 2^-83.3. u^2/2 = uh^2/2 + (uh ul + ul^2/2), uh = u on the 2^-34 grid (so
 *     |uh| <= |u| and uh^2/2 <= u^2/2 < |u| 2^-9): the first exact, the second within
 *     2^-96. u^3 P: relative error below 2^-51 (P by Estrin
 *     within 2^-52.7, u^3 from two roundings, the product one more), so absolute below
 *     2^-76.6 and below 2^-68.6 of log(1 + u) when |u| is the result.
 *  3. K ln2 = K LN2_HI (exact, 42 bits) + K LN2_LO (within 2^-84); L's pair within
 *     2^-106; the sums: (h1, h2, h3) by exact fast two-sums (|K ln2| > |L|; L = 0 or
 *     |L| > 1.9 |u|, which tests/c/cr_check.c checks on the table; |h2| > u^2/2), the
 *     small terms into lo with roundings below 2^-53 of |lo| < 2^-40 |h|.
 *  Three cases: K = 0 with L = 0 (entries 0 and 255, x near 1): the result is
 *  log(1 + u), relative error below 2^-68.4. K = 0 otherwise: |result| > 2^-9.02, the
 *  absolute errors below 2^-76.5: relative 2^-67.4. K != 0: |result| > 0.34: below
 *  2^-73. So 2^-67 holds, and the test uses 2^-66.9. */
CAIRN__CR_INLINE double cairn__cr_log_dd(double x, double *lo) {
    uint64_t b = cairn__f64_bits(x);
    int e = (int)(b >> 52) - 1023;
    if (e == -1023) { /* subnormal: scale by 2^54 */
        b = cairn__f64_bits(x * 0x1p54);
        e = (int)(b >> 52) - 1023 - 54;
    }
    int i = (int)((b >> 44) & 0xFF), K = e + (i >= CAIRN__CR_LOG_SPLIT);
    uint64_t mb = (b & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
    double m = cairn__f64_from_bits(mb), mh = cairn__f64_from_bits(mb & ~0xFFFFFFFFull);
    double r = cairn__cr_log_tab[i][0];
    double u = (mh * r - 1.0) + (m - mh) * r;
    double uh = (u + 0x1.8p18) - 0x1.8p18, ul = u - uh;
    double sqh = uh * uh * 0.5, sql = uh * ul + 0.5 * (ul * ul);
    double u2 = u * u, u4 = u2 * u2; /* P by Estrin's scheme */
    double p =
        (u2 * u) * ((CAIRN__CR_INV3 - 0.25 * u) + u2 * (CAIRN__CR_INV5 - CAIRN__CR_INV6 * u) +
                    u4 * ((CAIRN__CR_INV7 - 0.125 * u) + u2 * CAIRN__CR_INV9));
    double l1, l2, l3, k = (double)K;
    double h1 = cairn__cr_fast_two_sum(k * CAIRN__CR_LN2_HI, cairn__cr_log_tab[i][1], &l1);
    double h2 = cairn__cr_fast_two_sum(h1, u, &l2); /* h1 = 0, or |h1| > 1.9 |u| */
    double h3 = cairn__cr_fast_two_sum(h2, -sqh, &l3);
    double l = (l1 + l2 + l3) + ((k * CAIRN__CR_LN2_LO + cairn__cr_log_tab[i][2]) - sql + p);
    return cairn__cr_fast_two_sum(h3, l, lo);
}

/* A double within 2^-60 of log x, for the accurate path's Newton start (x > 0). */
CAIRN__CR_FN double cairn__cr_log_estimate(double x) {
    double lo;
    return cairn__cr_log_dd(x, &lo);
}

/* log x = hi + *lo for a positive normal x (bits b), hi + *lo +- *eps |hi| holding
 * log x and the rounding test's own error: the first stage, whose bound is its table
 * entry's (scripts/gen_cr_tables.py computes it from the steps below: from 2^-71.4 to
 * 2^-62, 2^-67 or better for 459 of the 512 entries):
 *  1. t = b - OFF: x = 2^k z, k = t >> 52 (arithmetic), z in [OFF, 2 OFF), OFF = 0.7065;
 *     i = the 9 bits of t below the exponent picks one of 512 ranges of z, equal in bit
 *     patterns (width 2^-9 above 1, 2^-10 below); the range of 1.0 is [1 - 2^-11,
 *     1 + 2^-10) (entry LOG64_ONE: invc = 1, log c = 0).
 *  2. u = z invc - 1 exactly, from the table's invc (11 bits at most, a multiple of
 *     2^-10, or of 2^-9 for some z < 1): z = zh + zl with zh its top 42 bits, so zh invc
 *     and zl invc are exact; zh invc - 1 is exact (Sterbenz, |u| < 2^-9); and u lies on
 *     the grid of z (2^-52, 2^-53 below 1) times invc's, below 2^53 of its units (the
 *     generator checks each entry), so the last sum is exact too. |u| <= U <= 2^-9.2.
 *  3. log x = k ln2 + log c + log(1 + u), log c = -log(invc) = chi + clo, chi on the
 *     grid 2^-42 as LN2_HI (42 bits): k LN2_HI and a = k LN2_HI + chi are exact (on that
 *     grid, below 2^10). (h1, e1) = a + u exactly: a fast two-sum, as |chi| >= U where
 *     chi != 0 (checked), |a| >= 0.34 for k != 0, and a = 0 otherwise.
 *  4. log(1 + u) - u = -u^2/2 + u^3 Q(u), Q = 1/3 - u/4 + u^2/5 - u^3/6 + u^4/7
 *     (coefficients rounded): the tail below U^8/8 / (1 - U). p = u3 q - u2/2 with
 *     u2 = u^2 and u3 = u2 u rounded, q = Q by Estrin within 2^-53.5 (two roundings
 *     below 2^-55 and 1/3's 2^-55.6; the rest below 2^-70): -u2/2 is exact, so p's error
 *     is 2^-53 u^2 (1/2 for u2, 1/2 for the sum, 1.71 |u| for u3 q): below 1.01 2^-53 u^2.
 *  5. lo = (e1 + (k LN2_LO + clo)) + p: three roundings of 2^-53 of sums below 2^-19
 *     (and |k| 2^-43), LN2_LO's and clo's own errors (|k| 2^-97, 2^-97). hi = h1, not
 *     renormalised: cairn_cr_log's test h1 + (lo -+ e) then adds 2^-53 (|lo| + e) more.
 *  The entry's bound is the larger of two cases: k = 0, the absolute errors over the
 *  least |log z| of the range (for the range of 1.0, hi = u and lo = p exactly, and the
 *  error is p's relative to u: 1.01 2^-53 U + U^7/8 + 2^-53 |p| / |u|, over 1 - U/2);
 *  |k| >= 1, where |log x| >= 0.345 |k| and the errors are a + b |k|, worst at |k| = 1.
 *  Each is multiplied by the most |log x| / |h1| (lo leaves p out of h1), raised by
 *  2^-40 of itself and rounded up to 8 bits. */
CAIRN__CR_INLINE double cairn__cr_log_fast(uint64_t b, double *lo, double *eps) {
    uint64_t t = b - CAIRN__CR_LOG64_OFF, iz = b - (t & 0xFFF0000000000000ull);
    const double *e = cairn__cr_log64_tab + ((t >> 41) & 0x7FC); /* entry i: 4i .. 4i + 3 */
    /* >> of a negative: arithmetic in gcc, clang and nvcc */
    double kd = cairn__cr_i2d((int64_t)t >> 52);
    double z = cairn__f64_from_bits(iz), zh = cairn__f64_from_bits(iz & ~0x7FFull);
    double u = (zh * e[0] - 1.0) + (z - zh) * e[0];
    double e1, h1 = cairn__cr_fast_two_sum(kd * CAIRN__CR_LN2_HI + e[1], u, &e1);
    double u2 = u * u, q = (CAIRN__CR_INV3 - 0.25 * u) +
                           u2 * ((CAIRN__CR_INV5 - CAIRN__CR_INV6 * u) + u2 * CAIRN__CR_INV7);
    double p = (u2 * u) * q + -0.5 * u2;
    *eps = e[3];
    *lo = (e1 + (kd * CAIRN__CR_LN2_LO + e[2])) + p;
    return h1;
}

/* log of NaN, negative numbers, zeros, subnormals, infinity and 1; and the inputs the
 * first stage leaves: the second (cairn__cr_log_dd, within 2^-67), then the accurate
 * path. */
CAIRN__CR_SLOW double cairn__cr_log_edge(double x) {
    uint64_t b = cairn__f64_bits(x);
    if (b == 0x3FF0000000000000ull) return 0.0;
    if ((b & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull || (b >> 63 && b << 1))
        return cairn__cr_nan();                                        /* NaN, or below zero */
    if (!(b << 1)) return cairn__f64_from_bits(0xFFF0000000000000ull); /* +-0: -inf */
    if (b == 0x7FF0000000000000ull) return x;
    double lo, hi = cairn__cr_log_dd(x, &lo);
    CAIRN__CR_COUNT(2);
    if (cairn__cr_f64_sure(hi, lo, CAIRN__CR_EPS64_LOG)) return hi;
    return cairn__cr_f64_finish(cairn__crm_log(cairn__crm_from_d(x)), 150);
}

/* The first stage for positive normal x, its rounding test with the entry's bound; the
 * rest in cairn__cr_log_edge. */
CAIRN__CR_FN double cairn_cr_log(double x) {
    uint64_t b = cairn__f64_bits(x);
    if (b - 0x0010000000000000ull >= 0x7FF0000000000000ull - 0x0010000000000000ull)
        return cairn__cr_log_edge(x); /* not positive, normal and finite */
    double lo, eps, y, hi = cairn__cr_log_fast(b, &lo, &eps);
    if (cairn__cr_f64_sure_sum(hi, lo, eps, &y)) return y;
    return cairn__cr_log_edge(x);
}

#endif
