/* use_lib.c: calls each entry of tests/build/lib_c/kern.cairn's library, linked as a
 * shared library or a static archive (the test builds it both ways), and prints what it
 * got, one line per call, for tests/build/test_library.py to compare. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "libkern.h"

static void report(const char *what, int status) {
    const kern_error *e = kern_last_error();
    printf("%s status=%d message=[%s] at=%s:%d:%d\n", what, status, e->message,
           e->file ? e->file : "-", e->line, e->col);
}

int main(void) {
    double x[4] = {1e16, 1.0, -1e16, 0.5}, y[4] = {1, 1, 1, 1}, d = 0;
    report("dot", kern_dot(4, x, 4, y, 4, &d));
    printf("dot=%.17g\n", d);
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {10, 20, 30, 40, 50};
    report("axpy", kern_axpy(5, 0.5f, a, 5, b, 5));
    printf("axpy=%g %g %g %g %g\n", b[0], b[1], b[2], b[3], b[4]);
    uint16_t h[3] = {0x3C00, 0xC000, 0x7BFF}; /* 1, -2, 65504 */
    float out[3];
    uint64_t calls = 7;
    report("widen", kern_widen(3, h, 3, out, 3, 0x4040 /* bf16 3.0 */, &calls));
    printf("widen=%g %g %g calls=%" PRIu64 "\n", out[0], out[1], out[2], calls);
    int32_t v[4] = {5, 6, 7, 8}, got = -1;
    report("pick_ok", kern_pick(4, v, 4, 3, &got));
    printf("pick=%d\n", got);
    got = -1;
    report("pick_trap", kern_pick(4, v, 4, 9, &got));
    printf("pick_untouched=%d\n", got);
    report("pick_again", kern_pick(4, v, 4, 0, &got));
    printf("pick=%d\n", got);
    float s[1000], t[1000];
    for (int i = 0; i < 1000; i++) s[i] = (float)i;
    report("stride", kern_stride(1000, s, 1000, t, 1000));
    report("stride_again", kern_stride(1000, s, 1000, t, 1000));
    int32_t sum = 0;
    report("add", kern_add(2147483647, 1, &sum));
    report("add_ok", kern_add(40, 2, &sum));
    printf("add=%d\n", sum);
    report("extent", kern_dot(4, x, 3, y, 4, &d));
    report("null", kern_dot(4, NULL, 4, y, 4, &d));
    report("no_result", kern_dot(4, x, 4, y, 4, NULL));
    float dev[4] = {1, 2, 3, 4};
    report("device_twice", kern_device_twice(4, dev, 4));
    printf("device_twice=%g %g %g %g\n", dev[0], dev[1], dev[2], dev[3]);
    float dw = 0, dx = 0, l = 0;
    report("loss_grad", kern_loss_grad(3.0f, 5.0f, 1.0f, &dw, &dx, &l));
    printf("loss_grad=%g %g\n", dw, dx);
    return 0;
}
