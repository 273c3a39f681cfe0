/* cmd_diff.c: `cairn diff [-q] A B`: two observation sets (raw folders or observation
 * files), observation by observation: identical, or how many elements differ, the first
 * with both values and their distance in units in the last place, and the largest
 * distance (lib/obs.h decides all of it). Exit 0 identical, 1 different, 2 trouble. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "lib/obs_set.h"
#include "npy_set.h"

const char cmd_diff_help[] =
    "usage: cairn diff [-q|--quiet] A B\n"
    "\n"
    "Compares two observation sets, each a raw folder (cairn run --observe-raw DIR), an\n"
    "observation file (cairn run --observe-file FILE) or a NumPy .npy file (one array,\n"
    "named by the file's stem: y of y.npy). Observations are paired by name and, for a\n"
    "name observed several times, by occurrence; a .npy array against a side of one\n"
    "observation pairs with it whatever its name. For each pair it prints\n"
    "`identical`, or the number of elements whose bits differ, the first of them with\n"
    "both values (and bits) and their distance in ULPs, and the largest distance:\n"
    "\n"
    "  ordered  f64  differs: -1.0 (0xbff0000000000000) in A, 0.0 (0x0000000000000000) in B, 4607182418800017408 ULP\n"
    "  y        f32[1000]  differs in 2 of 1000 elements; first [3]: 0.5 (0x3f000000) vs 0.50000006 (0x3f000001), 1 ULP; largest 4 ULP at [9]\n"
    "\n"
    "A ULP is one step between neighbouring values of the element's type: for integers\n"
    "|a - b|; for floats the count of values between them, +0 and -0 being one value (so\n"
    "they differ in bits at 0 ULP) and an infinity one step past the largest finite value;\n"
    "two NaNs are 0 apart, a NaN and a number have no distance. docs/tools.md says more.\n"
    "\n"
    "  -q, --quiet   print nothing; only the exit status\n"
    "\n"
    "exit status: 0 identical (same observations, same bits), 1 different, 2 usage or a set\n"
    "that cannot be read\n";

/* The index in S of the K-th (from 0) observation named NAME, or S->len. */
static size_t find(const ObsSet *s, const char *name, size_t k) {
    for (size_t i = 0; i < s->len; i++)
        if (strcmp(s->items[i].name, name) == 0 && k-- == 0) return i;
    return s->len;
}

/* Which occurrence of its name observation I of S is (0 for the first). */
static size_t occurrence(const ObsSet *s, size_t i) {
    size_t k = 0;
    for (size_t j = 0; j < i; j++) k += strcmp(s->items[j].name, s->items[i].name) == 0;
    return k;
}

static void value_text(ObsType t, uint64_t bits, char *out, size_t size) {
    char text[OBS_TEXT_MAX], hex[OBS_TEXT_MAX];
    obs_format(t, bits, text);
    obs_format_bits(t, bits, hex);
    snprintf(out, size, "%s (%s)", text, hex);
}

static void ulp_text(int nan, uint64_t d, char *out, size_t size) {
    if (nan) snprintf(out, size, "no ULP distance (a NaN and a number)");
    else snprintf(out, size, "%llu ULP", (unsigned long long)d);
}

/* Prints how A and B (one type and count) differ; returns 1 when they do. */
static int report_pair(FILE *out, const ObsRecord *a, const ObsRecord *b, int width,
                       ObsComparison *c) {
    obs_compare(a->type, a->bytes, b->bytes, a->count, c);
    char shape[64];
    if (a->count == 1) snprintf(shape, sizeof shape, "%s", obs_type_name(a->type));
    else snprintf(shape, sizeof shape, "%s[%zu]", obs_type_name(a->type), a->count);
    if (c->differing == 0) {
        fprintf(out, "%-*s  %s  identical\n", width, a->name, shape);
        return 0;
    }
    char va[96], vb[96], first[64], largest[64];
    value_text(a->type, c->first_a, va, sizeof va);
    value_text(a->type, c->first_b, vb, sizeof vb);
    ulp_text(c->first_nan, c->first_ulp, first, sizeof first);
    ulp_text(c->largest_nan, c->largest_ulp, largest, sizeof largest);
    if (a->count == 1) {
        fprintf(out, "%-*s  %s  differs: %s in A, %s in B, %s\n", width, a->name, shape, va, vb,
                first);
        return 1;
    }
    fprintf(out, "%-*s  %s  differs in %zu of %zu elements; first [%zu]: %s vs %s, %s", width,
            a->name, shape, c->differing, a->count, c->first, va, vb, first);
    if (c->differing > 1) fprintf(out, "; largest %s at [%zu]", largest, c->largest_at);
    fputc('\n', out);
    return 1;
}

typedef struct Tally {
    size_t same, differ, only_a, only_b;
    int has_largest, largest_nan;
    uint64_t largest;
    const char *largest_name;
} Tally;

