/* cairn_enclose.c: the exact bracket GEMM on the CPU (see cairn_enclose.h for the
 * contract), and the argument checks, plan and info every backend shares.
 *
 * Four phases, all integer arithmetic on IEEE bit patterns (the shared core,
 * cairn_enclose_core.h, decodes, scales and rounds):
 *   1. scan:  per row of A and column of B, the binades of the highest and lowest set
 *             bit over its nonzero elements (and non-finite operands are refused);
 *   2. plan:  the widths bits_a, bits_b within the budget, and a scale 2^E per row of A
 *             and 2^F per column of B that puts the top bit just under the sign bit;
 *   3. pack:  each element floored to X = floor(x 2^E), stored biased as X + 2^W (so
 *             the kernels multiply unsigned numbers only) in digits, plus the row and
 *             column sums that remove the bias and bound what flooring lost;
 *   4. tiles: R x 8 outputs at a time, the exact sum of biased digit products, folded
 *             into unsigned sums per digit position, then assembled, corrected and
 *             rounded outward once into lo and hi.
 * The kernel is chosen at run time by what the CPU has: AMX-INT8 tile units with the
 * GPU's residue algorithm (cairn_enclose_amx.c) where every line is lossless within 102
 * bits; else AVX-512 IFMA (cairn_enclose_x86.c: Karatsuba's three products a step where
 * both operands take two digits, the schoolbook otherwise); else mulx/adcx/adox carry
 * chains for one-limb operands; else portable unsigned __int128 code.
 * CAIRN_ENCLOSE_KERNEL=scalar|ifma|ifma52|adx64|amx forces one where it can run,
 * CAIRN_ENCLOSE_PACK=scalar the portable scan and packing (and no AMX). Every output is
 * computed by one task from the same integers, so the bits depend neither on the thread
 * count nor on the kernel. */
/* The wides are built word by word and then read whole: vectorised copies would load
 * 16 bytes that two 8-byte stores just wrote, a store-forwarding stall per output. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-vectorize")
#endif

#include "cairn_enclose.h"
#include "cairn_enclose_impl.h"

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#ifndef CAIRN_ENCLOSE_SERIAL
#include "cairn_pool.h"
#endif

typedef cairn_enc_u128 u128;
typedef cairn_enc_wide wide;
typedef cairn_enc_span span;
typedef cairn_enc_job job;

enum {
    TILE_COLS = CAIRN_ENC_TILE_COLS,
    MAX_ROWS = CAIRN_ENC_MAX_ROWS,
    MAX_DIGITS = CAIRN_ENC_MAX_DIGITS,
    GROUP = 8 /* row tiles per task: they share each K block of B */
};
#define INLINE static inline __attribute__((always_inline))

/* ---- shared by every backend ------------------------------------------------------- */

/* Whether a rows x cols matrix, padded to whole tiles and packed at up to 5 words per
 * element (plus the 8-byte stride of the caller's data), could overflow size_t. */
static int too_big(size_t rows, size_t cols) {
    size_t p;
    return rows > SIZE_MAX - TILE_COLS || __builtin_mul_overflow(rows + TILE_COLS, cols, &p) ||
           p > SIZE_MAX / 64;
}

int cairn_enclose_check_args(size_t m, size_t n, size_t k, const void *a, const void *b,
                             const void *lo, const void *hi) {
    if (too_big(m, k) || too_big(n, k) || too_big(m, n)) return CAIRN_ENCLOSE_ESIZE;
    if ((m && k && !a) || (k && n && !b) || (m && n && (!lo || !hi))) return CAIRN_ENCLOSE_ESIZE;
    if (k > CAIRN_ENCLOSE_MAX_K) return CAIRN_ENCLOSE_EKTOOBIG;
    return CAIRN_ENCLOSE_OK;
}

void cairn_enclose_info_reset(cairn_enclose_info *info, const char *kernel) {
    memset(info, 0, sizeof *info);
    info->kernel = kernel;
}

static int max_need(const span *s, size_t count) {
    int need = 0;
    for (size_t i = 0; i < count; i++)
        if (cairn_enc_span_need(&s[i]) > need) need = cairn_enc_span_need(&s[i]);
    return need;
}

/* Scales so the top bit sits at 2^(w-1); lossy when the span does not fit w bits. */
static size_t assign_scales(const span *s, size_t count, int w, int *scale, unsigned char *lossy,
                            int *lo, int *hi) {
    size_t nlossy = 0;
    int first = 1;
    *lo = *hi = 0;
    for (size_t i = 0; i < count; i++) {
        scale[i] = cairn_enc_scale_of(&s[i], w);
        lossy[i] = cairn_enc_span_need(&s[i]) > w;
        nlossy += lossy[i];
        if (s[i].nonzero) {
            if (first || scale[i] < *lo) *lo = scale[i];
            if (first || scale[i] > *hi) *hi = scale[i];
            first = 0;
        }
    }
    return nlossy;
}

void cairn_enclose_plan_make(cairn_enc_plan *P, const span *row_span, const span *col_span,
                             cairn_enclose_info *info) {
    int lg = cairn_enc_ceil_log2(P->k);
    int need_a = max_need(row_span, P->m) + 1, need_b = max_need(col_span, P->n) + 1;
    if (need_a < 2) need_a = 2;
    if (need_b < 2) need_b = 2;
    int bits_a, bits_b;
    cairn_enc_choose_widths(need_a, need_b, lg, &bits_a, &bits_b);
    P->wa = bits_a - 1;
    P->wb = bits_b - 1;
    P->lg = lg;
    P->lossy_rows = assign_scales(row_span, P->m, P->wa, P->row_scale, P->row_lossy,
                                  &info->scale_a_min, &info->scale_a_max);
    P->lossy_cols = assign_scales(col_span, P->n, P->wb, P->col_scale, P->col_lossy,
                                  &info->scale_b_min, &info->scale_b_max);
    info->lossy_rows = P->lossy_rows;
    info->lossy_cols = P->lossy_cols;
    info->bits_a = bits_a;
    info->bits_b = bits_b;
    info->need_bits_a = need_a;
    info->need_bits_b = need_b;
    info->ceil_log2_k = lg;
}

