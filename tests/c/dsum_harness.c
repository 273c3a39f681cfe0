/* dsum_harness.c: the exact device sum's emulated launch (runtime/cairn_dsum.h) for
 * tests/runtime/test_dsum.py, at many launch shapes.
 *
 *   dsum_harness f64|f32 SEED  < cases
 *
 * Each input line is one case: its terms as hex bit patterns (16 or 8 digits), or
 * "gen KIND N S" for N terms made here from seed S (splitmix64; the test makes the same
 * ones): KIND wide (random sign, fraction and exponent, short of
 * overflow), cancel (each term then its
 * negation), normal (exponents within 20 of 1.0's). Each output line
 * gives, as hex bits: the host's exact sum (cairn_sum_fNN), then the emulated device sum
 * at each launch shape of SHAPES, then at three shapes drawn from SEED, then at the
 * shape generated code uses (cairn_dsum_blocks) - every one must be the host's bits. A
 * generated case of more than 100000 terms runs three shapes: SHAPES[4], one drawn, and
 * generated code's. */
#include "cairn.h"
#include "cairn_dsum.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t dsum_seed;
static uint64_t dsum_rng(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Term k of a generated case, as bits (f64 or f32). */
static uint64_t dsum_gen(const char *kind, int f64, uint64_t seed, uint64_t k) {
    uint64_t s = seed ^ (k * 0x2545f4914f6cdd1dull), r = dsum_rng(&s), r2 = dsum_rng(&s);
    if (strcmp(kind, "cancel") == 0) { /* terms 2j and 2j + 1 cancel */
        uint64_t s2 = seed ^ ((k / 2) * 0x2545f4914f6cdd1dull);
        r = dsum_rng(&s2), r2 = dsum_rng(&s2);
    }
    uint64_t bits;
    if (f64) {
        unsigned e =
            strcmp(kind, "normal") == 0 ? 1013 + (unsigned)(r2 % 20) : (unsigned)(r2 % 2000) + 1;
        bits = (r >> 12) | (uint64_t)e << 52 | (r2 >> 63) << 63;
    } else {
        unsigned e =
            strcmp(kind, "normal") == 0 ? 117 + (unsigned)(r2 % 20) : (unsigned)(r2 % 240) + 1;
        bits = (r >> 41) | (uint64_t)e << 23 | (r2 >> 63) << 31;
    }
    if (strcmp(kind, "cancel") == 0 && k % 2) bits ^= f64 ? 1ull << 63 : 1ull << 31;
    return bits;
}

static double dsum_term64(void *c, size_t k) { return ((const double *)c)[k]; }
static float dsum_term32(void *c, size_t k) { return ((const float *)c)[k]; }
CAIRN_DSUM64_BLOCK(dsum_block64, dsum_term64)
CAIRN_DSUM32_BLOCK(dsum_block32, dsum_term32)

static const unsigned SHAPES[][2] = {{1, 1},    {1, 32},   {1, 256}, {3, 64}, {7, 96},
                                     {16, 256}, {2, 1024}, {64, 32}, {100, 8}};

static void dsum_case(int f64, void *x, uint64_t n, int few) {
    uint64_t host = 0;
    if (f64) {
        double d = cairn_sum_f64(x, n);
        memcpy(&host, &d, 8);
    } else {
        float f = cairn_sum_f32(x, n);
        uint32_t u;
        memcpy(&u, &f, 4);
        host = u;
    }
    printf("%" PRIx64, host);
    unsigned shapes[16][2];
    size_t count = 0;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (!few || i == 4) shapes[count][0] = SHAPES[i][0], shapes[count++][1] = SHAPES[i][1];
    for (int i = 0; i < (few ? 1 : 3); i++) {
        shapes[count][0] = 1 + (unsigned)(dsum_rng(&dsum_seed) % 300);
        shapes[count++][1] = 1 + (unsigned)(dsum_rng(&dsum_seed) % 1024);
    }
    shapes[count][1] = 256;
    shapes[count][0] = (unsigned)cairn_dsum_blocks(n, 256, 0);
    count++;
    for (size_t i = 0; i < count; i++) {
        if (n == 0) { /* generated code never launches for no terms: +0.0 */
            printf(" 0");
            continue;
        }
        uint64_t b = shapes[i][0], bits;
        if (n / b >= CAIRN_DSUM_BLOCK_TERMS) b = n / CAIRN_DSUM_BLOCK_TERMS + 1;
        if (f64) {
            double d = cairn_dsum64_emulate(n, b, shapes[i][1], dsum_block64, x);
            memcpy(&bits, &d, 8);
        } else {
            float f = cairn_dsum32_emulate(n, b, shapes[i][1], dsum_block32, x);
            uint32_t u;
            memcpy(&u, &f, 4);
            bits = u;
        }
        printf(" %" PRIx64, bits);
    }
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    int f64 = strcmp(argv[1], "f64") == 0;
    dsum_seed = strtoull(argv[2], NULL, 10);
    char *line = NULL;
    size_t cap = 0;
    size_t size = f64 ? 8 : 4;
    while (getline(&line, &cap, stdin) >= 0) {
        char kind[16];
        uint64_t n, seed;
        void *x = NULL;
        if (sscanf(line, "gen %15s %" SCNu64 " %" SCNu64, kind, &n, &seed) == 3) {
            x = malloc(n * size + 8);
            for (uint64_t k = 0; k < n; k++) {
                uint64_t b = dsum_gen(kind, f64, seed, k);
                if (f64) memcpy((char *)x + 8 * k, &b, 8);
                else {
                    uint32_t u = (uint32_t)b;
                    memcpy((char *)x + 4 * k, &u, 4);
                }
            }
        } else {
            n = 0;
            x = malloc(strlen(line) * size + 8);
            for (char *p = line, *end;; p = end) {
                uint64_t v = strtoull(p, &end, 16);
                if (end == p) break;
                if (f64) memcpy((char *)x + 8 * n, &v, 8);
                else {
                    uint32_t u = (uint32_t)v;
                    memcpy((char *)x + 4 * n, &u, 4);
                }
                n++;
            }
        }
        dsum_case(f64, x, n, x && n > 100000);
        fflush(stdout);
        free(x);
    }
    free(line);
    return 0;
}
