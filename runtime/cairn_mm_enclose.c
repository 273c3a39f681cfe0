/* cairn_mm_enclose.c: mm_enclose for generated code (see cairn_mm_enclose.h): extent
 * checks, then the backend (the CPU's, or the residue algorithm's for @device views),
 * with every failure turned into a trap at the call. */
#include "cairn_mm_enclose.h"

#include <inttypes.h>
#include <stdio.h>

#include "cairn_enclose.h"

/* One operand's view: what the trap calls it, its count, and the rows x cols it must
 * hold. */
typedef struct mm_view {
    const char *name, *shape;
    uint64_t have, rows, cols;
} mm_view;

static void check_view(const mm_view *v, cairn_loc at) {
    uint64_t need;
    char reason[160];
    if (__builtin_mul_overflow(v->rows, v->cols, &need))
        snprintf(reason, sizeof reason, "mm_enclose: %s holds %" PRIu64 " elements, fewer than %s",
                 v->name, v->have, v->shape);
    else if (v->have < need)
        snprintf(reason, sizeof reason,
                 "mm_enclose: %s holds %" PRIu64 " elements, fewer than %s = %" PRIu64, v->name,
                 v->have, v->shape, need);
    else return;
    cairn_trap_at(reason, at);
}

/* The message of a refused call. */
static void fail(int rc, const cairn_enclose_info *info, cairn_loc at) {
    char reason[320];
    if (rc == CAIRN_ENCLOSE_ENONFINITE)
        snprintf(reason, sizeof reason, "mm_enclose: %c[%zu][%zu]: %s", info->bad_operand,
                 info->bad_row, info->bad_col, cairn_enclose_strerror(rc));
    else if (info->detail)
        snprintf(reason, sizeof reason, "mm_enclose: %s (%s)", cairn_enclose_strerror(rc),
                 info->detail);
    else snprintf(reason, sizeof reason, "mm_enclose: %s", cairn_enclose_strerror(rc));
    cairn_trap_at(reason, at);
}

/* width 64 (binary64) or 32 (binary32); the views are raw bits to the backend. */
bool cairn_mm_enclose_with(cairn_mm_enclose_backend *run, int width, uint64_t m, uint64_t n,
                           uint64_t k, void *lo, uint64_t lo_n, void *hi, uint64_t hi_n,
                           const void *a, uint64_t a_n, const void *b, uint64_t b_n, cairn_loc at) {
    const mm_view views[] = {{"lo", "m*n", lo_n, m, n},
                             {"hi", "m*n", hi_n, m, n},
                             {"a", "m*k", a_n, m, k},
                             {"b", "k*n", b_n, k, n}};
    for (size_t v = 0; v < sizeof views / sizeof *views; v++) check_view(&views[v], at);
    if ((size_t)m != m || (size_t)n != n || (size_t)k != k)
        cairn_trap_at("mm_enclose: a size does not fit size_t", at);
    cairn_enclose_info info;
    int rc = run(width, (size_t)m, (size_t)n, (size_t)k, a, b, lo, hi, &info);
    if (rc != CAIRN_ENCLOSE_OK) fail(rc, &info, at);
    return info.tight != 0;
}

bool cairn_mm_enclose_f64(uint64_t m, uint64_t n, uint64_t k, double *lo, uint64_t lo_n, double *hi,
                          uint64_t hi_n, const double *a, uint64_t a_n, const double *b,
                          uint64_t b_n, cairn_loc at) {
    return cairn_mm_enclose_with(cairn_enclose_bits, 64, m, n, k, lo, lo_n, hi, hi_n, a, a_n, b,
                                 b_n, at);
}

bool cairn_mm_enclose_f32(uint64_t m, uint64_t n, uint64_t k, float *lo, uint64_t lo_n, float *hi,
                          uint64_t hi_n, const float *a, uint64_t a_n, const float *b, uint64_t b_n,
                          cairn_loc at) {
    return cairn_mm_enclose_with(cairn_enclose_bits, 32, m, n, k, lo, lo_n, hi, hi_n, a, a_n, b,
                                 b_n, at);
}

bool cairn_mm_enclose_emulated_f64(uint64_t m, uint64_t n, uint64_t k, double *lo, uint64_t lo_n,
                                   double *hi, uint64_t hi_n, const double *a, uint64_t a_n,
                                   const double *b, uint64_t b_n, cairn_loc at) {
    return cairn_mm_enclose_with(cairn_enclose_residue_bits, 64, m, n, k, lo, lo_n, hi, hi_n, a,
                                 a_n, b, b_n, at);
}

bool cairn_mm_enclose_emulated_f32(uint64_t m, uint64_t n, uint64_t k, float *lo, uint64_t lo_n,
                                   float *hi, uint64_t hi_n, const float *a, uint64_t a_n,
                                   const float *b, uint64_t b_n, cairn_loc at) {
    return cairn_mm_enclose_with(cairn_enclose_residue_bits, 32, m, n, k, lo, lo_n, hi, hi_n, a,
                                 a_n, b, b_n, at);
}
