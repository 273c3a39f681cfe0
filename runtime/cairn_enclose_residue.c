/* cairn_enclose_residue.c: the residue algorithm of the bracket GEMM on the host
 * (cairn_enclose_residue_bits: what an emulated device run executes), and the CRT
 * constants it shares with the CUDA backend (cairn_enclose_crt_make).
 *
 * The phases are the CUDA backend's (cairn_enclose_cuda.h), with the same per-element
 * and per-output functions of cairn_enclose_residue.h and cairn_enclose_core.h: scan
 * the spans, plan (cairn_enclose.c's), reduce every element to L int8 residues, one
 * int8 GEMM per modulus with exact int32 sums reduced mod m_l, the signed sums where a
 * row or column was floored with loss, then per output the CRT and the outward
 * rounding. Only the GEMM differs, and an exact integer sum has one value whatever
 * order a tensor core or this loop adds it in. */
#include "cairn_enclose_residue.h"

#include <stdlib.h>
#include <string.h>

#include "cairn_enclose_impl.h"
#include "cairn_pool.h"

/* Greedy from 255 down, each coprime to those before: the first 48 multiply past
 * 2^334 (tests/runtime/test_enclose_residue.py checks both facts). */
static const uint8_t moduli[CAIRN_ENC_MODULI] = {
    255, 254, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211, 199, 197, 193,
    191, 181, 179, 173, 167, 163, 157, 151, 149, 139, 137, 131, 113, 109, 107, 103,
    101, 97,  89,  83,  79,  73,  71,  67,  61,  59,  53,  47,  43,  41,  37,  29};

/* ---- the CRT constants ------------------------------------------------------------------ */

/* x *= f for a CAIRN_ENC_LIMBS-limb x (no overflow by the caller's bound). */
static void limbs_mul_small(uint32_t *x, uint32_t f) {
    uint64_t carry = 0;
    for (int w = 0; w < CAIRN_ENC_LIMBS; w++) {
        uint64_t t = (uint64_t)x[w] * f + carry;
        x[w] = (uint32_t)t;
        carry = t >> 32;
    }
}

