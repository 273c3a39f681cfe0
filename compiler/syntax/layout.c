/* layout.c: building constant layouts, proving them injective by enumeration, and the
 * fragment families' reading rules (layout.h). */
#include "syntax/layout.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *say(char *msg, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static const char *say(char *msg, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, cap, fmt, ap);
    va_end(ap);
    return msg;
}

/* The largest offset before swizzling: strides are positive, so the far corner. */
static uint64_t plain_max(const Layout *l) {
    return (l->rows - 1) * l->row_stride + (l->cols - 1) * l->col_stride;
}

const char *layout_rows(const int64_t rc[2], bool col_major, Layout *out, char *msg, size_t cap) {
    int64_t r = rc[0], c = rc[1];
    if (r < 1 || c < 1)
        return say(msg, cap, "a layout of %" PRId64 " x %" PRId64 " has no elements", r, c);
    if (r > (int64_t)LAYOUT_MAX_SIZE || c > (int64_t)LAYOUT_MAX_SIZE ||
        (uint64_t)r * (uint64_t)c > LAYOUT_MAX_SIZE)
        return say(msg, cap,
                   "a layout of %" PRId64 " x %" PRId64
                   " is larger than a tile (at most 2^22 elements)",
                   r, c);
    memset(out, 0, sizeof *out);
    out->rows = (uint64_t)r;
    out->cols = (uint64_t)c;
    out->row_stride = col_major ? 1 : (uint64_t)c;
    out->col_stride = col_major ? (uint64_t)r : 1;
    out->cosize = (uint64_t)r * (uint64_t)c;
    return NULL;
}

const char *layout_pad(const Layout *l, int64_t p, Layout *out, char *msg, size_t cap) {
    if (l->sw_bits || l->thr_rows)
        return say(msg, cap, "pad a rows or cols layout, then swizzle or spread it");
    if (p < 0 || p > (int64_t)LAYOUT_MAX_COSIZE)
        return say(msg, cap, "a pad of %" PRId64 " elements", p);
    *out = *l;
    if (l->col_stride == 1 && l->cols > 1) out->row_stride += (uint64_t)p;
    else if (l->row_stride == 1 && l->rows > 1) out->col_stride += (uint64_t)p;
    else out->row_stride += (uint64_t)p;
    if (plain_max(out) >= LAYOUT_MAX_COSIZE)
        return say(msg, cap, "a pad of %" PRId64 " takes offsets past 2^26", p);
    out->cosize = plain_max(out) + 1;
    return NULL;
}

const char *layout_swizzle(const Layout *l, const int64_t bms[3], Layout *out, char *msg,
                           size_t cap) {
    int64_t b = bms[0], m = bms[1], s = bms[2];
    if (l->sw_bits || l->thr_rows)
        return say(msg, cap, "swizzle a rows, cols or pad layout once, then spread it");
    if (b < 1 || m < 0 || s < 0 || b + m + s > 26)
        return say(msg, cap,
                   "swizzle(L, b, m, s) needs b >= 1 and b + m + s <= 26 (found b = %" PRId64
                   ", m + s = %" PRId64 ")",
                   b, m + s);
    *out = *l;
    out->sw_bits = (uint32_t)b;
    out->sw_base = (uint32_t)m;
    out->sw_shift = (uint32_t)s;
    return NULL;
}

const char *layout_spread(const Layout *l, const int64_t share[4], Layout *out, char *msg,
                          size_t cap) {
    if (l->thr_rows) return say(msg, cap, "a spread of a spread");
    for (int i = 0; i < 4; i++)
        if (share[i] < 1 || share[i] > (int64_t)LAYOUT_MAX_SIZE)
            return say(msg, cap,
                       "spread(L, threads down, threads across, values down, values across) takes "
                       "counts of at least 1 (argument %d is %" PRId64 ")",
                       i + 2, share[i]);
    uint64_t down = (uint64_t)(share[0] * share[2]), across = (uint64_t)(share[1] * share[3]);
    if (l->rows % down || l->cols % across)
        return say(msg, cap,
                   "the threads and values of a spread tile its rows and columns: %" PRId64
                   " rows and %" PRId64 " columns per repeat do not divide the layout",
                   (int64_t)down, (int64_t)across);
    *out = *l;
    out->thr_rows = (uint64_t)share[0];
    out->thr_cols = (uint64_t)share[1];
    out->val_rows = (uint64_t)share[2];
    out->val_cols = (uint64_t)share[3];
    return NULL;
}