void cairn_enclose_info_done(const cairn_enc_plan *P, cairn_enclose_info *info) {
    info->tight_outputs = (P->m - P->lossy_rows) * (P->n - P->lossy_cols);
    info->tight = P->lossy_rows == 0 && P->lossy_cols == 0;
}

int cairn_enclose_find_nonfinite(const void *base, size_t rows, size_t cols, cairn_enc_format f,
                                 size_t *row, size_t *col) {
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < cols; j++) {
            cairn_enc_decoded d;
            if (cairn_enc_decode(cairn_enc_load(base, i * cols + j, f.size), f, &d)) {
                *row = i;
                *col = j;
                return 1;
            }
        }
    return 0;
}

/* ---- parallel loops --------------------------------------------------------------------- */

typedef cairn_enc_range_fn range_fn;
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

void cairn_enclose_each(const job *J, size_t count, range_fn *fn) { parallel_for(J, count, 1, fn); }

/* Rows of A and column blocks of B in one region: indices [0, rows) are rows, the rest
 * column blocks, so neither waits for the other. */
static void split_range(const job *J, size_t rows, size_t begin, size_t end, range_fn *row_fn,
                        range_fn *col_fn) {
    if (begin < rows) row_fn(J, begin, end < rows ? end : rows);
    if (end > rows) col_fn(J, (begin > rows ? begin : rows) - rows, end - rows);
}

/* ---- phase 1: scan ------------------------------------------------------------------------ */

static void scan_rows(const job *J, size_t begin, size_t end) {
    for (size_t i = begin; i < end; i++) {
        span s = {0, 0, 0, 0};
        for (size_t t = 0; t < J->P.k && !s.bad; t++)
            cairn_enc_span_add_bits(&s, cairn_enc_load(J->a, i * J->P.k + t, J->P.f.size), J->P.f);
        J->row_span[i] = s;
    }
}

/* Columns are scanned TILE_COLS at a time so that each task reads whole row segments. */
static void scan_col_blocks(const job *J, size_t begin, size_t end) {
    for (size_t blk = begin; blk < end; blk++) {
        size_t j0 = blk * TILE_COLS, j1 = j0 + TILE_COLS < J->P.n ? j0 + TILE_COLS : J->P.n;
        for (size_t j = j0; j < j1; j++) J->col_span[j] = (span){0, 0, 0, 0};
        for (size_t t = 0; t < J->P.k; t++)
            for (size_t j = j0; j < j1; j++)
                cairn_enc_span_add_bits(&J->col_span[j],
                                        cairn_enc_load(J->b, t * J->P.n + j, J->P.f.size), J->P.f);
    }
}

static void scan_both(const job *J, size_t begin, size_t end) {
#ifdef CAIRN_ENC_X86
    if (J->vector_pack) {
        split_range(J, J->P.m, begin, end, cairn_enclose_x86_scan_rows,
                    cairn_enclose_x86_scan_cols);
        return;
    }
#endif
    split_range(J, J->P.m, begin, end, scan_rows, scan_col_blocks);
}

/* Tasks for the columns' part of the scan and the packing: blocks of 8, or groups of
 * them for the vector code. */
static size_t col_units(const job *J) {
    size_t blocks = (J->P.n + TILE_COLS - 1) / TILE_COLS;
#ifdef CAIRN_ENC_X86
    if (J->vector_pack) return (blocks + CAIRN_ENC_COL_GROUP - 1) / CAIRN_ENC_COL_GROUP;
#endif
    return blocks;
}

/* ---- phase 3: pack ------------------------------------------------------------------------- */

/* X + 2^w from |X| and the sign, in place, in nw words. */
INLINE void bias_words(uint64_t *x, int neg, int w, const int nw) {
    if (!neg) {
        x[w / 64] |= UINT64_C(1) << (w % 64); /* |X| < 2^w: no carry */
        return;
    }
    uint64_t borrow = 0; /* 2^w - |X| */
    for (int i = 0; i < nw; i++) {
        uint64_t top = i == w / 64 ? UINT64_C(1) << (w % 64) : 0;
        u128 diff = (u128)top - x[i] - borrow;
        x[i] = (uint64_t)diff;
        borrow = (uint64_t)(diff >> 64) & 1;
    }
}

/* Digit d of x (nw words) in radix 2^radix, radix 51, 52 or 64. */
INLINE uint64_t digit_of(const uint64_t *x, int d, int radix, const int nw) {
    int pos = d * radix, word = pos / 64, bit = pos % 64;
    uint64_t v = word < nw ? x[word] >> bit : 0;
    if (bit > 64 - radix && word + 1 < nw) v |= x[word + 1] << (64 - bit);
    return radix == 64 ? v : v & ((UINT64_C(1) << radix) - 1);
}

/* Besides its digits, each row of A' (column of B') yields the sums of its digits,
 * which remove the bias (digits below 2^64, at most 2^17 of them: a u128 each), and
 * where the other operand is lossy the sums of its positive and of its negative X. */
typedef struct {
    wide pos, neg;
} signed_sums;

/* X + 2^w in two words, the common case (X + 2^w < 2^128, no signed sums wanted): the
 * steps of cairn_enc_scaled_magnitude and bias_words on one 128-bit integer. */