/* q = x / d (exact here), limb by limb from the top; returns the remainder. */
static uint32_t limbs_div_small(const uint32_t *x, uint32_t d, uint32_t *q) {
    uint64_t rem = 0;
    for (int w = CAIRN_ENC_LIMBS - 1; w >= 0; w--) {
        uint64_t cur = rem << 32 | x[w];
        q[w] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    return (uint32_t)rem;
}

static int limbs_bit_length(const uint32_t *x) {
    for (int w = CAIRN_ENC_LIMBS - 1; w >= 0; w--)
        if (x[w]) return 32 * w + 32 - __builtin_clz(x[w]);
    return 0;
}

/* The constants of one modulus, l of the c->L that multiply to c->M. */
static void modulus_constants(cairn_enc_crt *c, int l) {
    uint32_t m = moduli[l];
    c->m[l] = m;
    c->recip[l] = ((UINT64_C(1) << 34) / m) + 1;
    c->frac[l] = (UINT64_C(1) << 40) / m;
    for (int i = 0; i < 4; i++) c->pow16[l][i] = (uint32_t)((UINT64_C(1) << (16 * i)) % m);
    uint32_t p = 1 % m;
    for (int s = 0; s < CAIRN_ENC_POW2; s++, p = p * 2 % m) c->pow2[l][s] = (uint8_t)p;
    uint32_t scratch[CAIRN_ENC_LIMBS];
    limbs_div_small(c->M, m, c->W[l]);
    uint32_t w_mod = limbs_div_small(c->W[l], m, scratch); /* (M / m) mod m, coprime to m */
    c->inv[l] = 0;
    for (uint32_t x = 1; x < m; x++)
        if (w_mod * x % m == 1) c->inv[l] = x;
}

int cairn_enclose_crt_make(int need_bits, cairn_enc_crt *c) {
    memset(c, 0, sizeof *c);
    c->M[0] = 1;
    for (c->L = 0; c->L < CAIRN_ENC_MODULI && limbs_bit_length(c->M) <= need_bits; c->L++)
        limbs_mul_small(c->M, moduli[c->L]); /* M > 2^need: its bit length exceeds need */
    if (limbs_bit_length(c->M) <= need_bits) return -1;
    int bits = limbs_bit_length(c->M) + 6; /* T < L M < 2^6 M */
    c->limbs = bits / 32 + 1 < CAIRN_ENC_LIMBS ? bits / 32 + 1 : CAIRN_ENC_LIMBS;
    for (int l = 0; l < c->L; l++) modulus_constants(c, l);
    return 0;
}

/* ---- the emulated device run ---------------------------------------------------------------- */

typedef struct rjob {
    cairn_enc_plan P;
    const void *a, *b;
    void *lo, *hi;
    cairn_enc_crt crt;
    cairn_enc_span *row_span, *col_span;
    int8_t *ra, *rb; /* [L][m][k] and [L][k][n] */
    uint8_t *rc;     /* [L][m][n]: each sum mod m_l */
    cairn_enc_wide *row_pos, *row_neg, *col_pos, *col_neg;
} rjob;

typedef void rjob_fn(rjob *J, size_t idx);
typedef struct {
    rjob *J;
    rjob_fn *fn;
} rjob_ctx;

static void rjob_trampoline(void *ctx, size_t begin, size_t end, unsigned worker) {
    (void)worker;
    rjob_ctx *c = ctx;
    for (size_t i = begin; i < end; i++) c->fn(c->J, i);
}

/* fn(J, idx) for every idx < count, on the pool. */
static void rjob_each(rjob *J, size_t count, rjob_fn *fn) {
    rjob_ctx c = {J, fn};
    if (count) cairn_pool_run(count, 1, rjob_trampoline, &c);
}

/* Operand 0 is A (m x k, a scale per row), 1 is B (k x n, a scale per column). A line
 * is what one scale covers: a row of A or a column of B. */
typedef struct {
    const void *base;
    size_t rows, cols;
    const int *scale;
    int by_col;
    int8_t *res; /* its residues, [L][rows][cols] */
} operand;

static operand operand_of(const rjob *J, int which) {
    operand a = {J->a, J->P.m, J->P.k, J->P.row_scale, 0, J->ra};
    operand b = {J->b, J->P.k, J->P.n, J->P.col_scale, 1, J->rb};
    return which ? b : a;
}

/* Element t of a line. */
static uint64_t line_element(const rjob *J, const operand *o, size_t line, size_t t) {
    return cairn_enc_load(o->base, o->by_col ? t * o->cols + line : line * o->cols + t,
                          J->P.f.size);
}

/* Lines [0, m) are A's rows, [m, m + n) B's columns. */
static operand line_of(const rjob *J, size_t *idx) {
    int b = *idx >= J->P.m;
    if (b) *idx -= J->P.m;
    return operand_of(J, b);
}

static void scan_line(rjob *J, size_t idx) {
    operand o = line_of(J, &idx);
    cairn_enc_span s = {0, 0, 0, 0};
    for (size_t t = 0; t < J->P.k; t++)
        cairn_enc_span_add_bits(&s, line_element(J, &o, idx, t), J->P.f);
    (o.by_col ? J->col_span : J->row_span)[idx] = s;
}

/* A line's sums of its positive and of its negative X, where the other operand has a
 * lossy line. */
static void signed_sums_line(rjob *J, size_t idx) {
    operand o = line_of(J, &idx);
    if (!(o.by_col ? J->P.lossy_rows : J->P.lossy_cols)) return;
    cairn_enc_wide *pos = &(o.by_col ? J->col_pos : J->row_pos)[idx];
    cairn_enc_wide *neg = &(o.by_col ? J->col_neg : J->row_neg)[idx];
    cairn_enc_wide_zero(pos);
    cairn_enc_wide_zero(neg);
    for (size_t t = 0; t < J->P.k; t++) {
        cairn_enc_wide x = cairn_enc_scaled_wide(line_element(J, &o, idx, t), J->P.f, o.scale[idx]);
        cairn_enc_wide_add(cairn_enc_wide_is_negative(&x) ? neg : pos, &x);
    }
}

/* Matrix rows [0, m) are A's, [m, m + k) B's: each to its L residue rows. */
static void residues_row(rjob *J, size_t idx) {
    int b = idx >= J->P.m;
    operand o = operand_of(J, b);
    size_t r = b ? idx - J->P.m : idx, plane = o.rows * o.cols;
    for (size_t c = 0; c < o.cols; c++) {
        uint64_t bits = cairn_enc_load(o.base, r * o.cols + c, J->P.f.size);
        cairn_enc_prep p = cairn_enc_prepare(bits, J->P.f, o.scale[o.by_col ? c : r]);
        for (int l = 0; l < J->crt.L; l++)
            o.res[(size_t)l * plane + r * o.cols + c] =
                (int8_t)cairn_enc_residue(p, &J->crt, l, J->crt.pow2[l]);
    }
}

/* One row of one modulus's GEMM: int32 sums (exact: |sum| < 2^31), reduced mod m_l;
 * columns in blocks whose sums stay on the stack. */
static void gemm_row(rjob *J, size_t idx) {
    enum { BLOCK = 256 };
    size_t m = J->P.m, n = J->P.n, k = J->P.k, i = idx % m;
    int l = (int)(idx / m);
    const int8_t *a = J->ra + (size_t)l * m * k + i * k, *b = J->rb + (size_t)l * k * n;
    for (size_t j0 = 0; j0 < n; j0 += BLOCK) {
        size_t cols = n - j0 < BLOCK ? n - j0 : BLOCK;
        int32_t sum[BLOCK] = {0};
        for (size_t t = 0; t < k; t++)
            for (size_t j = 0; j < cols; j++) sum[j] += (int32_t)a[t] * (int32_t)b[t * n + j0 + j];
        for (size_t j = 0; j < cols; j++)
            J->rc[(size_t)l * m * n + i * n + j0 + j] =
                (uint8_t)cairn_enc_reduce_sum(sum[j], &J->crt, l);
    }
}

/* Row i of the outputs: the CRT, then the bracket. */
static void finish_row(rjob *J, size_t i) {
    size_t m = J->P.m, n = J->P.n;
    for (size_t j = 0; j < n; j++) {
        cairn_enc_wide s;
        cairn_enc_crt_value(J->rc + i * n + j, m * n, &J->crt, &s);
        cairn_enc_loss loss = {J->P.row_lossy[i], J->P.col_lossy[j], &J->row_pos[i], &J->row_neg[i],
                               &J->col_pos[j],    &J->col_neg[j],    J->P.k};
        cairn_enc_bracket_bits out =
            cairn_enc_bracket(&s, J->P.row_scale[i] + J->P.col_scale[j], J->P.f, &loss);
        cairn_enc_store(J->lo, i * n + j, out.down, J->P.f.size);
        cairn_enc_store(J->hi, i * n + j, out.up, J->P.f.size);
    }
}

static int rjob_alloc(rjob *J) {
    size_t m = J->P.m, n = J->P.n;
    J->row_span = calloc(m, sizeof *J->row_span);
    J->col_span = calloc(n, sizeof *J->col_span);
    J->P.row_scale = calloc(m, sizeof(int));
    J->P.col_scale = calloc(n, sizeof(int));
    J->P.row_lossy = calloc(m, 1);
    J->P.col_lossy = calloc(n, 1);
    J->row_pos = calloc(2 * m, sizeof(cairn_enc_wide));
    J->col_pos = calloc(2 * n, sizeof(cairn_enc_wide));
    if (!J->row_span || !J->col_span || !J->P.row_scale || !J->P.col_scale || !J->P.row_lossy ||
        !J->P.col_lossy || !J->row_pos || !J->col_pos)
        return CAIRN_ENCLOSE_ENOMEM;
    J->row_neg = J->row_pos + m;
    J->col_neg = J->col_pos + n;
    return CAIRN_ENCLOSE_OK;
}

static void rjob_free(rjob *J) {
    free(J->row_span), free(J->col_span), free(J->P.row_scale), free(J->P.col_scale);
    free(J->P.row_lossy), free(J->P.col_lossy), free(J->row_pos), free(J->col_pos);
    free(J->ra), free(J->rb), free(J->rc);
}

/* The first non-finite operand, as the CPU backend reports it. */
static int nonfinite(const rjob *J, cairn_enclose_info *info) {
    for (int operand = 0; operand < 2; operand++) {
        const cairn_enc_span *s = operand ? J->col_span : J->row_span;
        size_t count = operand ? J->P.n : J->P.m;
        for (size_t i = 0; i < count; i++)
            if (s[i].bad) {
                info->bad_operand = operand ? 'b' : 'a';
                cairn_enclose_find_nonfinite(operand ? J->b : J->a, operand ? J->P.k : J->P.m,
                                             operand ? J->P.n : J->P.k, J->P.f, &info->bad_row,
                                             &info->bad_col);
                return CAIRN_ENCLOSE_ENONFINITE;
            }
    }
    return CAIRN_ENCLOSE_OK;
}

/* Residues, GEMMs, signed sums and outputs, after the plan. */
static int rjob_run(rjob *J) {
    size_t m = J->P.m, n = J->P.n, k = J->P.k, L = (size_t)J->crt.L;
    J->ra = malloc(L * m * k + 1);
    J->rb = malloc(L * k * n + 1);
    J->rc = malloc(L * m * n + 1);
    if (!J->ra || !J->rb || !J->rc) return CAIRN_ENCLOSE_ENOMEM;
    rjob_each(J, m + k, residues_row);
    rjob_each(J, L * m, gemm_row);
    if (J->P.lossy_rows || J->P.lossy_cols) rjob_each(J, m + n, signed_sums_line);
    rjob_each(J, m, finish_row);
    return CAIRN_ENCLOSE_OK;
}

static int residue_run(rjob *J, cairn_enclose_info *info) {
    int rc = rjob_alloc(J);
    if (rc) return rc;
    rjob_each(J, J->P.m + J->P.n, scan_line);
    if ((rc = nonfinite(J, info))) return rc;
    cairn_enclose_plan_make(&J->P, J->row_span, J->col_span, info);
    if (cairn_enclose_crt_make(info->bits_a + info->bits_b + info->ceil_log2_k, &J->crt))
        return CAIRN_ENCLOSE_ESIZE; /* unreachable: the plan keeps to the budget */
    if ((rc = rjob_run(J))) return rc;
    cairn_enclose_info_done(&J->P, info);
    return CAIRN_ENCLOSE_OK;
}

int cairn_enclose_residue_bits(int width, size_t m, size_t n, size_t k, const void *a,
                               const void *b, void *lo, void *hi, cairn_enclose_info *info) {
    cairn_enclose_info scratch;
    if (!info) info = &scratch;
    cairn_enclose_info_reset(info, "residue-host");
    if (width != 32 && width != 64) return CAIRN_ENCLOSE_ESIZE;
    int rc = cairn_enclose_check_args(m, n, k, a, b, lo, hi);
    if (rc) return rc;
    if (m == 0 || n == 0) {
        info->tight = 1;
        return CAIRN_ENCLOSE_OK;
    }
    rjob *J = calloc(1, sizeof *J); /* the CRT tables are 17 KiB: not on the stack */
    if (!J) return CAIRN_ENCLOSE_ENOMEM;
    J->P.f = cairn_enc_format_of(width);
    J->P.m = m, J->P.n = n, J->P.k = k;
    J->a = a, J->b = b, J->lo = lo, J->hi = hi;
    rc = residue_run(J, info);
    rjob_free(J);
    free(J);
    return rc;
}
