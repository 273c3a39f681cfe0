/* cairn_fragment_cuda.h: tensor-core fragments for a CUDA target (docs/numerics.md,
 * "Tensor-core fragments"; compiler/lower/lower_mma.c emits the calls). nvcc only; the .cu
 * file a CUDA build generates includes it once when a kernel uses fragments.
 *
 * A fragment is the lane's registers, nothing more: cairn_frag128/256/512 (the names the
 * emulation gives its whole-matrix structs, runtime/cairn_fragment.h, which nvcc does not
 * see) are 32 bytes here, viewed as the family's own type:
 * - WMMA: nvcuda::wmma::fragment<matrix_a | matrix_b | accumulator, M, N, K, half |
 *   __nv_bfloat16 | float, row_major>, loaded and stored with load_matrix_sync and
 *   store_matrix_sync at the fragment's first element and the layout's row stride (the
 *   checker admits only layouts WMMA reads: row-major, unswizzled, rows 16-byte apart);
 * - mma.sync m16n8k16: the PTX ISA's registers. A (16 x 16) is four .b32 of two
 *   elements, B (16 x 8) two, the accumulator four f32 c0..c3, c_v at row g + 8 (v / 2),
 *   column 2 t + v % 2 (g = lane / 4, t = lane % 4). A and B come from shared memory with
 *   ldmatrix (.x4 for A, .x2.trans for B's row-major k x n tile), each lane naming one
 *   16-byte row run through the layout; where the layout breaks a run (the compiler
 *   says so, RUNS = 0) or the tile is not in shared memory, each lane reads its elements
 *   one by one through the layout instead. The product is mma.sync.aligned.m16n8k16
 *   .row.col.f32.{f16,bf16}.{f16,bf16}.f32 through inline PTX.
 * A fragment outside its layout, or an offset past the array, traps (one corner check
 * for WMMA's strided rows, each lane's own offsets for mma.sync), and so does a WMMA
 * fragment whose first element is not 32-byte aligned (load_matrix_sync's rule; shared
 * arrays are 32-byte aligned, compiler/lower/lower_cuda.c). */
#ifndef CAIRN_FRAGMENT_CUDA_H
#define CAIRN_FRAGMENT_CUDA_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <stdint.h>

#include "cairn_float.h"
#include "cairn_layout.h"
#include "cairn_trap.h"

/* 8-byte aligned like the WMMA fragments cairn_frag_as views it as (their base is
 * __align__(8) in crt/mma.h), so the cast never makes a misaligned access. */
struct __align__(8) cairn_frag_regs {
    uint32_t r[8];
};
typedef cairn_frag_regs cairn_frag128;
typedef cairn_frag_regs cairn_frag256;
typedef cairn_frag_regs cairn_frag512;

template <typename F>
static __device__ inline F &cairn_frag_as(cairn_frag_regs &x) {
    static_assert(sizeof(F) <= sizeof(cairn_frag_regs), "a fragment larger than its registers");
    return *reinterpret_cast<F *>(&x);
}

/* Traps unless fragment (i, j) of rows x cols lies in the layout. */
static __device__ inline void cairn_frag_cuda_inside(const cairn_layout &l, uint64_t i, uint64_t j,
                                                     int rows, int cols, cairn_loc at) {
    if (i >= l.rows / (uint64_t)rows || j >= l.cols / (uint64_t)cols)
        cairn_trap_at("a fragment past its layout", at);
}
static __device__ inline void cairn_frag_cuda_below(uint64_t o, uint64_t n, cairn_loc at) {
    if (o >= n) cairn_trap_at("a fragment past the end of its array", at);
}

/* ---- WMMA ---- */

template <int M, int N, int K, typename T>
using cairn_wmma_a =
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, M, N, K, T, nvcuda::wmma::row_major>;
template <int M, int N, int K, typename T>
using cairn_wmma_b =
    nvcuda::wmma::fragment<nvcuda::wmma::matrix_b, M, N, K, T, nvcuda::wmma::row_major>;
template <int M, int N, int K>
using cairn_wmma_acc = nvcuda::wmma::fragment<nvcuda::wmma::accumulator, M, N, K, float>;

/* The offset of fragment (i, j)'s first element, after the bounds checks. */
static __device__ inline uint64_t cairn_wmma_origin(uint64_t n, const cairn_layout &l, uint64_t i,
                                                    uint64_t j, int rows, int cols, cairn_loc at) {
    cairn_frag_cuda_inside(l, i, j, rows, cols, at);
    uint64_t r0 = i * (uint64_t)rows, c0 = j * (uint64_t)cols;
    cairn_frag_cuda_below(cairn_layout_at(&l, r0 + (uint64_t)rows - 1, c0 + (uint64_t)cols - 1), n,
                          at);
    return cairn_layout_at(&l, r0, c0);
}

