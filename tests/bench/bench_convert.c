/* bench_convert.c: bulk f32 -> f16 and f32 -> bf16 conversion rate of the runtime
 * (cairn_f32_to_f16_array, cairn_f32_to_bf16_array) against the F16C hardware
 * conversion (_mm256_cvtps_ph, where the CPU has it) and against a plain branchy
 * scalar loop, all measured in this one run and printed as ratios.
 *
 *   bench_convert [ELEMENTS...]    array lengths (default: 16384 and 16777216)
 *
 * Each kernel runs over the same inputs (normals, subnormals, ties, overflows and a
 * few NaNs); the best of several repetitions counts. The runtime's output is checked
 * against the hardware's before any figure is printed. */
#include "cairn_float.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_F16C 1
#endif

typedef void (*kernel)(const float *, uint16_t *, size_t);

/* The branchy baseline: the textbook scalar f32 -> f16, one case at a time. */
__attribute__((noinline)) static void branchy_f16(const float *in, uint16_t *out, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &in[i], sizeof u);
        uint32_t sign = (u >> 16) & 0x8000u, e = (u >> 23) & 0xFFu, m = u & 0x7FFFFFu;
        uint16_t r;
        if (e == 0xFF) {
            r = (uint16_t)(m ? 0x7E00u | (m >> 13) : 0x7C00u);
        } else if (e > 142) {
            r = 0x7C00u;
        } else if (e >= 113) {
            uint32_t h = ((e - 112) << 10) | (m >> 13), rest = m & 0x1FFFu;
            if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
            r = (uint16_t)h;
        } else if (e >= 101) {
            uint32_t shift = 126 - e, full = m | 0x800000u, h = full >> shift;
            uint32_t rest = full & ((1u << shift) - 1), half = 1u << (shift - 1);
            if (rest > half || (rest == half && (h & 1u))) h++;
            r = (uint16_t)h;
        } else {
            r = 0;
        }
        out[i] = (uint16_t)(sign | r);
    }
}

__attribute__((noinline)) static void branchy_bf16(const float *in, uint16_t *out, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &in[i], sizeof u);
        if ((u & 0x7FFFFFFFu) > 0x7F800000u) {
            out[i] = (uint16_t)((u >> 16) | 0x40u);
        } else {
            uint32_t h = u >> 16, rest = u & 0xFFFFu;
            if (rest > 0x8000u || (rest == 0x8000u && (h & 1u))) h++;
            out[i] = (uint16_t)h;
        }
    }
}

static void runtime_f16(const float *in, uint16_t *out, size_t n) {
    cairn_f32_to_f16_array(in, out, n);
}

static void runtime_f16_int(const float *in, uint16_t *out, size_t n) {
    cairn__f32_to_f16_array_int(in, out, n);
}

static void runtime_bf16(const float *in, uint16_t *out, size_t n) {
    cairn_f32_to_bf16_array(in, out, n);
}

#ifdef HAVE_F16C
__attribute__((target("f16c,avx2"))) static void hardware_f16(const float *in, uint16_t *out,
                                                              size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) out[i] = (uint16_t)_cvtss_sh(in[i], _MM_FROUND_TO_NEAREST_INT);
}
#endif

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Best seconds per pass over n elements, repeating until ~0.2 s has gone by. */
static double best_time(kernel k, const float *in, uint16_t *out, size_t n) {
    double best = 1e30, spent = 0;
    for (int rep = 0; rep < 200 && (rep < 5 || spent < 0.2); rep++) {
        double t0 = now();
        k(in, out, n);
        double t = now() - t0;
        spent += t;
        best = t < best ? t : best;
    }
    return best;
}

static void fill(float *in, size_t n) {
    uint32_t state = 12345;
    for (size_t i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        /* exponents spread over f16's range and a little beyond on both ends */
        uint32_t e = 100 + (state >> 24) % 48, u = (state & 0x807FFFFFu) | (e << 23);
        if (i % 97 == 0) u = 0x7FC00000u | (state & 0x3FFFFF);
        memcpy(&in[i], &u, sizeof u);
    }
}

static int run_size(size_t n) {
    float *in = malloc(n * sizeof *in);
    uint16_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!in || !a || !b) {
        fprintf(stderr, "bench_convert: out of memory for %zu elements\n", n);
        return 1;
    }
    fill(in, n);
    double rt16 = best_time(runtime_f16, in, a, n), br16 = best_time(branchy_f16, in, b, n);
    int same = memcmp(a, b, n * sizeof *a) == 0;
    double rtb = best_time(runtime_bf16, in, a, n), brb = best_time(branchy_bf16, in, b, n);
    same = same && memcmp(a, b, n * sizeof *a) == 0;
    double int16 = best_time(runtime_f16_int, in, a, n), hw16 = 0;
    runtime_f16(in, b, n);
    same = same && memcmp(a, b, n * sizeof *a) == 0;
#ifdef HAVE_F16C
    if (strcmp(cairn_f32_to_f16_array_path(), "f16c") == 0) { /* the CPU has F16C */
        hw16 = best_time(hardware_f16, in, b, n);
        same = same && memcmp(a, b, n * sizeof *a) == 0;
    }
#endif
    if (!same) {
        fprintf(stderr, "bench_convert: the kernels disagree on the bits; no figures\n");
        return 1;
    }
    printf("%9zu elements: runtime f16 %.2f Gelem/s (path %s), integer-only f16 %.2f, "
           "bf16 %.2f Gelem/s\n",
           n, n / rt16 / 1e9, cairn_f32_to_f16_array_path(), n / int16 / 1e9, n / rtb / 1e9);
    if (hw16 > 0)
        printf(
            "    runtime f16 time / F16C time           %6.2fx  (F16C %.2f Gelem/s; target <= 1.5x)\n"
            "    integer-only f16 time / F16C time      %6.2fx\n"
            "    runtime bf16 time / F16C f16 time      %6.2fx\n",
            rt16 / hw16, n / hw16 / 1e9, int16 / hw16, rtb / hw16);
    else printf("    F16C: not on this CPU\n");
    printf("    branchy f16 time / integer-only f16    %6.2fx\n"
           "    branchy bf16 time / runtime bf16       %6.2fx\n",
           br16 / int16, brb / rtb);
    free(in);
    free(a);
    free(b);
    return 0;
}

int main(int argc, char **argv) {
    size_t defaults[] = {16384, 16777216};
    int status = 0;
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: bench_convert [ELEMENTS...]  (default 16384 16777216)\n");
        return 0;
    }
    for (int i = 1; i < argc; i++) status |= run_size((size_t)strtoull(argv[i], 0, 10));
    for (int i = 0; argc == 1 && i < 2; i++) status |= run_size(defaults[i]);
    return status;
}
