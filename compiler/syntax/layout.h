/* layout.h: constant layouts in the compiler: building them from their arguments,
 * proving them injective, and saying which fragment families can read them
 * (docs/memory.md, "Layouts"). The offset arithmetic itself is the runtime's
 * (runtime/cairn_layout.h), so the compiler, host code and device code share one text.
 *
 * Every layout the checker folds is proved injective by enumerating its whole domain
 * (tiles are small: the domain is capped at LAYOUT_MAX_SIZE coordinates and offsets
 * below LAYOUT_MAX_COSIZE), which is exact. Errors come back as a message; the caller
 * reports them with E-LAYOUT. */
#ifndef CAIRN_LAYOUT_H_COMPILER
#define CAIRN_LAYOUT_H_COMPILER

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/cairn_layout.h"

#define LAYOUT_MAX_SIZE   ((uint64_t)1 << 22)
#define LAYOUT_MAX_COSIZE ((uint64_t)1 << 26)

typedef cairn_layout Layout;

/* Each returns NULL and sets *out, or returns why the arguments make no layout (written
 * into msg). The results are not yet proved injective: see layout_prove. */
const char *layout_rows(const int64_t rc[2], bool col_major, Layout *out, char *msg, size_t cap);
const char *layout_pad(const Layout *l, int64_t p, Layout *out, char *msg, size_t cap);
/* bms: swizzle(L, b, m, s)'s b, m and s. */
const char *layout_swizzle(const Layout *l, const int64_t bms[3], Layout *out, char *msg,
                           size_t cap);
const char *layout_spread(const Layout *l, const int64_t share[4], Layout *out, char *msg,
                          size_t cap);

/* Two coordinates of one layout that name one offset (or, for a spread, two (thread,
 * value) pairs that name one element; or a swizzle that moves coordinate (a0, a1) to
 * offset `at`, outside the at2 offsets of the layout it swizzles). */
typedef struct LayoutClash {
    bool share;              /* the clash is in the spread's thread share */
    bool outside;            /* a swizzle that is not a permutation of its layout's offsets */
    uint64_t a0, a1, b0, b1; /* (i, j) and (i', j'), or (t, v) and (t', v') */
    uint64_t at, at2;        /* the offset, or the element's (row, col) */
} LayoutClash;

/* Sets l->cosize and returns true when no two coordinates share an offset, a swizzle
 * keeps its layout's offsets below that layout's cosize (so it is a bijection on its
 * cosize), and a spread gives every element to exactly one thread and value; otherwise
 * fills *clash. */
bool layout_prove(Layout *l, LayoutClash *clash);

/* Whether ldmatrix can read a tile of elem_bytes-byte elements in this layout: every
 * aligned 16-byte run of a row (16 / elem_bytes columns) lands contiguous and 16-byte
 * aligned. Fills *bad_i, *bad_j with a run's first coordinate that breaks. */
bool layout_runs_intact(const Layout *l, int elem_bytes, uint64_t *bad_i, uint64_t *bad_j);

/* Whether WMMA can read the layout: row-major, unswizzled, rows a multiple of 16 bytes
 * apart (WMMA takes a pointer and a leading dimension). */
bool layout_wmma_readable(const Layout *l, int elem_bytes);

/* Whether two layouts place every coordinate at the same offset (.at is one map): then a
 * proved one touches one element through both only at one coordinate. */
bool layout_same_map(const Layout *a, const Layout *b);

/* The layout as a C compound literal of cairn_layout, for generated code. */
const char *layout_c_literal(const Layout *l, char *buf, size_t cap);

#endif