static void tally_pair(Tally *t, const ObsRecord *a, const ObsComparison *c) {
    if (c->differing == 0) {
        t->same++;
        return;
    }
    t->differ++;
    if (t->largest_nan) return;
    if (!t->has_largest || c->largest_nan || c->largest_ulp > t->largest) {
        t->has_largest = 1;
        t->largest_nan = c->largest_nan;
        t->largest = c->largest_ulp;
        t->largest_name = a->name;
    }
}

/* Every observation of A against its partner in B, then those only in B. */
static void compare_sets(FILE *out, const ObsSet *a, const ObsSet *b, Tally *t) {
    int width = 1;
    for (size_t i = 0; i < a->len + b->len; i++) {
        const ObsRecord *r = i < a->len ? &a->items[i] : &b->items[i - a->len];
        int n = (int)strlen(r->name);
        width = n > width ? (n < 24 ? n : 24) : width;
    }
    for (size_t i = 0; i < a->len; i++) {
        const ObsRecord *ra = &a->items[i];
        size_t j = find(b, ra->name, occurrence(a, i));
        if (j == b->len) {
            fprintf(out, "%-*s  only in A (%s[%zu])\n", width, ra->name, obs_type_name(ra->type),
                    ra->count);
            t->only_a++;
            continue;
        }
        const ObsRecord *rb = &b->items[j];
        if (ra->type != rb->type || ra->count != rb->count) {
            fprintf(out, "%-*s  differs: %s[%zu] in A, %s[%zu] in B\n", width, ra->name,
                    obs_type_name(ra->type), ra->count, obs_type_name(rb->type), rb->count);
            t->differ++;
            continue;
        }
        ObsComparison c;
        report_pair(out, ra, rb, width, &c);
        tally_pair(t, ra, &c);
    }
    for (size_t j = 0; j < b->len; j++) {
        const ObsRecord *rb = &b->items[j];
        if (find(a, rb->name, occurrence(b, j)) == a->len) {
            fprintf(out, "%-*s  only in B (%s[%zu])\n", width, rb->name, obs_type_name(rb->type),
                    rb->count);
            t->only_b++;
        }
    }
}

static void print_tally(FILE *out, const Tally *t) {
    size_t total = t->same + t->differ + t->only_a + t->only_b;
    fprintf(out, "%zu observation%s: %zu identical, %zu differ", total, total == 1 ? "" : "s",
            t->same, t->differ);
    if (t->only_a) fprintf(out, ", %zu only in A", t->only_a);
    if (t->only_b) fprintf(out, ", %zu only in B", t->only_b);
    if (t->has_largest && t->largest_nan)
        fprintf(out, "; largest distance: a NaN against a number (%s)", t->largest_name);
    else if (t->has_largest)
        fprintf(out, "; largest distance %llu ULP (%s)", (unsigned long long)t->largest,
                t->largest_name);
    fputc('\n', out);
}

/* A and B from PATHS; an array of a .npy file pairs with the other side's only
 * observation whatever its name (a.npy against b.npy, or run.obs of one observation). */
static int read_pair(const char *paths[2], ObsSet *a, ObsSet *b) {
    Err err = {{0}};
    if (npy_set_read_any(paths[0], a, &err) != 0) {
        npy_set_report("cairn diff", &err);
        return -1;
    }
    if (npy_set_read_any(paths[1], b, &err) != 0) {
        obs_set_free(a);
        npy_set_report("cairn diff", &err);
        return -1;
    }
    if ((npy_set_is_npy(paths[0]) || npy_set_is_npy(paths[1])) && a->len == 1 && b->len == 1 &&
        strcmp(a->items[0].name, b->items[0].name) != 0) {
        char *name = strdup(a->items[0].name);
        if (!name) {
            obs_set_free(a);
            obs_set_free(b);
            fprintf(stderr, "cairn diff: error: out of memory\n");
            return -1;
        }
        free(b->items[0].name);
        b->items[0].name = name;
    }
    return 0;
}

int cmd_diff(int argc, char **argv) {
    const char *paths[2] = {NULL, NULL};
    int quiet = 0, n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if ((argv[i][0] == '-' && argv[i][1]) || n == 2) {
            fprintf(stderr, "cairn diff: error: %s '%s' (usage: cairn diff [-q] A B)\n",
                    n == 2 ? "a third set" : "unknown flag", argv[i]);
            return 2;
        } else paths[n++] = argv[i];
    }
    if (n != 2) {
        fprintf(stderr, "cairn diff: error: give two observation sets (usage: cairn diff A B)\n");
        return 2;
    }
    ObsSet a, b;
    if (read_pair(paths, &a, &b) != 0) return 2;
    FILE *out = quiet ? fopen("/dev/null", "w") : stdout;
    Tally t = {0};
    compare_sets(out ? out : stdout, &a, &b, &t);
    if (!quiet) print_tally(stdout, &t);
    if (quiet && out) fclose(out);
    obs_set_free(&a);
    obs_set_free(&b);
    return t.differ || t.only_a || t.only_b ? 1 : 0;
}
