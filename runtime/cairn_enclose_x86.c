/* cairn_enclose_x86.c: the bracket GEMM's x86-64 kernels, chosen at run time by
 * cairn_enclose.c from what the CPU has (cairn_enclose_impl.h declares them). Integer
 * instructions only; every result is tested bit for bit against the portable kernel.
 *
 * AVX-512 IFMA (vpmadd52luq/huq: the low and high 52 bits of a 52 x 52-bit product
 * added to a 64-bit lane), one vector of 8 output columns, R rows per tile:
 *   - schoolbook: digit d of A times digit e of B, lo to position d+e, hi to d+e+1;
 *   - Karatsuba, where both operands take two digits: with 51-bit digits d0, d1 the
 *     sums d0 + d1 stay below 2^52, and three products a step (a0 b0, a1 b1 and
 *     (a0 + a1)(b0 + b1)) replace four; cairn_enclose.c recovers the middle digit.
 * With it come an AVX-512 scan of the spans and packing for Karatsuba's layout, the
 * same integers as the portable code computes, eight elements at a time.
 *
 * mulx/adcx/adox (BMI2 and ADX), where IFMA is missing, for operands that fit one
 * 64-bit limb: two outputs' three-word sums at once, one on the carry flag's chain and
 * one on the overflow flag's. */
#include "cairn_enclose_impl.h"

#ifdef CAIRN_ENC_X86

#include <stdlib.h>
#include <string.h>

#include "cairn_enclose_avx512.h"

typedef cairn_enc_u128 u128;
typedef cairn_enc_job job;

enum { TILE_COLS = CAIRN_ENC_TILE_COLS, MAX_ROWS = CAIRN_ENC_MAX_ROWS, MAX_DIGITS = 5 };

int cairn_enclose_x86_has_ifma(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512ifma");
}

int cairn_enclose_x86_has_adx(void) {
    unsigned eax, ebx, ecx, edx;
    if (__builtin_cpu_init(), !__builtin_cpu_supports("bmi2")) return 0;
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
    return (ebx >> 19) & 1; /* CPUID.(EAX=7,ECX=0):EBX.ADX[bit 19] */
}

/* ---- IFMA schoolbook ------------------------------------------------------------------ */

/* Adds the lanes of v to position p of the 8 outputs of row r (np positions each). */
INLINE IFMA_TARGET void fold_lanes(u128 *acc, int r, int p, int np, __m512i v) {
    uint64_t lanes[TILE_COLS];
    _mm512_storeu_si512((void *)lanes, v);
    for (int l = 0; l < TILE_COLS; l++) acc[(r * TILE_COLS + l) * np + p] += lanes[l];
}

/* One vector of 8 columns, R rows: the low and high 52-bit halves of each digit product
 * go to positions d+e and d+e+1 of 64-bit lanes; kblock keeps the lanes from wrapping. */
INLINE IFMA_TARGET void ifma_tile(const job *J, size_t i0, size_t jb, size_t k0, size_t k1,
                                  u128 *acc, const int DA, const int DB, const int R) {
    const size_t K = J->P.k;
    __m512i s[MAX_ROWS][2 * MAX_DIGITS];
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
        for (int p = 0; p < DA + DB; p++) fold_lanes(acc, r, p, DA + DB, s[r][p]);
}

/* Rows per tile: R * (da + db) vector accumulators must fit the 32 registers. */
#define TILE_ROWS(DA, DB) (24 / ((DA) + (DB)) > MAX_ROWS ? MAX_ROWS : 24 / ((DA) + (DB)))

#define IFMA_KERNEL(DA, DB)                                                                        \
    static IFMA_TARGET void ifma_##DA##_##DB(const job *J, size_t i0, size_t jb, size_t k0,        \
                                             size_t k1, u128 *acc) {                               \
        ifma_tile(J, i0, jb, k0, k1, acc, DA, DB, TILE_ROWS(DA, DB));                              \
    }
#define IFMA_ROW(DA)                                                                               \
    IFMA_KERNEL(DA, 1) IFMA_KERNEL(DA, 2) IFMA_KERNEL(DA, 3) IFMA_KERNEL(DA, 4) IFMA_KERNEL(DA, 5)
