/* bench_enclose.c: the exact bracket GEMM against plain f64 GEMMs, and its width against
 * an interval GEMM, in one run on the same cores.
 *
 *   bench_enclose [M N K [REPS]]          default M=256 N=256 K=1024 (256x1024x256), 10 reps
 *   bench_enclose --dgemm [M N K [REPS]]  only OpenBLAS dgemm's best time ("dgemm_ms X"):
 *                                         bench_enclose.sh picks OPENBLAS_CORETYPE by it
 *
 * Rate: best-of-REPS wall time (the three interleaved) of cairn_enclose_f64 at M x K times K x N, against
 * OpenBLAS dgemm (set to the pool's width) and a naive triple loop run on the pool.
 * Process CPU time is printed too: on a shared machine it is the steadier figure at one
 * thread (with more, the pools' spinning counts as work).
 * Width: for random normal operands at several K, the bracket width in representable
 * steps (max and mean over outputs) of cairn_enclose_f64 and of the interval GEMM that
 * rounds outward on every partial product and sum (nextafter after round-to-nearest,
 * which is a valid bound for finite normal values). */
#include "cairn_enclose.h"
#include "cairn_pool.h"
#include "bench_normal.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { return bench_now(); }
static double cpu_now(void) { return bench_clock(CLOCK_PROCESS_CPUTIME_ID); }
static void fill_normal(double *x, size_t count) { bench_fill_normal(x, count); }

typedef struct {
    size_t m, n, k;
    const double *a, *b;
    double *c;
} naive_job;

static void naive_rows(void *ctx, size_t begin, size_t end, unsigned worker) {
    (void)worker;
    const naive_job *J = ctx;
    for (size_t i = begin; i < end; i++) {
        double *c = J->c + i * J->n;
        for (size_t j = 0; j < J->n; j++) c[j] = 0.0;
        for (size_t t = 0; t < J->k; t++) {
            double a = J->a[i * J->k + t];
            const double *b = J->b + t * J->n;
            for (size_t j = 0; j < J->n; j++) c[j] += a * b[j];
        }
    }
}

typedef enum { RUN_ENCLOSE, RUN_BLAS, RUN_NAIVE, RUNS } which;

static void run_once(which w, size_t m, size_t n, size_t k, const double *a, const double *b,
                     double *lo, double *hi) {
    if (w == RUN_ENCLOSE) {
        int rc = cairn_enclose_f64(m, n, k, a, b, lo, hi, NULL);
        if (rc) {
            fprintf(stderr, "bench_enclose: %s\n", cairn_enclose_strerror(rc));
            exit(1);
        }
    } else if (w == RUN_BLAS) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)m, (int)n, (int)k, 1.0, a,
                    (int)k, b, (int)n, 0.0, lo, (int)n);
    } else {
        naive_job J = {m, n, k, a, b, lo};
        cairn_pool_run(m, 1, naive_rows, &J);
    }
}

/* Best-of-reps times, the three contenders interleaved so that a busy spell on a
 * shared machine hits them alike. */
static void best_times(int reps, size_t m, size_t n, size_t k, const double *a, const double *b,
                       double *lo, double *hi, double best[RUNS], double best_cpu[RUNS]) {
    for (int w = 0; w < RUNS; w++) best[w] = best_cpu[w] = 1e30;
    for (int r = 0; r < reps; r++)
        for (int w = 0; w < RUNS; w++) {
            double t0 = now(), c0 = cpu_now();
            run_once((which)w, m, n, k, a, b, lo, hi);
            double t = now() - t0, c = cpu_now() - c0;
            if (t < best[w]) best[w] = t;
            if (c < best_cpu[w]) best_cpu[w] = c;
        }
}

/* Steps between two finite-or-infinite doubles, through their ordered bit patterns. */
static int64_t ordinal(double x) {
    int64_t i;
    memcpy(&i, &x, 8);
    return i < 0 ? -(i & INT64_MAX) : i;
}

/* Interval GEMM: every product and partial sum is widened outward by one step. */
static void interval_gemm(size_t m, size_t n, size_t k, const double *a, const double *b,
                          double *lo, double *hi) {
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double l = 0.0, h = 0.0;
            for (size_t t = 0; t < k; t++) {
                double p = a[i * k + t] * b[t * n + j];
                l = nextafter(l + nextafter(p, -INFINITY), -INFINITY);
                h = nextafter(h + nextafter(p, INFINITY), INFINITY);
            }
            lo[i * n + j] = l;
            hi[i * n + j] = h;
        }
}

static void width_stats(size_t count, const double *lo, const double *hi, int64_t *max,
                        double *mean) {
    *max = 0;
    double sum = 0;
    for (size_t i = 0; i < count; i++) {
        int64_t w = ordinal(hi[i]) - ordinal(lo[i]);
        if (w > *max) *max = w;
        sum += (double)w;
    }
    *mean = sum / (double)count;
}

