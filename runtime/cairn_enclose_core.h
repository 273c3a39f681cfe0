/* cairn_enclose_core.h: the integer core every backend of the exact bracket GEMM shares
 * (cairn_enclose.h has the contract): the CPU kernels (cairn_enclose.c,
 * cairn_enclose_x86.c), the residue algorithm run on the host (cairn_enclose_residue.c,
 * what an emulated device run does) and the CUDA kernels (cairn_enclose_cuda.h) compile
 * these same lines, so that every backend decodes, scales, widens and rounds outward
 * identically and only the exact sum in between is computed differently.
 *
 * Plain C that is also valid C++ and CUDA: under nvcc every function is __host__
 * __device__. Integers only: IEEE values come in and go out as bit patterns.
 *
 *   wide     384-bit two's-complement integers (6 words, little-endian)
 *   format   binary64 or binary32 as bit fields; decode into (-1)^neg mant 2^q
 *   span     highest and lowest set-bit binade over a row or column (phase 1, scan)
 *   plan     widths within the budget, the scale 2^E that floors a row into X (phase 2)
 *   scaled   X = floor(x 2^E) of one element, as sign and magnitude words
 *   bracket  the exact sum S, widened where flooring lost bits, rounded outward once */
#ifndef CAIRN_ENCLOSE_CORE_H
#define CAIRN_ENCLOSE_CORE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "cairn_enclose.h"

#ifdef __CUDACC__
#define CAIRN_ENC_FN static __host__ __device__ __forceinline__
#else
#define CAIRN_ENC_FN static inline __attribute__((always_inline, unused))
#endif
#if defined(__CUDA_ARCH__) /* word loops: with constant counts they unroll */
#define CAIRN_ENC_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__) /* nvcc's host pass knows neither spelling */
#define CAIRN_ENC_UNROLL
#else
#define CAIRN_ENC_UNROLL _Pragma("GCC unroll 8")
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned __int128 cairn_enc_u128;

enum {
    CAIRN_ENC_WORDS = 6,      /* 384-bit accumulators */
    CAIRN_ENC_MAG_WORDS = 5,  /* |X| < 2^256, and X + 2^w < 2^257 */
    CAIRN_ENC_MAX_SHIFT = 384 /* bit positions of a wide */
};

/* ---- 384-bit two's-complement integers ----------------------------------------- */

typedef struct cairn_enc_wide {
    uint64_t w[CAIRN_ENC_WORDS];
} cairn_enc_wide;

CAIRN_ENC_FN int cairn_enc_clz64(uint64_t x) { /* x != 0 */
#ifdef __CUDA_ARCH__
    return __clzll((long long)x);
#else
    return __builtin_clzll(x);
#endif
}

CAIRN_ENC_FN int cairn_enc_ctz64(uint64_t x) { /* x != 0 */
#ifdef __CUDA_ARCH__
    return __ffsll((long long)x) - 1;
#else
    return __builtin_ctzll(x);
#endif
}

CAIRN_ENC_FN void cairn_enc_wide_zero(cairn_enc_wide *x) {
    for (int i = 0; i < CAIRN_ENC_WORDS; i++) x->w[i] = 0;
}

