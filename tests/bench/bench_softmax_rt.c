/* bench_softmax_rt.c: a softmax and a layer-norm written in C on CAIRN's runtime, each
 * two ways in one run: "scalar" as the generated code does it today (std.cr's scalar
 * function, the storage conversions one element at a time) and "array" through the
 * runtime's array forms (cairn_cr_expf_array, cairn_f16_to_f32_array,
 * cairn_f32_to_f16_array). Both ways give the same bits, which the bench checks.
 *
 *   bench_softmax_rt softmax|layernorm LOG2N THREADS [REPS]
 *
 * softmax: m = max x, e = exp(x - m) (std.cr), s = the exact sum of e, y = e / s.
 * layernorm over f16 storage, f32 compute: x = f32(h), mu = (exact sum x) / n,
 * v = (exact sum (x - mu)^2) / n, y = f16((x - mu) / sqrt(v + 1e-5)).
 * The elementwise passes run on THREADS lanes of the runtime's pool (cairn_pool_run),
 * the exact sums on one. Prints "NAME N THREADS scalar-ms array-ms", best of REPS. */
#include "cairn_cr.h"
#include "cairn_cr_array.h"
#include "cairn_float.h"
#include "cairn_pool.h"
#include "cairn_sum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct job {
    const float *x;
    const cairn_f16 *h;
    float *e, *y;
    cairn_f16 *out;
    float m, s;
    int array;
} job;

static void exp_block(void *ctx, size_t b, size_t end, unsigned w) {
    job *j = ctx;
    (void)w;
    for (size_t i = b; i < end; i++) j->e[i] = j->x[i] - j->m;
    if (j->array) cairn_cr_expf_array(j->e + b, j->e + b, end - b);
    else
        for (size_t i = b; i < end; i++) j->e[i] = cairn_cr_expf(j->e[i]);
}

static void div_block(void *ctx, size_t b, size_t end, unsigned w) {
    job *j = ctx;
    (void)w;
    for (size_t i = b; i < end; i++) j->y[i] = j->e[i] / j->s;
}

static void softmax(job *j, size_t n) {
    float m = j->x[0];
    for (size_t i = 1; i < n; i++) m = j->x[i] > m ? j->x[i] : m;
    j->m = m;
    cairn_pool_run(n, 4096, exp_block, j);
    j->s = cairn_sum_f32(j->e, n);
    cairn_pool_run(n, 4096, div_block, j);
}

static void widen_block(void *ctx, size_t b, size_t end, unsigned w) {
    job *j = ctx;
    (void)w;
    if (j->array) cairn_f16_to_f32_array(j->h + b, j->e + b, end - b);
    else
        for (size_t i = b; i < end; i++) j->e[i] = cairn_f16_to_f32(j->h[i]);
}

static void center_block(void *ctx, size_t b, size_t end, unsigned w) {
    job *j = ctx;
    (void)w;
    for (size_t i = b; i < end; i++) {
        float d = j->e[i] - j->m;
        j->e[i] = d;
        j->y[i] = d * d;
    }
}

static void scale_block(void *ctx, size_t b, size_t end, unsigned w) {
    job *j = ctx;
    (void)w;
    for (size_t i = b; i < end; i++) j->y[i] = j->e[i] / j->s;
    if (j->array) cairn_f32_to_f16_array(j->y + b, j->out + b, end - b);
    else
        for (size_t i = b; i < end; i++) j->out[i] = cairn_f32_to_f16(j->y[i]);
}

static void layernorm(job *j, size_t n) {
    cairn_pool_run(n, 4096, widen_block, j);
    j->m = cairn_sum_f32(j->e, n) / (float)n;
    cairn_pool_run(n, 4096, center_block, j);
    j->s = sqrtf(cairn_sum_f32(j->y, n) / (float)n + 1e-5f);
    cairn_pool_run(n, 4096, scale_block, j);
}

/* Best time of reps runs of one way, ms. */
static double best(void (*f)(job *, size_t), job *j, size_t n, int reps) {
    double b = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = now();
        f(j, n);
        t = now() - t;
        b = t < b ? t : b;
    }
    return b * 1e3;
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int ln = strcmp(argv[1], "layernorm") == 0, log2n = atoi(argv[2]);
    int reps = argc > 4 ? atoi(argv[4]) : 20;
    size_t n = (size_t)1 << log2n;
    setenv("CAIRN_THREADS", argv[3], 1);
    float *x = malloc(n * 4), *e = malloc(n * 4), *y = malloc(n * 4), *y0 = malloc(n * 4);
    cairn_f16 *h = malloc(n * 2), *out = malloc(n * 2), *out0 = malloc(n * 2);
    if (!x || !e || !y || !y0 || !h || !out || !out0) return 2;
    uint64_t r = 12345;
    for (size_t i = 0; i < n; i++) {
        r = r * 48271 % 2147483647;
        x[i] = (float)(r % 20001) * 0.001f - 10.0f;
        h[i] = cairn_f32_to_f16(x[i]);
    }
    void (*f)(job *, size_t) = ln ? layernorm : softmax;
    job j = {.x = x, .h = h, .e = e, .y = y, .out = out, .array = 0};
    double ts = 1e30, ta = 1e30;
    for (int round = 0; round < 3; round++) { /* the two ways interleaved */
        j.array = 0, j.y = y0, j.out = out0;
        double a = best(f, &j, n, reps);
        j.array = 1, j.y = y, j.out = out;
        double b = best(f, &j, n, reps);
        ts = a < ts ? a : ts;
        ta = b < ta ? b : ta;
    }
    if (ln ? memcmp(out, out0, n * 2) : memcmp(y, y0, n * 4)) {
        fprintf(stderr, "bench_softmax_rt: the two ways gave different bits\n");
        return 1;
    }
    printf("%s %zu %s %.4f %.4f\n", argv[1], n, argv[3], ts, ta);
    return 0;
}