IFMA_ROW(1)
IFMA_ROW(2)
IFMA_ROW(3)
IFMA_ROW(4)
IFMA_ROW(5)

#define IFMA_ENTRY(DA, DB) ifma_##DA##_##DB
#define IFMA_TABLE_ROW(DA)                                                                         \
    {                                                                                              \
        IFMA_ENTRY(DA, 1), IFMA_ENTRY(DA, 2), IFMA_ENTRY(DA, 3), IFMA_ENTRY(DA, 4),                \
            IFMA_ENTRY(DA, 5)                                                                      \
    }
static cairn_enc_kernel_fn *const ifma_kernels[MAX_DIGITS][MAX_DIGITS] = {
    IFMA_TABLE_ROW(1), IFMA_TABLE_ROW(2), IFMA_TABLE_ROW(3), IFMA_TABLE_ROW(4), IFMA_TABLE_ROW(5)};

/* ---- IFMA Karatsuba -------------------------------------------------------------------- */

/* Stored per element: d0, d1, d0 + d1 (51-bit digits). Six lanes per row: the low and
 * high halves of a0 b0, of (a0 + a1)(b0 + b1) and of a1 b1, one addend a step each. */
static IFMA_TARGET void ifma_karatsuba(const job *J, size_t i0, size_t jb, size_t k0, size_t k1,
                                       u128 *acc) {
    const size_t K = J->P.k;
    __m512i s[MAX_ROWS][6];
    const uint64_t *a[MAX_ROWS];
#pragma GCC unroll 4
    for (int r = 0; r < MAX_ROWS; r++) {
        a[r] = J->ap + ((i0 + (size_t)r) * K + k0) * 3;
#pragma GCC unroll 6
        for (int p = 0; p < 6; p++) s[r][p] = _mm512_setzero_si512();
    }
    const uint64_t *b = J->bp + (jb * K + k0) * 3 * TILE_COLS;
    for (size_t t = k0; t < k1; t++, b += 3 * TILE_COLS) {
        __m512i b0 = _mm512_loadu_si512((const void *)b);
        __m512i b1 = _mm512_loadu_si512((const void *)(b + TILE_COLS));
        __m512i bs = _mm512_loadu_si512((const void *)(b + 2 * TILE_COLS));
#pragma GCC unroll 4
        for (int r = 0; r < MAX_ROWS; r++) {
            __m512i a0 = _mm512_set1_epi64((long long)a[r][0]);
            __m512i a1 = _mm512_set1_epi64((long long)a[r][1]);
            __m512i as = _mm512_set1_epi64((long long)a[r][2]);
            s[r][0] = _mm512_madd52lo_epu64(s[r][0], a0, b0);
            s[r][1] = _mm512_madd52hi_epu64(s[r][1], a0, b0);
            s[r][2] = _mm512_madd52lo_epu64(s[r][2], as, bs);
            s[r][3] = _mm512_madd52hi_epu64(s[r][3], as, bs);
            s[r][4] = _mm512_madd52lo_epu64(s[r][4], a1, b1);
            s[r][5] = _mm512_madd52hi_epu64(s[r][5], a1, b1);
            a[r] += 3;
        }
    }
    for (int r = 0; r < MAX_ROWS; r++) {
        uint64_t lanes[6][TILE_COLS];
        for (int p = 0; p < 6; p++) _mm512_storeu_si512((void *)lanes[p], s[r][p]);
        for (int l = 0; l < TILE_COLS; l++) {
            u128 *out = acc + (r * TILE_COLS + l) * 3;
            for (int q = 0; q < 3; q++)
                out[q] += lanes[2 * q][l] + ((u128)lanes[2 * q + 1][l] << 52);
        }
    }
}

cairn_enc_kernel_fn *cairn_enclose_x86_ifma(int da, int db, int karatsuba) {
    return karatsuba ? ifma_karatsuba : ifma_kernels[da - 1][db - 1];
}

/* ---- AVX-512 scan ------------------------------------------------------------------------- */

/* Per lane: the highest and lowest set-bit binade so far, and which lanes saw a nonzero
 * or a non-finite element. */
typedef struct {
    __m512i top, bottom;
    __mmask8 nonzero, bad;
} vspan;