INLINE u128 biased_narrow(uint64_t bits, cairn_enc_format f, int scale, int w) {
    cairn_enc_decoded d;
    cairn_enc_decode(bits, f, &d);
    int sh = d.q + scale;
    u128 mag = 0;
    if (d.mant && sh >= 0) mag = (u128)d.mant << sh;
    else if (d.mant && sh > -64)
        mag = (d.mant >> -sh) + (uint64_t)(d.neg & ((d.mant << (64 + sh)) != 0));
    else if (d.mant) mag = (uint64_t)d.neg;       /* floor of a tiny negative value is -1 */
    return ((u128)1 << w) + (d.neg ? -mag : mag); /* modulo 2^128: in [0, 2^(w+1)) */
}

/* Packs one element into ND digits at out[d * stride], adding them to dsum[d], and X to
 * *ss unless NULL; Karatsuba's layout stores d0 + d1 after them. ND is a compile-time
 * constant at each call. */
INLINE void pack_element(const job *J, uint64_t bits, int scale, int w, signed_sums *ss,
                         uint64_t *out, size_t stride, u128 *dsum, const int ND) {
    const int radix = J->radix;
    uint64_t x[CAIRN_ENC_MAG_WORDS];
    int nw = 2;
    if (ND * radix <= 128 && !ss) {
        u128 v = biased_narrow(bits, J->P.f, scale, w);
        x[0] = (uint64_t)v;
        x[1] = (uint64_t)(v >> 64);
    } else {
        nw = ND * radix <= 128 ? 2 : CAIRN_ENC_MAG_WORDS; /* X + 2^w < 2^(w+1) */
        int neg = cairn_enc_scaled_magnitude(bits, J->P.f, scale, x, nw);
        if (ss) {
            wide v;
            cairn_enc_wide_zero(&v);
            cairn_enc_wide_add_words(&v, x, nw);
            if (neg) cairn_enc_wide_neg(&v);
            cairn_enc_wide_add(neg ? &ss->neg : &ss->pos, &v);
        }
        bias_words(x, neg, w, nw);
    }
    for (int d = 0; d < ND; d++) {
        uint64_t digit = digit_of(x, d, radix, nw);
        out[d * stride] = digit;
        dsum[d] += digit;
    }
    if (J->family == CAIRN_ENC_KARA) out[2 * stride] = out[0] + out[stride];
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

/* One row of A or column of B: k elements at base[first + t * step], stored word s of
 * element t to out[t * out_step + s * word_step]. The digit sums are locals so that
 * they stay in registers; they are stored to dsum_out at the end. */
INLINE void pack_line(const job *J, const void *base, size_t first, size_t step, int scale, int w,
                      uint64_t *out, size_t out_step, size_t word_step, signed_sums *ss,
                      u128 *dsum_out, const int ND) {
    u128 dsum[MAX_DIGITS] = {0};
    for (size_t t = 0; t < J->P.k; t++)
        pack_element(J, cairn_enc_load(base, first + t * step, J->P.f.size), scale, w, ss,
                     out + t * out_step, word_step, dsum, ND);
    for (int d = 0; d < ND; d++) dsum_out[d] = dsum[d];
}

/* sum(X' 2^shift) from the digit sums. */
static wide biased_sum(const u128 *dsum, int ndigits, int radix, int shift) {
    wide total;
    cairn_enc_wide_zero(&total);
    for (int d = 0; d < ndigits; d++) cairn_enc_wide_add_u128(&total, dsum[d], d * radix + shift);
    return total;
}

/* S = S' - 2^wb sum_t X'[i][t] - 2^wa sum_t Y'[t][j] + k 2^(wa+wb): the row's part takes
 * the constant; both are stored negated. */
static wide row_correction(const job *J, const u128 *dsum) {
    wide corr = biased_sum(dsum, J->da, J->radix, J->P.wb), bias;
    cairn_enc_wide_zero(&bias);
    cairn_enc_wide_add_u128(&bias, J->P.k, J->P.wa + J->P.wb);
    cairn_enc_wide_sub(&corr, &bias);
    cairn_enc_wide_neg(&corr);
    return corr;
}

static void pack_rows(const job *J, size_t begin, size_t end) {
    size_t ws = (size_t)J->sa;
    for (size_t i = begin; i < end; i++) {
        uint64_t *dst = J->ap + i * J->P.k * ws;
        if (i >= J->P.m) { /* padding rows: any digits do, their outputs are dropped */
            memset(dst, 0, J->P.k * ws * sizeof *dst);
            continue;
        }
        signed_sums ss;
        memset(&ss, 0, sizeof ss);
        u128 dsum[MAX_DIGITS];
        WITH_DIGITS(J->da, pack_line, J, J->a, i * J->P.k, 1, J->P.row_scale[i], J->P.wa, dst, ws,
                    1, J->signed_sums_a ? &ss : NULL, dsum)
        J->row_pos[i] = ss.pos;
        J->row_neg[i] = ss.neg;
        J->row_corr[i] = row_correction(J, dsum);
    }
}

/* Column by column: each reads one element per cache line, but the block's lines stay
 * in cache across its 8 columns, and the sums stay in registers. */
static void pack_col_blocks(const job *J, size_t begin, size_t end) {
    size_t ws = (size_t)J->sb;
    for (size_t blk = begin; blk < end; blk++) {
        uint64_t *dst = J->bp + blk * J->P.k * ws * TILE_COLS;
        for (size_t lane = 0; lane < TILE_COLS; lane++) {
            size_t j = blk * TILE_COLS + lane;
            if (j >= J->P.n) { /* padding columns */
                for (size_t t = 0; t < J->P.k * ws; t++) dst[t * TILE_COLS + lane] = 0;
                continue;
            }
            signed_sums ss;
            memset(&ss, 0, sizeof ss);
            u128 dsum[MAX_DIGITS];
            WITH_DIGITS(J->db, pack_line, J, J->b, j, J->P.n, J->P.col_scale[j], J->P.wb,
                        dst + lane, ws * TILE_COLS, TILE_COLS, J->signed_sums_b ? &ss : NULL, dsum)
            J->col_pos[j] = ss.pos;
            J->col_neg[j] = ss.neg;
            J->col_corr[j] = biased_sum(dsum, J->db, J->radix, J->P.wa);
            cairn_enc_wide_neg(&J->col_corr[j]);
        }
    }
}

static void pack_both(const job *J, size_t begin, size_t end) {
#ifdef CAIRN_ENC_X86
    if (J->vector_pack) {
        split_range(J, J->mpad, begin, end, cairn_enclose_x86_pack_rows,
                    cairn_enclose_x86_pack_cols);
        return;
    }
#endif
    split_range(J, J->mpad, begin, end, pack_rows, pack_col_blocks);
}

/* ---- phase 4: the portable kernel ---------------------------------------------------- */
/* A kernel adds sum_{k0 <= t < k1} A'[i0 + r][t] * B'[t][8 jb + lane] into the digit
 * position sums of output r * 8 + lane of the tile (npos of them each, at acc); digit
 * and row counts are compile-time constants. */

/* 4 outputs at a time, one unsigned __int128 per output and digit position. Position p
 * gets at most 5 products below 2^104 per step, so 2^17 steps fit. */
INLINE void scalar_tile(const job *J, size_t i0, size_t jb, size_t k0, size_t k1, u128 *acc,
                        const int DA, const int DB, const int R) {
    const size_t K = J->P.k, np = (size_t)(DA + DB);
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
                    acc[((size_t)r * TILE_COLS + (size_t)(half * 4 + l)) * np + (size_t)p] +=
                        s[l][p];
        }
}

