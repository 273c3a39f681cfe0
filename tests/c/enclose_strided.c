/* enclose_strided.c: cairn_enclose_strided, the entry point for callers with arrays of
 * any layout (the Python package through ctypes). Each layout is checked against the
 * contiguous API on the same logical matrices, materialised here element by element;
 * canaries between strided outputs must survive; refusals leave the outputs alone.
 * Prints one line per failed check and exits 1 if any failed, else prints "ok". */
#include "cairn_enclose.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void check(int cond, const char *what) {
    if (!cond) {
        printf("FAIL %s\n", what);
        failures++;
    }
}

enum { M = 5, N = 7, K = 11, CANARY = 0x5a };

/* Deterministic values with several binades, a few negative, and a subnormal. */
static double value(unsigned i) {
    double x = (double)((i * 2654435761u) % 1000u) / 7.0 - 60.0;
    if (i % 13 == 5) x *= 1e-30;
    if (i == 17) x = 4.9e-324;
    return x;
}

/* Byte strides of a matrix placed in `buf` with its element (0, 0) at `origin`. */
typedef struct {
    unsigned char *origin;
    ptrdiff_t rs, cs;
} layout;

static void put(layout l, size_t i, size_t j, const void *x, size_t size) {
    memcpy(l.origin + (ptrdiff_t)i * l.rs + (ptrdiff_t)j * l.cs, x, size);
}

static void get(layout l, size_t i, size_t j, void *x, size_t size) {
    memcpy(x, l.origin + (ptrdiff_t)i * l.rs + (ptrdiff_t)j * l.cs, size);
}

/* A and B in the given layouts, lo and hi in theirs; compared with the contiguous call. */
static void compare(const char *what, layout la, layout lb, layout llo, layout lhi) {
    double a[M * K], b[K * N], want_lo[M * N], want_hi[M * N];
    for (unsigned i = 0; i < M * K; i++) {
        a[i] = value(i);
        put(la, i / K, i % K, &a[i], 8);
    }
    for (unsigned i = 0; i < K * N; i++) {
        b[i] = value(i + 100);
        put(lb, i / N, i % N, &b[i], 8);
    }
    cairn_enclose_info want_info, info;
    check(cairn_enclose_f64(M, N, K, a, b, want_lo, want_hi, &want_info) == 0, what);
    int rc = cairn_enclose_strided(64, M, N, K, la.origin, la.rs, la.cs, lb.origin, lb.rs, lb.cs,
                                   llo.origin, llo.rs, llo.cs, lhi.origin, lhi.rs, lhi.cs, &info);
    check(rc == 0, what);
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++) {
            double lo, hi;
            get(llo, i, j, &lo, 8);
            get(lhi, i, j, &hi, 8);
            check(memcmp(&lo, &want_lo[i * N + j], 8) == 0, what);
            check(memcmp(&hi, &want_hi[i * N + j], 8) == 0, what);
        }
    check(info.tight == want_info.tight && info.bits_a == want_info.bits_a, what);
}

static unsigned char buf[4][4096];

static layout row_major(int v, size_t cols, ptrdiff_t offset) {
    layout l = {buf[v] + offset, (ptrdiff_t)cols * 8, 8};
    return l;
}

static void test_layouts(void) {
    memset(buf, CANARY, sizeof buf);
    compare("contiguous", row_major(0, K, 0), row_major(1, N, 0), row_major(2, N, 0),
            row_major(3, N, 0));
    /* A column-major, B rows reversed (negative row stride), unaligned doubles */
    layout a_t = {buf[0] + 3, 8, M * 8},
           b_rev = {buf[1] + 1 + (K - 1) * N * 8, -(ptrdiff_t)N * 8, 8};
    compare("transposed and reversed", a_t, b_rev, row_major(2, N, 5), row_major(3, N, 0));
    /* lo every other element of a wider array, hi column-major with reversed columns */
    memset(buf[2], CANARY, sizeof buf[2]);
    layout lo_gap = {buf[2], N * 16, 16}, hi_t = {buf[3] + (N - 1) * M * 8, 8, -(ptrdiff_t)M * 8};
    compare("strided outputs", row_major(0, K, 0), row_major(1, N, 0), lo_gap, hi_t);
    int canaries = 1;
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++)
            for (size_t byte = 8; byte < 16; byte++)
                canaries &= buf[2][i * N * 16 + j * 16 + byte] == CANARY;
    check(canaries, "the gaps between strided outputs are untouched");
}

