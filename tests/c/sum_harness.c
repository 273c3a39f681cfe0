/* sum_harness.c: drives the exact sum for tests/runtime/test_sum*.py.
 *
 *   sum_harness f64|f32 SEED  < cases
 *
 * Each input line is one case: its terms as hex bit patterns (16 or 8 digits),
 * separated by spaces (an empty line: no terms). Each output line gives, as hex bits,
 * the sum computed seven ways, which must all be the exact sum rounded once:
 *   block   cairn_sumNN_add_block over the whole array
 *   terms   cairn_sumNN_add, one term at a time
 *   cuts    random blocks (from SEED) into separate accumulators, each fed by
 *           add_block or add, merged in a shuffled order
 *   pooled  cairn_sumNN_pooled with a random grain, on CAIRN_THREADS workers, its
 *           blocks defined by CAIRN_SUMNN_BLOCK (what generated code uses)
 *   array   cairn_sum_fNN (serial when small, the pool when large)
 *   whole   NAME_sum of CAIRN_SUM_CHECKED with every block covered (what generated code
 *           calls: the tiny path under 16 terms, else the pool, unchecked terms)
 *   checked the same with no block covered: every term computed with its checks
 * and then the ordered fold cairn_fold_fNN (not exact: checked against its own model).
 *
 *   sum_harness f64|f32 selfmerge K  < cases
 *
 * adds each case's terms with add_block, then K times merges the accumulator into a
 * copy of itself (doubling every term's count); prints the rounded sum's bits after
 * 0, 1, ..., K doublings on one line. Past 2^64 - 1 terms the runtime traps. */
#include "cairn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t rng(void) { /* splitmix64: reproducible from SEED */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* One line of hex words into bits[]; returns the count, or -1 at end of input. */
static long read_case(uint64_t **bits, size_t *cap) {
    static char *line;
    static size_t linecap;
    if (getline(&line, &linecap, stdin) < 0) return -1;
    size_t n = 0;
    for (char *p = line, *end;; p = end) {
        uint64_t v = strtoull(p, &end, 16);
        if (end == p) break;
        if (n == *cap) {
            *cap = *cap ? *cap * 2 : 1024;
            *bits = realloc(*bits, *cap * sizeof **bits);
            if (!*bits) {
                fprintf(stderr, "sum_harness: out of memory\n");
                exit(1);
            }
        }
        (*bits)[n++] = v;
    }
    return (long)n;
}

CAIRN_SUM64_BLOCK(cairn_sum64_macro_block, const double, x, i, x[i])
CAIRN_SUM32_BLOCK(cairn_sum32_macro_block, const float, x, i, x[i])

/* CAIRN_SUM_CHECKED's TERM for the whole and checked ways: term k of the array, after
 * making sure that it was asked with the covered flag its way expects. */
