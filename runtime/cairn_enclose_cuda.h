/* cairn_enclose_cuda.h: the bracket GEMM on a CUDA GPU (cairn_enclose_cuda_bits; the
 * contract is cairn_enclose.h's). nvcc only, included once per program: by the .cu a
 * CUDA build generates when the program calls mm_enclose on @device views (after
 * cairn_device_cuda.h, which turns on the generated code's wrappers at the bottom), or
 * by runtime/cairn_enclose_cuda.cu for C callers.
 *
 * The residue algorithm of cairn_enclose_residue.h, step for step as
 * cairn_enclose_residue.c runs it on the host, with the same per-element and per-output
 * functions (so an emulated run and a device run agree by construction):
 *   scan      one warp per row of A (shuffles merge the lanes' spans), one thread per
 *             column of B; the first non-finite element by an atomic minimum;
 *   plan      on the host, cairn_enclose.c's (only the spans cross the bus);
 *   residues  one thread per element: L int8 residues into [L][rows][k] arrays padded
 *             to 64 with zeros (the 2^s mod m tables staged in shared memory);
 *   GEMM      per modulus, 64 x 64 output tiles, four warps of 2 x 2 int8 WMMA
 *             16 x 16 x 16 fragments with int32 accumulators, k in steps of 64 through
 *             two shared-memory stages stored as 16 x 16 sub-blocks (each fragment's
 *             load is 256-bit aligned); each sum reduced mod m_l to a byte;
 *   sums      where a row or column was floored with loss, its signed sums of X;
 *   finish    one thread per output: the CRT, the widening, the outward rounding.
 * No floating-point instruction and no integer division in any kernel (division
 * lowers through the float reciprocal unit): tests/device/test_enclose_cuda.py reads
 * the PTX. Everything runs on the default stream of the current device; the call
 * returns when lo and hi are written. Calls from several threads take turns (the CRT
 * constants live in one __constant__ block). */
#ifndef CAIRN_ENCLOSE_CUDA_H
#define CAIRN_ENCLOSE_CUDA_H

#include <cuda_runtime.h>
#include <mma.h>
#include <mutex>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_enclose.h"
#include "cairn_enclose_impl.h"
#include "cairn_enclose_residue.h"

namespace cairn_enclose_cuda {

enum {
    TILE = 64,         /* outputs per GEMM block side */
    KSTEP = 64,        /* k per shared-memory stage */
    FRAG = 16,         /* WMMA m = n = k */
    SUB = FRAG * FRAG, /* bytes of one 16 x 16 int8 sub-block */
    THREADS = 128,     /* four warps per GEMM block */
    ELEMENT_THREADS = 256
};
static const size_t MAX_GRID_Y = 65535; /* a grid's y and z extents */

__constant__ cairn_enc_crt crt;

__device__ __forceinline__ uint64_t load(const void *base, size_t idx, int size) {
    return size == 8 ? ((const uint64_t *)base)[idx] : ((const uint32_t *)base)[idx];
}

__device__ __forceinline__ void store(void *base, size_t idx, uint64_t bits, int size) {
    if (size == 8) ((uint64_t *)base)[idx] = bits;
    else ((uint32_t *)base)[idx] = (uint32_t)bits;
}

/* ---- scan -------------------------------------------------------------------------- */

__global__ void scan_rows(const void *a, size_t m, size_t k, cairn_enc_format f,
                          cairn_enc_span *out) {
    unsigned lane = threadIdx.x & 31u;
    size_t warps = (size_t)gridDim.x * (blockDim.x >> 5);
    for (size_t i = (size_t)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); i < m;
         i += warps) {
        cairn_enc_span s = {0, 0, 0, 0};
        for (size_t t = lane; t < k; t += 32)
            cairn_enc_span_add_bits(&s, load(a, i * k + t, f.size), f);
        for (int offset = 16; offset; offset >>= 1) {
            cairn_enc_span o;
            o.top = __shfl_xor_sync(0xffffffffu, s.top, offset);
            o.bottom = __shfl_xor_sync(0xffffffffu, s.bottom, offset);
            o.nonzero = __shfl_xor_sync(0xffffffffu, s.nonzero, offset);
            o.bad = __shfl_xor_sync(0xffffffffu, s.bad, offset);
            cairn_enc_span_merge(&s, &o);
        }
        if (lane == 0) out[i] = s;
    }
}

