/* bench_sum.c: the exact sum against the ordered fold, in the same process.
 *
 *   bench_sum [MAX_N]       (CAIRN_THREADS sets the pool width; bench_sum.sh runs it)
 *
 * For f64 and f32 and n = 10, 10^3, 10^5, 10^6, 10^7 (up to MAX_N) prints the best-of-7 time
 * per sum of cairn_fold_fNN (reduce + for), cairn_sum_fNN (reduce + parallel: the pool
 * for large n) and one CAIRN_SUMNN_BLOCK block (the block function a `yield` lowers to, on one
 * thread), and the ratios exact / fold. Terms are uniform in [-1, 1), a sum whose
 * partial sums wander, which is what the fold's latency and the expansions both see. */
#include "cairn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* On one thread, the thread's CPU time: on a shared machine the other tenants' time
 * slices then do not count against either side. With more threads, wall time (the
 * point of the pool is the wall time). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile double sink;

/* What `let s = reduce + parallel i in n yield x[i]` lowers to, on the calling thread:
 * one block of CAIRN_SUMNN_BLOCK's register-held loop, with an accumulator's init and
 * round (the pool adds only its region cost; generated code takes a tiny path under 16
 * terms instead, and tests/bench/bench_codegen.sh times what it generates). */
CAIRN_SUM64_BLOCK(yield_block64, const double, x, i, x[i])
CAIRN_SUM32_BLOCK(yield_block32, const float, x, i, x[i])

static double add_loop_f64(const double *x, size_t n) {
    cairn_sum64 s;
    cairn_sum64_init(&s);
    yield_block64((void *)x, 0, n, &s);
    return cairn_sum64_round(&s);
}

static double add_loop_f32(const float *x, size_t n) {
    cairn_sum32 s;
    cairn_sum32_init(&s);
    yield_block32((void *)x, 0, n, &s);
    return cairn_sum32_round(&s);
}

typedef double (*sum_fn)(const void *, size_t);
static double fold64(const void *x, size_t n) { return cairn_fold_f64(x, n); }
static double exact64(const void *x, size_t n) { return cairn_sum_f64(x, n); }
static double adds64(const void *x, size_t n) { return add_loop_f64(x, n); }
static double fold32(const void *x, size_t n) { return cairn_fold_f32(x, n); }
static double exact32(const void *x, size_t n) { return cairn_sum_f32(x, n); }
static double adds32(const void *x, size_t n) { return add_loop_f32(x, n); }

/* Best of 7 trials of (at least ~3e7 terms or one call), in ns per call. */
static double time_per_call(sum_fn f, const void *x, size_t n) {
    size_t reps = n >= 30000000 ? 1 : 30000000 / n;
    double best = 1e300;
    for (int t = 0; t < 7; t++) {
        double t0 = now_ns();
        for (size_t r = 0; r < reps; r++) sink = f(x, n);
        double per = (now_ns() - t0) / (double)reps;
        if (per < best) best = per;
    }
    return best;
}

static void row(const char *fmt, size_t n, sum_fn fold, sum_fn exact, sum_fn adds, const void *x) {
    double tf = time_per_call(fold, x, n), te = time_per_call(exact, x, n);
    double ta = time_per_call(adds, x, n);
    printf("%s n=%zu fold_ns=%.1f exact_ns=%.1f ratio=%.2f add_ns=%.1f add_ratio=%.2f\n", fmt, n,
           tf, te, te / tf, ta, ta / tf);
    fflush(stdout);
}

/* The pooled exact sum again, each block timed in its thread's CPU time. The workers'
 * total against the 1-thread time says whether running on W threads inflates the work
 * (memory stalls count: bandwidth shared between the threads shows up here); total / W
 * is then what a perfectly balanced region would take on a machine nobody else uses.
 * The busiest worker's share shows how even the balance was in this run. */
typedef struct timed_ctx {
    const double *x;
    cairn_sum64 *accs;
    double busy[CAIRN_POOL_MAX_WIDTH];
} timed_ctx;

static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void timed_task(void *ctx, size_t b, size_t e, unsigned worker) {
    timed_ctx *c = ctx;
    double t0 = thread_cpu_ns();
    cairn_sum64_add_block(&c->accs[worker], c->x + b, e - b);
    c->busy[worker] += thread_cpu_ns() - t0;
}

static void busiest_row(const double *x, size_t n) {
    static cairn_sum64 accs[CAIRN_POOL_MAX_WIDTH];
    unsigned width = cairn_pool_width();
    size_t grain = n / (4 * (size_t)width) < 8192 ? 8192 : n / (4 * (size_t)width);
    double best_wall = 1e300, best_busiest = 1e300, best_total = 1e300;
    for (int r = 0; r < 7; r++) { /* best of 7, as the other rows */
        timed_ctx c = {x, accs, {0}};
        double t0 = now_ns();
        for (unsigned w = 0; w < width; w++) cairn_sum64_init(&accs[w]);
        cairn_pool_run(n, grain, timed_task, &c);
        for (unsigned w = 1; w < width; w++) cairn_sum64_merge(&accs[0], &accs[w]);
        sink = cairn_sum64_round(&accs[0]);
        double wall = now_ns() - t0, busiest = 0, total = 0;
        for (unsigned w = 0; w < width; w++) {
            busiest = c.busy[w] > busiest ? c.busy[w] : busiest;
            total += c.busy[w];
        }
        best_wall = wall < best_wall ? wall : best_wall;
        best_busiest = busiest < best_busiest ? busiest : best_busiest;
        best_total = total < best_total ? total : best_total;
    }
    printf("busiest f64 n=%zu wall_ns=%.1f busiest_cpu_ns=%.1f total_cpu_ns=%.1f\n", n, best_wall,
           best_busiest, best_total);
}

int main(int argc, char **argv) {
    size_t max_n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    if (argc > 2 || max_n < 10) {
        fprintf(stderr, "usage: bench_sum [MAX_N >= 10]   (CAIRN_THREADS: the pool's width)\n");
        return argc > 1 && !strcmp(argv[1], "--help") ? 0 : 2;
    }
    double *x = malloc(max_n * sizeof *x);
    float *y = malloc(max_n * sizeof *y);
    if (!x || !y) {
        fprintf(stderr, "bench_sum: out of memory for %zu terms\n", max_n);
        return 1;
    }
    srand(12345);
    for (size_t i = 0; i < max_n; i++) {
        x[i] = 2.0 * rand() / ((double)RAND_MAX + 1) - 1.0;
        y[i] = (float)x[i];
    }
    if (cairn_pool_width() == 1) bench_clock = CLOCK_THREAD_CPUTIME_ID;
    printf("width=%u clock=%s\n", cairn_pool_width(),
           cairn_pool_width() == 1 ? "thread-cpu" : "wall");
    static const size_t sizes[] = {10, 1000, 100000, 1000000, 10000000};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_n; i++)
        row("f64", sizes[i], fold64, exact64, adds64, x);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_n; i++)
        row("f32", sizes[i], fold32, exact32, adds32, y);
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max_n; i++)
        if (sizes[i] >= 1000000 && cairn_pool_width() > 1) busiest_row(x, sizes[i]);
    free(x);
    free(y);
    return 0;
}
