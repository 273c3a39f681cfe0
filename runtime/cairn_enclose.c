/* cairn_enclose.c: the exact bracket GEMM (see cairn_enclose.h for the contract).
 *
 * Four phases, all integer arithmetic on IEEE bit patterns:
 *   1. scan:  per row of A and column of B, the binades of the highest and lowest set
 *             bit over its nonzero elements (and non-finite operands are refused);
 *   2. plan:  the widths bits_a, bits_b within the budget, and a scale 2^E per row of A
 *             and 2^F per column of B that puts the top bit just under the sign bit;
 *   3. pack:  each element floored to X = floor(x 2^E), stored biased as X + 2^W (so
 *             the kernels multiply unsigned numbers only) in 52-bit digits, plus the
 *             row/column sums that remove the bias and bound what flooring lost;
 *   4. tiles: R x 8 outputs at a time, the exact sum of biased digit products (AVX-512
 *             IFMA or unsigned __int128), folded into a 384-bit integer per output, then
 *             corrected and rounded outward once into lo and hi.
 * Every output is computed by one task from the same integers in the same way, so the
 * result bits depend neither on the thread count nor on the kernel. */
#include "cairn_enclose.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifndef CAIRN_ENCLOSE_SERIAL
#include "cairn_pool.h"
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(CAIRN_ENCLOSE_NO_SIMD)
#define ENCLOSE_IFMA 1
#include <immintrin.h>
#endif

typedef unsigned __int128 u128;

enum {
    WORDS = 6,      /* 384-bit accumulators */
    DIGIT = 52,     /* kernel radix 2^52: what IFMA multiplies */
    MAX_DIGITS = 5, /* ceil(256 / 52) */
    MAX_POS = 2 * MAX_DIGITS,
    TILE_COLS = 8, /* one 512-bit vector of 64-bit lanes */
    MAX_ROWS = 4,
    GROUP = 8 /* row tiles per task: they share each K block of B */
};
#define DIGIT_MASK ((UINT64_C(1) << DIGIT) - 1)
#define INLINE     static inline __attribute__((always_inline))

/* ---- 384-bit two's-complement integers ------------------------------------------ */

typedef struct {
    uint64_t w[WORDS];
} wide;

