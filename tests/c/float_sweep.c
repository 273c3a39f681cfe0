/* float_sweep.c: f32 -> FMT for every f32 bit pattern (or a slice of them), the
 * runtime of cairn_float.h against an independent reference written differently, and
 * for f16, where the CPU has F16C, against the hardware conversion too.
 *
 *   float_sweep FMT [FIRST LAST]   magnitudes FIRST..LAST (hex, default 0..7fffffff),
 *                                  each with both signs
 *
 * For f16 it checks the bulk function (F16C where the CPU has it), the integer-only bulk
 * path and the scalar routine, and the F16C instruction itself, also with DAZ, FTZ and
 * round-toward-zero set in MXCSR (it must ignore them).
 *
 * The reference never rounds bits: it lists every finite value of FMT as a double
 * (from the format's definition, with ldexp), adds the step past the largest, and walks
 * the f32 magnitudes in increasing order beside that list. Each f32 goes to the nearer
 * neighbour, compared against their midpoint (exact in double: the neighbours have at
 * most 11 significant bits), a tie to the even bit pattern; landing on the step past the
 * largest is an overflow. Negative inputs must give the positive result with the sign
 * bit. NaNs follow the documented rule (quiet, sign and top payload bits kept).
 * Prints one summary line; exits 1 on any difference. */
#include "cairn_float.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_F16C_PATH 1
#endif

enum { CHUNK = 1 << 16, PAST = 0x10000 };

typedef struct format {
    const char *name;
    int ebits, man, bias, ieee;
    double *value; /* ascending finite non-negative values, then the step past them */
    uint32_t *bits;
    int count; /* finite values; value[count] is the step past the largest */
} format;

static format make_format(const char *name) {
    static const format known[] = {{"f16", 5, 10, 15, 1, 0, 0, 0},
                                   {"bf16", 8, 7, 127, 1, 0, 0, 0},
                                   {"f8e4m3", 4, 3, 7, 0, 0, 0, 0},
                                   {"f8e5m2", 5, 2, 15, 1, 0, 0, 0}};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        if (strcmp(known[k].name, name) != 0) continue;
        format f = known[k];
        int patterns = 1 << (f.ebits + f.man);
        f.value = malloc((size_t)(patterns + 1) * sizeof *f.value);
        f.bits = malloc((size_t)(patterns + 1) * sizeof *f.bits);
        if (!f.value || !f.bits) exit(2);
        int emask = (1 << f.ebits) - 1, fmask = (1 << f.man) - 1;
        for (int b = 0; b < patterns; b++) {
            int e = b >> f.man, m = b & fmask;
            if (e == emask && (f.ieee || m == fmask)) continue; /* infinity or NaN */
            double v =
                e == 0 ? ldexp(m, 1 - f.bias - f.man) : ldexp(m + (1 << f.man), e - f.bias - f.man);
            if (f.count && v <= f.value[f.count - 1]) {
                fprintf(stderr, "float_sweep: %s values out of order\n", name);
                exit(2);
            }
            f.value[f.count] = v;
            f.bits[f.count++] = (uint32_t)b;
        }
        double top = f.value[f.count - 1];
        f.value[f.count] = top + (top - f.value[f.count - 2]);
        f.bits[f.count] = f.bits[f.count - 1] + 1;
        return f;
    }
    fprintf(stderr, "float_sweep: unknown format '%s' (f16, bf16, f8e4m3, f8e5m2)\n", name);
    exit(2);
}

/* The reference result for the magnitude of f32 bits u, walking index *at upward. */
static uint32_t reference(const format *f, uint32_t u, int *at) {
    if (u > 0x7F800000u) { /* NaN */
        uint32_t quiet = f->ieee ? 1u << (f->man - 1) : (1u << f->man) - 1;
        uint32_t nan = (((1u << f->ebits) - 1) << f->man) | quiet;
        return nan | ((u & 0x7FFFFFu) >> (23 - f->man));
    }
    float xf;
    memcpy(&xf, &u, sizeof xf);
    double x = xf;
    if (x >= f->value[f->count]) return f->ieee ? f->bits[f->count] : PAST;
    while (x >= f->value[*at + 1]) ++*at;
    double lo = f->value[*at], hi = f->value[*at + 1], mid = (lo + hi) / 2;
    int pick = x < mid ? *at : x > mid ? *at + 1 : (f->bits[*at] % 2 == 0 ? *at : *at + 1);
    if (pick == f->count) return f->ieee ? f->bits[f->count] : PAST;
    return f->bits[pick];
}