INLINE IFMA_TARGET vspan vspan_empty(void) {
    vspan s = {_mm512_set1_epi64(INT32_MIN), _mm512_set1_epi64(INT32_MAX), 0, 0};
    return s;
}

/* Adds the lanes of `valid` to the spans. */
INLINE IFMA_TARGET void vspan_add(vspan *s, __m512i bits, __mmask8 valid, vfmt F) {
    vdecoded d = vdecode(bits, F);
    __mmask8 nz = _mm512_mask_test_epi64_mask(valid, d.mant, d.mant);
    __m512i c63 = _mm512_set1_epi64(63);
    __m512i top = _mm512_sub_epi64(_mm512_add_epi64(d.q, c63), _mm512_lzcnt_epi64(d.mant));
    __m512i low = _mm512_and_si512(d.mant, _mm512_sub_epi64(_mm512_setzero_si512(), d.mant));
    __m512i bottom = _mm512_add_epi64(d.q, _mm512_sub_epi64(c63, _mm512_lzcnt_epi64(low)));
    s->top = _mm512_mask_max_epi64(s->top, nz, s->top, top);
    s->bottom = _mm512_mask_min_epi64(s->bottom, nz, s->bottom, bottom);
    s->nonzero |= nz;
    s->bad |= d.bad & valid;
}

/* Lane l of a vector span as a span. */
INLINE IFMA_TARGET cairn_enc_span vspan_lane(const vspan *s, int l) {
    int64_t top[TILE_COLS], bottom[TILE_COLS];
    _mm512_storeu_si512((void *)top, s->top);
    _mm512_storeu_si512((void *)bottom, s->bottom);
    cairn_enc_span out = {0, 0, 0, 0};
    out.bad = (s->bad >> l) & 1;
    if ((s->nonzero >> l) & 1) out.top = (int)top[l], out.bottom = (int)bottom[l], out.nonzero = 1;
    return out;
}

IFMA_TARGET void cairn_enclose_x86_scan_rows(const job *J, size_t begin, size_t end) {
    vfmt F = vfmt_of(J->P.f);
    size_t k = J->P.k;
    for (size_t i = begin; i < end; i++) {
        vspan s = vspan_empty();
        for (size_t t = 0; t < k; t += TILE_COLS) {
            int count = k - t < TILE_COLS ? (int)(k - t) : TILE_COLS;
            vspan_add(&s, load8(J->a, i * k + t, J->P.f.size, count), (__mmask8)((1u << count) - 1),
                      F);
        }
        cairn_enc_span row = {0, 0, 0, 0};
        for (int l = 0; l < TILE_COLS; l++) {
            cairn_enc_span lane = vspan_lane(&s, l);
            cairn_enc_span_merge(&row, &lane);
        }
        J->row_span[i] = row;
    }
}

/* Rows of B ahead of the column passes: each touches a few cache lines of every row, at a
 * stride the hardware prefetchers follow poorly. */
enum { PREFETCH_ROWS = 8 };

