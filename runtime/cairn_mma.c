/* cairn_mma.c: the host's mma_unordered (see cairn_mma.h): the extents checked once,
 * then the reference loop. */
#include "cairn_mma.h"

#include <inttypes.h>
#include <stdio.h>

/* Traps unless `have` elements hold a rows x cols matrix. */
static void check_matrix(const char *op, const char *name, const char *shape, uint64_t have,
                         uint64_t rows, uint64_t cols, cairn_loc at) {
    uint64_t need;
    char reason[192];
    if (__builtin_mul_overflow(rows, cols, &need))
        snprintf(reason, sizeof reason, "%s: %s holds %" PRIu64 " elements, fewer than %s", op,
                 name, have, shape);
    else if (have < need)
        snprintf(reason, sizeof reason,
                 "%s: %s holds %" PRIu64 " elements, fewer than %s = %" PRIu64, op, name, have,
                 shape, need);
    else return;
    cairn_trap_at(reason, at);
}

void cairn_mma_check_extents(const char *op, uint64_t m, uint64_t n, uint64_t k, uint64_t c_n,
                             uint64_t a_n, uint64_t b_n, cairn_loc at) {
    check_matrix(op, "c", "m*n", c_n, m, n, at);
    check_matrix(op, "a", "m*k", a_n, m, k, at);
    check_matrix(op, "b", "k*n", b_n, k, n, at);
}

#define CAIRN_MMA_HOST(T)                                                                          \
    void cairn_mma_##T(uint64_t m, uint64_t n, uint64_t k, float *c, uint64_t c_n,                 \
                       const cairn_##T *a, uint64_t a_n, const cairn_##T *b, uint64_t b_n,         \
                       cairn_loc at) {                                                             \
        cairn_mma_check_extents("mma_unordered", m, n, k, c_n, a_n, b_n, at);                      \
        cairn_mma_ref_##T(0, m, n, k, c, a, b);                                                    \
    }
CAIRN_MMA_HOST(f16)
CAIRN_MMA_HOST(bf16)
CAIRN_MMA_HOST(f8e4m3)
CAIRN_MMA_HOST(f8e5m2)