__global__ void scan_cols(const void *b, size_t k, size_t n, cairn_enc_format f,
                          cairn_enc_span *out) {
    for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (size_t)gridDim.x * blockDim.x) {
        cairn_enc_span s = {0, 0, 0, 0};
        for (size_t t = 0; t < k; t++) cairn_enc_span_add_bits(&s, load(b, t * n + j, f.size), f);
        out[j] = s;
    }
}

/* *first = the least index of a non-finite element (it starts at ~0). */
__global__ void first_bad(const void *x, size_t count, cairn_enc_format f,
                          unsigned long long *first) {
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < count;
         idx += (size_t)gridDim.x * blockDim.x) {
        cairn_enc_decoded d;
        if (cairn_enc_decode(load(x, idx, f.size), f, &d))
            atomicMin(first, (unsigned long long)idx);
    }
}

/* ---- residues ----------------------------------------------------------------------- */

/* The 2^s mod m tables of the L moduli, into shared memory. */
__device__ __forceinline__ void stage_pow2(uint8_t *pow2, int L) {
    for (int x = threadIdx.x; x < L * CAIRN_ENC_POW2; x += blockDim.x)
        pow2[x] = crt.pow2[x >> 8][x & (CAIRN_ENC_POW2 - 1)];
    __syncthreads();
}

/* A rows x cols operand, element (i, j) scaled by scale[by_col ? j : i] (A: by rows, B:
 * by columns), to res[l * plane + i * ld + j] (rows padded to ld bytes, plane bytes a
 * modulus). */
__global__ void residues(const void *x, const int *scale, int by_col, size_t rows, size_t cols,
                         size_t ld, size_t plane, cairn_enc_format f, int8_t *res) {
    __shared__ uint8_t pow2[CAIRN_ENC_MODULI * CAIRN_ENC_POW2];
    stage_pow2(pow2, crt.L);
    for (size_t i = blockIdx.y; i < rows; i += gridDim.y)
        for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < cols;
             j += (size_t)gridDim.x * blockDim.x) {
            cairn_enc_prep p =
                cairn_enc_prepare(load(x, i * cols + j, f.size), f, scale[by_col ? j : i]);
            for (int l = 0; l < crt.L; l++)
                res[(size_t)l * plane + i * ld + j] =
                    (int8_t)cairn_enc_residue(p, &crt, l, pow2 + l * CAIRN_ENC_POW2);
        }
}

/* ---- the int8 GEMMs --------------------------------------------------------------------- */

/* One stage: 64 rows of 64 bytes, four 16-byte pieces a row, two per thread, into
 * 16 x 16 sub-blocks: piece (row, c) goes to sub-block (row / 16, c), its row % 16. */
struct stage_regs {
    uint4 a[2], b[2];
};

__device__ __forceinline__ void stage_load(stage_regs *r, const int8_t *A, const int8_t *B,
                                           size_t kp, size_t np, size_t i0, size_t j0, size_t k0) {
    for (int h = 0; h < 2; h++) {
        int piece = (int)threadIdx.x + h * THREADS, row = piece >> 2, c = piece & 3;
        r->a[h] = *(const uint4 *)(A + (i0 + (size_t)row) * kp + k0 + (size_t)(16 * c));
        r->b[h] = *(const uint4 *)(B + (k0 + (size_t)row) * np + j0 + (size_t)(16 * c));
    }
}

__device__ __forceinline__ void stage_store(const stage_regs *r, int8_t *sa, int8_t *sb) {
    for (int h = 0; h < 2; h++) {
        int piece = (int)threadIdx.x + h * THREADS, row = piece >> 2, c = piece & 3;
        int at = ((row >> 4) * 4 + c) * SUB + (row & 15) * FRAG;
        *(uint4 *)(sa + at) = r->a[h];
        *(uint4 *)(sb + at) = r->b[h];
    }
}

/* Block (blockIdx.x, row_tile0 + blockIdx.y) of modulus blockIdx.z: rc[l][i][j] =
 * sum_t ra[l][i][t] rb[l][t][j] mod m_l, for the outputs inside m x n. */