/* Rows per tile: R * (da + db) vector accumulators must fit the 32 registers. */
#define TILE_ROWS(DA, DB) (24 / ((DA) + (DB)) > MAX_ROWS ? MAX_ROWS : 24 / ((DA) + (DB)))

#define SCALAR_KERNEL(DA, DB)                                                                      \
    static void scalar_##DA##_##DB(const job *J, size_t i0, size_t jb, size_t k0, size_t k1,       \
                                   u128 *acc) {                                                    \
        scalar_tile(J, i0, jb, k0, k1, acc, DA, DB, TILE_ROWS(DA, DB));                            \
    }
#define SCALAR_ROW(DA)                                                                             \
    SCALAR_KERNEL(DA, 1)                                                                           \
    SCALAR_KERNEL(DA, 2) SCALAR_KERNEL(DA, 3) SCALAR_KERNEL(DA, 4) SCALAR_KERNEL(DA, 5)
SCALAR_ROW(1)
SCALAR_ROW(2)
SCALAR_ROW(3)
SCALAR_ROW(4)
SCALAR_ROW(5)

#define SCALAR_ENTRY(DA, DB) scalar_##DA##_##DB
#define SCALAR_TABLE_ROW(DA)                                                                       \
    {                                                                                              \
        SCALAR_ENTRY(DA, 1), SCALAR_ENTRY(DA, 2), SCALAR_ENTRY(DA, 3), SCALAR_ENTRY(DA, 4),        \
            SCALAR_ENTRY(DA, 5)                                                                    \
    }
static cairn_enc_kernel_fn *const scalar_kernels[MAX_DIGITS][MAX_DIGITS] = {
    SCALAR_TABLE_ROW(1), SCALAR_TABLE_ROW(2), SCALAR_TABLE_ROW(3), SCALAR_TABLE_ROW(4),
    SCALAR_TABLE_ROW(5)};

/* ---- the kernel for this CPU and these widths ------------------------------------------ */

static int ceil_div(int x, int y) { return (x + y - 1) / y; }

/* The portable kernel: 52-bit digits, one unsigned __int128 per position. */
static const char *use_scalar(job *J) {
    J->family = CAIRN_ENC_SCALAR;
    J->radix = 52;
    J->da = J->sa = ceil_div(J->P.wa + 1, 52);
    J->db = J->sb = ceil_div(J->P.wb + 1, 52);
    J->kernel = scalar_kernels[J->da - 1][J->db - 1];
    J->rows = TILE_ROWS(J->da, J->db);
    J->kblock = (size_t)(2048 / (J->da < J->db ? J->da : J->db));
    return "scalar";
}

#ifdef CAIRN_ENC_X86
/* AVX-512 IFMA: Karatsuba where both operands take two digits and fit 2 x 51 bits (d0 +
 * d1 must stay below IFMA's 2^52), else the schoolbook on 52-bit digits. Each lane
 * gains one addend below 2^52 a step (Karatsuba) or at most 2 min(da, db): the fold
 * comes before a lane can wrap. */
static const char *use_ifma(job *J, int allow_karatsuba) {
    int bits_a = J->P.wa + 1, bits_b = J->P.wb + 1;
    use_scalar(J);
    if (allow_karatsuba && J->da == 2 && J->db == 2 && bits_a <= 102 && bits_b <= 102) {
        J->family = CAIRN_ENC_KARA;
        J->radix = 51;
        J->sa = J->sb = 3;
        J->kernel = cairn_enclose_x86_ifma(2, 2, 1);
        J->rows = MAX_ROWS;
        J->kblock = 4096;
        return "ifma51-karatsuba";
    }
    J->family = CAIRN_ENC_IFMA;
    J->kernel = cairn_enclose_x86_ifma(J->da, J->db, 0);
    return "ifma52";
}