static void width_table(void) {
    const size_t m = 16, n = 16, ks[] = {16, 256, 1024, 4096, 16384, 65536};
    printf("width in representable steps (random normal, %zux%zu outputs):\n", m, n);
    printf("  %6s  %14s  %14s  %22s\n", "K", "enclose max", "enclose mean", "interval max / mean");
    for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
        size_t k = ks[c];
        double *a = malloc(m * k * 8), *b = malloc(k * n * 8), *lo = malloc(m * n * 8),
               *hi = malloc(m * n * 8);
        if (!a || !b || !lo || !hi) exit(1);
        fill_normal(a, m * k);
        fill_normal(b, k * n);
        int64_t emax, imax;
        double emean, imean;
        if (cairn_enclose_f64(m, n, k, a, b, lo, hi, NULL)) exit(1);
        width_stats(m * n, lo, hi, &emax, &emean);
        interval_gemm(m, n, k, a, b, lo, hi);
        width_stats(m * n, lo, hi, &imax, &imean);
        printf("  %6zu  %14lld  %14.2f  %12lld / %.1f\n", k, (long long)emax, emean,
               (long long)imax, imean);
        free(a), free(b), free(lo), free(hi);
    }
}

/* The best of REPS dgemm runs, alone. */
static int dgemm_only(size_t m, size_t n, size_t k, int reps, const double *a, const double *b,
                      double *c) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        run_once(RUN_BLAS, m, n, k, a, b, c, c);
        if (now() - t0 < best) best = now() - t0;
    }
    printf("dgemm_ms %.4f\n", best * 1e3);
    return 0;
}

static void report(size_t m, size_t n, size_t k, unsigned width, const cairn_enclose_info *info,
                   const double best[RUNS], const double cpu[RUNS]) {
    double te = best[RUN_ENCLOSE], tb = best[RUN_BLAS], tn = best[RUN_NAIVE];
    double flops = 2.0 * (double)m * (double)n * (double)k;
    const char *core = getenv("OPENBLAS_CORETYPE");
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) < 0) load[0] = -1;
    printf("bracket GEMM %zux%zux%zu f64 on %u threads (kernel %s, bits %d+%d, tight %d); "
           "load average %.1f when done (a shared machine inflates the slower side)\n",
           m, k, n, width, info->kernel, info->bits_a, info->bits_b, info->tight, load[0]);
    printf("  enclose        %9.2f ms  %7.2f Gmul-add/s\n", te * 1e3, flops / te * 0.5e-9);
    printf("  openblas dgemm %9.2f ms  %7.2f Gflop/s  (OPENBLAS_CORETYPE=%s)\n", tb * 1e3,
           flops / tb * 1e-9, core ? core : "its own choice");
    printf("  naive loop     %9.2f ms  %7.2f Gflop/s\n", tn * 1e3, flops / tn * 1e-9);
    printf("  ratio enclose/openblas %.2fx slower (target <= 6x)\n", te / tb);
    printf("  ratio enclose/naive    %.2fx\n", te / tn);
    printf("  process CPU time (all threads; spinning counts): enclose %.2f ms, openblas "
           "%.2f ms, ratio %.2fx\n",
           cpu[RUN_ENCLOSE] * 1e3, cpu[RUN_BLAS] * 1e3, cpu[RUN_ENCLOSE] / cpu[RUN_BLAS]);
}

int main(int argc, char **argv) {
    size_t m = 256, n = 256, k = 1024;
    int reps = 10, only_dgemm = argc > 1 && strcmp(argv[1], "--dgemm") == 0;
    argc -= only_dgemm, argv += only_dgemm;
    if (argc >= 4) {
        m = strtoul(argv[1], NULL, 10);
        n = strtoul(argv[2], NULL, 10);
        k = strtoul(argv[3], NULL, 10);
    }
    if (argc >= 5) reps = atoi(argv[4]);
    if (argc == 2 || argc == 3 || !m || !n || !k || reps < 1) {
        fprintf(stderr, "usage: bench_enclose [--dgemm] [M N K [REPS]]\n");
        return 2;
    }
    unsigned width = cairn_pool_width();
    openblas_set_num_threads((int)width);
    double *a = malloc(m * k * 8), *b = malloc(k * n * 8), *lo = malloc(m * n * 8),
           *hi = malloc(m * n * 8);
    if (!a || !b || !lo || !hi) return 1;
    fill_normal(a, m * k);
    fill_normal(b, k * n);
    if (only_dgemm) return dgemm_only(m, n, k, reps, a, b, lo);
    cairn_enclose_info info;
    cairn_enclose_f64(m, n, k, a, b, lo, hi, &info);
    double best[RUNS], cpu[RUNS];
    best_times(reps, m, n, k, a, b, lo, hi, best, cpu);
    report(m, n, k, width, &info, best, cpu);
    free(a), free(b), free(lo), free(hi);
    width_table();
    return 0;
}
