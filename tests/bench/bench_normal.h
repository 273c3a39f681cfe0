/* bench_normal.h: what the bracket GEMM's benchmarks share (bench_enclose.c and
 * enclose_cuda_bench.cu): clocks and deterministic standard normal operands (xorshift
 * and Box-Muller), so both time the same matrices. */
#ifndef BENCH_NORMAL_H
#define BENCH_NORMAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline double bench_clock(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline double bench_now(void) { return bench_clock(CLOCK_MONOTONIC); }

static uint64_t bench_rng_state = 0x9E3779B97F4A7C15u;

static inline double bench_uniform01(void) {
    bench_rng_state ^= bench_rng_state << 13;
    bench_rng_state ^= bench_rng_state >> 7;
    bench_rng_state ^= bench_rng_state << 17;
    return ((double)(bench_rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static inline void bench_fill_normal(double *x, size_t count) {
    for (size_t i = 0; i < count; i++)
        x[i] = sqrt(-2.0 * log(bench_uniform01())) * cos(6.283185307179586 * bench_uniform01());
}

#endif
