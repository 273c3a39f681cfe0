/* cairn_layout.h: layouts, the maps from a tile's coordinates to offsets in an array
 * (docs/memory.md, "Layouts"). One text for the compiler (which folds and proves the
 * layouts a program declares), generated host code and CUDA device code.
 *
 * A layout has a domain of rows x cols coordinates (i, j) and places (i, j) at
 *   o = swizzle(i * row_stride + j * col_stride)
 * where swizzle is CuTe's Swizzle<B, M, S> on the offset's bits,
 *   swizzle(o) = o ^ ((o & (((1 << B) - 1) << (M + S))) >> S),
 * and B = 0 means none. rows(R, C) has strides (C, 1), cols(R, C) has (1, R), and
 * pad(L, p) adds p to the outer stride. A spread adds a thread share: thread t's value
 * v is coordinate (row(t, v), col(t, v)), threads arranged thr_rows x thr_cols row-major,
 * each holding val_rows x val_cols neighbours, repeated row-major over the tile.
 * cosize is one past the largest offset the layout places (the compiler computes it).
 *
 * The functions here do arithmetic only; generated code guards the coordinates first. */
#ifndef CAIRN_LAYOUT_H
#define CAIRN_LAYOUT_H

#include <stdint.h>

#include "cairn_trap.h"

typedef struct cairn_layout {
    uint64_t rows, cols; /* the domain */
    uint64_t row_stride, col_stride;
    uint32_t sw_bits, sw_base, sw_shift;             /* Swizzle<B, M, S>; sw_bits == 0: none */
    uint64_t thr_rows, thr_cols, val_rows, val_cols; /* spread; thr_rows == 0: none */
    uint64_t cosize;
} cairn_layout;

static inline CAIRN_HD uint64_t cairn_swizzle(uint64_t o, uint32_t b, uint32_t m, uint32_t s) {
    uint64_t yyy = ((((uint64_t)1 << b) - 1) << (m + s));
    return o ^ ((o & yyy) >> s);
}

static inline CAIRN_HD uint64_t cairn_layout_at(const cairn_layout *l, uint64_t i, uint64_t j) {
    uint64_t o = i * l->row_stride + j * l->col_stride;
    return l->sw_bits ? cairn_swizzle(o, l->sw_bits, l->sw_base, l->sw_shift) : o;
}

/* Threads in a spread, and values each thread holds. */
static inline CAIRN_HD uint64_t cairn_layout_threads(const cairn_layout *l) {
    return l->thr_rows * l->thr_cols;
}
static inline CAIRN_HD uint64_t cairn_layout_values(const cairn_layout *l) {
    return l->rows * l->cols / (l->thr_rows * l->thr_cols);
}

/* The coordinate of thread t's value v: row (want_col == 0) or column (want_col == 1). */
static inline CAIRN_HD uint64_t cairn_layout_share(const cairn_layout *l, uint64_t t, uint64_t v,
                                                   int want_col) {
    uint64_t block = l->val_rows * l->val_cols;
    uint64_t rep = v / block, in = v % block;
    uint64_t reps_c = l->cols / (l->thr_cols * l->val_cols);
    if (want_col)
        return (rep % reps_c) * (l->thr_cols * l->val_cols) + (t % l->thr_cols) * l->val_cols +
               in % l->val_cols;
    return (rep / reps_c) * (l->thr_rows * l->val_rows) + (t / l->thr_cols) * l->val_rows +
           in / l->val_cols;
}

#endif
