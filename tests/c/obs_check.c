/* obs_check.c: lib/obs.h from the command line, for tests/lib/test_obs.py to hold against
 * independent models (Python's struct and repr(), numpy, and exact rational models of
 * the storage floats). Elements are read from stdin as hex bit patterns, one (or, for
 * ulp and compare, two) a line; results go to stdout, one line each:
 *   obs_check all TYPE       every pattern of a 1- or 2-byte type: "BITS TEXT VALUE"
 *   obs_check format TYPE    "TEXT BITS VALUE" per pattern (VALUE: obs_value as %a)
 *   obs_check ulp TYPE       the distance of each pair, or "nan"
 *   obs_check summary TYPE   the array's "count nan inf has_range min max"
 *   obs_check compare TYPE   pairs as two arrays: "differing first a b ulp largest_at ulp"
 * Exit 2 on usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/obs.h"

static void print_element(ObsType t, uint64_t bits, int bits_first) {
    char text[OBS_TEXT_MAX], hex[OBS_TEXT_MAX];
    obs_format(t, bits, text);
    obs_format_bits(t, bits, hex);
    if (bits_first) printf("%s %s %a\n", hex, text, obs_value(t, bits));
    else printf("%s %s %a\n", text, hex, obs_value(t, bits));
}

static void print_ulp(int defined, uint64_t d, const char *end) {
    if (!defined) printf("nan%s", end);
    else printf("%llu%s", (unsigned long long)d, end);
}

/* Reads pairs (or single patterns) into little-endian arrays A and B. */
static size_t read_arrays(ObsType t, int pairs, unsigned char **a, unsigned char **b) {
    size_t n = 0, cap = 1024, size = obs_type_size(t);
    *a = malloc(cap * size);
    *b = malloc(cap * size);
    unsigned long long x, y = 0;
    while (pairs ? scanf("%llx %llx", &x, &y) == 2 : scanf("%llx", &x) == 1) {
        if (n == cap) {
            cap *= 2;
            *a = realloc(*a, cap * size);
            *b = realloc(*b, cap * size);
        }
        for (size_t k = 0; k < size; k++) {
            (*a)[n * size + k] = (unsigned char)(x >> (8 * k));
            (*b)[n * size + k] = (unsigned char)(y >> (8 * k));
        }
        n++;
    }
    return n;
}

static int run_verb(const char *verb, ObsType t) {
    unsigned long long x, y;
    if (!strcmp(verb, "all") && obs_type_size(t) <= 2) {
        for (uint64_t bits = 0; bits < (UINT64_C(1) << (8 * obs_type_size(t))); bits++)
            print_element(t, bits, 1);
    } else if (!strcmp(verb, "format")) {
        while (scanf("%llx", &x) == 1) print_element(t, x, 0);
    } else if (!strcmp(verb, "ulp")) {
        uint64_t d;
        while (scanf("%llx %llx", &x, &y) == 2) {
            int defined = obs_ulp_distance(t, x, y, &d);
            print_ulp(defined, d, "\n");
        }
    } else if (!strcmp(verb, "summary") || !strcmp(verb, "compare")) {
        unsigned char *a, *b;
        size_t n = read_arrays(t, !strcmp(verb, "compare"), &a, &b);
        if (!strcmp(verb, "summary")) {
            ObsSummary s;
            obs_summarize(t, a, n, &s);
            printf("%zu %zu %zu %d %llx %llx\n", s.count, s.nan, s.inf, s.has_range,
                   (unsigned long long)s.min, (unsigned long long)s.max);
        } else {
            ObsComparison c;
            obs_compare(t, a, b, n, &c);
            printf("%zu %zu %llx %llx ", c.differing, c.first, (unsigned long long)c.first_a,
                   (unsigned long long)c.first_b);
            print_ulp(!c.first_nan, c.first_ulp, " ");
            printf("%zu ", c.largest_at);
            print_ulp(!c.largest_nan, c.largest_ulp, "\n");
        }
        free(a);
        free(b);
    } else {
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
    ObsType t;
    if (argc != 3 || obs_type_parse(argv[2], &t) != 0) return 2;
    return run_verb(argv[1], t);
}
