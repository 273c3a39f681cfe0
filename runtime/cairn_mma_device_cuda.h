/* cairn_mma_device_cuda.h: mma_unordered on @device views for a CUDA target: the device
 * tiling of cairn_mma.h on the tensor cores. nvcc only; included once by the .cu file a
 * CUDA build generates when the program multiplies on the device (so the extern "C"
 * launchers here are defined once), after cairn_device_cuda.h.
 *
 * One block of four warps (128 threads) per 64 x 64 tile of c. Each warp owns a 32 x 32
 * quarter as 2 x 2 WMMA 16 x 16 x 16 fragments with f32 accumulators. k advances in
 * steps of 32 through two shared-memory stages: while the warps multiply stage s, the
 * block's threads fill stage s ^ 1 with the next 32 columns of a (64 x 32, laid out
 * pad(rows(64, 32), 8)) and rows of b (32 x 64, pad(rows(32, 64), 8)); a __syncthreads
 * ends each step, so a stage is never filled while a warp still reads it. c's tile is
 * staged through shared memory (rows(64, 64)), so partial tiles are read and written
 * element by element behind the matrix's bounds, and zero padding fills the rest.
 *
 * Operands: f16 and bf16 go to the tensor cores as they are (wmma's half and
 * __nv_bfloat16 fragments, the f16 and bf16 instructions); f8e4m3 and f8e5m2 are widened
 * to f16 exactly while a stage is filled, and use the f16 instruction (Ada's and
 * Hopper's fp8 instructions keep about 14 bits of the f32 accumulation, which breaks the
 * contract's bound). The result is held to the contract's bound, not to the reference's
 * order (docs/numerics.md). */
#ifndef CAIRN_MMA_DEVICE_CUDA_H
#define CAIRN_MMA_DEVICE_CUDA_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "cairn_device_cuda.h"
#include "cairn_float.h"
#include "cairn_mma.h"

