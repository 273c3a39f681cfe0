/* bench_mma.c: mma_unordered on the host (make bench, via bench_mma.sh): the device
 * tiling emulated on the pool (cairn_mma_tiled_f16: 64 x 64 tiles, four warps of 2 x 2
 * fragments, two k stages) against the reference loop (cairn_mma_f16), on one f16
 * multiply of m = n = k = N (default 512), in the same process. Both give the same bits
 * (checked here too: a difference exits 1). Prints each time and the ratio. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cairn_mma.h"
#include "cairn_pool.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: bench_mma [N]   (an N x N x N f16 multiply; default 512)\n");
        return 0;
    }
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 512;
    if (n == 0 || n > 4096) {
        fprintf(stderr, "bench_mma: N is 1..4096\n");
        return 2;
    }
    cairn_f16 *a = malloc(n * n * sizeof *a), *b = malloc(n * n * sizeof *b);
    float *c0 = malloc(n * n * sizeof *c0), *c1 = malloc(n * n * sizeof *c1);
    if (!a || !b || !c0 || !c1) return 2;
    for (uint64_t i = 0; i < n * n; i++) {
        a[i] = cairn_f32_to_f16((float)(i % 61) / 32.0f - 0.9f);
        b[i] = cairn_f32_to_f16((float)(i % 37) / 16.0f - 1.1f);
        c0[i] = c1[i] = (float)(i % 11) - 5.0f;
    }
    cairn_pool_width(); /* start the pool outside the timing */
    double t0 = now();
    cairn_mma_f16(n, n, n, c0, n * n, a, n * n, b, n * n, CAIRN_NOLOC);
    double t1 = now();
    cairn_mma_tiled_f16(n, n, n, c1, n * n, a, n * n, b, n * n, CAIRN_NOLOC);
    double t2 = now();
    int same = memcmp(c0, c1, n * n * sizeof *c0) == 0;
    printf(
        "mma %" PRIu64
        "^3 f16: reference loop %.3f s, emulated tiling (%u threads) %.3f s, ratio %.2f, bits %s\n",
        n, t1 - t0, cairn_pool_width(), t2 - t1, (t2 - t1) / (t1 - t0), same ? "equal" : "DIFFER");
    free(a);
    free(b);
    free(c0);
    free(c1);
    return same ? 0 : 1;
}