static void wide_add(wide *acc, const wide *x) {
    uint64_t carry = 0;
    for (int i = 0; i < WORDS; i++) {
        u128 s = (u128)acc->w[i] + x->w[i] + carry;
        acc->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

static void wide_neg(wide *x) {
    uint64_t carry = 1;
    for (int i = 0; i < WORDS; i++) {
        u128 s = (u128)(~x->w[i]) + carry;
        x->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

static void wide_sub(wide *acc, const wide *x) {
    wide t = *x;
    wide_neg(&t);
    wide_add(acc, &t);
}

/* acc += v * 2^shift modulo 2^384, for an unsigned 128-bit v and 0 <= shift < 384. */
static void wide_add_u128(wide *acc, u128 v, int shift) {
    int word = shift / 64, bit = shift % 64;
    uint64_t lo = (uint64_t)v, hi = (uint64_t)(v >> 64);
    uint64_t part[3] = {lo << bit, bit ? (hi << bit) | (lo >> (64 - bit)) : hi,
                        bit ? hi >> (64 - bit) : 0};
    uint64_t carry = 0;
    for (int i = word; i < WORDS && (i - word < 3 || carry); i++) {
        u128 s = (u128)acc->w[i] + (i - word < 3 ? part[i - word] : 0) + carry;
        acc->w[i] = (uint64_t)s;
        carry = (uint64_t)(s >> 64);
    }
}

static int wide_is_negative(const wide *x) { return (int)(x->w[WORDS - 1] >> 63); }

static int wide_bit_length(const wide *x) {
    for (int i = WORDS - 1; i >= 0; i--)
        if (x->w[i]) return 64 * i + 64 - __builtin_clzll(x->w[i]);
    return 0;
}

/* Bits [pos, pos + count) of x, count <= 64, 0 <= pos < 384. */
static uint64_t wide_bits(const wide *x, int pos, int count) {
    int word = pos / 64, bit = pos % 64;
    uint64_t v = x->w[word] >> bit;
    if (bit && word + 1 < WORDS) v |= x->w[word + 1] << (64 - bit);
    return count == 64 ? v : v & ((UINT64_C(1) << count) - 1);
}

/* Whether any of the lowest `count` bits of x is set (count may exceed 384). */
static int wide_low_nonzero(const wide *x, int count) {
    for (int i = 0; i < WORDS && count > 0; i++, count -= 64) {
        uint64_t mask = count >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << count) - 1;
        if (x->w[i] & mask) return 1;
    }
    return 0;
}

/* ---- IEEE formats as bit patterns ---------------------------------------------------- */

typedef struct {
    size_t size; /* bytes */
    int prec;    /* significand bits, implicit bit included */
    int emin, emax, bias;
} format;

static const format FMT_F64 = {8, 53, -1022, 1023, 1023};
static const format FMT_F32 = {4, 24, -126, 127, 127};

static uint64_t load_bits(const void *base, size_t idx, const format *f) {
    if (f->size == 8) {
        uint64_t u;
        memcpy(&u, (const unsigned char *)base + idx * 8, 8);
        return u;
    }
    uint32_t u;
    memcpy(&u, (const unsigned char *)base + idx * 4, 4);
    return u;
}

static void store_bits(void *base, size_t idx, uint64_t bits, const format *f) {
    if (f->size == 8) {
        memcpy((unsigned char *)base + idx * 8, &bits, 8);
    } else {
        uint32_t u = (uint32_t)bits;
        memcpy((unsigned char *)base + idx * 4, &u, 4);
    }
}

/* A finite value as (-1)^neg * mant * 2^q. */
typedef struct {
    int neg;
    uint64_t mant;
    int q;
} decoded;

/* Returns 0 for a finite value, -1 for NaN or infinity. */
INLINE int decode(uint64_t bits, const format *f, decoded *d) {
    int frac_bits = f->prec - 1;
    int sign_bit = (int)f->size * 8 - 1;
    uint64_t frac = bits & ((UINT64_C(1) << frac_bits) - 1);
    int field = (int)((bits >> frac_bits) & (uint64_t)(2 * f->bias + 1));
    d->neg = (int)((bits >> sign_bit) & 1);
    d->mant = field ? frac | (UINT64_C(1) << frac_bits) : frac;
    d->q = (field ? field : 1) - f->bias - frac_bits;
    return field == 2 * f->bias + 1 ? -1 : 0;
}

/* ---- phase 1: scan -------------------------------------------------------------------- */

/* Highest and lowest set-bit binade over the nonzero elements of a row or column. */
typedef struct {
    int top, bottom, nonzero, bad;
} span;

static void span_add(span *s, const decoded *d) {
    if (!d->mant) return;
    int top = d->q + 63 - __builtin_clzll(d->mant);
    int bottom = d->q + __builtin_ctzll(d->mant);
    if (!s->nonzero || top > s->top) s->top = top;
    if (!s->nonzero || bottom < s->bottom) s->bottom = bottom;
    s->nonzero = 1;
}

/* Magnitude bits a lossless scaling of the row or column needs. */
static int span_need(const span *s) { return s->nonzero ? s->top - s->bottom + 1 : 0; }

/* ---- the job shared by all phases ---------------------------------------------------- */

typedef struct job job;
typedef void kernel_fn(const job *J, size_t i0, size_t jb, size_t k0, size_t k1, wide *acc);

struct job {
    const format *f;
    size_t m, n, k;
    const void *a, *b;
    void *lo, *hi;
    /* plan */
    int wa, wb;    /* bias exponents: X + 2^wa is in [0, 2^(wa+1)) */
    int da, db;    /* 52-bit digits per element */
    int rows;      /* R, rows per tile */
    size_t kblock; /* K steps between folds of the IFMA lanes */
    size_t mpad, nblocks;
    kernel_fn *kernel;
    /* per row of A / column of B */
    span *row_span, *col_span;
    int *row_scale, *col_scale;
    unsigned char *row_lossy, *col_lossy;
    wide *row_pos, *row_neg, *col_pos, *col_neg; /* sums of the positive/negative X */
    wide *row_corr, *col_corr;                   /* minus what the bias added */
    int signed_sums_a, signed_sums_b;            /* row_pos... needed (lossy opposite) */
    /* packed operands */
    uint64_t *packed; /* one block from the scratch cache: ap then bp */
    uint64_t *ap;     /* [mpad][k][da] */
    uint64_t *bp;     /* [nblocks][k][db][8] */
};

/* ---- parallel loops --------------------------------------------------------------------- */

typedef void range_fn(const job *J, size_t begin, size_t end);
typedef struct {
    const job *J;
    range_fn *fn;
} range_ctx;

#ifndef CAIRN_ENCLOSE_SERIAL
static void range_trampoline(void *ctx, size_t begin, size_t end, unsigned worker) {
    (void)worker;
    const range_ctx *c = ctx;
    c->fn(c->J, begin, end);
}
#endif

static void parallel_for(const job *J, size_t count, size_t grain, range_fn *fn) {
#ifdef CAIRN_ENCLOSE_SERIAL
    (void)grain;
    if (count) fn(J, 0, count);
#else
    range_ctx c = {J, fn};
    if (count) cairn_pool_run(count, grain, range_trampoline, &c);
#endif
}

static void scan_rows(const job *J, size_t begin, size_t end) {
    for (size_t i = begin; i < end; i++) {
        span s = {0, 0, 0, 0};
        for (size_t t = 0; t < J->k && !s.bad; t++) {
            decoded d;
            if (decode(load_bits(J->a, i * J->k + t, J->f), J->f, &d)) s.bad = 1;
            else span_add(&s, &d);
        }
        J->row_span[i] = s;
    }
}

/* Columns are scanned TILE_COLS at a time so that each task reads whole row segments. */
static void scan_col_blocks(const job *J, size_t begin, size_t end) {
    for (size_t blk = begin; blk < end; blk++) {
        size_t j0 = blk * TILE_COLS, j1 = j0 + TILE_COLS < J->n ? j0 + TILE_COLS : J->n;
        for (size_t j = j0; j < j1; j++) J->col_span[j] = (span){0, 0, 0, 0};
        for (size_t t = 0; t < J->k; t++)
            for (size_t j = j0; j < j1; j++) {
                decoded d;
                if (decode(load_bits(J->b, t * J->n + j, J->f), J->f, &d)) J->col_span[j].bad = 1;
                else span_add(&J->col_span[j], &d);
            }
    }
}

/* The first non-finite element in row-major order, or 0 when there is none. */
static int find_nonfinite(const void *base, size_t rows, size_t cols, const format *f, size_t *row,
                          size_t *col) {
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            decoded d;
            if (decode(load_bits(base, i * cols + j, f), f, &d)) {
                *row = i;
                *col = j;
                return 1;
            }
        }
    return 0;
}

/* ---- phase 2: plan ----------------------------------------------------------------------- */

static int ceil_log2(size_t k) {
    int lg = 0;
    while (((size_t)1 << lg) < k) lg++;
    return lg;
}

static int max_need(const span *s, size_t count) {
    int need = 0;
    for (size_t i = 0; i < count; i++)
        if (span_need(&s[i]) > need) need = span_need(&s[i]);
    return need;
}

/* Splits the width budget: each operand gets what it needs when both fit; otherwise
 * the narrower need is met if it fits in half and the wider takes the rest. */
static void choose_widths(int need_a, int need_b, int lg, int *bits_a, int *bits_b) {
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

/* Scale so the top bit sits at 2^(w-1); lossy when the span does not fit w bits. */
static size_t assign_scales(const span *s, size_t count, int w, int *scale, unsigned char *lossy,
                            int *lo, int *hi) {
    size_t nlossy = 0;
    int first = 1;
    *lo = *hi = 0;
    for (size_t i = 0; i < count; i++) {
        scale[i] = s[i].nonzero ? w - 1 - s[i].top : 0;
        lossy[i] = span_need(&s[i]) > w;
        nlossy += lossy[i];
        if (s[i].nonzero) {
            if (first || scale[i] < *lo) *lo = scale[i];
            if (first || scale[i] > *hi) *hi = scale[i];
            first = 0;
        }
    }
    return nlossy;
}

/* Rows per tile: R * (da + db) vector accumulators must fit the 32 registers. */
#define TILE_ROWS(DA, DB) (24 / ((DA) + (DB)) > MAX_ROWS ? MAX_ROWS : 24 / ((DA) + (DB)))

/* ---- phase 3: pack ------------------------------------------------------------------------- */

/* Packing works on NW words, NW a compile-time constant at each call: 2 when X + 2^w
 * fits 104 bits (the common case), PACK_WORDS otherwise. */
enum { PACK_WORDS = 5 }; /* X + 2^w < 2^257 */

/* |X| for X = floor(x 2^scale) in NW words (|X| < 2^w by the plan); returns whether X
 * is negative. */
INLINE int scaled_magnitude(uint64_t bits, const format *f, int scale, uint64_t *mag,
                            const int NW) {
    decoded d;
    decode(bits, f, &d); /* finite: the scan refused the rest */
    for (int i = 0; i < NW; i++) mag[i] = 0;
    if (!d.mant) return 0;
    int sh = d.q + scale;
    if (sh >= 0) {
        int word = sh / 64, bit = sh % 64;
        mag[word] = d.mant << bit;
        if (bit && word + 1 < NW) mag[word + 1] = d.mant >> (64 - bit);
    } else {
        uint64_t kept = sh > -64 ? d.mant >> -sh : 0;
        int inexact = sh > -64 ? (d.mant << (64 + sh)) != 0 : 1;
        mag[0] = kept + (uint64_t)(d.neg & inexact); /* floor of a negative value */
    }
    return d.neg;
}

/* X + 2^w from |X| and the sign, in place. */
INLINE void bias_words(uint64_t *x, int neg, int w, const int NW) {
    if (!neg) {
        x[w / 64] |= UINT64_C(1) << (w % 64); /* |X| < 2^w: no carry */
        return;
    }
    uint64_t borrow = 0; /* 2^w - |X| */
    for (int i = 0; i < NW; i++) {
        uint64_t top = i == w / 64 ? UINT64_C(1) << (w % 64) : 0;
        u128 diff = (u128)top - x[i] - borrow;
        x[i] = (uint64_t)diff;
        borrow = (uint64_t)(diff >> 64) & 1;
    }
}

/* Digit d: bits [52 d, 52 d + 52). */
INLINE uint64_t pack_digit(const uint64_t *x, int d, const int NW) {
    int pos = d * DIGIT, word = pos / 64, bit = pos % 64;
    uint64_t v = x[word] >> bit;
    if (bit > 64 - DIGIT && word + 1 < NW) v |= x[word + 1] << (64 - bit);
    return v & DIGIT_MASK;
}

static void add_words(wide *acc, const uint64_t *x, int nw, int negate) {
    wide v = {{0}};
    memcpy(v.w, x, (size_t)nw * sizeof *x);
    if (negate) wide_neg(&v);
    wide_add(acc, &v);
}

/* Besides its digits, each row of A' (column of B') yields the sums of its digits,
 * which remove the bias (52-bit digits, at most 2^17 of them: a u128 each), and where
 * the other operand is lossy the sums of its positive and of its negative X. */
typedef struct {
    wide pos, neg;
} signed_sums;

/* Packs one element into ND digits at out[d * stride], adding them to dsum[d], and X
 * to *ss unless NULL. ND is a compile-time constant at each call. */
INLINE void pack_element(uint64_t bits, const format *f, int scale, int w, signed_sums *ss,
                         uint64_t *out, size_t stride, u128 *dsum, const int ND) {
    const int NW = ND <= 2 ? 2 : PACK_WORDS; /* X + 2^w < 2^104 */
    uint64_t x[PACK_WORDS];
    int neg = scaled_magnitude(bits, f, scale, x, NW);
    if (ss) add_words(neg ? &ss->neg : &ss->pos, x, NW, neg);
    bias_words(x, neg, w, NW);
    for (int d = 0; d < ND; d++) {
        uint64_t digit = pack_digit(x, d, NW);
        out[d * stride] = digit;
        dsum[d] += digit;
    }
}

/* The common case, X + 2^w < 2^104 and no signed sums wanted: the same steps as
 * scaled_magnitude and bias_words on one 128-bit integer, a fraction of the work. */
INLINE void pack_element_narrow(uint64_t bits, const format *f, int scale, int w, uint64_t *out,
                                size_t stride, u128 *dsum, const int ND) {
    decoded d;
    decode(bits, f, &d);
    int sh = d.q + scale;
    u128 mag = 0;
    if (d.mant && sh >= 0) mag = (u128)d.mant << sh;
    else if (d.mant && sh > -64)
        mag = (d.mant >> -sh) + (uint64_t)(d.neg & ((d.mant << (64 + sh)) != 0));
    else if (d.mant) mag = (uint64_t)d.neg;         /* floor of a tiny negative value is -1 */
    u128 x = ((u128)1 << w) + (d.neg ? -mag : mag); /* modulo 2^128: lands in [0, 2^(w+1)) */
    for (int e = 0; e < ND; e++) {
        uint64_t digit = (uint64_t)(x >> (e * DIGIT)) & DIGIT_MASK;
        out[e * stride] = digit;
        dsum[e] += digit;
    }
}

/* Calls FN(..., ND) with ND = nd as a constant. */
#define WITH_DIGITS(nd, FN, ...)                                                                   \
    switch (nd) {                                                                                  \
    case 1: FN(__VA_ARGS__, 1); break;                                                             \
    case 2: FN(__VA_ARGS__, 2); break;                                                             \
    case 3: FN(__VA_ARGS__, 3); break;                                                             \
    case 4: FN(__VA_ARGS__, 4); break;                                                             \
    default: FN(__VA_ARGS__, 5); break;                                                            \
    }

/* sum(X' 2^shift) from the digit sums. */
static wide biased_sum(const u128 *dsum, int ndigits, int shift) {
    wide total = {{0}};
    for (int d = 0; d < ndigits; d++) wide_add_u128(&total, dsum[d], d * DIGIT + shift);
    return total;
}

/* One row of A or column of B: k elements at base[first + t * step], digit d of element
 * t to out[t * out_step + d * digit_step]. The digit sums are locals so that they stay
 * in registers; they are stored to dsum_out at the end. */
INLINE void pack_line(const job *J, const void *base, size_t first, size_t step, int scale, int w,
                      uint64_t *out, size_t out_step, size_t digit_step, signed_sums *ss,
                      u128 *dsum_out, const int ND) {
    u128 dsum[MAX_DIGITS] = {0};
    if (ND <= 2 && !ss) {
        for (size_t t = 0; t < J->k; t++)
            pack_element_narrow(load_bits(base, first + t * step, J->f), J->f, scale, w,
                                out + t * out_step, digit_step, dsum, ND);
    } else {
        for (size_t t = 0; t < J->k; t++)
            pack_element(load_bits(base, first + t * step, J->f), J->f, scale, w, ss,
                         out + t * out_step, digit_step, dsum, ND);
    }
    for (int d = 0; d < ND; d++) dsum_out[d] = dsum[d];
}

/* S = S' - 2^wb sum_t X'[i][t] - 2^wa sum_t Y'[t][j] + k 2^(wa+wb): the row part takes
 * the constant. */
static void pack_rows(const job *J, size_t begin, size_t end) {
    size_t ds = (size_t)J->da;
    for (size_t i = begin; i < end; i++) {
        uint64_t *dst = J->ap + i * J->k * ds;
        if (i >= J->m) { /* padding rows: any digits do, their outputs are dropped */
            memset(dst, 0, J->k * ds * sizeof *dst);
            continue;
        }
        signed_sums ss;
        memset(&ss, 0, sizeof ss);
        u128 dsum[MAX_DIGITS];
        WITH_DIGITS(J->da, pack_line, J, J->a, i * J->k, 1, J->row_scale[i], J->wa, dst, ds, 1,
                    J->signed_sums_a ? &ss : NULL, dsum)
        J->row_pos[i] = ss.pos;
        J->row_neg[i] = ss.neg;
        wide corr = biased_sum(dsum, J->da, J->wb), bias = {{0}};
        wide_add_u128(&bias, J->k, J->wa + J->wb);
        wide_sub(&corr, &bias);
        wide_neg(&corr);
        J->row_corr[i] = corr;
    }
}

/* Column by column: each reads one element per cache line, but the block's lines stay
 * in cache across its 8 columns, and the sums stay in registers. */
static void pack_col_blocks(const job *J, size_t begin, size_t end) {
    size_t ds = (size_t)J->db;
    for (size_t blk = begin; blk < end; blk++) {
        uint64_t *dst = J->bp + blk * J->k * ds * TILE_COLS;
        for (size_t lane = 0; lane < TILE_COLS; lane++) {
            size_t j = blk * TILE_COLS + lane;
            if (j >= J->n) { /* padding columns */
                for (size_t t = 0; t < J->k * ds; t++) dst[t * TILE_COLS + lane] = 0;
                continue;
            }
            signed_sums ss;
            memset(&ss, 0, sizeof ss);
            u128 dsum[MAX_DIGITS];
            WITH_DIGITS(J->db, pack_line, J, J->b, j, J->n, J->col_scale[j], J->wb, dst + lane,
                        ds * TILE_COLS, TILE_COLS, J->signed_sums_b ? &ss : NULL, dsum)
            J->col_pos[j] = ss.pos;
            J->col_neg[j] = ss.neg;
            J->col_corr[j] = biased_sum(dsum, J->db, J->wa);
            wide_neg(&J->col_corr[j]);
        }
    }
}

/* ---- phase 4: kernels ------------------------------------------------------------------- */
/* A kernel adds sum_{k0 <= t < k1} A'[i0 + r][t] * B'[t][8 jb + lane] into acc[r * 8 +
 * lane] for the R rows of one tile; digit and row counts are compile-time constants. */

/* Portable: 4 outputs at a time, one unsigned __int128 per output and digit position.
 * Position p gets at most 5 products below 2^104 per step, so 2^17 steps fit. */
INLINE void scalar_tile(const job *J, size_t i0, size_t jb, size_t k0, size_t k1, wide *acc,
                        const int DA, const int DB, const int R) {
    const size_t K = J->k;
    for (int r = 0; r < R; r++)
        for (int half = 0; half < 2; half++) {
            u128 s[4][2 * MAX_DIGITS - 1] = {{0}};
            const uint64_t *a = J->ap + ((i0 + (size_t)r) * K + k0) * DA;
            const uint64_t *b = J->bp + ((jb * K + k0) * DB) * TILE_COLS + half * 4;
            for (size_t t = k0; t < k1; t++, a += DA, b += DB * TILE_COLS) {
#pragma GCC unroll 8
                for (int d = 0; d < DA; d++)
#pragma GCC unroll 8
                    for (int e = 0; e < DB; e++)
#pragma GCC unroll 4
                        for (int l = 0; l < 4; l++)
                            s[l][d + e] += (u128)a[d] * b[e * TILE_COLS + l];
            }
            for (int l = 0; l < 4; l++)
                for (int p = 0; p < DA + DB - 1; p++)
                    wide_add_u128(&acc[r * TILE_COLS + half * 4 + l], s[l][p], p * DIGIT);
        }
}

#ifdef ENCLOSE_IFMA
#define IFMA_TARGET __attribute__((target("avx512f,avx512ifma")))

/* One vector of 8 columns, R rows: the low and high 52-bit halves of each digit product
 * go to positions d+e and d+e+1 of 64-bit lanes; kblock keeps the lanes from wrapping. */
INLINE IFMA_TARGET void ifma_tile(const job *J, size_t i0, size_t jb, size_t k0, size_t k1,
                                  wide *acc, const int DA, const int DB, const int R) {
    const size_t K = J->k;
    __m512i s[MAX_ROWS][MAX_POS];
    const uint64_t *a[MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        a[r] = J->ap + ((i0 + (size_t)r) * K + k0) * DA;
#pragma GCC unroll 10
        for (int p = 0; p < DA + DB; p++) s[r][p] = _mm512_setzero_si512();
    }
    const uint64_t *b = J->bp + ((jb * K + k0) * DB) * TILE_COLS;
    for (size_t t = k0; t < k1; t++, b += DB * TILE_COLS) {
        __m512i bv[MAX_DIGITS];
#pragma GCC unroll 5
        for (int e = 0; e < DB; e++) bv[e] = _mm512_loadu_si512((const void *)(b + e * TILE_COLS));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
#pragma GCC unroll 5
            for (int d = 0; d < DA; d++) {
                __m512i av = _mm512_set1_epi64((long long)a[r][d]);
#pragma GCC unroll 5
                for (int e = 0; e < DB; e++) {
                    s[r][d + e] = _mm512_madd52lo_epu64(s[r][d + e], av, bv[e]);
                    s[r][d + e + 1] = _mm512_madd52hi_epu64(s[r][d + e + 1], av, bv[e]);
                }
            }
            a[r] += DA;
        }
    }
    for (int r = 0; r < R; r++)
        for (int p = 0; p < DA + DB; p++) {
            uint64_t lanes[TILE_COLS];
            _mm512_storeu_si512((void *)lanes, s[r][p]);
            for (int l = 0; l < TILE_COLS; l++)
                wide_add_u128(&acc[r * TILE_COLS + l], lanes[l], p * DIGIT);
        }
}
#endif

/* One specialised function per digit pair and kernel. */
#define KERNEL_PAIR(DA, DB)                                                                        \
    static void scalar_##DA##_##DB(const job *J, size_t i0, size_t jb, size_t k0, size_t k1,       \
                                   wide *acc) {                                                    \
        scalar_tile(J, i0, jb, k0, k1, acc, DA, DB, TILE_ROWS(DA, DB));                            \
    }                                                                                              \
    IFMA_KERNEL(DA, DB)

#ifdef ENCLOSE_IFMA
#define IFMA_KERNEL(DA, DB)                                                                        \
    static IFMA_TARGET void ifma_##DA##_##DB(const job *J, size_t i0, size_t jb, size_t k0,        \
                                             size_t k1, wide *acc) {                               \
        ifma_tile(J, i0, jb, k0, k1, acc, DA, DB, TILE_ROWS(DA, DB));                              \
    }
