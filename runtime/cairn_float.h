/* cairn_float.h: the storage floats (f16, bf16, f8e4m3, f8e5m2) and quantize.
 *
 * A storage float holds a number and converts; it never computes. Each is carried as
 * its bits in an unsigned integer, so C code, generated code and CUDA device code all
 * pass it around without a float type of their own.
 *
 *   format   bits  fraction  exponent bias  largest finite  past the range
 *   f16       16     10         15           65504           infinity      (IEEE binary16)
 *   bf16      16      7        127           ~3.39e38        infinity      (upper half of f32)
 *   f8e4m3     8      3          7           448             trap          (OCP E4M3, NaN S.1111.111)
 *   f8e5m2     8      2         15           57344           infinity      (OCP E5M2)
 *
 * What every routine here promises:
 * - FMT -> f32 (and f64) is exact: every bit pattern, NaN payloads included.
 * - f32 -> FMT and f64 -> FMT round once, to nearest with ties to even, straight from
 *   the source bits (an f64 never goes through f32, which would round twice).
 *   Subnormals are kept. Past the range: the infinity of the sign, except f8e4m3,
 *   which has none: cairn_f32_to_f8e4m3 traps ("f8e4m3 overflow"), and the _try
 *   variants report it instead. 464 itself is a tie that goes to the even 448.
 *   A NaN gives a quiet NaN with the input's sign and the top payload bits that fit
 *   (what x86 F16C does), and f8e4m3's only NaN, S.1111.111.
 * - quantize[T](x, scale) is the exact quotient x / scale, rounded once to nearest
 *   with ties to even, clamped to T's finite range (it saturates; +-inf x gives T's
 *   largest or smallest finite value). Its result is always finite. A scale that is
 *   not positive and finite traps, and so does a NaN x: a NaN has no nearest value in
 *   an integer, and quantize promises a finite result for every T alike.
 * - quantize_stochastic[T](x, scale, noise) rounds the quotient's magnitude away from
 *   zero exactly when the dropped fraction of a unit in T's last place is greater
 *   than noise / 2^32, and toward zero otherwise (an exact quotient is never moved).
 *   Over uniform noise it rounds up with probability ceil(fraction * 2^32) / 2^32, so
 *   it is unbiased to within 2^-32 of a unit, and the same noise gives the same bits.
 *   It saturates and traps like quantize.
 *
 * How: every conversion and quantize_stochastic work on integer bit patterns only, with
 * no floating-point instruction on their path, so the host and a CUDA lane give the same
 * bits whatever the FPU's modes. quantize (nearest) divides in f64 and rounds with f64
 * adds (no integer division: issue 33), which needs only IEEE round-to-nearest, the
 * mode CAIRN code always runs in, on the host and in CUDA alike (cairn__quotient_f64
 * has the proof that this rounds as the exact quotient does). Every routine is static
 * inline and CAIRN_HD, so generated host C and device code (nvcc --fmad=false) share
 * this one text.
 *
 * Why quantize_stochastic rounds the exact quotient once: x = mx * 2^ex and scale = ms * 2^es
 * with 24-bit significands normalized to [2^23, 2^24). The integer division
 * (mx * 2^39) / ms gives a quotient Q in (2^38, 2^40) and a remainder r, so
 * x / scale = (Q + r / ms) * 2^(ex - es - 39) exactly, with 0 <= r / ms < 1. Rounding
 * to any T needs only the bits of Q above and at the rounding position and whether
 * anything below it is nonzero. Q has at least 39 significant bits and every float T
 * keeps at most 11, so the rounding position lies inside Q and "r != 0" is the sticky
 * bit. For an integer T the position is the unit; if that lies below Q's last bit,
 * the quotient is at least 2^38 and saturates anyway. One rounding, from exact data.
 *
 * Traps go through cairn_trap_at (cairn_trap.h) with the caller's source location;
 * C callers without one pass CAIRN_NOLOC. */
#ifndef CAIRN_FLOAT_H
#define CAIRN_FLOAT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cairn_message.h"
#include "cairn_trap.h"

typedef uint16_t cairn_f16;   /* IEEE binary16 bits */
typedef uint16_t cairn_bf16;  /* bfloat16 bits: the upper half of an f32 */
typedef uint8_t cairn_f8e4m3; /* OCP FP8 E4M3 bits */
typedef uint8_t cairn_f8e5m2; /* OCP FP8 E5M2 bits */

#define CAIRN_FLOAT_FN static inline CAIRN_HD