__global__ void __launch_bounds__(THREADS)
    gemm(const int8_t *ra, const int8_t *rb, uint8_t *rc, size_t m, size_t n, size_t mp, size_t np,
         size_t kp, size_t row_tile0) {
    using namespace nvcuda;
    __shared__ __align__(128) int8_t smem[2 * 2 * TILE * KSTEP]; /* two stages of A and B */
    int l = (int)blockIdx.z;
    size_t i0 = (row_tile0 + blockIdx.y) * TILE, j0 = (size_t)blockIdx.x * TILE;
    const int8_t *A = ra + (size_t)l * mp * kp, *B = rb + (size_t)l * kp * np;
    int warp = (int)(threadIdx.x >> 5), wr = warp >> 1, wc = warp & 1;
    wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, int> acc[2][2];
    for (int fi = 0; fi < 2; fi++)
        for (int fj = 0; fj < 2; fj++) wmma::fill_fragment(acc[fi][fj], 0);
    stage_regs next;
    if (kp) {
        stage_load(&next, A, B, kp, np, i0, j0, 0);
        stage_store(&next, smem, smem + TILE * KSTEP);
    }
    __syncthreads();
    for (size_t k0 = 0, s = 0; k0 < kp; k0 += KSTEP, s ^= 1) {
        const int8_t *sa = smem + s * 2 * TILE * KSTEP, *sb = sa + TILE * KSTEP;
        bool more = k0 + KSTEP < kp;
        if (more) stage_load(&next, A, B, kp, np, i0, j0, k0 + KSTEP);
        for (int kb = 0; kb < KSTEP / FRAG; kb++) {
            wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, signed char, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, signed char, wmma::row_major> fb[2];
            for (int f = 0; f < 2; f++) {
                wmma::load_matrix_sync(fa[f], sa + ((2 * wr + f) * 4 + kb) * SUB, FRAG);
                wmma::load_matrix_sync(fb[f], sb + (kb * 4 + 2 * wc + f) * SUB, FRAG);
            }
            for (int fi = 0; fi < 2; fi++)
                for (int fj = 0; fj < 2; fj++)
                    wmma::mma_sync(acc[fi][fj], fa[fi], fb[fj], acc[fi][fj]);
        }
        if (more) {
            int8_t *na = smem + (s ^ 1) * 2 * TILE * KSTEP;
            stage_store(&next, na, na + TILE * KSTEP);
        }
        __syncthreads();
    }
    int *sums = (int *)smem; /* 64 x 64 int32: the stages are free now */
    for (int fi = 0; fi < 2; fi++)
        for (int fj = 0; fj < 2; fj++)
            wmma::store_matrix_sync(sums + (32 * wr + 16 * fi) * TILE + 32 * wc + 16 * fj,
                                    acc[fi][fj], TILE, wmma::mem_row_major);
    __syncthreads();
    for (int idx = (int)threadIdx.x; idx < TILE * TILE; idx += THREADS) {
        size_t i = i0 + (size_t)(idx >> 6), j = j0 + (size_t)(idx & 63);
        if (i < m && j < n)
            rc[(size_t)l * m * n + i * n + j] = (uint8_t)cairn_enc_reduce_sum(sums[idx], &crt, l);
    }
}

/* ---- lossy widening and the outputs ----------------------------------------------------- */

/* Rows (cols = 0) or columns (cols = 1) of `count` lines of k elements: the sums of
 * their positive and of their negative X, to pos[line] and neg[line]. */
__global__ void signed_sums(const void *x, size_t count, size_t k, int cols, const int *scale,
                            cairn_enc_format f, cairn_enc_wide *pos, cairn_enc_wide *neg) {
    for (size_t line = (size_t)blockIdx.x * blockDim.x + threadIdx.x; line < count;
         line += (size_t)gridDim.x * blockDim.x) {
        cairn_enc_wide p, q;
        cairn_enc_wide_zero(&p);
        cairn_enc_wide_zero(&q);
        for (size_t t = 0; t < k; t++) {
            size_t idx = cols ? t * count + line : line * k + t;
            cairn_enc_wide v = cairn_enc_scaled_wide(load(x, idx, f.size), f, scale[line]);
            cairn_enc_wide_add(cairn_enc_wide_is_negative(&v) ? &q : &p, &v);
        }
        pos[line] = p;
        neg[line] = q;
    }
}

struct finish_args {
    size_t m, n, k;
    cairn_enc_format f;
    const int *row_scale, *col_scale;
    const unsigned char *row_lossy, *col_lossy;
    const cairn_enc_wide *row_pos, *row_neg, *col_pos, *col_neg; /* NULL where not lossy */
    const uint8_t *rc;
    void *lo, *hi;
};