#define IFMA_ENTRY(DA, DB) ifma_##DA##_##DB
#else
#define IFMA_KERNEL(DA, DB)
#define IFMA_ENTRY(DA, DB) 0
#endif

#define KERNEL_ROW(DA)                                                                             \
    KERNEL_PAIR(DA, 1) KERNEL_PAIR(DA, 2) KERNEL_PAIR(DA, 3) KERNEL_PAIR(DA, 4) KERNEL_PAIR(DA, 5)
KERNEL_ROW(1)
KERNEL_ROW(2)
KERNEL_ROW(3)
KERNEL_ROW(4)
KERNEL_ROW(5)

#define TABLE_ROW(PFX, DA)                                                                         \
    { PFX(DA, 1), PFX(DA, 2), PFX(DA, 3), PFX(DA, 4), PFX(DA, 5) }
#define SCALAR_ENTRY(DA, DB) scalar_##DA##_##DB
static kernel_fn *const scalar_kernels[MAX_DIGITS][MAX_DIGITS] = {
    TABLE_ROW(SCALAR_ENTRY, 1), TABLE_ROW(SCALAR_ENTRY, 2), TABLE_ROW(SCALAR_ENTRY, 3),
    TABLE_ROW(SCALAR_ENTRY, 4), TABLE_ROW(SCALAR_ENTRY, 5)};