/* mulx/adcx/adox on 64-bit limbs, where the kernel exists for these limb counts. */
static const char *use_adx(job *J) {
    int la = ceil_div(J->P.wa + 1, 64), lb = ceil_div(J->P.wb + 1, 64);
    cairn_enc_kernel_fn *kernel = cairn_enclose_x86_adx(la, lb);
    if (!kernel) return NULL;
    J->family = CAIRN_ENC_ADX;
    J->radix = 64;
    J->da = J->sa = la;
    J->db = J->sb = lb;
    J->kernel = kernel;
    J->rows = MAX_ROWS;
    J->kblock = 256;
    return "adx64";
}
#endif

/* Whether the AMX tile units run the call (cairn_enclose_amx.c): the CPU has them, no
 * other kernel is forced, and every line is lossless within 102 bits (X + 2^w in seven
 * 15-bit pieces). */
#ifdef CAIRN_ENC_X86
static int use_amx(const job *J) {
    const char *force = getenv("CAIRN_ENCLOSE_KERNEL"), *pack = getenv("CAIRN_ENCLOSE_PACK");
    if (force && *force && strcmp(force, "amx") != 0) return 0;
    if (pack && strcmp(pack, "scalar") == 0) return 0;
    return J->P.lossy_rows == 0 && J->P.lossy_cols == 0 && J->P.wa < 102 && J->P.wb < 102 &&
           cairn_enclose_amx_usable();
}
#endif

/* Chooses the family and kernel by the CPU, the widths and CAIRN_ENCLOSE_KERNEL. */
static const char *choose_kernel(job *J) {
    const char *force = getenv("CAIRN_ENCLOSE_KERNEL");
    if (!force) force = "";
    if (strcmp(force, "scalar") == 0) return use_scalar(J);
#ifdef CAIRN_ENC_X86
    const char *pack = getenv("CAIRN_ENCLOSE_PACK");
    int ifma = cairn_enclose_x86_has_ifma();
    if (ifma && strcmp(force, "adx64") != 0) { /* "ifma" and "amx" where AMX cannot run */
        const char *name = use_ifma(J, strcmp(force, "ifma52") != 0);
        J->vector_pack = J->family == CAIRN_ENC_KARA && !(pack && strcmp(pack, "scalar") == 0);
        return name;
    }
    if (cairn_enclose_x86_has_adx()) {
        const char *name = use_adx(J);
        if (name) return name;
    }
#endif
    return use_scalar(J);
}

/* ---- phase 4: assembling and rounding ------------------------------------------------- */

/* sum_p pos[p] 2^(radix p) into the words of *out: the positions are carried into
 * radix digits, which do not overlap. Every position is below 2^125, the sum below
 * 2^384. With np and radix constants the loop unrolls. */
INLINE void positions_to_wide(const u128 *pos, int np, int radix, wide *out) {
    uint64_t mask = radix == 64 ? ~UINT64_C(0) : (UINT64_C(1) << radix) - 1;
    u128 carry = 0;
    cairn_enc_wide_zero(out);
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) { /* 8 digits of 51 bits or more cover 384 */
        if (p * radix >= CAIRN_ENC_MAX_SHIFT) break;
        u128 t = (p < np ? pos[p] : 0) + carry;
        uint64_t digit = (uint64_t)t & mask;
        carry = t >> radix;
        int at = p * radix, word = at / 64, bit = at % 64;
        out->w[word] |= digit << bit;
        if (bit && bit > 64 - radix && word + 1 < CAIRN_ENC_WORDS)
            out->w[word + 1] |= digit >> (64 - bit);
    }
}

/* The biased sum S' of one output from its position sums. Karatsuba's positions hold
 * sum a0 b0, sum (a0 + a1)(b0 + b1) and sum a1 b1: the middle digit is the second less
 * the others. The common digit counts get their own constant-radix copies. */
static void biased_sum_of(const job *J, const u128 *acc, wide *out) {
    if (J->family == CAIRN_ENC_KARA) {
        u128 q[3] = {acc[0], acc[1] - acc[0] - acc[2], acc[2]};
        positions_to_wide(q, 3, 51, out);
        return;
    }
    int np = J->da + J->db + (J->family == CAIRN_ENC_ADX);
    if (J->radix == 52 && np == 2) positions_to_wide(acc, 2, 52, out);
    else if (J->radix == 52 && np == 3) positions_to_wide(acc, 3, 52, out);
    else if (J->radix == 52 && np == 4) positions_to_wide(acc, 4, 52, out);
    else positions_to_wide(acc, np, J->radix, out);
}

/* Position sums per output: Karatsuba's three, the digits' da + db, or ADX's words. */
static size_t positions(const job *J) {
    return J->family == CAIRN_ENC_KARA ? 3 : (size_t)(J->da + J->db + (J->family == CAIRN_ENC_ADX));
}

/* The bracket of output (i, j) from its position sums, into lo and hi, computed on nw
 * words (a constant at each call): the exact sum S fits them (cairn_enc_job.nw), so the
 * biased sum and the corrections may be taken modulo 2^(64 nw). */
