/* device_ftz.c: the emulated device f32 atomic add (runtime/cairn_device.h), one add at
 * a time. Reads pairs of f32 bit patterns (old, v) in hex from stdin, one pair a line;
 * prints the bits the element holds after cairn_atomic_add_f32_ftz(&old, v). The test
 * (tests/device/test_runtime_ftz.py) holds them to a model: flush both operands, add
 * rounding to nearest even, flush the sum. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cairn_device.h"

int main(void) {
    unsigned a, b;
    while (scanf("%x %x", &a, &b) == 2) {
        uint32_t ua = a, ub = b, out;
        float x, v;
        memcpy(&x, &ua, 4);
        memcpy(&v, &ub, 4);
        cairn_atomic_add_f32_ftz(&x, v);
        memcpy(&out, &x, 4);
        printf("%08x\n", out);
    }
    return 0;
}