#ifdef ENCLOSE_IFMA
static kernel_fn *const ifma_kernels[MAX_DIGITS][MAX_DIGITS] = {
    TABLE_ROW(IFMA_ENTRY, 1), TABLE_ROW(IFMA_ENTRY, 2), TABLE_ROW(IFMA_ENTRY, 3),
    TABLE_ROW(IFMA_ENTRY, 4), TABLE_ROW(IFMA_ENTRY, 5)};
#endif

#ifdef ENCLOSE_IFMA
/* The IFMA kernel where the CPU has it, unless CAIRN_ENCLOSE_KERNEL=scalar. */
static int use_ifma(void) {
    const char *force = getenv("CAIRN_ENCLOSE_KERNEL");
    if (force && strcmp(force, "scalar") == 0) return 0;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma");
}
#endif

/* ---- the outward rounding ------------------------------------------------------------------ */

/* v 2^-e rounded toward zero into the format, and down and up from there. For a
 * positive finite value the next representable value away from zero has the next bit
 * pattern (across the subnormal/normal boundary and from the largest finite value to
 * infinity alike), so outward rounding is the truncation plus one where inexact. */
typedef struct {
    uint64_t down, up;
} bracket_bits;

static bracket_bits round_outward(wide v, int e, const format *f) {
    int neg = wide_is_negative(&v);
    if (neg) wide_neg(&v);
    int nb = wide_bit_length(&v);
    if (nb == 0) return (bracket_bits){0, 0}; /* exact zero: +0 both ways */
    uint64_t trunc;
    int inexact;
    long exp = (long)nb - 1 - e; /* binade of the top bit */
    if (exp > f->emax) {
        trunc = ((uint64_t)(2 * f->bias + 1) << (f->prec - 1)) - 1; /* largest finite */
        inexact = 1;
    } else {
        long shift = (exp > f->emin ? exp : f->emin) - f->prec + 1 + e; /* bits dropped */
        uint64_t mant;
        if (shift <= 0) {
            mant = v.w[0] << -shift; /* nb <= prec: one word, exact */
            inexact = 0;
        } else {
            mant = shift >= nb ? 0 : wide_bits(&v, (int)shift, f->prec);
            inexact = wide_low_nonzero(&v, shift > INT_MAX ? INT_MAX : (int)shift);
        }
        /* normal: the implicit bit of mant carries into the exponent field */
        trunc = exp >= f->emin ? ((uint64_t)(exp + f->bias - 1) << (f->prec - 1)) + mant : mant;
    }
    uint64_t away = trunc + (uint64_t)inexact;
    if (!neg) return (bracket_bits){trunc, away};
    uint64_t sign = UINT64_C(1) << (f->size * 8 - 1);
    return (bracket_bits){sign | away, sign | trunc};
}