INLINE void finish_words(const job *J, size_t i, size_t j, const u128 *acc, const int nw) {
    wide s;
    biased_sum_of(J, acc, &s); /* row_corr and col_corr are stored negated */
    uint64_t v[CAIRN_ENC_WORDS], carry = 0;
    CAIRN_ENC_UNROLL
    for (int w = 0; w < nw; w++) {
        u128 t = (u128)s.w[w] + J->row_corr[i].w[w] + J->col_corr[j].w[w] + carry;
        v[w] = (uint64_t)t;
        carry = (uint64_t)(t >> 64);
    }
    int e = J->P.row_scale[i] + J->P.col_scale[j];
    cairn_enc_bracket_bits out;
    if ((J->P.row_lossy[i] | J->P.col_lossy[j]) == 0) {
        out = cairn_enc_round_words(v, nw, e, J->P.f);
    } else { /* lossy lines are rare: the whole width, as the other backends */
        wide whole = s;
        cairn_enc_wide_add(&whole, &J->row_corr[i]);
        cairn_enc_wide_add(&whole, &J->col_corr[j]);
        cairn_enc_loss loss = {J->P.row_lossy[i], J->P.col_lossy[j], &J->row_pos[i], &J->row_neg[i],
                               &J->col_pos[j],    &J->col_neg[j],    J->P.k};
        out = cairn_enc_bracket(&whole, e, J->P.f, &loss);
    }
    cairn_enc_store(J->lo, i * J->P.n + j, out.down, J->P.f.size);
    cairn_enc_store(J->hi, i * J->P.n + j, out.up, J->P.f.size);
}

static void finish_output(const job *J, size_t i, size_t j, const u128 *acc) {
    switch (J->nw) {
    case 2: finish_words(J, i, j, acc, 2); break;
    case 3: finish_words(J, i, j, acc, 3); break;
    case 4: finish_words(J, i, j, acc, 4); break;
    default: finish_words(J, i, j, acc, CAIRN_ENC_WORDS); break;
    }
}

/* One task: GROUP row tiles against one block of 8 columns, K block by K block (the B
 * block's K block stays in L1 across the tiles). Consecutive tasks take the same row
 * group with the next column block, so the group's packed rows stay in L2. */
static void run_tasks(const job *J, size_t begin, size_t end) {
    size_t row_tiles = J->mpad / (size_t)J->rows, np = positions(J);
    size_t tile_outputs = (size_t)J->rows * TILE_COLS;
    assert((size_t)J->rows * np <= CAIRN_ENC_TILE_POS);
    u128 acc[GROUP * TILE_COLS * CAIRN_ENC_TILE_POS];
    for (size_t task = begin; task < end; task++) {
        size_t jb = task % J->nblocks, g = task / J->nblocks;
        size_t t0 = g * GROUP, t1 = t0 + GROUP < row_tiles ? t0 + GROUP : row_tiles;
        memset(acc, 0, (t1 - t0) * tile_outputs * np * sizeof *acc);
        for (size_t k0 = 0; k0 < J->P.k; k0 += J->kblock) {
            size_t k1 = k0 + J->kblock < J->P.k ? k0 + J->kblock : J->P.k;
            for (size_t t = t0; t < t1; t++)
                J->kernel(J, t * (size_t)J->rows, jb, k0, k1, &acc[(t - t0) * tile_outputs * np]);
        }
        size_t i0 = t0 * (size_t)J->rows;
        for (size_t i = i0; i < t1 * (size_t)J->rows && i < J->P.m; i++)
            for (size_t l = 0; l < TILE_COLS && jb * TILE_COLS + l < J->P.n; l++)
                finish_output(J, i, jb * TILE_COLS + l, &acc[((i - i0) * TILE_COLS + l) * np]);
    }
}

/* ---- driver ----------------------------------------------------------------------------------- */

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

uint64_t *cairn_enclose_scratch_get(size_t words) { return scratch_get(words); }

static void scratch_put(uint64_t *words) {
    if (!words) return;
    uint64_t *block = words - 1;
    if (block[0] * sizeof *block > SCRATCH_KEEP) {
        free(block);
        return;
    }
    free(atomic_exchange(&scratch_cache, block));
}

void cairn_enclose_scratch_put(uint64_t *words) { scratch_put(words); }

/* All per-row and per-column storage, freed by release(). */
static int allocate(job *J) {
    size_t m = J->P.m ? J->P.m : 1, n = J->P.n ? J->P.n : 1;
    J->row_span = calloc(m, sizeof *J->row_span);
    J->col_span = calloc(n, sizeof *J->col_span);
    J->P.row_scale = calloc(m, sizeof *J->P.row_scale);
    J->P.col_scale = calloc(n, sizeof *J->P.col_scale);
    J->P.row_lossy = calloc(m, 1);
    J->P.col_lossy = calloc(n, 1);
    J->row_pos = calloc(3 * m, sizeof(wide));
    J->col_pos = calloc(3 * n, sizeof(wide));
    if (!J->row_span || !J->col_span || !J->P.row_scale || !J->P.col_scale || !J->P.row_lossy ||
        !J->P.col_lossy || !J->row_pos || !J->col_pos)
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
    free(J->P.row_scale);
    free(J->P.col_scale);
    free(J->P.row_lossy);
    free(J->P.col_lossy);
    free(J->row_pos);
    free(J->col_pos);
    scratch_put(J->packed);
}

static int report_nonfinite(const job *J, cairn_enclose_info *info) {
    for (size_t i = 0; i < J->P.m; i++)
        if (J->row_span[i].bad) {
            info->bad_operand = 'a';
            cairn_enclose_find_nonfinite(J->a, J->P.m, J->P.k, J->P.f, &info->bad_row,
                                         &info->bad_col);
            return CAIRN_ENCLOSE_ENONFINITE;
        }
    for (size_t j = 0; j < J->P.n; j++)
        if (J->col_span[j].bad) {
            info->bad_operand = 'b';
            cairn_enclose_find_nonfinite(J->b, J->P.k, J->P.n, J->P.f, &info->bad_row,
                                         &info->bad_col);
            return CAIRN_ENCLOSE_ENONFINITE;
        }
    return CAIRN_ENCLOSE_OK;
}

/* Whether the AVX-512 scan may run: IFMA's CPU, not forced off. Decided before the
 * plan, so it cannot depend on the widths. */