INLINE void prefetch_row(const void *b, size_t t, size_t k, size_t n, size_t j0, int size, int nb) {
    if (t >= k) return;
    const char *p = (const char *)b + (t * n + j0) * (size_t)size;
    for (int off = 0; off < nb * TILE_COLS * size; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
}

/* Column groups [begin, end): CAIRN_ENC_COL_GROUP blocks of 8 columns each, read row by
 * row so that each row's segment is one run of cache lines. */
IFMA_TARGET void cairn_enclose_x86_scan_cols(const job *J, size_t begin, size_t end) {
    vfmt F = vfmt_of(J->P.f);
    size_t n = J->P.n, nblocks = (n + TILE_COLS - 1) / TILE_COLS;
    for (size_t g = begin; g < end; g++) {
        size_t b0 = g * CAIRN_ENC_COL_GROUP;
        int nb = (int)(nblocks - b0 < CAIRN_ENC_COL_GROUP ? nblocks - b0 : CAIRN_ENC_COL_GROUP);
        vspan s[CAIRN_ENC_COL_GROUP];
        int count[CAIRN_ENC_COL_GROUP];
        for (int c = 0; c < nb; c++) {
            size_t j0 = (b0 + (size_t)c) * TILE_COLS;
            count[c] = n - j0 < TILE_COLS ? (int)(n - j0) : TILE_COLS;
            s[c] = vspan_empty();
        }
        for (size_t t = 0; t < J->P.k; t++) {
            prefetch_row(J->b, t + PREFETCH_ROWS, J->P.k, n, b0 * TILE_COLS, J->P.f.size, nb);
            for (int c = 0; c < nb; c++)
                vspan_add(&s[c],
                          load8(J->b, t * n + (b0 + (size_t)c) * TILE_COLS, J->P.f.size, count[c]),
                          (__mmask8)((1u << count[c]) - 1), F);
        }
        for (int c = 0; c < nb; c++)
            for (int l = 0; l < count[c]; l++)
                J->col_span[(b0 + (size_t)c) * TILE_COLS + (size_t)l] = vspan_lane(&s[c], l);
    }
}

/* ---- AVX-512 packing for Karatsuba ------------------------------------------------------- */

/* Lane sums of digits, folded into 128-bit totals before a lane can wrap. */
typedef struct {
    __m512i lane[2];
    u128 total[2][TILE_COLS];
    unsigned pending;
} vsums;

INLINE IFMA_TARGET void vsums_fold(vsums *s) {
    for (int d = 0; d < 2; d++) {
        uint64_t v[TILE_COLS];
        _mm512_storeu_si512((void *)v, s->lane[d]);
        for (int l = 0; l < TILE_COLS; l++) s->total[d][l] += v[l];
        s->lane[d] = _mm512_setzero_si512();
    }
    s->pending = 0;
}

/* Adds d0, d1 (below 2^51: 8192 additions fit a lane). */
INLINE IFMA_TARGET void vsums_add(vsums *s, __m512i d0, __m512i d1) {
    s->lane[0] = _mm512_add_epi64(s->lane[0], d0);
    s->lane[1] = _mm512_add_epi64(s->lane[1], d1);
    if (++s->pending == 8192) vsums_fold(s);
}

/* The stored words of 8 elements, d0 d1 (d0 + d1) each, as three vectors in memory
 * order (element e's words at 3e, 3e + 1, 3e + 2). */
INLINE IFMA_TARGET void interleave3(__m512i d0, __m512i d1, __m512i ds, __m512i out[3]) {
    /* first d0/d1 pairs with holes for ds, then ds slotted in (indices >= 8: 2nd source) */
    const __m512i p0 = _mm512_setr_epi64(0, 8, 0, 1, 9, 0, 2, 10);
    const __m512i q0 = _mm512_setr_epi64(0, 1, 8, 3, 4, 9, 6, 7);
    const __m512i p1 = _mm512_setr_epi64(0, 3, 11, 0, 4, 12, 0, 5);
    const __m512i q1 = _mm512_setr_epi64(10, 1, 2, 11, 4, 5, 12, 7);
    const __m512i p2 = _mm512_setr_epi64(13, 0, 6, 14, 0, 7, 15, 0);
    const __m512i q2 = _mm512_setr_epi64(0, 13, 2, 3, 14, 5, 6, 15);
    out[0] = _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(d0, p0, d1), q0, ds);
    out[1] = _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(d0, p1, d1), q1, ds);
    out[2] = _mm512_permutex2var_epi64(_mm512_permutex2var_epi64(d0, p2, d1), q2, ds);
}

/* The correction sums of one line from its digit sums, as the portable code has them. */
static cairn_enc_wide digit_total(const u128 *dsum, int shift) {
    cairn_enc_wide total;
    cairn_enc_wide_zero(&total);
    cairn_enc_wide_add_u128(&total, dsum[0], shift);
    cairn_enc_wide_add_u128(&total, dsum[1], 51 + shift);
    return total;
}