/* The bracket of output (i, j) from its biased sum, into lo and hi. */
static void finish_output(const job *J, size_t i, size_t j, const wide *biased) {
    wide s = *biased; /* row_corr and col_corr are stored negated */
    wide_add(&s, &J->row_corr[i]);
    wide_add(&s, &J->col_corr[j]);
    int e = J->row_scale[i] + J->col_scale[j];
    bracket_bits out;
    if (!J->row_lossy[i] && !J->col_lossy[j]) {
        out = round_outward(s, e, J->f);
    } else { /* a 2^e = X + dA, b 2^f = Y + dB with dA, dB in [0, 1) where lossy */
        wide lower = s, upper = s;
        if (J->col_lossy[j]) { /* X dB lies between min(X, 0) and max(X, 0) */
            wide_add(&lower, &J->row_neg[i]);
            wide_add(&upper, &J->row_pos[i]);
        }
        if (J->row_lossy[i]) {
            wide_add(&lower, &J->col_neg[j]);
            wide_add(&upper, &J->col_pos[j]);
        }
        if (J->row_lossy[i] && J->col_lossy[j])
            wide_add_u128(&upper, J->k, 0); /* dA dB < 1 per step */
        out.down = round_outward(lower, e, J->f).down;
        out.up = round_outward(upper, e, J->f).up;
    }
    store_bits(J->lo, i * J->n + j, out.down, J->f);
    store_bits(J->hi, i * J->n + j, out.up, J->f);
}

