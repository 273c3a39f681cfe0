/* cairn_mma.h: the tensor-core multiply mma_unordered(m, n, k, c, a, b) (docs/numerics.md,
 * "The tensor-core multiply"): c (m x n, f32, row-major) += a (m x k) * b (k x n), a and
 * b of one storage float.
 *
 * The contract: every product is exact in f32 (every f16 and 8-bit product, and every
 * bf16 product inside f32's range); every output is its old value plus its k products,
 * each partial sum rounded to f32, in an order the hardware picks; every finite output
 * lies within (k + 1) * 2^-22 * (|c| + sum |a b|) of the exact sum.
 *
 * The reference (the host's multiply, and the order the emulation keeps) fixes that
 * order as the written loop: c[i][j] = (...((c[i][j] + a[i][0] b[0][j]) + a[i][1] b[1][j])
 * ...) + a[i][k-1] b[k-1][j], each product widened to f32 and multiplied in f32, each
 * sum rounded to nearest-even in f32 (no fused multiply-add: -ffp-contract=off on the
 * host, --fmad=false under nvcc). cairn_mma_ref_T is that loop over rows [i0, i1); it is
 * static inline and CAIRN_HD, one text for host and device. Its loops run i, p, j so a
 * row of b streams through the cache; each output still receives its products in
 * increasing p, so the bits are the written loop's.
 *
 * Generated code calls the checked entries: cairn_mma_T (host views),
 * cairn_mma_tiled_T (@device views when the device work is emulated: the device tiling
 * of cairn_mma_tiled.c, run warp by warp on the host pool, which gives the reference's
 * bits) and cairn_mma_device_T (@device views on a CUDA target: the same tiling on the
 * tensor cores, cairn_mma_device_cuda.h, held to the contract's bound). Each checks the extents once, before any work: c holds at least m*n elements, a
 * at least m*k, b at least k*n (longer views are fine: the first elements are used); a
 * short view traps at the call. */
#ifndef CAIRN_MMA_H
#define CAIRN_MMA_H

#include <stdint.h>

#include "cairn_float.h"
#include "cairn_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device tiling (cairn_mma_device_cuda.h, emulated by cairn_mma_tiled.c): a block of
 * four warps computes a 64 x 64 tile of c, each warp a 32 x 32 quarter as 2 x 2 WMMA
 * 16 x 16 x 16 fragments; k advances in steps of 32 through two shared-memory stages of
 * a (64 x 32, rows padded by 8 elements: pad(rows(64, 32), 8)) and b (32 x 64:
 * pad(rows(32, 64), 8)). proofs/prove_layouts.c proves both stages give WMMA aligned
 * fragments and 16-byte rows. */
#define CAIRN_MMA_TILE  64
#define CAIRN_MMA_WARPS 4
#define CAIRN_MMA_KSTEP 32
#define CAIRN_MMA_PAD   8
#define CAIRN_MMA_LDA   (CAIRN_MMA_KSTEP + CAIRN_MMA_PAD)
#define CAIRN_MMA_LDB   (CAIRN_MMA_TILE + CAIRN_MMA_PAD)

#define CAIRN_MMA_REF(T)                                                                           \
    static inline CAIRN_HD void cairn_mma_ref_##T(uint64_t i0, uint64_t i1, uint64_t n,            \
                                                  uint64_t k, float *c, const cairn_##T *a,        \
                                                  const cairn_##T *b) {                            \
        for (uint64_t i = i0; i < i1; i++)                                                         \
            for (uint64_t p = 0; p < k; p++) {                                                     \
                float x = cairn_##T##_to_f32(a[i * k + p]);                                        \
                float *row = c + i * n;                                                            \
                const cairn_##T *brow = b + p * n;                                                 \
                for (uint64_t j = 0; j < n; j++)                                                   \
                    row[j] = row[j] + x * cairn_##T##_to_f32(brow[j]);                             \
            }                                                                                      \
    }
CAIRN_MMA_REF(f16)
CAIRN_MMA_REF(bf16)
CAIRN_MMA_REF(f8e4m3)
CAIRN_MMA_REF(f8e5m2)
#undef CAIRN_MMA_REF

/* Host functions (declared for nvcc's device pass too, which parses host code). */
#define CAIRN_MMA_ENTRIES(T)                                                                       \
    void cairn_mma_##T(uint64_t m, uint64_t n, uint64_t k, float *c, uint64_t c_n,                 \
                       const cairn_##T *a, uint64_t a_n, const cairn_##T *b, uint64_t b_n,         \
                       cairn_loc at);                                                              \
    void cairn_mma_tiled_##T(uint64_t m, uint64_t n, uint64_t k, float *c, uint64_t c_n,           \
                             const cairn_##T *a, uint64_t a_n, const cairn_##T *b, uint64_t b_n,   \
                             cairn_loc at);                                                        \
    void cairn_mma_device_##T(uint64_t m, uint64_t n, uint64_t k, float *c, uint64_t c_n,          \
                              const cairn_##T *a, uint64_t a_n, const cairn_##T *b, uint64_t b_n,  \
                              cairn_loc at);
CAIRN_MMA_ENTRIES(f16)
CAIRN_MMA_ENTRIES(bf16)
CAIRN_MMA_ENTRIES(f8e4m3)
CAIRN_MMA_ENTRIES(f8e5m2)
#undef CAIRN_MMA_ENTRIES

/* Traps at `at` unless c, a and b hold m*n, m*k and k*n elements (op names the caller). */
void cairn_mma_check_extents(const char *op, uint64_t m, uint64_t n, uint64_t k, uint64_t c_n,
                             uint64_t a_n, uint64_t b_n, cairn_loc at);

#ifdef __cplusplus
}
#endif

#endif