CAIRN_ENC_FN void cairn_enc_wide_add(cairn_enc_wide *acc, const cairn_enc_wide *x) {
    uint64_t carry = 0;
    for (int i = 0; i < CAIRN_ENC_WORDS; i++) {
        cairn_enc_u128 s = (cairn_enc_u128)acc->w[i] + x->w[i] + carry;
        acc->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

CAIRN_ENC_FN void cairn_enc_wide_neg(cairn_enc_wide *x) {
    uint64_t carry = 1;
    for (int i = 0; i < CAIRN_ENC_WORDS; i++) {
        cairn_enc_u128 s = (cairn_enc_u128)(~x->w[i]) + carry;
        x->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

CAIRN_ENC_FN void cairn_enc_wide_sub(cairn_enc_wide *acc, const cairn_enc_wide *x) {
    cairn_enc_wide t = *x;
    cairn_enc_wide_neg(&t);
    cairn_enc_wide_add(acc, &t);
}

/* acc += v * 2^shift modulo 2^384, for an unsigned 128-bit v and 0 <= shift < 384. */
CAIRN_ENC_FN void cairn_enc_wide_add_u128(cairn_enc_wide *acc, cairn_enc_u128 v, int shift) {
    int word = shift / 64, bit = shift % 64;
    uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
    uint64_t part[3] = {lo << bit, bit ? (hi << bit) | (lo >> (64 - bit)) : hi,
                        bit ? hi >> (64 - bit) : 0};
    uint64_t carry = 0;
    for (int i = word; i < CAIRN_ENC_WORDS && (i - word < 3 || carry); i++) {
        cairn_enc_u128 s = (cairn_enc_u128)acc->w[i] + (i - word < 3 ? part[i - word] : 0) + carry;
        acc->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

/* acc += x for x given as `count` words (count <= 6), modulo 2^384. */
CAIRN_ENC_FN void cairn_enc_wide_add_words(cairn_enc_wide *acc, const uint64_t *x, int count) {
    uint64_t carry = 0;
    for (int i = 0; i < CAIRN_ENC_WORDS; i++) {
        cairn_enc_u128 s = (cairn_enc_u128)acc->w[i] + (i < count ? x[i] : 0) + carry;
        acc->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

CAIRN_ENC_FN int cairn_enc_wide_is_negative(const cairn_enc_wide *x) {
    return (int)(x->w[CAIRN_ENC_WORDS - 1] >> 63);
}

/* The helpers below take nw words (nw <= 6) of an integer: the rounding works on as
 * many words as the sum needs. */
CAIRN_ENC_FN int cairn_enc_bit_length(const uint64_t *x, int nw) {
    CAIRN_ENC_UNROLL
    for (int i = nw - 1; i >= 0; i--)
        if (x[i]) return 64 * i + 64 - cairn_enc_clz64(x[i]);
    return 0;
}

/* Bits [pos, pos + count) of x, count <= 64, 0 <= pos < 64 nw. */
CAIRN_ENC_FN uint64_t cairn_enc_bits(const uint64_t *x, int nw, int pos, int count) {
    int word = pos / 64, bit = pos % 64;
    uint64_t v = x[word] >> bit;
    if (bit && word + 1 < nw) v |= x[word + 1] << (64 - bit);
    return count == 64 ? v : v & ((UINT64_C(1) << count) - 1);
}

/* Whether any of the lowest `count` bits of x is set (count may exceed 64 nw). */
CAIRN_ENC_FN int cairn_enc_low_nonzero(const uint64_t *x, int nw, int count) {
    for (int i = 0; i < nw && count > 0; i++, count -= 64) {
        uint64_t mask = count >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << count) - 1;
        if (x[i] & mask) return 1;
    }
    return 0;
}

/* ---- IEEE formats as bit patterns ---------------------------------------------- */

typedef struct cairn_enc_format {
    int size; /* bytes: 8 or 4 */
    int prec; /* significand bits, implicit bit included */
    int emin, emax, bias;
} cairn_enc_format;

/* width 64 (binary64) or 32 (binary32). */
CAIRN_ENC_FN cairn_enc_format cairn_enc_format_of(int width) {
    cairn_enc_format f64 = {8, 53, -1022, 1023, 1023}, f32 = {4, 24, -126, 127, 127};
    return width == 64 ? f64 : f32;
}

/* A finite value as (-1)^neg * mant * 2^q. */
typedef struct cairn_enc_decoded {
    int neg;
    uint64_t mant;
    int q;
} cairn_enc_decoded;

/* Returns 0 for a finite value, -1 for NaN or infinity. */
CAIRN_ENC_FN int cairn_enc_decode(uint64_t bits, cairn_enc_format f, cairn_enc_decoded *d) {
    int frac_bits = f.prec - 1;
    int sign_bit = f.size * 8 - 1;
    uint64_t frac = bits & ((UINT64_C(1) << frac_bits) - 1);
    int field = (int)((bits >> frac_bits) & (uint64_t)(2 * f.bias + 1));
    d->neg = (int)((bits >> sign_bit) & 1);
    d->mant = field ? frac | (UINT64_C(1) << frac_bits) : frac;
    d->q = (field ? field : 1) - f.bias - frac_bits;
    return field == 2 * f.bias + 1 ? -1 : 0;
}

/* ---- phase 1: the span of a row or column ---------------------------------------- */

/* Highest and lowest set-bit binade over the nonzero elements; bad: a non-finite one. */
typedef struct cairn_enc_span {
    int top, bottom, nonzero, bad;
} cairn_enc_span;

CAIRN_ENC_FN void cairn_enc_span_add(cairn_enc_span *s, const cairn_enc_decoded *d) {
    if (!d->mant) return;
    int top = d->q + 63 - cairn_enc_clz64(d->mant);
    int bottom = d->q + cairn_enc_ctz64(d->mant);
    if (!s->nonzero || top > s->top) s->top = top;
    if (!s->nonzero || bottom < s->bottom) s->bottom = bottom;
    s->nonzero = 1;
}

/* Adds one element given by its bits. */
CAIRN_ENC_FN void cairn_enc_span_add_bits(cairn_enc_span *s, uint64_t bits, cairn_enc_format f) {
    cairn_enc_decoded d;
    if (cairn_enc_decode(bits, f, &d)) s->bad = 1;
    else cairn_enc_span_add(s, &d);
}

/* Merges two spans of parts of one row or column. */
CAIRN_ENC_FN void cairn_enc_span_merge(cairn_enc_span *s, const cairn_enc_span *t) {
    s->bad |= t->bad;
    if (!t->nonzero) return;
    if (!s->nonzero || t->top > s->top) s->top = t->top;
    if (!s->nonzero || t->bottom < s->bottom) s->bottom = t->bottom;
    s->nonzero = 1;
}

/* Magnitude bits a lossless scaling of the row or column needs. */
CAIRN_ENC_FN int cairn_enc_span_need(const cairn_enc_span *s) {
    return s->nonzero ? s->top - s->bottom + 1 : 0;
}

/* ---- phase 2: the plan's arithmetic ---------------------------------------------- */

CAIRN_ENC_FN int cairn_enc_ceil_log2(size_t k) {
    int lg = 0;
    while (((size_t)1 << lg) < k) lg++;
    return lg;
}

/* Splits the width budget: each operand gets what it needs when both fit; otherwise the
 * narrower need is met if it fits in half and the wider takes the rest. */
CAIRN_ENC_FN void cairn_enc_choose_widths(int need_a, int need_b, int lg, int *bits_a,
                                          int *bits_b) {
    int total = CAIRN_ENCLOSE_BUDGET_BITS - lg, half = total / 2;
    int ba = need_a < CAIRN_ENCLOSE_MAX_BITS ? need_a : CAIRN_ENCLOSE_MAX_BITS;
    int bb = need_b < CAIRN_ENCLOSE_MAX_BITS ? need_b : CAIRN_ENCLOSE_MAX_BITS;
    if (ba + bb > total) {
        if (ba <= half) bb = total - ba;
        else if (bb <= total - half) ba = total - bb;
        else ba = half, bb = total - half;
    }
    *bits_a = ba;
    *bits_b = bb;
}

/* The scale exponent that puts a span's top bit at 2^(w-1) (0 for an all-zero line). */
CAIRN_ENC_FN int cairn_enc_scale_of(const cairn_enc_span *s, int w) {
    return s->nonzero ? w - 1 - s->top : 0;
}

/* ---- phase 3: X = floor(x 2^scale) ------------------------------------------------ */

/* |X| for X = floor(x 2^scale) in nw words (|X| < 2^w by the plan, nw <= 5); returns
 * whether X is negative. x is finite (the scan refused the rest). */
CAIRN_ENC_FN int cairn_enc_scaled_magnitude(uint64_t bits, cairn_enc_format f, int scale,
                                            uint64_t *mag, int nw) {
    cairn_enc_decoded d;
    cairn_enc_decode(bits, f, &d);
    for (int i = 0; i < nw; i++) mag[i] = 0;
    if (!d.mant) return 0;
    int sh = d.q + scale;
    if (sh >= 0) {
        int word = sh / 64, bit = sh % 64;
        mag[word] = d.mant << bit;
        if (bit && word + 1 < nw) mag[word + 1] = d.mant >> (64 - bit);
    } else {
        uint64_t kept = sh > -64 ? d.mant >> -sh : 0;
        int inexact = sh > -64 ? (d.mant << (64 + sh)) != 0 : 1;
        mag[0] = kept + (uint64_t)(d.neg & inexact); /* floor of a negative value */
    }
    return d.neg;
}

/* X itself as a wide (two's complement). */
CAIRN_ENC_FN cairn_enc_wide cairn_enc_scaled_wide(uint64_t bits, cairn_enc_format f, int scale) {
    uint64_t mag[CAIRN_ENC_MAG_WORDS];
    int neg = cairn_enc_scaled_magnitude(bits, f, scale, mag, CAIRN_ENC_MAG_WORDS);
    cairn_enc_wide x;
    cairn_enc_wide_zero(&x);
    cairn_enc_wide_add_words(&x, mag, CAIRN_ENC_MAG_WORDS);
    if (neg) cairn_enc_wide_neg(&x);
    return x;
}

/* ---- phase 4: the outward rounding ------------------------------------------------ */

typedef struct cairn_enc_bracket_bits {
    uint64_t down, up;
} cairn_enc_bracket_bits;

/* v 2^-e rounded toward zero into the format, and down and up from there, for v given
 * as nw two's-complement words (nw <= 6; a value that fits fewer words rounds the same
 * from them as from its sign extension). For a positive finite value the next
 * representable value away from zero has the next bit pattern (across the
 * subnormal/normal boundary and from the largest finite value to infinity alike), so
 * outward rounding is the truncation plus one where inexact. v is read word by word (a
 * copy in 16-byte moves of words just stored would stall the CPU's store forwarding). */
CAIRN_ENC_FN cairn_enc_bracket_bits cairn_enc_round_words(const uint64_t *v, int nw, int e,
                                                          cairn_enc_format f) {
    cairn_enc_bracket_bits out = {0, 0}; /* exact zero: +0 both ways */
    int neg = (int)(v[nw - 1] >> 63);
    uint64_t m[CAIRN_ENC_WORDS]; /* |v| */
    uint64_t carry = (uint64_t)neg, flip = neg ? ~UINT64_C(0) : 0;
    CAIRN_ENC_UNROLL
    for (int i = 0; i < nw; i++) {
        cairn_enc_u128 s = (cairn_enc_u128)(v[i] ^ flip) + carry;
        m[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
    int nb = cairn_enc_bit_length(m, nw);
    if (nb == 0) return out;
    uint64_t trunc;
    int inexact;
    long exp = (long)nb - 1 - e; /* binade of the top bit */
    if (exp > f.emax) {
        trunc = ((uint64_t)(2 * f.bias + 1) << (f.prec - 1)) - 1; /* largest finite */
        inexact = 1;
    } else {
        long shift = (exp > f.emin ? exp : f.emin) - f.prec + 1 + e; /* bits dropped */
        uint64_t mant;
        if (shift <= 0) {
            mant = m[0] << -shift; /* nb <= prec: one word, exact */
            inexact = 0;
        } else {
            mant = shift >= nb ? 0 : cairn_enc_bits(m, nw, (int)shift, f.prec);
            inexact = cairn_enc_low_nonzero(m, nw, shift > INT_MAX ? INT_MAX : (int)shift);
        }
        /* normal: the implicit bit of mant carries into the exponent field */
        trunc = exp >= f.emin ? ((uint64_t)(exp + f.bias - 1) << (f.prec - 1)) + mant : mant;
    }
    uint64_t away = trunc + (uint64_t)inexact;
    uint64_t sign = UINT64_C(1) << (f.size * 8 - 1);
    out.down = neg ? sign | away : trunc;
    out.up = neg ? sign | trunc : away;
    return out;
}

CAIRN_ENC_FN cairn_enc_bracket_bits cairn_enc_round_outward(const cairn_enc_wide *v, int e,
                                                            cairn_enc_format f) {
    return cairn_enc_round_words(v->w, CAIRN_ENC_WORDS, e, f);
}

/* What widens an output whose row or column was floored with loss: with a 2^E = X + dA
 * and b 2^F = Y + dB, dA and dB in [0, 1) (0 where lossless), the exact sum is
 * S + sum_t (X dB + dA Y + dA dB). X dB lies between min(X, 0) and max(X, 0), so the
 * row's sums of its negative and positive X bound the first part where the column is
 * lossy, the column's sums the second where the row is, and k the third. */
typedef struct cairn_enc_loss {
    int row_lossy, col_lossy;
    const cairn_enc_wide *row_pos, *row_neg, *col_pos, *col_neg;
    size_t k;
} cairn_enc_loss;

/* The bracket of one output from its exact sum S = sum_t X Y, whose value is S 2^-e. */
CAIRN_ENC_FN cairn_enc_bracket_bits cairn_enc_bracket(const cairn_enc_wide *s, int e,
                                                      cairn_enc_format f,
                                                      const cairn_enc_loss *loss) {
    if (!loss->row_lossy && !loss->col_lossy) return cairn_enc_round_outward(s, e, f);
    cairn_enc_wide lower = *s, upper = *s;
    if (loss->col_lossy) {
        cairn_enc_wide_add(&lower, loss->row_neg);
        cairn_enc_wide_add(&upper, loss->row_pos);
    }
    if (loss->row_lossy) {
        cairn_enc_wide_add(&lower, loss->col_neg);
        cairn_enc_wide_add(&upper, loss->col_pos);
    }
    if (loss->row_lossy && loss->col_lossy) cairn_enc_wide_add_u128(&upper, loss->k, 0);
    cairn_enc_bracket_bits out;
    out.down = cairn_enc_round_outward(&lower, e, f).down;
    out.up = cairn_enc_round_outward(&upper, e, f).up;
    return out;
}

#ifdef __cplusplus
}
#endif

#endif