/* One task: GROUP row tiles against one block of 8 columns, K block by K block. */
static void run_tasks(const job *J, size_t begin, size_t end) {
    size_t row_tiles = J->mpad / (size_t)J->rows;
    size_t groups = (row_tiles + GROUP - 1) / GROUP;
    for (size_t task = begin; task < end; task++) {
        size_t g = task % groups, jb = task / groups;
        size_t t0 = g * GROUP, t1 = t0 + GROUP < row_tiles ? t0 + GROUP : row_tiles;
        wide acc[GROUP * MAX_ROWS * TILE_COLS];
        memset(acc, 0, sizeof acc);
        for (size_t k0 = 0; k0 < J->k; k0 += J->kblock) {
            size_t k1 = k0 + J->kblock < J->k ? k0 + J->kblock : J->k;
            for (size_t t = t0; t < t1; t++)
                J->kernel(J, t * (size_t)J->rows, jb, k0, k1,
                          &acc[(t - t0) * (size_t)J->rows * TILE_COLS]);
        }
        for (size_t i = t0 * (size_t)J->rows; i < t1 * (size_t)J->rows && i < J->m; i++)
            for (size_t l = 0; l < TILE_COLS && jb * TILE_COLS + l < J->n; l++)
                finish_output(J, i, jb * TILE_COLS + l,
                              &acc[(i - t0 * (size_t)J->rows) * TILE_COLS + l]);
    }
}

