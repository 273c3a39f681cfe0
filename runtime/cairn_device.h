/* cairn_device.h: device work as host code sees it: copies across placements, device
 * buffers, observations of device views, and the f32 atomic add a device lane does.
 *
 * Placements (docs/memory.md): 0 host, 1 device, 2 unified (the numbering of
 * compiler/syntax/types.h's Placement). In a program built for the host (device work
 * emulated) every placement is host memory and everything here is plain C. In a CUDA
 * build (CAIRN_CUDA defined) the functions declared at the bottom are defined by
 * cairn_device_cuda.h inside the program's .cu file: device buffers come from
 * cudaMalloc, unified ones from cudaMallocManaged, and copies go through cudaMemcpy.
 *
 * The emulated f32 atomic add flushes subnormal operands and results to zero, keeping
 * the sign, as PTX's atom.add.f32 does on the device ("atom", PTX ISA 9.7.13.5: "The
 * floating-point add with .f32 rounds to nearest even and flushes subnormal inputs and
 * results to sign-preserving zero"), so an emulated run stays inside the device's
 * contract (numerics.md, "Atomic float addition"). */
#ifndef CAIRN_DEVICE_H
#define CAIRN_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cairn_checked.h"
#include "cairn_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { CAIRN_PLACE_HOST = 0, CAIRN_PLACE_DEVICE = 1, CAIRN_PLACE_UNIFIED = 2 };

/* x with a subnormal flushed to the zero of its sign (on the bits: no FPU mode). */
static inline float cairn_ftz_f32(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7f800000u) == 0) u &= 0x80000000u;
    memcpy(&x, &u, sizeof x);
    return x;
}

#ifndef __CUDA_ARCH__
/* The emulated device f32 atomic add on global memory: old and v flushed, the sum rounded
 * once, the result flushed, a NaN the device's (cairn_dnan_f32); one compare-and-swap per
 * add, in the order the threads arrive. */
static inline void cairn_atomic_add_f32_ftz(float *p, float v) {
    float old, sum;
    v = cairn_ftz_f32(v);
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do sum = cairn_dnan_f32(cairn_ftz_f32(cairn_ftz_f32(old) + v));
    while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}
/* On a block's shared memory (atom.shared.add.f32): subnormals kept, a NaN the device's. */
static inline void cairn_atomic_add_f32_shared(float *p, float v) {
    float old, sum;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do sum = cairn_dnan_f32(old + v);
    while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}
#endif

/* A library's entries (compiler/lower/lower_entry.c). cairn_device_check_place: the
 * pointer p of n elements given for the view `name` placed `place` is memory of that
 * placement (in a CUDA build: cudaPointerGetAttributes says device or managed memory for
 * @device, managed memory for @unified; in an emulated build any host memory), else a
 * trap naming the view. The host entries' copies: cairn_device_copy_in makes a buffer
 * of the placement holding the host view's bits, cairn_device_copy_out copies one back,
 * cairn_device_drop frees it. Defined by cairn_lib.c in an emulated build (buffers
 * from cairn_zeroed, which a trap's jump frees), by cairn_device_cuda.h in a CUDA one. */
void cairn_device_check_place(const void *p, uint64_t n, int place, const char *name, cairn_loc at);
void *cairn_device_copy_in(const void *host, uint64_t n, size_t size, int place, cairn_loc at);
void cairn_device_copy_out(void *host, const void *dev, uint64_t n, size_t size, cairn_loc at);
void cairn_device_drop(void *dev, int place);

#ifdef CAIRN_CUDA
/* n zeroed elements of `size` bytes in `place`; traps when it cannot. */
void *cairn_device_zeroed(uint64_t n, size_t size, int place, cairn_loc at);
void cairn_device_free(void *p, int place);
/* copy(dst, src): extents equal (else a trap at `at`), then the bits, any placements. */
void cairn_copy(void *dst, uint64_t dn, const void *src, uint64_t sn, size_t size, cairn_loc at);
/* observe(name, view or scalar) of any placement: the device's earlier work finished
 * (a lane's trap reported first), the bits copied to the host, then digested. */
void cairn_device_observe(const char *name, const char *type, const void *p, uint64_t n,
                          size_t size);
#else
static inline void cairn_copy(void *dst, uint64_t dn, const void *src, uint64_t sn, size_t size,
                              cairn_loc at) {
    if (dn != sn) cairn_trap_at("copy between arrays of different lengths", at);
    if (dn) memmove(dst, src, (size_t)dn * size);
}
#endif

#ifdef __cplusplus
}
#endif

#endif