static int vector_scan_allowed(void) {
#ifdef CAIRN_ENC_X86
    const char *pack = getenv("CAIRN_ENCLOSE_PACK"), *force = getenv("CAIRN_ENCLOSE_KERNEL");
    return cairn_enclose_x86_has_ifma() && !(pack && strcmp(pack, "scalar") == 0) &&
           !(force && (strcmp(force, "scalar") == 0 || strcmp(force, "adx64") == 0));
#else
    return 0;
#endif
}

static int enclose(job *J, cairn_enclose_info *info) {
    int rc = allocate(J);
    if (rc) return rc;
    J->vector_pack = vector_scan_allowed();
    parallel_for(J, J->P.m + col_units(J), 1, scan_both);
    rc = report_nonfinite(J, info);
    if (rc) return rc;
    cairn_enclose_plan_make(&J->P, J->row_span, J->col_span, info);
    /* |S| <= 2^(bits_a + bits_b + lg - 2): that many bits and a sign fit nw words */
    J->nw = ceil_div(info->bits_a + info->bits_b + info->ceil_log2_k, 64);
#ifdef CAIRN_ENC_X86
    if (use_amx(J)) {
        info->kernel = "amx-residue";
        rc = cairn_enclose_amx_run(J, info);
        if (!rc) cairn_enclose_info_done(&J->P, info);
        return rc;
    }
#endif
    J->signed_sums_a = J->P.lossy_cols > 0;
    J->signed_sums_b = J->P.lossy_rows > 0;
    J->vector_pack = 0;
    info->kernel = choose_kernel(J);
    if (J->signed_sums_a || J->signed_sums_b) J->vector_pack = 0;
    J->mpad = (J->P.m + (size_t)J->rows - 1) / (size_t)J->rows * (size_t)J->rows;
    J->nblocks = (J->P.n + TILE_COLS - 1) / TILE_COLS;
    size_t a_words = J->mpad * J->P.k * (size_t)J->sa;
    J->packed = scratch_get(a_words + J->nblocks * J->P.k * (size_t)J->sb * TILE_COLS);
    if (!J->packed) return CAIRN_ENCLOSE_ENOMEM;
    J->ap = J->packed;
    J->bp = J->packed + a_words;
    parallel_for(J, J->mpad + col_units(J), 1, pack_both);
    size_t row_tiles = J->mpad / (size_t)J->rows;
    size_t tasks = (row_tiles + GROUP - 1) / GROUP * J->nblocks;
    parallel_for(J, tasks, 1, run_tasks);
    cairn_enclose_info_done(&J->P, info);
    return CAIRN_ENCLOSE_OK;
}

static int enclose_entry(int width, size_t m, size_t n, size_t k, const void *a, const void *b,
                         void *lo, void *hi, cairn_enclose_info *info) {
    cairn_enclose_info scratch;
    if (!info) info = &scratch;
    cairn_enclose_info_reset(info, "scalar");
    int rc = cairn_enclose_check_args(m, n, k, a, b, lo, hi);
    if (rc) return rc;
    if (m == 0 || n == 0) {
        info->tight = 1;
        return CAIRN_ENCLOSE_OK;
    }
    job J;
    memset(&J, 0, sizeof J);
    J.P.f = cairn_enc_format_of(width);
    J.P.m = m, J.P.n = n, J.P.k = k;
    J.a = a, J.b = b, J.lo = lo, J.hi = hi;
    rc = enclose(&J, info);
    release(&J);
    return rc;
}

#ifndef CAIRN_ENCLOSE_BITS_ONLY
int cairn_enclose_f64(size_t m, size_t n, size_t k, const double *a, const double *b, double *lo,
                      double *hi, cairn_enclose_info *info) {
    return enclose_entry(64, m, n, k, a, b, lo, hi, info);
}

int cairn_enclose_f32(size_t m, size_t n, size_t k, const float *a, const float *b, float *lo,
                      float *hi, cairn_enclose_info *info) {
    return enclose_entry(32, m, n, k, a, b, lo, hi, info);
}
#endif

int cairn_enclose_bits(int width, size_t m, size_t n, size_t k, const void *a, const void *b,
                       void *lo, void *hi, cairn_enclose_info *info) {
    if (width != 32 && width != 64) {
        if (info) cairn_enclose_info_reset(info, "scalar");
        return CAIRN_ENCLOSE_ESIZE;
    }
    return enclose_entry(width, m, n, k, a, b, lo, hi, info);
}

/* ---- strided arrays ------------------------------------------------------------------------ */

/* One strided matrix: base, byte strides, extents. */
typedef struct {
    const unsigned char *base;
    ptrdiff_t rs, cs;
    size_t rows, cols;
} strided;

static int is_row_major(const strided *s, int size) {
    return (s->cols <= 1 || s->cs == size) && (s->rows <= 1 || s->rs == (ptrdiff_t)s->cols * size);
}

static size_t abs_stride(ptrdiff_t s) { return s < 0 ? (size_t)0 - (size_t)s : (size_t)s; }

/* The lowest and one past the highest byte the matrix touches; -1 when the offsets
 * overflow. */
static int byte_range(const strided *s, int size, uintptr_t *lo, uintptr_t *hi) {
    size_t span_r, span_c;
    if (__builtin_mul_overflow(abs_stride(s->rs), s->rows ? s->rows - 1 : 0, &span_r) ||
        __builtin_mul_overflow(abs_stride(s->cs), s->cols ? s->cols - 1 : 0, &span_c) ||
        span_r > PTRDIFF_MAX / 2 || span_c > PTRDIFF_MAX / 2)
        return -1;
    uintptr_t at = (uintptr_t)s->base;
    *lo = at - (s->rs < 0 ? span_r : 0) - (s->cs < 0 ? span_c : 0);
    *hi = at + (s->rs > 0 ? span_r : 0) + (s->cs > 0 ? span_c : 0) + (uintptr_t)size;
    return 0;
}