/* Rows of A and column blocks of B in one region: indices [0, rows) are rows, the rest
 * column blocks, so neither waits for the other. */
static void split_range(const job *J, size_t rows, size_t begin, size_t end, range_fn *row_fn,
                        range_fn *col_fn) {
    if (begin < rows) row_fn(J, begin, end < rows ? end : rows);
    if (end > rows) col_fn(J, (begin > rows ? begin : rows) - rows, end - rows);
}

static void scan_both(const job *J, size_t begin, size_t end) {
    split_range(J, J->m, begin, end, scan_rows, scan_col_blocks);
}

static void pack_both(const job *J, size_t begin, size_t end) {
    split_range(J, J->mpad, begin, end, pack_rows, pack_col_blocks);
}

/* ---- driver ----------------------------------------------------------------------------------- */

/* Whether a rows x cols matrix, padded to whole tiles and packed at up to 5 words per
 * element (plus the 8-byte stride of the caller's data), could overflow size_t. */
static int too_big(size_t rows, size_t cols) {
    size_t p;
    return rows > SIZE_MAX - TILE_COLS || __builtin_mul_overflow(rows + TILE_COLS, cols, &p) ||
           p > SIZE_MAX / 64;
}

static int check_sizes(size_t m, size_t n, size_t k, const void *a, const void *b, const void *lo,
                       const void *hi) {
    if (too_big(m, k) || too_big(n, k) || too_big(m, n)) return CAIRN_ENCLOSE_ESIZE;
    if ((m && k && !a) || (k && n && !b) || (m && n && (!lo || !hi))) return CAIRN_ENCLOSE_ESIZE;
    if (k > CAIRN_ENCLOSE_MAX_K) return CAIRN_ENCLOSE_EKTOOBIG;
    return CAIRN_ENCLOSE_OK;
}

/* The packed operands of the last call are kept for the next one (up to SCRATCH_KEEP
 * bytes): touching fresh pages costs more than the packing itself. The first word of
 * a block holds its capacity in words. */
#define SCRATCH_KEEP ((size_t)64 << 20)
static _Atomic(uint64_t *) scratch_cache;

static uint64_t *scratch_get(size_t words) {
    uint64_t *block = atomic_exchange(&scratch_cache, (uint64_t *)NULL);
    if (block && block[0] >= words) return block + 1;
    free(block);
    block = malloc((words + 1) * sizeof *block);
    if (!block) return NULL;
    block[0] = words;
    return block + 1;
}

static void scratch_put(uint64_t *words) {
    if (!words) return;
    uint64_t *block = words - 1;
    if (block[0] * sizeof *block > SCRATCH_KEEP) {
        free(block);
        return;
    }
    free(atomic_exchange(&scratch_cache, block));
}

/* All per-row, per-column and packed storage in one block, freed by release(). */
static int allocate(job *J) {
    size_t m = J->m ? J->m : 1, n = J->n ? J->n : 1;
    J->row_span = calloc(m, sizeof *J->row_span);
    J->col_span = calloc(n, sizeof *J->col_span);
    J->row_scale = calloc(m, sizeof *J->row_scale);
    J->col_scale = calloc(n, sizeof *J->col_scale);
    J->row_lossy = calloc(m, 1);
    J->col_lossy = calloc(n, 1);
    J->row_pos = calloc(3 * m, sizeof(wide));
    J->col_pos = calloc(3 * n, sizeof(wide));
    if (!J->row_span || !J->col_span || !J->row_scale || !J->col_scale || !J->row_lossy ||
        !J->col_lossy || !J->row_pos || !J->col_pos)
        return CAIRN_ENCLOSE_ENOMEM;
    J->row_neg = J->row_pos + m;
    J->row_corr = J->row_pos + 2 * m;
    J->col_neg = J->col_pos + n;
    J->col_corr = J->col_pos + 2 * n;
    return CAIRN_ENCLOSE_OK;
}

static void release(job *J) {
    free(J->row_span);
    free(J->col_span);
    free(J->row_scale);
    free(J->col_scale);
    free(J->row_lossy);
    free(J->col_lossy);
    free(J->row_pos);
    free(J->col_pos);
    scratch_put(J->packed);
}

/* Phase 2: widths, scales, digits, tile shape and kernel; fills the info. */
static void plan(job *J, cairn_enclose_info *info) {
    int lg = ceil_log2(J->k);
    int need_a = max_need(J->row_span, J->m) + 1, need_b = max_need(J->col_span, J->n) + 1;
    if (need_a < 2) need_a = 2;
    if (need_b < 2) need_b = 2;
    int bits_a, bits_b;
    choose_widths(need_a, need_b, lg, &bits_a, &bits_b);
    J->wa = bits_a - 1;
    J->wb = bits_b - 1;
    info->lossy_rows = assign_scales(J->row_span, J->m, J->wa, J->row_scale, J->row_lossy,
                                     &info->scale_a_min, &info->scale_a_max);
    info->lossy_cols = assign_scales(J->col_span, J->n, J->wb, J->col_scale, J->col_lossy,
                                     &info->scale_b_min, &info->scale_b_max);
    J->signed_sums_a = info->lossy_cols > 0;
    J->signed_sums_b = info->lossy_rows > 0;
    J->da = (bits_a + DIGIT - 1) / DIGIT;
    J->db = (bits_b + DIGIT - 1) / DIGIT;
    J->rows = TILE_ROWS(J->da, J->db);
    J->mpad = (J->m + (size_t)J->rows - 1) / (size_t)J->rows * (size_t)J->rows;
    J->nblocks = (J->n + TILE_COLS - 1) / TILE_COLS;
    /* a lane gains at most 2 min(da, db) addends below 2^52 per step: 4096 fit in 64 bits */
    J->kblock = (size_t)(2048 / (J->da < J->db ? J->da : J->db));
    J->kernel = scalar_kernels[J->da - 1][J->db - 1];
    info->kernel = "scalar";
#ifdef ENCLOSE_IFMA
    if (use_ifma()) {
        J->kernel = ifma_kernels[J->da - 1][J->db - 1];
        info->kernel = "ifma52";
    }
#endif
    info->bits_a = bits_a;
    info->bits_b = bits_b;
    info->need_bits_a = need_a;
    info->need_bits_b = need_b;
    info->ceil_log2_k = lg;
}