/* WMMA's loads and stores want a 32-byte aligned first element: every array's base is
 * (cudaMalloc'd, or a shared array at a 32-byte offset), so the guard is the element's
 * offset in bytes, the emulation's (cairn_frag_wmma_check), and the address as well. */
template <typename S>
static __device__ inline void cairn_wmma_aligned(const S *tile, uint64_t o, cairn_loc at) {
    if (o * sizeof(S) % 32 != 0 || (uintptr_t)(tile + o) % 32 != 0)
        cairn_trap_at("a WMMA fragment whose first element is not 32-byte aligned", at);
}

/* An A or B operand: T is __half or __nv_bfloat16, S the storage (f16 or bf16 bits). */
template <typename F, typename T, typename S>
static __device__ inline void cairn_wmma_load(cairn_frag_regs &x, int rows, int cols, const S *tile,
                                              uint64_t n, cairn_layout l, uint64_t i, uint64_t j,
                                              cairn_loc at) {
    uint64_t o = cairn_wmma_origin(n, l, i, j, rows, cols, at);
    cairn_wmma_aligned(tile, o, at);
    nvcuda::wmma::load_matrix_sync(cairn_frag_as<F>(x), reinterpret_cast<const T *>(tile + o),
                                   (unsigned)l.row_stride);
}

template <typename F>
static __device__ inline void cairn_wmma_load_acc(cairn_frag_regs &x, int rows, int cols,
                                                  const float *tile, uint64_t n, cairn_layout l,
                                                  uint64_t i, uint64_t j, cairn_loc at) {
    uint64_t o = cairn_wmma_origin(n, l, i, j, rows, cols, at);
    cairn_wmma_aligned(tile, o, at);
    nvcuda::wmma::load_matrix_sync(cairn_frag_as<F>(x), tile + o, (unsigned)l.row_stride,
                                   nvcuda::wmma::mem_row_major);
}

template <typename F>
static __device__ inline void cairn_wmma_store(float *tile, uint64_t n, cairn_layout l, uint64_t i,
                                               uint64_t j, cairn_frag_regs x, int rows, int cols,
                                               cairn_loc at) {
    uint64_t o = cairn_wmma_origin(n, l, i, j, rows, cols, at);
    cairn_wmma_aligned(tile, o, at);
    nvcuda::wmma::store_matrix_sync(tile + o, cairn_frag_as<F>(x), (unsigned)l.row_stride,
                                    nvcuda::wmma::mem_row_major);
}

template <typename F, typename T>
static __device__ inline void cairn_wmma_fill(cairn_frag_regs &x, T v) {
    nvcuda::wmma::fill_fragment(cairn_frag_as<F>(x), v);
}

template <typename FA, typename FB, typename FC>
static __device__ inline void cairn_wmma_mma(cairn_frag_regs &acc, cairn_frag_regs a,
                                             cairn_frag_regs b) {
    nvcuda::wmma::mma_sync(cairn_frag_as<FC>(acc), cairn_frag_as<FA>(a), cairn_frag_as<FB>(b),
                           cairn_frag_as<FC>(acc));
}

/* ---- mma.sync m16n8k16 ---- */

/* Two 16-bit elements of a row-major (r, c), (r, c + 1) pair, through the layout. */
static __device__ inline uint32_t cairn_mma_pair(const uint16_t *tile, uint64_t n,
                                                 const cairn_layout &l, uint64_t r, uint64_t c,
                                                 cairn_loc at) {
    uint64_t o0 = cairn_layout_at(&l, r, c), o1 = cairn_layout_at(&l, r, c + 1);
    cairn_frag_cuda_below(o0, n, at);
    cairn_frag_cuda_below(o1, n, at);
    return (uint32_t)tile[o0] | (uint32_t)tile[o1] << 16;
}

/* The address ldmatrix wants from this lane: row r's 16-byte run from column c. */
static __device__ inline uint32_t cairn_mma_row_address(const uint16_t *tile, uint64_t n,
                                                        const cairn_layout &l, uint64_t r,
                                                        uint64_t c, cairn_loc at) {
    uint64_t o = cairn_layout_at(&l, r, c);
    cairn_frag_cuda_below(o + 7, n, at);
    return (uint32_t)__cvta_generic_to_shared(tile + o);
}

