/* cairn_fragment.h: tensor-core fragments where device work is emulated on the host
 * (docs/numerics.md, "Tensor-core fragments").
 *
 * Every thread of a warp holds each fragment whole: an operand or accumulator of R x C
 * elements is a struct of R * C floats, row-major (an f16 or bf16 operand's values are
 * f32 values exactly). acc = mma_unordered(acc, a, b) adds, for each element, its K
 * products in increasing k, each product and each sum rounded to f32: the reference
 * loop's order. A store writes only the elements the thread's lane holds on the device,
 * so a warp writes each element once: for mma.sync the PTX ISA's share (lane l's value
 * v is element (l / 4 + 8 * (v / 2), 2 * (l % 4) + v % 2) of the 16 x 8 accumulator),
 * for WMMA, whose share is unspecified, element e goes to lane e % 32. mma_get and
 * mma_set reach the ISA's share of an mma.sync accumulator.
 *
 * Loads and stores go through a layout (cairn_layout.h): fragment (i, j) of a tile is
 * the rows i*R .. i*R + R - 1 and columns j*C .. of the layout's coordinates. A fragment
 * outside the layout, or an offset past the array, traps. */
#ifndef CAIRN_FRAGMENT_H
#define CAIRN_FRAGMENT_H

#include <stdint.h>

#include "cairn_float.h"
#include "cairn_layout.h"
#include "cairn_trap.h"

typedef struct cairn_frag128 {
    float v[128];
} cairn_frag128;
typedef struct cairn_frag256 {
    float v[256];
} cairn_frag256;
typedef struct cairn_frag512 {
    float v[512];
} cairn_frag512;

/* Traps unless fragment (i, j) of rows x cols lies in the layout and every offset it
 * reaches lies below n (the array's length). */
static inline void cairn_frag_check(const cairn_layout *l, uint64_t i, uint64_t j, int rows,
                                    int cols, uint64_t n, cairn_loc at) {
    if (i >= l->rows / (uint64_t)rows || j >= l->cols / (uint64_t)cols)
        cairn_trap_at("a fragment past its layout", at);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            if (cairn_layout_at(l, i * (uint64_t)rows + (uint64_t)r,
                                j * (uint64_t)cols + (uint64_t)c) >= n)
                cairn_trap_at("a fragment past the end of its array", at);
}

/* WMMA's loads and stores want a 32-byte aligned first element: every array's base is
 * (cudaMalloc'd, or a shared array at a 32-byte offset), so the element's offset in bytes
 * is a multiple of 32. The emulation traps where the device does, after the same checks. */
static inline void cairn_frag_wmma_check(const void *tile, uint64_t n, const cairn_layout *l,
                                         uint64_t i, uint64_t j, int rows, int cols, size_t size,
                                         cairn_loc at) {
    (void)tile;
    cairn_frag_check(l, i, j, rows, cols, n, at);
    if (cairn_layout_at(l, i * (uint64_t)rows, j * (uint64_t)cols) * size % 32 != 0)
        cairn_trap_at("a WMMA fragment whose first element is not 32-byte aligned", at);
}

#define CAIRN_FRAG_LOAD(NAME, ELEM, WIDEN)                                                         \
    static inline void cairn_frag_load_##NAME(float *dst, int rows, int cols, const ELEM *tile,    \
                                              uint64_t n, const cairn_layout *l, uint64_t i,       \
                                              uint64_t j, cairn_loc at) {                          \
        cairn_frag_check(l, i, j, rows, cols, n, at);                                              \
        for (int r = 0; r < rows; r++)                                                             \
            for (int c = 0; c < cols; c++)                                                         \
                dst[r * cols + c] = WIDEN(tile[cairn_layout_at(                                    \
                    l, i * (uint64_t)rows + (uint64_t)r, j * (uint64_t)cols + (uint64_t)c)]);      \
    }
#define CAIRN_FRAG_SAME(x) (x)
CAIRN_FRAG_LOAD(f16, cairn_f16, cairn_f16_to_f32)
CAIRN_FRAG_LOAD(bf16, cairn_bf16, cairn_bf16_to_f32)
CAIRN_FRAG_LOAD(f32, float, CAIRN_FRAG_SAME)
#undef CAIRN_FRAG_LOAD
#undef CAIRN_FRAG_SAME

/* The lane that holds element e of a rows x cols accumulator (mma: the ISA's share). */
static inline unsigned cairn_frag_owner(int mma_share, int e, int cols) {
    if (!mma_share) return (unsigned)e % 32u;
    int row = e / cols, col = e % cols;
    return (unsigned)((row % 8) * 4 + col / 2);
}

static inline void cairn_frag_store(float *tile, uint64_t n, const cairn_layout *l, uint64_t i,
                                    uint64_t j, const float *src, int rows, int cols, int mma_share,
                                    unsigned lane, cairn_loc at) {
    cairn_frag_check(l, i, j, rows, cols, n, at);
    for (int e = 0; e < rows * cols; e++)
        if (cairn_frag_owner(mma_share, e, cols) == lane)
            tile[cairn_layout_at(l, i * (uint64_t)rows + (uint64_t)(e / cols),
                                 j * (uint64_t)cols + (uint64_t)(e % cols))] = src[e];
}

/* acc (m x n) += a (m x k) * b (k x n), each element's products in increasing k. */
static inline void cairn_frag_mma(float *acc, const float *a, const float *b, int m, int n, int k) {
    for (int r = 0; r < m; r++)
        for (int c = 0; c < n; c++) {
            float s = acc[r * n + c];
            for (int q = 0; q < k; q++) s = s + a[r * k + q] * b[q * n + c];
            acc[r * n + c] = s;
        }
}

static inline void cairn_frag_fill(float *dst, int count, float v) {
    for (int e = 0; e < count; e++) dst[e] = v;
}

/* Element index of lane's value v in a 16 x 8 mma.sync accumulator; traps past v = 3. */
static inline int cairn_frag_share_index(unsigned lane, uint64_t v, cairn_loc at) {
    if (v >= 4) cairn_trap_at("an mma.sync accumulator holds 4 values per lane", at);
    return (int)((lane / 4 + 8 * (v / 2)) * 8 + 2 * (lane % 4) + v % 2);
}

#endif