/* ---- internals (cairn__ names): bits of the compute floats, one rounding core ---- */

CAIRN_FLOAT_FN uint32_t cairn__f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

CAIRN_FLOAT_FN float cairn__f32_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

CAIRN_FLOAT_FN uint64_t cairn__f64_bits(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

CAIRN_FLOAT_FN double cairn__f64_from_bits(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Leading zeros of a nonzero 64-bit word. */
CAIRN_FLOAT_FN int cairn__clz64(uint64_t v) {
#ifdef __CUDA_ARCH__
    return __clzll((long long)v);
#else
    return __builtin_clzll(v);
#endif
}

/* A storage format's shape, as the rounding core needs it. */
typedef struct cairn__fmt {
    int man;           /* fraction bits */
    int emin;          /* exponent of the smallest normal value */
    uint32_t max_bits; /* magnitude bits of the largest finite value; +1 is infinity
                           in the IEEE-style formats and NaN in f8e4m3 */
    uint32_t nan_bits; /* magnitude bits of the quiet NaN a NaN input becomes */
    uint32_t sign_bit;
} cairn__fmt;

CAIRN_FLOAT_FN cairn__fmt cairn__fmt_f16(void) {
    cairn__fmt f = {10, -14, 0x7BFFu, 0x7E00u, 0x8000u};
    return f;
}
CAIRN_FLOAT_FN cairn__fmt cairn__fmt_bf16(void) {
    cairn__fmt f = {7, -126, 0x7F7Fu, 0x7FC0u, 0x8000u};
    return f;
}
CAIRN_FLOAT_FN cairn__fmt cairn__fmt_f8e4m3(void) {
    cairn__fmt f = {3, -6, 0x7Eu, 0x7Fu, 0x80u};
    return f;
}
CAIRN_FLOAT_FN cairn__fmt cairn__fmt_f8e5m2(void) {
    cairn__fmt f = {2, -14, 0x7Bu, 0x7Eu, 0x80u};
    return f;
}

/* Stochastic decision: is the dropped fraction (rem + sticky) / 2^shift greater than
 * noise / 2^32? rem < 2^shift; sticky means "a little more than rem". Compares the
 * fraction's top 32 bits with noise, and on equality whether anything lies below. */
CAIRN_FLOAT_FN int cairn__fraction_exceeds(uint64_t rem, int shift, int sticky, uint32_t noise) {
    if (shift <= 32) {
        uint64_t top = rem << (32 - shift);
        return top > noise || (top == noise && sticky);
    }
    int below = shift - 32;
    uint64_t top = below >= 64 ? 0 : rem >> below;
    uint64_t rest = below >= 64 ? rem : rem & ((UINT64_C(1) << below) - 1);
    return top > noise || (top == noise && (rest != 0 || sticky));
}

/* Drops the low `shift` (>= 1) bits of sig + sticky, where sig < 2^63 and sticky
 * means the true value lies strictly between sig and sig + 1. Returns the kept bits,
 * plus one when the rounding goes away from zero: to nearest with ties to even, or
 * stochastically against noise. */
CAIRN_FLOAT_FN uint64_t cairn__drop_bits(uint64_t sig, int shift, int sticky, int stochastic,
                                         uint32_t noise) {
    uint64_t kept = shift >= 64 ? 0 : sig >> shift;
    uint64_t rem = shift >= 64 ? sig : sig & ((UINT64_C(1) << shift) - 1);
    int up;
    if (stochastic) {
        up = cairn__fraction_exceeds(rem, shift, sticky, noise);
    } else if (shift > 64) {
        up = 0; /* sig < 2^63 <= half a unit */
    } else {
        uint64_t half = UINT64_C(1) << (shift - 1);
        up = rem > half || (rem == half && (sticky || (kept & 1)));
    }
    return kept + (uint64_t)up;
}

/* The one rounding core: rounds the magnitude (sig + sticky) * 2^exp, 1 <= sig < 2^63,
 * to format f and returns its magnitude bits. A result above f.max_bits means the
 * value lies past f's finite range. With sticky set, sig must hold more than f.man + 1
 * significant bits (quantize's quotient holds 39), so the rounding position lies
 * inside sig. */
CAIRN_FLOAT_FN uint32_t cairn__round_to_fmt(uint64_t sig, int exp, int sticky, cairn__fmt f,
                                            int stochastic, uint32_t noise) {
    int lead = exp + 63 - cairn__clz64(sig); /* exponent of sig's leading bit */
    if (lead - f.emin >= (int)(f.max_bits >> f.man))
        return UINT32_MAX; /* at least 2^(emax + 1): past the range before rounding */
    int quantum = (lead > f.emin ? lead : f.emin) - f.man; /* exponent of the last kept bit */
    int shift = quantum - exp;
    uint64_t kept =
        shift <= 0 ? sig << -shift : cairn__drop_bits(sig, shift, sticky, stochastic, noise);
    /* kept carries the implicit bit (and any carry out of rounding) into the exponent */
    return (uint32_t)(((uint64_t)(quantum - (f.emin - f.man)) << f.man) + kept);
}

/* Narrows an IEEE binary value given by its fields (sign, biased exponent, fraction;
 * src_man fraction bits, exponent all-ones at emask) to f, rounding to nearest-even.
 * *past is set when the value (an infinity included) lies past f's range; the result
 * then holds the infinity's bits (f8e4m3: its NaN). */
CAIRN_FLOAT_FN uint32_t cairn__narrow(uint32_t sign, uint32_t efield, uint64_t frac, int src_man,
                                      int src_bias, uint32_t emask, cairn__fmt f, int *past) {
    uint32_t sign_bits = sign ? f.sign_bit : 0;
    *past = 0;
    if (efield == emask) {
        if (frac) /* quiet NaN: keep the sign and the payload's top bits */
            return sign_bits | f.nan_bits |
                   ((uint32_t)(frac >> (src_man - f.man)) & ((1u << f.man) - 1));
        *past = 1;
        return sign_bits | (f.max_bits + 1);
    }
    if (efield == 0 && frac == 0) return sign_bits;
    uint64_t sig = efield ? frac | (UINT64_C(1) << src_man) : frac;
    int exp = (int)(efield ? efield : 1) - src_bias - src_man;
    uint32_t bits = cairn__round_to_fmt(sig, exp, 0, f, 0, 0);
    if (bits > f.max_bits) {
        *past = 1;
        bits = f.max_bits + 1;
    }
    return sign_bits | bits;
}

CAIRN_FLOAT_FN uint32_t cairn__narrow_f32(float x, cairn__fmt f, int *past) {
    uint32_t u = cairn__f32_bits(x);
    return cairn__narrow(u >> 31, (u >> 23) & 0xFFu, u & 0x7FFFFFu, 23, 127, 0xFFu, f, past);
}

CAIRN_FLOAT_FN uint32_t cairn__narrow_f64(double x, cairn__fmt f, int *past) {
    uint64_t u = cairn__f64_bits(x);
    return cairn__narrow((uint32_t)(u >> 63), (uint32_t)(u >> 52) & 0x7FFu,
                         u & ((UINT64_C(1) << 52) - 1), 52, 1023, 0x7FFu, f, past);
}

/* Widens a format with `man` fraction bits, `ebits` exponent bits and `bias` to f32
 * bits, exactly. ieee: the all-ones exponent holds infinities and NaNs; otherwise
 * (f8e4m3) only all-ones exponent and fraction is NaN. Payloads are kept. */
CAIRN_FLOAT_FN uint32_t cairn__widen(uint32_t bits, int man, int ebits, int bias, int ieee) {
    uint32_t emask = (1u << ebits) - 1, fmask = (1u << man) - 1;
    uint32_t sign = (bits >> (man + ebits) & 1u) << 31;
    uint32_t e = (bits >> man) & emask, m = bits & fmask;
    if (e == emask && (ieee || m == fmask)) return sign | 0x7F800000u | (m << (23 - man));
    if (e != 0) return sign | ((e - (uint32_t)bias + 127u) << 23) | (m << (23 - man));
    if (m == 0) return sign;
    /* subnormal m * 2^(1 - bias - man): a normal f32 in every format but bf16 */
    int lead = 63 - cairn__clz64(m);
    uint32_t field = (uint32_t)(1 - bias - man + lead + 127);
    return sign | (field << 23) | ((m << (23 - lead)) & 0x7FFFFFu);
}

/* ---- bits: to_bits and from_bits are the identity on these typedefs ---- */

CAIRN_FLOAT_FN uint16_t cairn_f16_to_bits(cairn_f16 h) { return h; }
CAIRN_FLOAT_FN cairn_f16 cairn_f16_from_bits(uint16_t u) { return u; }
CAIRN_FLOAT_FN uint16_t cairn_bf16_to_bits(cairn_bf16 h) { return h; }
CAIRN_FLOAT_FN cairn_bf16 cairn_bf16_from_bits(uint16_t u) { return u; }
CAIRN_FLOAT_FN uint8_t cairn_f8e4m3_to_bits(cairn_f8e4m3 h) { return h; }
CAIRN_FLOAT_FN cairn_f8e4m3 cairn_f8e4m3_from_bits(uint8_t u) { return u; }
CAIRN_FLOAT_FN uint8_t cairn_f8e5m2_to_bits(cairn_f8e5m2 h) { return h; }
CAIRN_FLOAT_FN cairn_f8e5m2 cairn_f8e5m2_from_bits(uint8_t u) { return u; }

/* ---- widening: exact ---- */

CAIRN_FLOAT_FN float cairn_f16_to_f32(cairn_f16 h) {
    return cairn__f32_from_bits(cairn__widen(h, 10, 5, 15, 1));
}
CAIRN_FLOAT_FN float cairn_bf16_to_f32(cairn_bf16 h) {
    return cairn__f32_from_bits((uint32_t)h << 16);
}
CAIRN_FLOAT_FN float cairn_f8e4m3_to_f32(cairn_f8e4m3 h) {
    return cairn__f32_from_bits(cairn__widen(h, 3, 4, 7, 0));
}
CAIRN_FLOAT_FN float cairn_f8e5m2_to_f32(cairn_f8e5m2 h) {
    return cairn__f32_from_bits(cairn__widen(h, 2, 5, 15, 1));
}
/* f32 bits -> f64 bits, exactly, on the integers: a C (double) conversion of a
 * signalling NaN quiets it (the FPU sets the quiet bit), which would break the promise
 * that widening keeps every bit pattern. bf16 has f32 subnormals; they normalize. */
CAIRN_FLOAT_FN uint64_t cairn__widen_f32_bits(uint32_t u) {
    uint64_t sign = (uint64_t)(u >> 31) << 63, m = u & 0x7FFFFFu;
    uint32_t e = (u >> 23) & 0xFFu;
    if (e == 0xFFu) return sign | (UINT64_C(0x7FF) << 52) | (m << 29);
    if (e != 0) return sign | ((uint64_t)(e - 127u + 1023u) << 52) | (m << 29);
    if (m == 0) return sign;
    int lead = 63 - cairn__clz64(m); /* m * 2^-149, its top bit at 2^(lead - 149) */
    uint64_t field = (uint64_t)(lead - 149 + 1023);
    return sign | (field << 52) | ((m << (52 - lead)) & ((UINT64_C(1) << 52) - 1));
}
CAIRN_FLOAT_FN double cairn_f16_to_f64(cairn_f16 h) {
    return cairn__f64_from_bits(cairn__widen_f32_bits(cairn__widen(h, 10, 5, 15, 1)));
}
CAIRN_FLOAT_FN double cairn_bf16_to_f64(cairn_bf16 h) {
    return cairn__f64_from_bits(cairn__widen_f32_bits((uint32_t)h << 16));
}
CAIRN_FLOAT_FN double cairn_f8e4m3_to_f64(cairn_f8e4m3 h) {
    return cairn__f64_from_bits(cairn__widen_f32_bits(cairn__widen(h, 3, 4, 7, 0)));
}
CAIRN_FLOAT_FN double cairn_f8e5m2_to_f64(cairn_f8e5m2 h) {
    return cairn__f64_from_bits(cairn__widen_f32_bits(cairn__widen(h, 2, 5, 15, 1)));
}

/* ---- narrowing: one rounding to nearest, ties to even ---- */

/* f32 -> f16 without a branch, so a loop over an array vectorizes (min and selects).
 * Normal range: rebias the exponent (127 -> 15) and round the 13 dropped bits to
 * nearest-even by adding 0xFFF plus the kept lsb; a carry moves into the exponent and,
 * past 65504 + 16, onto infinity (clamped there). Below 2^-14 the significand with
 * its implicit bit is shifted right by 126 - e (at most 31, enough to reach zero)
 * with the same add-then-shift rounding. */
CAIRN_FLOAT_FN cairn_f16 cairn_f32_to_f16(float x) {
    uint32_t u = cairn__f32_bits(x);
    uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    uint32_t rebiased = a - 0x38000000u;
    uint32_t normal = (rebiased + 0x0FFFu + ((rebiased >> 13) & 1u)) >> 13;
    normal = normal < 0x7C00u ? normal : 0x7C00u;
    uint32_t e = a >> 23, shift = 126u - e < 31u ? 126u - e : 31u;
    uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t sub = (m + ((1u << shift) >> 1) - 1u + ((m >> shift) & 1u)) >> shift;
    uint32_t nan = 0x7E00u | ((a >> 13) & 0x3FFu);
    uint32_t mag = a < 0x38800000u ? sub : normal;
    return (cairn_f16)(sign | (a > 0x7F800000u ? nan : mag));
}

/* f32 -> bf16 without a branch: round the low 16 bits to nearest-even; a carry runs
 * into the exponent and at the top onto infinity. A NaN keeps its top bits, made quiet. */
CAIRN_FLOAT_FN cairn_bf16 cairn_f32_to_bf16(float x) {
    uint32_t u = cairn__f32_bits(x);
    uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x0040u;
    return (cairn_bf16)((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

CAIRN_FLOAT_FN cairn_f8e5m2 cairn_f32_to_f8e5m2(float x) {
    int past;
    return (cairn_f8e5m2)cairn__narrow_f32(x, cairn__fmt_f8e5m2(), &past);
}

CAIRN_FLOAT_FN cairn_f16 cairn_f64_to_f16(double x) {
    int past;
    return (cairn_f16)cairn__narrow_f64(x, cairn__fmt_f16(), &past);
}
CAIRN_FLOAT_FN cairn_bf16 cairn_f64_to_bf16(double x) {
    int past;
    return (cairn_bf16)cairn__narrow_f64(x, cairn__fmt_bf16(), &past);
}
CAIRN_FLOAT_FN cairn_f8e5m2 cairn_f64_to_f8e5m2(double x) {
    int past;
    return (cairn_f8e5m2)cairn__narrow_f64(x, cairn__fmt_f8e5m2(), &past);
}

/* f8e4m3 has no infinity: the _try forms return 0 (and store the NaN) when x lies
 * past the range (|x| > 464, or infinite), 1 otherwise; the plain forms trap there. */
CAIRN_FLOAT_FN int cairn_f32_to_f8e4m3_try(float x, cairn_f8e4m3 *out) {
    int past;
    *out = (cairn_f8e4m3)cairn__narrow_f32(x, cairn__fmt_f8e4m3(), &past);
    return !past;
}
CAIRN_FLOAT_FN int cairn_f64_to_f8e4m3_try(double x, cairn_f8e4m3 *out) {
    int past;
    *out = (cairn_f8e4m3)cairn__narrow_f64(x, cairn__fmt_f8e4m3(), &past);
    return !past;
}

/* "f8e4m3 overflow: X rounds past 448 and the format has no infinity" */
CAIRN__COLD_FN void cairn__trap_e4m3(double x, int single, cairn_loc loc) {
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, "f8e4m3 overflow: ");
    cairn_msg_float(&m, x, single);
    cairn_msg_put(&m, " rounds past 448 and the format has no infinity");
    cairn_trap_at(m.text, loc);
}

CAIRN_FLOAT_FN cairn_f8e4m3 cairn_f32_to_f8e4m3(float x, cairn_loc loc) {
    cairn_f8e4m3 r;
    if (!cairn_f32_to_f8e4m3_try(x, &r)) cairn__trap_e4m3(x, 1, loc);
    return r;
}
CAIRN_FLOAT_FN cairn_f8e4m3 cairn_f64_to_f8e4m3(double x, cairn_loc loc) {
    cairn_f8e4m3 r;
    if (!cairn_f64_to_f8e4m3_try(x, &r)) cairn__trap_e4m3(x, 0, loc);
    return r;
}

/* "quantize scale must be positive and finite (scale = S)" */
CAIRN__COLD_FN void cairn__trap_scale(float scale, cairn_loc loc) {
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, "quantize scale must be positive and finite (scale = ");
    cairn_msg_float(&m, scale, 1);
    cairn_msg_put(&m, ")");
    cairn_trap_at(m.text, loc);
}

/* ---- quantize ---- */

/* The checks every quantize makes, once per call: traps on a scale that is not
 * positive and finite, and on a NaN x. Returns |x|'s bits. */
CAIRN_FLOAT_FN uint32_t cairn__quantize_args(float x, float scale, cairn_loc loc) {
    uint32_t xu = cairn__f32_bits(x) & 0x7FFFFFFFu, su = cairn__f32_bits(scale);
    if (su - 1u >= 0x7F7FFFFFu) /* zero, negative (sign bit set), inf or NaN */
        cairn__trap_scale(scale, loc);
    if (xu > 0x7F800000u)
        cairn_trap_at("quantize of NaN: the result would have no nearest value", loc);
    return xu;
}

/* The exact quotient x / scale as (sig + sticky) * 2^exp (see the header comment), for
 * quantize_stochastic, which needs 32 bits below the unit. Returns 0 when it is zero,
 * 1 when finite and nonzero, 2 when x is infinite. */
CAIRN_FLOAT_FN int cairn__quotient(float x, float scale, cairn_loc loc, uint64_t *sig, int *exp,
                                   int *sticky) {
    uint32_t xu = cairn__quantize_args(x, scale, loc), su = cairn__f32_bits(scale);
    if (xu == 0x7F800000u) return 2;
    if (xu == 0) return 0;
    /* significands with the implicit bit, normalized to [2^23, 2^24) */
    uint64_t mx = xu >> 23 ? (xu & 0x7FFFFFu) | 0x800000u : xu;
    uint64_t ms = su >> 23 ? (su & 0x7FFFFFu) | 0x800000u : su;
    int nx = cairn__clz64(mx) - 40, ns = cairn__clz64(ms) - 40;
    int ex = (int)(xu >> 23 ? xu >> 23 : 1) - 150 - nx;
    int es = (int)(su >> 23 ? su >> 23 : 1) - 150 - ns;
    uint64_t num = (mx << nx) << 39, den = ms << ns;
    *sig = num / den; /* in (2^38, 2^40) */
    *sticky = num % den != 0;
    *exp = ex - es - 39;
    return 1;
}

/* quantize's quotient |x| / scale rounded once to f64 (one IEEE division of exact f64
 * operands, no integer division), after quantize's checks; +inf for an infinite x.
 *
 * Why rounding this to any quantize target T gives the bits the exact quotient Q gives.
 * Q lies in [2^-149 / 2^128, 2^128 / 2^-149] = [2^-277, 2^277], inside f64's normal
 * range, so the f64 quotient q has |q - Q| <= 2^-53 Q. Rounding to T (nearest, ties to
 * even, then clamping) is monotonic in the value and changes only at T's boundaries: the
 * midpoints h between neighbours of T (for an integer T the half-integers j + 1/2; f16,
 * bf16, f8e4m3, f8e5m2 midpoints, subnormal ones included). Every boundary is
 * h = H * 2^c with H odd and at most 18 bits (u16's 65535.5 is 131071 * 2^-1; a float
 * format with p fraction bits has H < 2^(p+2) <= 2^12), so h is an f64 and:
 * - Q = h: the division is exact, q = h, the tie goes to even either way.
 * - Q != h: write x = mx 2^a, scale = ms 2^b with integers mx, ms < 2^24. Then
 *   Q - h = (mx 2^(a-b) - H ms 2^c) / ms, and the numerator is a nonzero multiple of
 *   2^k, k = min(a - b, c). If k = a - b: |Q - h| >= 2^(a-b) / ms > Q / mx > 2^-24 Q.
 *   If k = c: |Q - h| >= 2^c / ms > h 2^-24 / H >= h 2^-42; where Q < 2h that is more
 *   than Q 2^-43 (and where Q >= 2h, |Q - h| >= Q / 2). Either way |Q - h| > 2^-53 Q
 *   >= |q - Q|, so q lies strictly on Q's side of h.
 * So q and Q lie strictly between the same two boundaries, or are the same boundary, and
 * round to the same T value, saturation included (the clamp is monotonic too). The
 * operands are widened on the integers (an f32 subnormal is exact in f64 and meets no
 * flush-to-zero conversion), and the division is IEEE round-to-nearest on the host
 * (SSE2) and in CUDA (div.rn.f64; --fmad and --ftz touch neither). tests/runtime/
 * test_quantize_fast.py holds it to the exact routine over every tie and boundary. */
CAIRN_FLOAT_FN double cairn__quotient_f64(float x, float scale, cairn_loc loc) {
    uint32_t xu = cairn__quantize_args(x, scale, loc), su = cairn__f32_bits(scale);
    return cairn__f64_from_bits(cairn__widen_f32_bits(xu)) /
           cairn__f64_from_bits(cairn__widen_f32_bits(su)); /* +inf for an infinite x */
}

/* q >= 0 (the f64 quotient, or +inf) rounded to nearest-even in f's magnitudes and held
 * at f's largest finite value, without a branch. q is first held at f's largest value
 * (a monotonic step that rounding would end at anyway). Normal range (q >= 2^emin):
 * q's f64 bits rebiased to f's exponent, the dropped 52 - man bits rounded by adding
 * half a unit less one plus the kept lsb (a carry runs into the exponent), as in
 * cairn_f32_to_f16. Below: q * 2^(man - emin) (exact: a power of two) counts units of
 * f's smallest subnormal, rounded to an integer by (v + 2^52) - 2^52, which is exact
 * nearest-even for 0 <= v < 2^52 (the sum lies where f64's spacing is 1); a count of
 * 2^man is the smallest normal's bits, as it should be. */
CAIRN_FLOAT_FN uint32_t cairn__nearest_fmt(double q, cairn__fmt f) {
    uint64_t efield = f.max_bits >> f.man, frac = f.max_bits & ((1u << f.man) - 1);
    double top =
        cairn__f64_from_bits(((efield + (uint64_t)(f.emin + 1022)) << 52) | (frac << (52 - f.man)));
    double min_normal = cairn__f64_from_bits((uint64_t)(1023 + f.emin) << 52);
    double units = cairn__f64_from_bits((uint64_t)(1023 + f.man - f.emin) << 52);
    q = q < top ? q : top;
    int shift = 52 - f.man;
    uint64_t v = cairn__f64_bits(q) - ((uint64_t)(1022 + f.emin) << 52);
    uint64_t normal = (v + (UINT64_C(1) << (shift - 1)) - 1 + ((v >> shift) & 1)) >> shift;
    double small = q < min_normal ? q : 0.0;
    uint64_t sub = (uint64_t)((small * units + 0x1p52) - 0x1p52);
    return (uint32_t)(q < min_normal ? sub : normal);
}

/* q >= 0 rounded to nearest-even as an integer, with the sign, held to lo..hi. q is
 * held at 2^31 first (past every integer T's range; monotonic), then (q + 2^52) - 2^52
 * rounds it to nearest-even exactly (see cairn__nearest_fmt). */
CAIRN_FLOAT_FN int64_t cairn__nearest_int(double q, int negative, int64_t lo, int64_t hi) {
    q = q < 0x1p31 ? q : 0x1p31;
    int64_t mag = (int64_t)((q + 0x1p52) - 0x1p52);
    int64_t v = negative ? -mag : mag;
    return v < lo ? lo : v > hi ? hi : v;
}

/* quantize into a storage float: saturates at f's largest finite value. */
CAIRN_FLOAT_FN uint32_t cairn__quantize_fmt(float x, float scale, cairn__fmt f, int stochastic,
                                            uint32_t noise, cairn_loc loc) {
    uint32_t sign_bits = cairn__f32_bits(x) >> 31 ? f.sign_bit : 0;
    if (!stochastic) return sign_bits | cairn__nearest_fmt(cairn__quotient_f64(x, scale, loc), f);
    uint64_t sig = 0;
    int exp = 0, sticky = 0;
    int kind = cairn__quotient(x, scale, loc, &sig, &exp, &sticky);
    if (kind != 1) return sign_bits | (kind == 2 ? f.max_bits : 0);
    uint32_t bits = cairn__round_to_fmt(sig, exp, sticky, f, stochastic, noise);
    return sign_bits | (bits > f.max_bits ? f.max_bits : bits);
}

/* quantize into the integers lo..hi: saturates at either end. */
CAIRN_FLOAT_FN int64_t cairn__quantize_int(float x, float scale, int64_t lo, int64_t hi,
                                           int stochastic, uint32_t noise, cairn_loc loc) {
    int negative = cairn__f32_bits(x) >> 31;
    if (!stochastic)
        return cairn__nearest_int(cairn__quotient_f64(x, scale, loc), negative, lo, hi);
    uint64_t sig = 0;
    int exp = 0, sticky = 0;
    int kind = cairn__quotient(x, scale, loc, &sig, &exp, &sticky);
    if (kind == 0) return 0;
    /* the unit lies below the quotient's last bit only when the quotient is >= 2^38 */
    uint64_t mag =
        kind == 2 || exp >= 0 ? UINT64_MAX : cairn__drop_bits(sig, -exp, sticky, stochastic, noise);
    if (negative) return mag > (uint64_t)-lo ? lo : -(int64_t)mag;
    return mag > (uint64_t)hi ? hi : (int64_t)mag;
}

/* The public quantize functions, one pair per target T:
 *
 *   T cairn_quantize_NAME(float x, float scale, cairn_loc loc);
 *   T cairn_quantize_stochastic_NAME(float x, float scale, uint32_t noise, cairn_loc loc);
 *
 * quantize: x / scale rounded once to nearest, ties to even, saturating at T's range.
 * quantize_stochastic: away from zero when the dropped fraction exceeds noise / 2^32.
 *
 *   NAME     T              NAME   T
 *   f16      cairn_f16      i8     int8_t
 *   bf16     cairn_bf16     u8     uint8_t
 *   f8e4m3   cairn_f8e4m3   i16    int16_t
 *   f8e5m2   cairn_f8e5m2   u16    uint16_t
 */
#define CAIRN__QUANTIZE_PAIR(NAME, T, ROUND)                                                       \
    CAIRN_FLOAT_FN T cairn_quantize_##NAME(float x, float scale, cairn_loc loc) {                  \
        return (T)ROUND(0, 0);                                                                     \
    }                                                                                              \
    CAIRN_FLOAT_FN T cairn_quantize_stochastic_##NAME(float x, float scale, uint32_t noise,        \
                                                      cairn_loc loc) {                             \
        return (T)ROUND(1, noise);                                                                 \
    }
#define CAIRN__ROUND_F16(st, nz)  cairn__quantize_fmt(x, scale, cairn__fmt_f16(), st, nz, loc)
#define CAIRN__ROUND_BF16(st, nz) cairn__quantize_fmt(x, scale, cairn__fmt_bf16(), st, nz, loc)
#define CAIRN__ROUND_E4M3(st, nz) cairn__quantize_fmt(x, scale, cairn__fmt_f8e4m3(), st, nz, loc)
#define CAIRN__ROUND_E5M2(st, nz) cairn__quantize_fmt(x, scale, cairn__fmt_f8e5m2(), st, nz, loc)
#define CAIRN__ROUND_I8(st, nz)   cairn__quantize_int(x, scale, INT8_MIN, INT8_MAX, st, nz, loc)
#define CAIRN__ROUND_U8(st, nz)   cairn__quantize_int(x, scale, 0, UINT8_MAX, st, nz, loc)
#define CAIRN__ROUND_I16(st, nz)  cairn__quantize_int(x, scale, INT16_MIN, INT16_MAX, st, nz, loc)
#define CAIRN__ROUND_U16(st, nz)  cairn__quantize_int(x, scale, 0, UINT16_MAX, st, nz, loc)
CAIRN__QUANTIZE_PAIR(f16, cairn_f16, CAIRN__ROUND_F16)
CAIRN__QUANTIZE_PAIR(bf16, cairn_bf16, CAIRN__ROUND_BF16)
CAIRN__QUANTIZE_PAIR(f8e4m3, cairn_f8e4m3, CAIRN__ROUND_E4M3)
CAIRN__QUANTIZE_PAIR(f8e5m2, cairn_f8e5m2, CAIRN__ROUND_E5M2)
CAIRN__QUANTIZE_PAIR(i8, int8_t, CAIRN__ROUND_I8)
CAIRN__QUANTIZE_PAIR(u8, uint8_t, CAIRN__ROUND_U8)
CAIRN__QUANTIZE_PAIR(i16, int16_t, CAIRN__ROUND_I16)
CAIRN__QUANTIZE_PAIR(u16, uint16_t, CAIRN__ROUND_U16)

/* ---- bulk conversions (host only; cairn_float.c) ----
 * n elements from in to out; the arrays must not overlap. Bit for bit the same as the
 * scalar routines. The loops vectorize (AVX2 where the CPU has it); f32 -> f16 uses
 * the F16C instruction where the CPU has it, which the exhaustive sweep proves
 * bit-identical (see cairn_float.c). */
#ifndef __CUDA_ARCH__
#ifdef __cplusplus
extern "C" {
#endif
void cairn_f32_to_f16_array(const float *in, cairn_f16 *out, size_t n);
/* Which f32 -> f16 bulk path this CPU takes now: "f16c", "avx2" or "portable". */
const char *cairn_f32_to_f16_array_path(void);
/* The integer-only f32 -> f16 bulk path, whatever the CPU has (tests and benchmarks). */
void cairn__f32_to_f16_array_int(const float *in, cairn_f16 *out, size_t n);
void cairn_f32_to_bf16_array(const float *in, cairn_bf16 *out, size_t n);
void cairn_f16_to_f32_array(const cairn_f16 *in, float *out, size_t n);
void cairn_bf16_to_f32_array(const cairn_bf16 *in, float *out, size_t n);
#ifdef __cplusplus
}
#endif
#endif

#endif