__global__ void finish(finish_args F) {
    for (size_t i = blockIdx.y; i < F.m; i += gridDim.y)
        for (size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x; j < F.n;
             j += (size_t)gridDim.x * blockDim.x) {
            cairn_enc_wide s;
            cairn_enc_crt_value(F.rc + i * F.n + j, F.m * F.n, &crt, &s);
            cairn_enc_loss loss = {F.row_lossy[i],
                                   F.col_lossy[j],
                                   F.row_pos ? &F.row_pos[i] : &s,
                                   F.row_neg ? &F.row_neg[i] : &s,
                                   F.col_pos ? &F.col_pos[j] : &s,
                                   F.col_neg ? &F.col_neg[j] : &s,
                                   F.k};
            cairn_enc_bracket_bits out =
                cairn_enc_bracket(&s, F.row_scale[i] + F.col_scale[j], F.f, &loss);
            store(F.lo, i * F.n + j, out.down, F.f.size);
            store(F.hi, i * F.n + j, out.up, F.f.size);
        }
}

/* ---- the host side ------------------------------------------------------------------------ */

/* What one call allocates: device buffers, and the plan's host arrays. */
struct buffers {
    cairn_enc_span *spans;      /* device, m + n */
    int *scales;                /* device, m + n */
    unsigned char *lossy;       /* device, m + n */
    unsigned long long *first;  /* device, 1 */
    int8_t *ra, *rb;            /* device residues */
    uint8_t *rc;                /* device, L m n */
    cairn_enc_wide *sums;       /* device, 2 m + 2 n where lossy */
    cairn_enc_span *host_spans; /* host, m + n */
    cairn_enc_crt *host_crt;    /* host */
    cairn_enc_plan P;           /* host arrays */
};

static int fail(cudaError_t e, cairn_enclose_info *info) {
    info->detail = cudaGetErrorString(e);
    return e == cudaErrorMemoryAllocation ? CAIRN_ENCLOSE_ENOMEM : CAIRN_ENCLOSE_EDEVICE;
}

#define CAIRN_ENC_CUDA_TRY(call)                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) return fail(e_, info);                                              \
    } while (0)

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

static unsigned grid_for(size_t count, unsigned threads) {
    size_t blocks = (count + threads - 1) / threads;
    return blocks == 0 ? 1 : blocks > 65535 ? 65535 : (unsigned)blocks;
}

static unsigned grid_y(size_t count) {
    return count > MAX_GRID_Y ? MAX_GRID_Y : count ? (unsigned)count : 1;
}

static void release(buffers *d) {
    cudaFree(d->spans), cudaFree(d->scales), cudaFree(d->lossy), cudaFree(d->first);
    cudaFree(d->ra), cudaFree(d->rb), cudaFree(d->rc), cudaFree(d->sums);
    free(d->host_spans), free(d->host_crt);
    free(d->P.row_scale), free(d->P.col_scale), free(d->P.row_lossy), free(d->P.col_lossy);
}

/* The first non-finite element of operand x (rows x cols), as the CPU reports it. */
static int locate_bad(buffers *d, const void *x, size_t rows, size_t cols, char which,
                      cairn_enclose_info *info) {
    unsigned long long first = ~0ull;
    CAIRN_ENC_CUDA_TRY(cudaMemcpy(d->first, &first, sizeof first, cudaMemcpyHostToDevice));
    first_bad<<<grid_for(rows * cols, ELEMENT_THREADS), ELEMENT_THREADS>>>(x, rows * cols, d->P.f,
                                                                           d->first);
    CAIRN_ENC_CUDA_TRY(cudaGetLastError());
    CAIRN_ENC_CUDA_TRY(cudaMemcpy(&first, d->first, sizeof first, cudaMemcpyDeviceToHost));
    info->bad_operand = which;
    info->bad_row = (size_t)(first / cols);
    info->bad_col = (size_t)(first % cols);
    return CAIRN_ENCLOSE_ENONFINITE;
}

