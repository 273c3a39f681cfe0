/* mma_run.c: runs the runtime's mma_unordered on cases read from stdin, for
 * tests/tensor/test_mma.py, which holds the results to an independent model.
 *
 * Input, whitespace separated, one case after another until EOF:
 *   FORMAT MODE m n k  c[m*n] a[m*k] b[k*n]
 * FORMAT is f16 | bf16 | f8e4m3 | f8e5m2, MODE is ref (the host's reference loop) or
 * tiled (the device tiling, emulated); c is f32 bits and a, b the format's bits, all in
 * hex. Output: one line per case, the m*n result bits of c in hex. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_mma.h"

static uint64_t *read_hex(uint64_t count) {
    uint64_t *v = malloc((count > 0 ? count : 1) * sizeof *v);
    if (!v) abort();
    for (uint64_t i = 0; i < count; i++)
        if (scanf("%" SCNx64, &v[i]) != 1) abort();
    return v;
}

#define NARROW(T)                                                                                  \
    static cairn_##T *narrow_##T(const uint64_t *v, uint64_t count) {                              \
        cairn_##T *out = malloc((count > 0 ? count : 1) * sizeof *out);                            \
        if (!out) abort();                                                                         \
        for (uint64_t i = 0; i < count; i++) out[i] = (cairn_##T)v[i];                             \
        return out;                                                                                \
    }
NARROW(f16)
NARROW(bf16)
NARROW(f8e4m3)
NARROW(f8e5m2)

/* Runs one case of format T in the named mode over c. */
#define RUN(T)                                                                                     \
    if (strcmp(format, #T) == 0) {                                                                 \
        cairn_##T *a = narrow_##T(av, m * k), *b = narrow_##T(bv, k * n);                          \
        if (tiled) cairn_mma_tiled_##T(m, n, k, c, m *n, a, m *k, b, k *n, CAIRN_NOLOC);           \
        else cairn_mma_##T(m, n, k, c, m *n, a, m *k, b, k *n, CAIRN_NOLOC);                       \
        free(a);                                                                                   \
        free(b);                                                                                   \
        known = 1;                                                                                 \
    }

int main(void) {
    char format[16], mode[16];
    uint64_t m, n, k;
    while (scanf("%15s %15s %" SCNu64 " %" SCNu64 " %" SCNu64, format, mode, &m, &n, &k) == 5) {
        uint64_t *cv = read_hex(m * n), *av = read_hex(m * k), *bv = read_hex(k * n);
        float *c = malloc((m * n > 0 ? m * n : 1) * sizeof *c);
        if (!c) abort();
        for (uint64_t i = 0; i < m * n; i++) {
            uint32_t bits = (uint32_t)cv[i];
            memcpy(&c[i], &bits, sizeof bits);
        }
        int tiled = strcmp(mode, "tiled") == 0, known = 0;
        RUN(f16) RUN(bf16) RUN(f8e4m3) RUN(f8e5m2) if (!known) {
            fprintf(stderr, "mma_run: unknown format %s\n", format);
            return 2;
        }
        for (uint64_t i = 0; i < m * n; i++) {
            uint32_t bits;
            memcpy(&bits, &c[i], sizeof bits);
            printf("%s%08" PRIx32, i ? " " : "", bits);
        }
        printf("\n");
        free(cv);
        free(av);
        free(bv);
        free(c);
    }
    return 0;
}