static void test_broadcast_and_f32(void) {
    /* B's columns all one column (column stride 0): every output column is the same */
    double a[M * K], col[K], lo[M * N], hi[M * N];
    for (unsigned i = 0; i < M * K; i++) a[i] = value(i);
    for (unsigned t = 0; t < K; t++) col[t] = value(t + 50);
    check(cairn_enclose_strided(64, M, N, K, a, K * 8, 8, col, 8, 0, lo, N * 8, 8, hi, N * 8, 8,
                                NULL) == 0,
          "broadcast column");
    double one_lo[M], one_hi[M];
    check(cairn_enclose_f64(M, 1, K, a, col, one_lo, one_hi, NULL) == 0, "one column");
    for (size_t i = 0; i < M; i++)
        for (size_t j = 0; j < N; j++)
            check(lo[i * N + j] == one_lo[i] && hi[i * N + j] == one_hi[i], "broadcast bits");
    float fa[6] = {1.5f, -2.0f, 0.1f, 3.0f, 4.0f, 0.25f}, fb[3] = {0.5f, 1.0f, -8.0f}, flo[2],
          fhi[2];
    /* A (2 x 3) column-major */
    check(cairn_enclose_strided(32, 2, 1, 3, fa, 4, 8, fb, 4, 4, flo, 4, 4, fhi, 4, 4, NULL) == 0,
          "f32 strided");
    float ra[6] = {fa[0], fa[2], fa[4], fa[1], fa[3], fa[5]}, rlo[2], rhi[2];
    check(cairn_enclose_f32(2, 1, 3, ra, fb, rlo, rhi, NULL) == 0, "f32 contiguous");
    check(memcmp(flo, rlo, 8) == 0 && memcmp(fhi, rhi, 8) == 0, "f32 bits");
}

static void test_refusals(void) {
    double a[4] = {1, 2, 3, 4}, out[16];
    for (int i = 0; i < 16; i++) out[i] = 7;
    cairn_enclose_info info;
    struct {
        const char *what;
        void *lo, *hi;
        ptrdiff_t lrs, lcs, hrs, hcs;
        int want;
    } cases[] = {
        {"lo and hi the same", out, out, 16, 8, 16, 8, CAIRN_ENCLOSE_EOVERLAP},
        {"hi inside lo's range", out, out + 1, 32, 16, 32, 16, CAIRN_ENCLOSE_EOVERLAP},
        {"lo rows on each other", out, out + 8, 8, 8, 16, 8, CAIRN_ENCLOSE_EOVERLAP},
        {"lo stride 0", out, out + 8, 0, 8, 16, 8, CAIRN_ENCLOSE_EOVERLAP},
        {"lo stride under the size", out, out + 8, 16, 4, 16, 8, CAIRN_ENCLOSE_EOVERLAP},
        {"huge stride", out, out + 8, PTRDIFF_MAX, 8, 16, 8, CAIRN_ENCLOSE_ESIZE},
        {"NULL hi", out, NULL, 16, 8, 16, 8, CAIRN_ENCLOSE_ESIZE},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int rc =
            cairn_enclose_strided(64, 2, 2, 2, a, 16, 8, a, 16, 8, cases[c].lo, cases[c].lrs,
                                  cases[c].lcs, cases[c].hi, cases[c].hrs, cases[c].hcs, &info);
        check(rc == cases[c].want, cases[c].what);
    }
    for (int i = 0; i < 16; i++) check(out[i] == 7, "outputs untouched after refusals");
    check(cairn_enclose_strided(16, 2, 2, 2, a, 16, 8, a, 16, 8, out, 16, 8, out + 8, 16, 8,
                                NULL) == CAIRN_ENCLOSE_ESIZE,
          "width 16");
    check(strstr(cairn_enclose_strerror(CAIRN_ENCLOSE_EOVERLAP), "E-ENCLOSE-OVERLAP") != NULL,
          "overlap message");
    /* interleaved but separate outputs are fine: lo the even, hi the odd elements */
    check(cairn_enclose_strided(64, 2, 2, 2, a, 16, 8, a, 16, 8, out, 32, 16, out + 1, 32, 16,
                                &info) == CAIRN_ENCLOSE_EOVERLAP,
          "interleaved outputs are refused (their byte ranges intersect)");
}

static void test_outputs_over_operands(void) {
    /* lo written over A (column-major) and hi over B: operands are read first */
    double a[4] = {1, 3, 2, 4}, b[4] = {0.5, -1, 0.25, 2}; /* A = [1 2; 3 4] column-major */
    const double want[4] = {1 * 0.5 + 2 * 0.25, 1 * -1 + 2 * 2, 3 * 0.5 + 4 * 0.25, 3 * -1 + 4 * 2};
    check(cairn_enclose_strided(64, 2, 2, 2, a, 8, 16, b, 16, 8, a, 16, 8, b, 16, 8, NULL) == 0,
          "outputs over operands");
    for (int i = 0; i < 4; i++) check(a[i] == want[i] && b[i] == want[i], "aliased bits");
}

int main(void) {
    test_layouts();
    test_broadcast_and_f32();
    test_refusals();
    test_outputs_over_operands();
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