/* Phases 1 and 2: the spans on the device, the plan on the host, the scales back. */
static int scan_and_plan(buffers *d, const void *a, const void *b, cairn_enclose_info *info) {
    size_t m = d->P.m, n = d->P.n, k = d->P.k;
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->spans, (m + n) * sizeof *d->spans));
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->scales, (m + n) * sizeof *d->scales));
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->lossy, m + n));
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->first, sizeof *d->first));
    scan_rows<<<grid_for(m, ELEMENT_THREADS / 32), ELEMENT_THREADS>>>(a, m, k, d->P.f, d->spans);
    scan_cols<<<grid_for(n, ELEMENT_THREADS), ELEMENT_THREADS>>>(b, k, n, d->P.f, d->spans + m);
    CAIRN_ENC_CUDA_TRY(cudaGetLastError());
    CAIRN_ENC_CUDA_TRY(
        cudaMemcpy(d->host_spans, d->spans, (m + n) * sizeof *d->spans, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < m; i++)
        if (d->host_spans[i].bad) return locate_bad(d, a, m, k, 'a', info);
    for (size_t j = 0; j < n; j++)
        if (d->host_spans[m + j].bad) return locate_bad(d, b, k, n, 'b', info);
    cairn_enclose_plan_make(&d->P, d->host_spans, d->host_spans + m, info);
    CAIRN_ENC_CUDA_TRY(
        cudaMemcpy(d->scales, d->P.row_scale, m * sizeof(int), cudaMemcpyHostToDevice));
    CAIRN_ENC_CUDA_TRY(
        cudaMemcpy(d->scales + m, d->P.col_scale, n * sizeof(int), cudaMemcpyHostToDevice));
    CAIRN_ENC_CUDA_TRY(cudaMemcpy(d->lossy, d->P.row_lossy, m, cudaMemcpyHostToDevice));
    CAIRN_ENC_CUDA_TRY(cudaMemcpy(d->lossy + m, d->P.col_lossy, n, cudaMemcpyHostToDevice));
    if (cairn_enclose_crt_make(info->bits_a + info->bits_b + info->ceil_log2_k, d->host_crt))
        return CAIRN_ENCLOSE_ESIZE; /* unreachable: the plan keeps to the budget */
    CAIRN_ENC_CUDA_TRY(cudaMemcpyToSymbol(crt, d->host_crt, sizeof *d->host_crt));
    return CAIRN_ENCLOSE_OK;
}

/* Phases 3 and 4: residues, one GEMM per modulus (in launches of at most 65535 row
 * tiles), the signed sums where lossy. */
static int residues_and_gemms(buffers *d, const void *a, const void *b, cairn_enclose_info *info) {
    size_t m = d->P.m, n = d->P.n, k = d->P.k, L = (size_t)d->host_crt->L;
    size_t mp = round_up(m, TILE), np = round_up(n, TILE), kp = round_up(k, KSTEP);
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->ra, L * mp * kp + 1));
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->rb, L * kp * np + 1));
    CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->rc, L * m * n));
    CAIRN_ENC_CUDA_TRY(cudaMemset(d->ra, 0, L * mp * kp + 1));
    CAIRN_ENC_CUDA_TRY(cudaMemset(d->rb, 0, L * kp * np + 1));
    residues<<<dim3(grid_for(k, ELEMENT_THREADS), grid_y(m)), ELEMENT_THREADS>>>(
        a, d->scales, 0, m, k, kp, mp * kp, d->P.f, d->ra);
    residues<<<dim3(grid_for(n, ELEMENT_THREADS), grid_y(k)), ELEMENT_THREADS>>>(
        b, d->scales + m, 1, k, n, np, kp * np, d->P.f, d->rb);
    for (size_t t0 = 0; t0 < mp / TILE; t0 += MAX_GRID_Y) {
        size_t tiles = mp / TILE - t0 < MAX_GRID_Y ? mp / TILE - t0 : MAX_GRID_Y;
        gemm<<<dim3((unsigned)(np / TILE), (unsigned)tiles, (unsigned)L), THREADS>>>(
            d->ra, d->rb, d->rc, m, n, mp, np, kp, t0);
    }
    CAIRN_ENC_CUDA_TRY(cudaGetLastError());
    if (d->P.lossy_rows || d->P.lossy_cols) {
        CAIRN_ENC_CUDA_TRY(cudaMalloc(&d->sums, 2 * (m + n) * sizeof *d->sums));
        signed_sums<<<grid_for(m, ELEMENT_THREADS), ELEMENT_THREADS>>>(
            a, m, k, 0, d->scales, d->P.f, d->sums, d->sums + m);
        signed_sums<<<grid_for(n, ELEMENT_THREADS), ELEMENT_THREADS>>>(
            b, n, k, 1, d->scales + m, d->P.f, d->sums + 2 * m, d->sums + 2 * m + n);
        CAIRN_ENC_CUDA_TRY(cudaGetLastError());
    }
    return CAIRN_ENCLOSE_OK;
}

/* CAIRN_ENCLOSE_ENODEV unless a device can run. */
static int have_device(cairn_enclose_info *info) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0) return CAIRN_ENCLOSE_OK;
    info->detail = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device found";
    return CAIRN_ENCLOSE_ENODEV;
}