/* Whether two elements of an output share bytes: with the smaller stride (over an
 * extent above 1) at least the element size and the larger at least the smaller times
 * its extent, every element has its own bytes. */
static int self_overlaps(const strided *s, int size) {
    size_t r = abs_stride(s->rs), c = abs_stride(s->cs);
    int use_r = s->rows > 1, use_c = s->cols > 1;
    if (!use_r && !use_c) return 0;
    if (use_r != use_c) return (use_r ? r : c) < (size_t)size;
    size_t small = r < c ? r : c, big = r < c ? c : r, extent = r < c ? s->rows : s->cols, need;
    return small < (size_t)size || __builtin_mul_overflow(small, extent, &need) || big < need;
}

/* Copies a strided matrix into (gather) or out of (scatter) a contiguous row-major one. */
static void restride(const strided *s, int size, unsigned char *flat, int gather) {
    for (size_t i = 0; i < s->rows; i++)
        for (size_t j = 0; j < s->cols; j++) {
            unsigned char *at =
                (unsigned char *)s->base + (ptrdiff_t)i * s->rs + (ptrdiff_t)j * s->cs;
            unsigned char *row = flat + (i * s->cols + j) * (size_t)size;
            if (gather) memcpy(row, at, (size_t)size);
            else memcpy(at, row, (size_t)size);
        }
}

/* The layout checks of cairn_enclose_strided. */
static int check_strided(const strided *in, const strided *out, int size) {
    uintptr_t lo[4], hi[4];
    for (int v = 0; v < 4; v++) {
        const strided *s = v < 2 ? &in[v] : &out[v - 2];
        if (s->rows && s->cols && byte_range(s, size, &lo[v], &hi[v])) return CAIRN_ENCLOSE_ESIZE;
    }
    if (out[0].rows && out[0].cols) {
        if (self_overlaps(&out[0], size) || self_overlaps(&out[1], size))
            return CAIRN_ENCLOSE_EOVERLAP;
        if (lo[2] < hi[3] && lo[3] < hi[2]) return CAIRN_ENCLOSE_EOVERLAP;
    }
    return CAIRN_ENCLOSE_OK;
}

/* Gathers what is not row-major, runs, scatters; the operands are copied before any
 * output is written, so outputs may overlap them. */
static int run_strided(int width, size_t k, const strided *in, const strided *out,
                       cairn_enclose_info *info) {
    int size = width / 8, flat[4];
    unsigned char *buf[4] = {NULL, NULL, NULL, NULL};
    int rc = CAIRN_ENCLOSE_OK;
    for (int v = 0; v < 4 && !rc; v++) {
        const strided *s = v < 2 ? &in[v] : &out[v - 2];
        flat[v] = is_row_major(s, size);
        if (!flat[v] && !(buf[v] = malloc(s->rows * s->cols * (size_t)size + 1)))
            rc = CAIRN_ENCLOSE_ENOMEM;
        else if (!flat[v] && v < 2) restride(s, size, buf[v], 1);
    }
    if (!rc) {
        const void *p[4];
        for (int v = 0; v < 4; v++)
            p[v] = flat[v] ? (v < 2 ? in[v].base : out[v - 2].base) : buf[v];
        rc = enclose_entry(width, in[0].rows, in[1].cols, k, p[0], p[1], (void *)p[2], (void *)p[3],
                           info);
    }
    for (int v = 2; v < 4 && !rc; v++)
        if (!flat[v]) restride(&out[v - 2], size, buf[v], 0);
    for (int v = 0; v < 4; v++) free(buf[v]);
    return rc;
}

int cairn_enclose_strided(int width, size_t m, size_t n, size_t k, const void *a, ptrdiff_t a_rs,
                          ptrdiff_t a_cs, const void *b, ptrdiff_t b_rs, ptrdiff_t b_cs, void *lo,
                          ptrdiff_t lo_rs, ptrdiff_t lo_cs, void *hi, ptrdiff_t hi_rs,
                          ptrdiff_t hi_cs, cairn_enclose_info *info) {
    cairn_enclose_info scratch;
    if (!info) info = &scratch;
    cairn_enclose_info_reset(info, "scalar");
    if (width != 32 && width != 64) return CAIRN_ENCLOSE_ESIZE;
    int rc = cairn_enclose_check_args(m, n, k, a, b, lo, hi);
    if (rc) return rc;
    const strided in[2] = {{a, a_rs, a_cs, m, k}, {b, b_rs, b_cs, k, n}};
    const strided out[2] = {{lo, lo_rs, lo_cs, m, n}, {hi, hi_rs, hi_cs, m, n}};
    if ((rc = check_strided(in, out, width / 8))) return rc;
    return run_strided(width, k, in, out, info);
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
    case CAIRN_ENCLOSE_ENODEV:
        return "E-ENCLOSE-NODEV: no CUDA device to run on; use the host backend "
               "(cairn_enclose_bits) or build with --emulate";
    case CAIRN_ENCLOSE_EDEVICE:
        return "E-ENCLOSE-DEVICE: a CUDA call failed (the info's detail names it); the "
               "outputs may be partly written";
    case CAIRN_ENCLOSE_EOVERLAP:
        return "E-ENCLOSE-OVERLAP: two outputs would share memory (lo and hi overlap, or a "
               "stride repeats an element); pass separate arrays";
    default: return "E-ENCLOSE-UNKNOWN: unknown cairn_enclose return code";
    }
}