/* The runtime on one chunk of inputs. */
static void runtime_chunk(const char *name, const float *in, uint32_t *out, size_t n) {
    static cairn_f16 half[2 * CHUNK];
    static cairn_f16 half_int[2 * CHUNK];
    if (strcmp(name, "f16") == 0) { /* bulk (maybe F16C), bulk integer-only and scalar */
        cairn_f32_to_f16_array(in, half, n);
        cairn__f32_to_f16_array_int(in, half_int, n);
        for (size_t i = 0; i < n; i++) {
            uint32_t scalar = cairn_f32_to_f16(in[i]);
            out[i] = half[i] == scalar && half_int[i] == scalar ? scalar : 0xDEAD0000u;
        }
    } else if (strcmp(name, "bf16") == 0) {
        cairn_f32_to_bf16_array(in, half, n);
        for (size_t i = 0; i < n; i++) {
            uint32_t scalar = cairn_f32_to_bf16(in[i]);
            out[i] = half[i] == scalar ? scalar : 0xDEAD0000u; /* bulk and scalar agree */
        }
    } else if (strcmp(name, "f8e5m2") == 0) {
        for (size_t i = 0; i < n; i++) out[i] = cairn_f32_to_f8e5m2(in[i]);
    } else {
        for (size_t i = 0; i < n; i++) {
            cairn_f8e4m3 r;
            out[i] = cairn_f32_to_f8e4m3_try(in[i], &r) ? r : PAST;
        }
    }
}

#ifdef HAVE_F16C_PATH
__attribute__((target("f16c,avx"))) static void f16c_chunk(const float *in, uint16_t *out,
                                                           size_t n) {
    float pad[8] = {0};
    uint16_t tail[8];
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    memcpy(pad, in + i, (n - i) * sizeof *in);
    _mm_storeu_si128((__m128i *)tail,
                     _mm256_cvtps_ph(_mm256_loadu_ps(pad), _MM_FROUND_TO_NEAREST_INT));
    memcpy(out + i, tail, (n - i) * sizeof *out);
}
#endif

int main(int argc, char **argv) {
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: float_sweep f16|bf16|f8e4m3|f8e5m2 [FIRST LAST]\n");
        return 2;
    }
    format f = make_format(argv[1]);
    uint32_t first = argc == 4 ? (uint32_t)strtoul(argv[2], 0, 16) : 0;
    uint32_t last = argc == 4 ? (uint32_t)strtoul(argv[3], 0, 16) : 0x7FFFFFFFu;
    uint32_t sign_bit = 1u << (f.ebits + f.man);
    int f16c = 0;
#ifdef HAVE_F16C_PATH
    f16c = strcmp(f.name, "f16") == 0 && strcmp(cairn_f32_to_f16_array_path(), "f16c") == 0;
#endif
    static float in[2 * CHUNK];
    static uint32_t out[2 * CHUNK];
    static uint16_t hw[2 * CHUNK], hw_modes[2 * CHUNK];
    uint64_t checked = 0, bad = 0, hw_bad = 0, hw_modes_bad = 0;
    int at = 0;
    clock_t start = clock();
    for (uint64_t base = first; base <= last; base += CHUNK) {
        size_t n = (size_t)(last - base + 1 < CHUNK ? last - base + 1 : CHUNK);
        for (size_t i = 0; i < n; i++) {
            uint32_t u = (uint32_t)(base + i), neg = u | 0x80000000u;
            memcpy(&in[i], &u, sizeof u);
            memcpy(&in[n + i], &neg, sizeof neg);
        }
        runtime_chunk(f.name, in, out, 2 * n);
#ifdef HAVE_F16C_PATH
        if (f16c) {
            /* the instruction must not care about MXCSR: with DAZ, FTZ and round toward
             * zero set it must give the same bits as with the defaults */
            unsigned csr = _mm_getcsr();
            f16c_chunk(in, hw_modes, 2 * n);
            _mm_setcsr(csr | 0x8040u | 0x6000u);
            f16c_chunk(in, hw, 2 * n);
            _mm_setcsr(csr);
            for (size_t i = 0; i < 2 * n; i++) hw_modes_bad += hw[i] != hw_modes[i];
        }
#endif
        for (size_t i = 0; i < n; i++) {
            uint32_t want = reference(&f, (uint32_t)(base + i), &at);
            uint32_t want_neg = want == PAST ? PAST : want | sign_bit;
            for (int side = 0; side < 2; side++) {
                size_t k = side ? n + i : i;
                uint32_t w = side ? want_neg : want;
                if (out[k] != w && bad++ < 10)
                    printf("%s: f32 %08" PRIx32 " runtime %" PRIx32 " reference %" PRIx32 "\n",
                           f.name, (uint32_t)(base + i) | (side ? 0x80000000u : 0), out[k], w);
                if (f16c && hw[k] != w && hw_bad++ < 10)
                    printf("f16: f32 %08" PRIx32 " F16C %x reference %" PRIx32 "\n",
                           (uint32_t)(base + i) | (side ? 0x80000000u : 0), hw[k], w);
            }
        }
        checked += 2 * n;
    }
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    printf("%s: %" PRIu64 " f32 inputs, %" PRIu64 " differ from the reference; F16C %s%" PRIu64
           ", %" PRIu64 " change under DAZ+FTZ+RZ; %.1f s\n",
           f.name, checked, bad, f16c ? "differs on " : "not checked, ", f16c ? hw_bad : 0,
           hw_modes_bad, seconds);
    free(f.value);
    free(f.bits);
    return bad || hw_bad || hw_modes_bad ? 1 : 0;
}