IFMA_TARGET void cairn_enclose_x86_pack_rows(const job *J, size_t begin, size_t end) {
    vfmt F = vfmt_of(J->P.f);
    size_t k = J->P.k;
    for (size_t i = begin; i < end; i++) {
        uint64_t *dst = J->ap + i * k * 3;
        if (i >= J->P.m) { /* padding rows: any digits do, their outputs are dropped */
            memset(dst, 0, k * 3 * sizeof *dst);
            continue;
        }
        __m512i scale = _mm512_set1_epi64(J->P.row_scale[i]);
        vsums sums;
        memset(&sums, 0, sizeof sums);
        for (size_t t = 0; t < k; t += TILE_COLS) {
            int count = k - t < TILE_COLS ? (int)(k - t) : TILE_COLS;
            __m512i d0, d1, out[3];
            vdigits51(load8(J->a, i * k + t, J->P.f.size, count), scale, J->P.wa, F, &d0, &d1);
            __mmask8 valid = (__mmask8)((1u << count) - 1);
            d0 = _mm512_maskz_mov_epi64(valid, d0);
            d1 = _mm512_maskz_mov_epi64(valid, d1);
            vsums_add(&sums, d0, d1);
            interleave3(d0, d1, _mm512_add_epi64(d0, d1), out);
            if (count == TILE_COLS) {
                for (int v = 0; v < 3; v++)
                    _mm512_storeu_si512((void *)(dst + t * 3 + v * 8), out[v]);
            } else {
                uint64_t tmp[3 * TILE_COLS];
                for (int v = 0; v < 3; v++) _mm512_storeu_si512((void *)(tmp + v * 8), out[v]);
                memcpy(dst + t * 3, tmp, (size_t)count * 3 * sizeof *tmp);
            }
        }
        vsums_fold(&sums);
        u128 dsum[2] = {0, 0};
        for (int d = 0; d < 2; d++)
            for (int l = 0; l < TILE_COLS; l++) dsum[d] += sums.total[d][l];
        cairn_enc_wide corr = digit_total(dsum, J->P.wb), bias;
        cairn_enc_wide_zero(&bias);
        cairn_enc_wide_add_u128(&bias, k, J->P.wa + J->P.wb);
        cairn_enc_wide_sub(&corr, &bias);
        cairn_enc_wide_neg(&corr);
        J->row_corr[i] = corr;
        cairn_enc_wide_zero(&J->row_pos[i]);
        cairn_enc_wide_zero(&J->row_neg[i]);
    }
}

/* One block of 8 columns: its scales, where it goes, and its digit sums. */
typedef struct {
    __m512i scale;
    __mmask8 valid;
    int count;
    uint64_t *dst;
    vsums sums;
} col_block;

/* The corrections of a packed column block (padding columns get none). */
static void col_block_done(const job *J, size_t blk, col_block *c) {
    for (int l = 0; l < c->count; l++) {
        u128 dsum[2] = {c->sums.total[0][l], c->sums.total[1][l]};
        size_t j = blk * TILE_COLS + (size_t)l;
        J->col_corr[j] = digit_total(dsum, J->P.wa);
        cairn_enc_wide_neg(&J->col_corr[j]);
        cairn_enc_wide_zero(&J->col_pos[j]);
        cairn_enc_wide_zero(&J->col_neg[j]);
    }
}

/* Column groups [begin, end), as the scan reads them; padding columns get zero digits. */
IFMA_TARGET void cairn_enclose_x86_pack_cols(const job *J, size_t begin, size_t end) {
    vfmt F = vfmt_of(J->P.f);
    size_t k = J->P.k, n = J->P.n;
    for (size_t g = begin; g < end; g++) {
        size_t b0 = g * CAIRN_ENC_COL_GROUP;
        int nb =
            (int)(J->nblocks - b0 < CAIRN_ENC_COL_GROUP ? J->nblocks - b0 : CAIRN_ENC_COL_GROUP);
        col_block cb[CAIRN_ENC_COL_GROUP];
        for (int c = 0; c < nb; c++) {
            size_t j0 = (b0 + (size_t)c) * TILE_COLS;
            cb[c].count = n - j0 < TILE_COLS ? (int)(n - j0) : TILE_COLS;
            cb[c].valid = (__mmask8)((1u << cb[c].count) - 1);
            cb[c].scale =
                _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(cb[c].valid, J->P.col_scale + j0));
            cb[c].dst = J->bp + (b0 + (size_t)c) * k * 3 * TILE_COLS;
            memset(&cb[c].sums, 0, sizeof cb[c].sums);
        }
        for (size_t t = 0; t < k; t++) {
            prefetch_row(J->b, t + PREFETCH_ROWS, k, n, b0 * TILE_COLS, J->P.f.size, nb);
            for (int c = 0; c < nb; c++) {
                __m512i d0, d1;
                size_t j0 = (b0 + (size_t)c) * TILE_COLS;
                vdigits51(load8(J->b, t * n + j0, J->P.f.size, cb[c].count), cb[c].scale, J->P.wb,
                          F, &d0, &d1);
                d0 = _mm512_maskz_mov_epi64(cb[c].valid, d0);
                d1 = _mm512_maskz_mov_epi64(cb[c].valid, d1);
                vsums_add(&cb[c].sums, d0, d1);
                uint64_t *dst = cb[c].dst + t * 3 * TILE_COLS;
                _mm512_storeu_si512((void *)dst, d0);
                _mm512_storeu_si512((void *)(dst + TILE_COLS), d1);
                _mm512_storeu_si512((void *)(dst + 2 * TILE_COLS), _mm512_add_epi64(d0, d1));
            }
        }
        for (int c = 0; c < nb; c++) {
            vsums_fold(&cb[c].sums);
            col_block_done(J, b0 + (size_t)c, &cb[c]);
        }
    }
}