#define DEFINE_CHECKED(NAME, P, T, WANT, COVERS)                                                   \
    static inline T NAME##_term(void *c, size_t k, int covered) {                                  \
        if (covered != WANT) {                                                                     \
            fprintf(stderr, "sum_harness: " #NAME " asked for a term with covered=%d\n", covered); \
            exit(3);                                                                               \
        }                                                                                          \
        return ((const T *)c)[k];                                                                  \
    }                                                                                              \
    CAIRN_SUM_CHECKED(NAME, P, NAME##_term, COVERS)
#define EVERY_BLOCK(c, b, e) ((void)(c), (void)(b), (void)(e), 1)
#define NO_BLOCK(c, b, e)    ((void)(c), (void)(b), (void)(e), 0)
DEFINE_CHECKED(whole64, cairn_sum64, double, 1, EVERY_BLOCK)
DEFINE_CHECKED(whole32, cairn_sum32, float, 1, EVERY_BLOCK)
DEFINE_CHECKED(checked64, cairn_sum64, double, 0, NO_BLOCK)
DEFINE_CHECKED(checked32, cairn_sum32, float, 0, NO_BLOCK)

/* The same seven ways for each format; SUMT/T name the accumulator and term types. */
#define DEFINE_CASE(NAME, SUMT, T, P, ARRAY, WHOLE, CHECKED, FOLD, BITS_T)                         \
    static void P##_block_add(void *ctx, size_t b, size_t e, SUMT *acc) {                          \
        const T *x = ctx;                                                                          \
        if ((b ^ e) & 1) P##_add_block(acc, x + b, e - b);                                         \
        else                                                                                       \
            for (size_t i = b; i < e; i++) P##_add(acc, x[i]);                                     \
    }                                                                                              \
    static BITS_T P##_bits(T v) {                                                                  \
        BITS_T b;                                                                                  \
        memcpy(&b, &v, sizeof b);                                                                  \
        return b;                                                                                  \
    }                                                                                              \
    static void NAME(const T *x, size_t n) {                                                       \
        SUMT s, parts[64];                                                                         \
        size_t order[64], nparts = 0;                                                              \
        P##_init(&s);                                                                              \
        P##_add_block(&s, x, n);                                                                   \
        T block = P##_round(&s);                                                                   \
        P##_init(&s);                                                                              \
        for (size_t i = 0; i < n; i++) P##_add(&s, x[i]);                                          \
        T terms = P##_round(&s);                                                                   \
        for (size_t b = 0; b < n || rng() % 2; nparts++) { /* may add empty parts */               \
            size_t left = n - b, len = left;                                                       \
            if (nparts < 62 && left)                                                               \
                len = rng() % 2 ? 1 + rng() % left : 1 + rng() % (left < 64 ? left : 64);          \
            if (nparts < 62 && rng() % 8 == 0) len = 0;                                            \
            P##_init(&parts[nparts]);                                                              \
            P##_block_add((void *)x, b, b + len, &parts[nparts]);                                  \
            order[nparts] = nparts;                                                                \
            b += len;                                                                              \
            if (nparts == 62) {                                                                    \
                nparts++;                                                                          \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        for (size_t i = nparts; i > 1; i--) {                                                      \
            size_t j = rng() % i, t = order[i - 1];                                                \
            order[i - 1] = order[j], order[j] = t;                                                 \
        }                                                                                          \
        P##_init(&s);                                                                              \
        for (size_t i = 0; i < nparts; i++) P##_merge(&s, &parts[order[i]]);                       \
        T cuts = P##_round(&s);                                                                    \
        size_t grain = 1 + rng() % (n ? n : 1);                                                    \
        if (rng() % 2) grain = 1 + rng() % 17;                                                     \
        T pooled = P##_pooled(n, grain, P##_macro_block, (void *)x);                               \
        T array = ARRAY(x, n), fold = FOLD(x, n);                                                  \
        T whole = WHOLE##_sum((void *)x, n), checked = CHECKED##_sum((void *)x, n);                \
        T ways[] = {block, terms, cuts, pooled, array, whole, checked, fold};                      \
        for (size_t w = 0; w < sizeof ways / sizeof *ways; w++)                                    \
            printf("%s%0*" PRIx64, w ? " " : "", (int)(2 * sizeof(T)),                             \
                   (uint64_t)P##_bits(ways[w]));                                                   \
        printf("\n");                                                                              \
    }

#define DEFINE_SELFMERGE(NAME, SUMT, T, P)                                                         \
    static void NAME(const T *x, size_t n, long doublings) {                                       \
        SUMT s, copy;                                                                              \
        P##_init(&s);                                                                              \
        P##_add_block(&s, x, n);                                                                   \
        for (long k = 0;; k++) {                                                                   \
            T r = P##_round(&s);                                                                   \
            uint64_t b = 0;                                                                        \
            memcpy(&b, &r, sizeof r);                                                              \
            printf("%s%0*" PRIx64, k ? " " : "", (int)(2 * sizeof(T)), b);                         \
            fflush(stdout);                                                                        \
            if (k == doublings) break;                                                             \
            copy = s;                                                                              \
            P##_merge(&s, &copy);                                                                  \
        }                                                                                          \
        printf("\n");                                                                              \
    }

DEFINE_SELFMERGE(selfmerge_f64, cairn_sum64, double, cairn_sum64)
DEFINE_SELFMERGE(selfmerge_f32, cairn_sum32, float, cairn_sum32)

DEFINE_CASE(case_f64, cairn_sum64, double, cairn_sum64, cairn_sum_f64, whole64, checked64,
            cairn_fold_f64, uint64_t)
DEFINE_CASE(case_f32, cairn_sum32, float, cairn_sum32, cairn_sum_f32, whole32, checked32,
            cairn_fold_f32, uint32_t)

int main(int argc, char **argv) {
    int selfmerge = argc == 4 && !strcmp(argv[2], "selfmerge");
    if ((argc != 3 && !selfmerge) || (strcmp(argv[1], "f64") && strcmp(argv[1], "f32"))) {
        fprintf(stderr, "usage: sum_harness f64|f32 SEED < cases (one line of hex terms each)\n"
                        "       sum_harness f64|f32 selfmerge K < cases\n");
        return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
    }
    int f64 = !strcmp(argv[1], "f64");
    long doublings = selfmerge ? strtol(argv[3], NULL, 10) : 0;
    rng_state = selfmerge ? 0 : strtoull(argv[2], NULL, 10);
    uint64_t *bits = NULL;
    size_t cap = 0;
    void *terms = NULL;
    long n;
    while ((n = read_case(&bits, &cap)) >= 0) {
        terms = realloc(terms, (n ? (size_t)n : 1) * 8);
        if (!terms) {
            fprintf(stderr, "sum_harness: out of memory\n");
            return 1;
        }
        for (long i = 0; i < n; i++) {
            if (f64) {
                memcpy((double *)terms + i, &bits[i], 8);
            } else {
                uint32_t b32 = (uint32_t)bits[i];
                memcpy((float *)terms + i, &b32, 4);
            }
        }
        if (selfmerge && f64) selfmerge_f64(terms, (size_t)n, doublings);
        else if (selfmerge) selfmerge_f32(terms, (size_t)n, doublings);
        else if (f64) case_f64(terms, (size_t)n);
        else case_f32(terms, (size_t)n);
    }
    fflush(stdout);
    free(bits);
    free(terms);
    return 0;
}
