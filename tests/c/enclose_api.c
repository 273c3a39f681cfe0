/* enclose_api.c: edge cases of the bracket GEMM's C API that a case file cannot reach:
 * NULL and oversized arguments, bad widths, a NULL info, outputs aliasing the operands,
 * untouched outputs on error, and the messages. Prints one line per failed check and
 * exits 1 if any failed, else prints "ok". */
#include "cairn_enclose.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void check(int cond, const char *what) {
    if (!cond) {
        printf("FAIL %s\n", what);
        failures++;
    }
}

static void test_refusals(void) {
    double a[4] = {1, 2, 3, 4}, lo[4] = {7, 7, 7, 7}, hi[4] = {7, 7, 7, 7};
    cairn_enclose_info info;
    check(cairn_enclose_f64(2, 2, 2, NULL, a, lo, hi, &info) == CAIRN_ENCLOSE_ESIZE, "NULL a");
    check(cairn_enclose_f64(2, 2, 2, a, a, NULL, hi, &info) == CAIRN_ENCLOSE_ESIZE, "NULL lo");
    check(cairn_enclose_f64(SIZE_MAX / 2, 2, 2, a, a, lo, hi, &info) == CAIRN_ENCLOSE_ESIZE,
          "m*k overflow");
    check(cairn_enclose_f64(2, SIZE_MAX / 16, 2, a, a, lo, hi, &info) == CAIRN_ENCLOSE_ESIZE,
          "k*n overflow");
    check(cairn_enclose_f64(1, 1, ((size_t)1 << 17) + 1, a, a, lo, hi, &info) ==
              CAIRN_ENCLOSE_EKTOOBIG,
          "k too big");
    check(cairn_enclose_bits(16, 2, 2, 2, a, a, lo, hi, &info) == CAIRN_ENCLOSE_ESIZE, "width 16");
    a[3] = HUGE_VAL;
    check(cairn_enclose_f64(2, 2, 2, a, a, lo, hi, &info) == CAIRN_ENCLOSE_ENONFINITE &&
              info.bad_operand == 'a' && info.bad_row == 1 && info.bad_col == 1,
          "infinity refused and located");
    for (int i = 0; i < 4; i++) check(lo[i] == 7 && hi[i] == 7, "outputs untouched on error");
    check(strstr(cairn_enclose_strerror(CAIRN_ENCLOSE_EKTOOBIG), "2^17") != NULL, "K message");
    check(strstr(cairn_enclose_strerror(12345), "unknown") != NULL, "unknown code message");
    check(cairn_enclose_f64(0, 3, 5, NULL, a, NULL, NULL, NULL) == 0, "m = 0 with NULLs");
}

static void test_aliasing_and_null_info(void) {
    /* lo overwrites a and hi overwrites b: the operands are read before any output. */
    double a[4] = {1, 2, 3, 4}, b[4] = {0.5, -1, 0.25, 2};
    const double want[4] = {1 * 0.5 + 2 * 0.25, 1 * -1 + 2 * 2, 3 * 0.5 + 4 * 0.25, 3 * -1 + 4 * 2};
    check(cairn_enclose_f64(2, 2, 2, a, b, a, b, NULL) == 0, "aliased call");
    for (int i = 0; i < 4; i++) check(a[i] == want[i] && b[i] == want[i], "aliased result exact");
    float fa[2] = {1.5f, -2.0f}, fb[2] = {4.0f, 0.125f}, flo, fhi;
    check(cairn_enclose_f32(1, 1, 2, fa, fb, &flo, &fhi, NULL) == 0 && flo == 5.75f && fhi == 5.75f,
          "f32 with NULL info");
}

int main(void) {
    test_refusals();
    test_aliasing_and_null_info();
    if (failures) return 1;
    printf("ok\n");
    return 0;
}