namespace cairn_mma_device {

enum {
    TILE = CAIRN_MMA_TILE,
    KSTEP = CAIRN_MMA_KSTEP,
    LDA = CAIRN_MMA_LDA,
    LDB = CAIRN_MMA_LDB,
    FRAG = 16,
    THREADS = 32 * CAIRN_MMA_WARPS
};

/* Each storage format: its bits (S), what a stage holds (H), and how an element gets
 * there (fp8 widens to f16 exactly: every fp8 value is an f16 value). */
#define CAIRN_MMA_OPERAND(NAME, STORAGE, HALF, FROM, ZERO)                                         \
    struct NAME {                                                                                  \
        typedef STORAGE S;                                                                         \
        typedef HALF H;                                                                            \
        static __device__ H from(S x) { return FROM; }                                             \
        static __device__ H zero() { return ZERO; }                                                \
    };
CAIRN_MMA_OPERAND(op_f16, cairn_f16, __half, __ushort_as_half(x), __ushort_as_half(0))
CAIRN_MMA_OPERAND(op_bf16, cairn_bf16, __nv_bfloat16, __ushort_as_bfloat16(x),
                  __ushort_as_bfloat16(0))
CAIRN_MMA_OPERAND(op_f8e4m3, cairn_f8e4m3, __half, __float2half_rn(cairn_f8e4m3_to_f32(x)),
                  __ushort_as_half(0))
CAIRN_MMA_OPERAND(op_f8e5m2, cairn_f8e5m2, __half, __float2half_rn(cairn_f8e5m2_to_f32(x)),
                  __ushort_as_half(0))
#undef CAIRN_MMA_OPERAND

/* Fills stage arrays sa (64 x 32 of a from row i0, column k0) and sb (32 x 64 of b from
 * row k0, column j0), zero outside the matrices. */
template <typename Op>
__device__ void fill_stage(typename Op::H *sa, typename Op::H *sb, const typename Op::S *a,
                           const typename Op::S *b, uint64_t m, uint64_t n, uint64_t k, uint64_t i0,
                           uint64_t j0, uint64_t k0) {
    for (int idx = threadIdx.x; idx < TILE * KSTEP; idx += THREADS) {
        int r = idx / KSTEP, q = idx % KSTEP;
        bool in = i0 + r < m && k0 + q < k;
        sa[r * LDA + q] = in ? Op::from(a[(i0 + r) * k + k0 + q]) : Op::zero();
    }
    for (int idx = threadIdx.x; idx < KSTEP * TILE; idx += THREADS) {
        int q = idx / TILE, col = idx % TILE;
        bool in = k0 + q < k && j0 + col < n;
        sb[q * LDB + col] = in ? Op::from(b[(k0 + q) * n + j0 + col]) : Op::zero();
    }
}

template <typename Op>
__global__ void __launch_bounds__(THREADS)
    tile_kernel(uint64_t m, uint64_t n, uint64_t k, float *c, const typename Op::S *a,
                const typename Op::S *b) {
    using namespace nvcuda;
    typedef typename Op::H H;
    __shared__ __align__(32) H sa[2][TILE * LDA];
    __shared__ __align__(32) H sb[2][KSTEP * LDB];
    __shared__ __align__(32) float sc[TILE * TILE];
    uint64_t i0 = (uint64_t)blockIdx.y * TILE, j0 = (uint64_t)blockIdx.x * TILE;
    int warp = threadIdx.x / 32, wr = warp / 2, wc = warp % 2;
    for (int idx = threadIdx.x; idx < TILE * TILE; idx += THREADS) {
        int r = idx / TILE, col = idx % TILE;
        sc[idx] = i0 + r < m && j0 + col < n ? c[(i0 + r) * n + j0 + col] : 0.0f;
    }
    fill_stage<Op>(sa[0], sb[0], a, b, m, n, k, i0, j0, 0);
    __syncthreads();
    wmma::fragment<wmma::accumulator, FRAG, FRAG, FRAG, float> acc[2][2];
    for (int fi = 0; fi < 2; fi++)
        for (int fj = 0; fj < 2; fj++)
            wmma::load_matrix_sync(acc[fi][fj], sc + (32 * wr + 16 * fi) * TILE + 32 * wc + 16 * fj,
                                   TILE, wmma::mem_row_major);
    for (uint64_t k0 = 0, step = 0; k0 < k; k0 += KSTEP, step++) {
        int s = (int)(step % 2);
        if (k0 + KSTEP < k) fill_stage<Op>(sa[s ^ 1], sb[s ^ 1], a, b, m, n, k, i0, j0, k0 + KSTEP);
        for (int kf = 0; kf < KSTEP; kf += FRAG) {
            wmma::fragment<wmma::matrix_a, FRAG, FRAG, FRAG, H, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, FRAG, FRAG, FRAG, H, wmma::row_major> fb[2];
            for (int f = 0; f < 2; f++) {
                wmma::load_matrix_sync(fa[f], sa[s] + (32 * wr + 16 * f) * LDA + kf, LDA);
                wmma::load_matrix_sync(fb[f], sb[s] + kf * LDB + 32 * wc + 16 * f, LDB);
            }
            for (int fi = 0; fi < 2; fi++)
                for (int fj = 0; fj < 2; fj++)
                    wmma::mma_sync(acc[fi][fj], fa[fi], fb[fj], acc[fi][fj]);
        }
        __syncthreads();
    }
    for (int fi = 0; fi < 2; fi++)
        for (int fj = 0; fj < 2; fj++)
            wmma::store_matrix_sync(sc + (32 * wr + 16 * fi) * TILE + 32 * wc + 16 * fj,
                                    acc[fi][fj], TILE, wmma::mem_row_major);
    __syncthreads();
    for (int idx = threadIdx.x; idx < TILE * TILE; idx += THREADS) {
        int r = idx / TILE, col = idx % TILE;
        if (i0 + r < m && j0 + col < n) c[(i0 + r) * n + j0 + col] = sc[idx];
    }
}

/* Checks the extents on the host, then launches one block per tile and waits. */
template <typename Op>
void launch(uint64_t m, uint64_t n, uint64_t k, float *c, uint64_t c_n, const typename Op::S *a,
            uint64_t a_n, const typename Op::S *b, uint64_t b_n, cairn_loc at) {
    cairn_mma_check_extents("mma_unordered", m, n, k, c_n, a_n, b_n, at);
    if (m == 0 || n == 0) return;
    uint64_t tiles_m = (m + TILE - 1) / TILE, tiles_n = (n + TILE - 1) / TILE;
    if (tiles_m > 65535) cairn_trap_at("mma_unordered: more than 65535 tiles of rows", at);
    if (tiles_n > 0x7fffffff)
        cairn_trap_at("mma_unordered: more than 2^31 - 1 tiles of columns", at);
    cairn_device_start();
    tile_kernel<Op><<<dim3((unsigned)tiles_n, (unsigned)tiles_m), THREADS>>>(m, n, k, c, a, b);
    cairn_device_launched(at, 1); /* waits: c may be @unified, read by the host next */
}

}  // namespace cairn_mma_device

#define CAIRN_MMA_LAUNCHER(T)                                                                      \
    extern "C" void cairn_mma_device_##T(uint64_t m, uint64_t n, uint64_t k, float *c,             \
                                         uint64_t c_n, const cairn_##T *a, uint64_t a_n,           \
                                         const cairn_##T *b, uint64_t b_n, cairn_loc at) {         \
        cairn_mma_device::launch<cairn_mma_device::op_##T>(m, n, k, c, c_n, a, a_n, b, b_n, at);   \
    }
CAIRN_MMA_LAUNCHER(f16)
CAIRN_MMA_LAUNCHER(bf16)
CAIRN_MMA_LAUNCHER(f8e4m3)
CAIRN_MMA_LAUNCHER(f8e5m2)
#undef CAIRN_MMA_LAUNCHER

#endif