static int report_nonfinite(const job *J, cairn_enclose_info *info) {
    for (size_t i = 0; i < J->m; i++)
        if (J->row_span[i].bad) {
            info->bad_operand = 'a';
            find_nonfinite(J->a, J->m, J->k, J->f, &info->bad_row, &info->bad_col);
            return CAIRN_ENCLOSE_ENONFINITE;
        }
    for (size_t j = 0; j < J->n; j++)
        if (J->col_span[j].bad) {
            info->bad_operand = 'b';
            find_nonfinite(J->b, J->k, J->n, J->f, &info->bad_row, &info->bad_col);
            return CAIRN_ENCLOSE_ENONFINITE;
        }
    return CAIRN_ENCLOSE_OK;
}

static int enclose(job *J, cairn_enclose_info *info) {
    int rc = allocate(J);
    if (rc) return rc;
    parallel_for(J, J->m + (J->n + TILE_COLS - 1) / TILE_COLS, 1, scan_both);
    rc = report_nonfinite(J, info);
    if (rc) return rc;
    plan(J, info);
    size_t a_words = J->mpad * J->k * (size_t)J->da;
    J->packed = scratch_get(a_words + J->nblocks * J->k * (size_t)J->db * TILE_COLS);
    if (!J->packed) return CAIRN_ENCLOSE_ENOMEM;
    J->ap = J->packed;
    J->bp = J->packed + a_words;
    parallel_for(J, J->mpad + J->nblocks, 1, pack_both);
    size_t row_tiles = J->mpad / (size_t)J->rows;
    size_t tasks = (row_tiles + GROUP - 1) / GROUP * J->nblocks;
    parallel_for(J, tasks, 1, run_tasks);
    info->tight_outputs = (J->m - info->lossy_rows) * (J->n - info->lossy_cols);
    info->tight = info->lossy_rows == 0 && info->lossy_cols == 0;
    return CAIRN_ENCLOSE_OK;
}

static int enclose_entry(const format *f, size_t m, size_t n, size_t k, const void *a,
                         const void *b, void *lo, void *hi, cairn_enclose_info *info) {
    cairn_enclose_info scratch;
    if (!info) info = &scratch;
    memset(info, 0, sizeof *info);
    info->kernel = "scalar";
    int rc = check_sizes(m, n, k, a, b, lo, hi);
    if (rc) return rc;
    if (m == 0 || n == 0) {
        info->tight = 1;
        return CAIRN_ENCLOSE_OK;
    }
    job J;
    memset(&J, 0, sizeof J);
    J.f = f;
    J.m = m, J.n = n, J.k = k;
    J.a = a, J.b = b, J.lo = lo, J.hi = hi;
    rc = enclose(&J, info);
    release(&J);
    return rc;
}

#ifndef CAIRN_ENCLOSE_BITS_ONLY
int cairn_enclose_f64(size_t m, size_t n, size_t k, const double *a, const double *b, double *lo,
                      double *hi, cairn_enclose_info *info) {
    return enclose_entry(&FMT_F64, m, n, k, a, b, lo, hi, info);
}

int cairn_enclose_f32(size_t m, size_t n, size_t k, const float *a, const float *b, float *lo,
                      float *hi, cairn_enclose_info *info) {
    return enclose_entry(&FMT_F32, m, n, k, a, b, lo, hi, info);
}
#endif

int cairn_enclose_bits(int width, size_t m, size_t n, size_t k, const void *a, const void *b,
                       void *lo, void *hi, cairn_enclose_info *info) {
    if (width != 32 && width != 64) {
        if (info) {
            memset(info, 0, sizeof *info);
            info->kernel = "scalar";
        }
        return CAIRN_ENCLOSE_ESIZE;
    }
    return enclose_entry(width == 64 ? &FMT_F64 : &FMT_F32, m, n, k, a, b, lo, hi, info);
}

const char *cairn_enclose_strerror(int code) {
    switch (code) {
    case CAIRN_ENCLOSE_OK: return "success";
    case CAIRN_ENCLOSE_ENONFINITE:
        return "E-ENCLOSE-NONFINITE: an operand is NaN or infinite; the bracket is defined "
               "for finite operands only";
    case CAIRN_ENCLOSE_EKTOOBIG:
        return "E-ENCLOSE-K: the contraction length k exceeds 2^17; split the product "
               "along k and add the brackets";
    case CAIRN_ENCLOSE_ESIZE:
        return "E-ENCLOSE-SIZE: the matrix sizes overflow, an operand pointer is NULL, or "
               "the width is not 32 or 64";
    case CAIRN_ENCLOSE_ENOMEM: return "E-ENCLOSE-NOMEM: out of memory for the packed operands";
    default: return "E-ENCLOSE-UNKNOWN: unknown cairn_enclose return code";
    }
}