/* Marks each offset; the first offset seen twice is a clash. */
static bool prove_offsets(Layout *l, LayoutClash *clash) {
    uint64_t limit = plain_max(l) + 1;
    if (l->sw_bits) /* a swizzle changes bits below m + b only */
        limit = ((limit - 1) | (((uint64_t)1 << (l->sw_base + l->sw_bits)) - 1)) + 1;
    if (limit > LAYOUT_MAX_COSIZE) limit = LAYOUT_MAX_COSIZE;
    uint32_t *first = malloc(limit * sizeof *first); /* index + 1 of the first (i, j) there */
    if (!first) abort();
    memset(first, 0, limit * sizeof *first);
    uint64_t top = 0;
    bool ok = true;
    for (uint64_t i = 0; i < l->rows && ok; i++)
        for (uint64_t j = 0; j < l->cols && ok; j++) {
            uint64_t o = cairn_layout_at(l, i, j);
            if (o >= limit) abort(); /* cannot happen: the limit bounds every swizzle */
            if (o > top) top = o;
            if (first[o]) {
                uint64_t k = first[o] - 1;
                *clash = (LayoutClash){false, false, k / l->cols, k % l->cols, i, j, o, 0};
                ok = false;
            }
            first[o] = (uint32_t)(i * l->cols + j + 1);
        }
    free(first);
    if (ok && l->sw_bits && top >= l->cosize) { /* l->cosize is still the swizzled layout's */
        for (uint64_t k = 0; k < l->rows * l->cols; k++)
            if (cairn_layout_at(l, k / l->cols, k % l->cols) == top) {
                *clash = (LayoutClash){false, true, k / l->cols, k % l->cols, 0, 0, top, l->cosize};
                break;
            }
        return false;
    }
    l->cosize = top + 1;
    return ok;
}

/* A spread's share: every (t, v) names a distinct element of the rows x cols tile. */
static bool prove_share(const Layout *l, LayoutClash *clash) {
    uint64_t nt = cairn_layout_threads(l), nv = cairn_layout_values(l);
    uint32_t *first = calloc(l->rows * l->cols, sizeof *first);
    if (!first) abort();
    bool ok = true;
    for (uint64_t t = 0; t < nt && ok; t++)
        for (uint64_t v = 0; v < nv && ok; v++) {
            uint64_t i = cairn_layout_share(l, t, v, 0), j = cairn_layout_share(l, t, v, 1);
            uint64_t e = i * l->cols + j;
            if (i >= l->rows || j >= l->cols) abort();
            if (first[e]) {
                uint64_t k = first[e] - 1;
                *clash = (LayoutClash){true, false, k / nv, k % nv, t, v, i, j};
                ok = false;
            }
            first[e] = (uint32_t)(t * nv + v + 1);
        }
    free(first);
    return ok;
}

bool layout_prove(Layout *l, LayoutClash *clash) {
    /* The builders above keep a layout within the caps that make enumeration exact. */
    assert(l->rows >= 1 && l->cols >= 1 && l->rows * l->cols <= LAYOUT_MAX_SIZE);
    assert(plain_max(l) < LAYOUT_MAX_COSIZE);
    if (!prove_offsets(l, clash)) return false;
    return !l->thr_rows || prove_share(l, clash);
}

bool layout_runs_intact(const Layout *l, int elem_bytes, uint64_t *bad_i, uint64_t *bad_j) {
    uint64_t run = elem_bytes > 0 && elem_bytes <= 16 ? (uint64_t)(16 / elem_bytes) : 1;
    for (uint64_t i = 0; i < l->rows; i++)
        for (uint64_t j = 0; j < l->cols; j += run) {
            uint64_t o = cairn_layout_at(l, i, j);
            bool ok = o % run == 0 && j + run <= l->cols;
            for (uint64_t r = 1; r < run && ok; r++) ok = cairn_layout_at(l, i, j + r) == o + r;
            if (!ok) {
                *bad_i = i;
                *bad_j = j;
                return false;
            }
        }
    return true;
}

bool layout_wmma_readable(const Layout *l, int elem_bytes) {
    return !l->sw_bits && !l->thr_rows && l->col_stride == 1 &&
           (l->row_stride * (uint64_t)elem_bytes) % 16 == 0;
}

bool layout_same_map(const Layout *a, const Layout *b) {
    return a->rows == b->rows && a->cols == b->cols && a->row_stride == b->row_stride &&
           a->col_stride == b->col_stride && a->sw_bits == b->sw_bits &&
           (!a->sw_bits || (a->sw_base == b->sw_base && a->sw_shift == b->sw_shift));
}

const char *layout_c_literal(const Layout *l, char *buf, size_t cap) {
    snprintf(buf, cap,
             "((cairn_layout){%" PRIu64 "u, %" PRIu64 "u, %" PRIu64 "u, %" PRIu64
             "u, %uu, %uu, %uu, %" PRIu64 "u, %" PRIu64 "u, %" PRIu64 "u, %" PRIu64 "u, %" PRIu64
             "u})",
             l->rows, l->cols, l->row_stride, l->col_stride, l->sw_bits, l->sw_base, l->sw_shift,
             l->thr_rows, l->thr_cols, l->val_rows, l->val_cols, l->cosize);
    return buf;
}