/* ---- mulx / adcx / adox ------------------------------------------------------------------ */

/* Operands that fit one 64-bit limb each: a(t) b(t) is one mulx, and two outputs of a row
 * (columns l and l + 1, b and b + 8 bytes) are summed at once, the first's three words
 * on the carry flag's chain (adcx) and the second's on the overflow flag's (adox), so
 * neither waits for the other's flags. The top word takes the carries of 2^17 steps,
 * and both chains end clear. "xor z, z" zeroes z and clears both flags. (Wider operands
 * take the portable kernel: their limb products need carries across more words than
 * the portable kernel's 52-bit digits, and measured slower.) */
INLINE void adx_pair(const uint64_t *a, const uint64_t *b, uint64_t *x, uint64_t *y) {
    uint64_t lo, hi, lo2, hi2, z;
    __asm__("xor %k[z], %k[z]\n\t"
            "movq (%[a]), %%rdx\n\t"
            "mulx (%[b]), %[lo], %[hi]\n\t"
            "mulx 8(%[b]), %[lo2], %[hi2]\n\t"
            "adcx %[lo], %[x0]\n\t"
            "adox %[lo2], %[y0]\n\t"
            "adcx %[hi], %[x1]\n\t"
            "adox %[hi2], %[y1]\n\t"
            "adcx %[z], %[x2]\n\t"
            "adox %[z], %[y2]\n\t"
            : [x0] "+r"(x[0]), [x1] "+r"(x[1]), [x2] "+r"(x[2]), [y0] "+r"(y[0]), [y1] "+r"(y[1]),
              [y2] "+r"(y[2]), [lo] "=&r"(lo), [hi] "=&r"(hi), [lo2] "=&r"(lo2), [hi2] "=&r"(hi2),
              [z] "=&r"(z)
            : [a] "r"(a), [b] "r"(b)
            : "rdx", "cc", "memory");
}

/* R rows x 8 columns, two outputs at a time: their words stay in registers through the
 * K block (kblock keeps the block's B lines in L1 for the 8 columns), then are added to
 * the position sums (radix 2^64, three words each). */
static void adx_1_1(const job *J, size_t i0, size_t jb, size_t k0, size_t k1, u128 *acc) {
    const size_t K = J->P.k;
    for (int r = 0; r < MAX_ROWS; r++)
        for (int l = 0; l < TILE_COLS; l += 2) {
            const uint64_t *a = J->ap + ((i0 + (size_t)r) * K + k0);
            const uint64_t *b = J->bp + (jb * K + k0) * TILE_COLS + l;
            uint64_t x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
            for (size_t t = k0; t < k1; t++, a++, b += TILE_COLS) adx_pair(a, b, x, y);
            for (int p = 0; p < 3; p++) {
                acc[(r * TILE_COLS + l) * 3 + p] += x[p];
                acc[(r * TILE_COLS + l + 1) * 3 + p] += y[p];
            }
        }
}

cairn_enc_kernel_fn *cairn_enclose_x86_adx(int la, int lb) {
    return la == 1 && lb == 1 ? adx_1_1 : NULL;
}

#endif