/* A (16 x 16, row-major): a0..a7 = (g, 2t..), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..). */
template <int RUNS>
static __device__ inline void cairn_mma_load_a(cairn_frag_regs &x, const uint16_t *tile, uint64_t n,
                                               cairn_layout l, uint64_t i, uint64_t j,
                                               unsigned lane, cairn_loc at) {
    cairn_frag_cuda_inside(l, i, j, 16, 16, at);
    uint64_t r0 = 16 * i, c0 = 16 * j;
    if (RUNS && __isShared(tile)) {
        uint32_t p = cairn_mma_row_address(tile, n, l, r0 + lane % 16, c0 + 8 * (lane / 16), at);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x.r[0]), "=r"(x.r[1]), "=r"(x.r[2]), "=r"(x.r[3])
                     : "r"(p));
        return;
    }
    uint64_t g = lane / 4, t = lane % 4;
    for (int q = 0; q < 4; q++)
        x.r[q] = cairn_mma_pair(tile, n, l, r0 + g + 8 * (q % 2), c0 + 2 * t + 8 * (q / 2), at);
}

/* B (16 x 8, k x n, row-major): b0..b3 = (2t, g), (2t + 1, g), (2t + 8, g), (2t + 9, g). */
template <int RUNS>
static __device__ inline void cairn_mma_load_b(cairn_frag_regs &x, const uint16_t *tile, uint64_t n,
                                               cairn_layout l, uint64_t i, uint64_t j,
                                               unsigned lane, cairn_loc at) {
    cairn_frag_cuda_inside(l, i, j, 16, 8, at);
    uint64_t r0 = 16 * i, c0 = 8 * j;
    if (RUNS && __isShared(tile)) {
        uint32_t p = cairn_mma_row_address(tile, n, l, r0 + lane % 16, c0, at);
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                     : "=r"(x.r[0]), "=r"(x.r[1])
                     : "r"(p));
        return;
    }
    uint64_t g = lane / 4, t = lane % 4;
    for (int q = 0; q < 2; q++) {
        uint64_t k = r0 + 2 * t + 8 * q, o0 = cairn_layout_at(&l, k, c0 + g),
                 o1 = cairn_layout_at(&l, k + 1, c0 + g);
        cairn_frag_cuda_below(o0, n, at);
        cairn_frag_cuda_below(o1, n, at);
        x.r[q] = (uint32_t)tile[o0] | (uint32_t)tile[o1] << 16;
    }
}

/* The accumulator's c_v: row g + 8 (v / 2), column 2 t + v % 2 of the 16 x 8 fragment. */
static __device__ inline uint64_t cairn_mma_acc_offset(uint64_t n, const cairn_layout &l,
                                                       uint64_t i, uint64_t j, unsigned lane, int v,
                                                       cairn_loc at) {
    uint64_t o = cairn_layout_at(&l, 16 * i + lane / 4 + 8 * (uint64_t)(v / 2),
                                 8 * j + 2 * (lane % 4) + (uint64_t)(v % 2));
    cairn_frag_cuda_below(o, n, at);
    return o;
}

static __device__ inline void cairn_mma_load_acc(cairn_frag_regs &x, const float *tile, uint64_t n,
                                                 cairn_layout l, uint64_t i, uint64_t j,
                                                 unsigned lane, cairn_loc at) {
    cairn_frag_cuda_inside(l, i, j, 16, 8, at);
    for (int v = 0; v < 4; v++)
        x.r[v] = __float_as_uint(tile[cairn_mma_acc_offset(n, l, i, j, lane, v, at)]);
}

static __device__ inline void cairn_mma_store(float *tile, uint64_t n, cairn_layout l, uint64_t i,
                                              uint64_t j, cairn_frag_regs x, unsigned lane,
                                              cairn_loc at) {
    cairn_frag_cuda_inside(l, i, j, 16, 8, at);
    for (int v = 0; v < 4; v++)
        tile[cairn_mma_acc_offset(n, l, i, j, lane, v, at)] = __uint_as_float(x.r[v]);
}

/* Every register of a fragment holding `words` .b32: bits repeated (an operand's 16-bit
 * value twice, an accumulator's f32 once). */
static __device__ inline void cairn_mma_fill(cairn_frag_regs &x, int words, uint32_t bits) {
    for (int q = 0; q < words; q++) x.r[q] = bits;
}

/* acc += a * b; BF16 picks the bf16 instruction. */
template <int BF16>
static __device__ inline void cairn_mma_sync(cairn_frag_regs &acc, cairn_frag_regs a,
                                             cairn_frag_regs b) {
    if (BF16)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};"
            : "+r"(acc.r[0]), "+r"(acc.r[1]), "+r"(acc.r[2]), "+r"(acc.r[3])
            : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
    else
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
            "{%8, %9}, {%0, %1, %2, %3};"
            : "+r"(acc.r[0]), "+r"(acc.r[1]), "+r"(acc.r[2]), "+r"(acc.r[3])
            : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
}

/* mma_get / mma_set: this lane's c_v; v past 3 traps. */
static __device__ inline int cairn_mma_value(uint64_t v, cairn_loc at) {
    if (v >= 4) cairn_trap_at("an mma.sync accumulator holds 4 values per lane", at);
    return (int)v;
}

#endif