static int run(buffers *d, const void *a, const void *b, void *lo, void *hi,
               cairn_enclose_info *info) {
    size_t m = d->P.m, n = d->P.n;
    d->host_spans = (cairn_enc_span *)calloc(m + n, sizeof *d->host_spans);
    d->host_crt = (cairn_enc_crt *)calloc(1, sizeof *d->host_crt);
    d->P.row_scale = (int *)calloc(m, sizeof(int));
    d->P.col_scale = (int *)calloc(n, sizeof(int));
    d->P.row_lossy = (unsigned char *)calloc(m, 1);
    d->P.col_lossy = (unsigned char *)calloc(n, 1);
    if (!d->host_spans || !d->host_crt || !d->P.row_scale || !d->P.col_scale || !d->P.row_lossy ||
        !d->P.col_lossy)
        return CAIRN_ENCLOSE_ENOMEM;
    int rc = scan_and_plan(d, a, b, info);
    if (!rc) rc = residues_and_gemms(d, a, b, info);
    if (rc) return rc;
    bool sums = d->sums != NULL;
    finish_args F = {m,
                     n,
                     d->P.k,
                     d->P.f,
                     d->scales,
                     d->scales + m,
                     d->lossy,
                     d->lossy + m,
                     sums ? d->sums : NULL,
                     sums ? d->sums + m : NULL,
                     sums ? d->sums + 2 * m : NULL,
                     sums ? d->sums + 2 * m + n : NULL,
                     d->rc,
                     lo,
                     hi};
    finish<<<dim3(grid_for(n, ELEMENT_THREADS), grid_y(m)), ELEMENT_THREADS>>>(F);
    CAIRN_ENC_CUDA_TRY(cudaGetLastError());
    CAIRN_ENC_CUDA_TRY(cudaDeviceSynchronize());
    cairn_enclose_info_done(&d->P, info);
    return CAIRN_ENCLOSE_OK;
}

}  // namespace cairn_enclose_cuda

extern "C" int cairn_enclose_cuda_bits(int width, size_t m, size_t n, size_t k, const void *a,
                                       const void *b, void *lo, void *hi,
                                       cairn_enclose_info *info) {
    cairn_enclose_info scratch;
    if (!info) info = &scratch;
    cairn_enclose_info_reset(info, "cuda-imma8");
    if (width != 32 && width != 64) return CAIRN_ENCLOSE_ESIZE;
    int rc = cairn_enclose_check_args(m, n, k, a, b, lo, hi);
    if (!rc) rc = cairn_enclose_cuda::have_device(info);
    if (rc) return rc;
    if (m == 0 || n == 0) {
        info->tight = 1;
        return CAIRN_ENCLOSE_OK;
    }
    static std::mutex one_at_a_time; /* the CRT constants are one __constant__ block */
    std::lock_guard<std::mutex> hold(one_at_a_time);
    cairn_enclose_cuda::buffers d;
    memset(&d, 0, sizeof d);
    d.P.f = cairn_enc_format_of(width);
    d.P.m = m, d.P.n = n, d.P.k = k;
    rc = cairn_enclose_cuda::run(&d, a, b, lo, hi, info);
    cairn_enclose_cuda::release(&d);
    return rc;
}

#ifdef CAIRN_DEVICE_CUDA_H
/* mm_enclose on @device views in a CUDA build (cairn_mm_enclose.h): the device must
 * start as for every other device operation, then the extents, the run and the traps
 * are cairn_mm_enclose.c's. */
#include "cairn_mm_enclose.h"

extern "C" bool cairn_mm_enclose_device_f64(uint64_t m, uint64_t n, uint64_t k, double *lo,
                                            uint64_t lo_n, double *hi, uint64_t hi_n,
                                            const double *a, uint64_t a_n, const double *b,
                                            uint64_t b_n, cairn_loc at) {
    cairn_device_start();
    return cairn_mm_enclose_with(cairn_enclose_cuda_bits, 64, m, n, k, lo, lo_n, hi, hi_n, a, a_n,
                                 b, b_n, at);
}

extern "C" bool cairn_mm_enclose_device_f32(uint64_t m, uint64_t n, uint64_t k, float *lo,
                                            uint64_t lo_n, float *hi, uint64_t hi_n, const float *a,
                                            uint64_t a_n, const float *b, uint64_t b_n,
                                            cairn_loc at) {
    cairn_device_start();
    return cairn_mm_enclose_with(cairn_enclose_cuda_bits, 32, m, n, k, lo, lo_n, hi, hi_n, a, a_n,
                                 b, b_n, at);
}
#endif

#endif
