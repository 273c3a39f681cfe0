/* cairn_device_cuda.h: the CUDA side of device work, included by the .cu file a CUDA
 * build generates (one per program, so the extern "C" definitions here are defined
 * once). nvcc only: host functions that start the device, launch, wait and report
 * traps; the device memory functions cairn_device.h declares; and the device lanes'
 * warp shuffles and atomics.
 *
 * Start-up (cairn_device_start): no usable device is one line on stderr and exit 126
 * (CAIRN_EXIT_CANNOT_RUN, cairn_trap.h), before any device work. The trap record of cairn_trap.h is allocated in mapped,
 * pinned host memory, so a lane's trap stays readable after __trap() has stopped the
 * kernel. After every launch, cairn_device_wait synchronises; a recorded trap is
 * reported with the host's own cairn_trap_at (the same `trap: ... at FILE:LINE:COL`
 * line and abort as a host trap); any other CUDA error is one line and exit 126.
 *
 * Shuffles move a value's bytes in 32-bit (or 64-bit) words with __shfl_sync and
 * __shfl_xor_sync over the full warp ("Warp Shuffle Functions", CUDA C++ Programming
 * Guide), so every CAIRN scalar (bool, the 8- and 16-bit integers, __int128 partial
 * sums) crosses lanes bit for bit. The integer atomics are compare-and-swap loops on
 * the element's aligned 32- or 64-bit word (atomicCAS), giving back the old value as
 * the host's __atomic builtins do; atomic_add_unordered is atomicAdd (PTX
 * atom.global.add.f32 / .f64). */
#ifndef CAIRN_DEVICE_CUDA_H
#define CAIRN_DEVICE_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_checked.h"
#include "cairn_device.h"
#include "cairn_observe.h"
#include "cairn_trap.h"

/* ---- host: start, wait, memory ---- */

static cairn_device_trap_record *cairn__trap_host;

#define CAIRN__HOST static inline __attribute__((unused))

CAIRN__HOST void cairn_device_fail(const char *what, cudaError_t e) {
    fprintf(stderr, "cairn: %s: %s (%s)\n", what, cudaGetErrorString(e), cudaGetErrorName(e));
    exit(CAIRN_EXIT_CANNOT_RUN);
}

CAIRN__HOST void cairn_device_start(void) {
    if (cairn__trap_host) return;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr,
                "cairn: no CUDA device to run on (%s); build with --emulate to run the "
                "device work on host threads\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        exit(CAIRN_EXIT_CANNOT_RUN);
    }
    void *host = NULL, *dev = NULL;
    if ((e = cudaHostAlloc(&host, sizeof *cairn__trap_host, cudaHostAllocMapped)) != cudaSuccess)
        cairn_device_fail("cannot allocate the trap record", e);
    memset(host, 0, sizeof *cairn__trap_host);
    if ((e = cudaHostGetDevicePointer(&dev, host, 0)) != cudaSuccess ||
        (e = cudaMemcpyToSymbol(cairn__device_trap, &dev, sizeof dev)) != cudaSuccess)
        cairn_device_fail("cannot map the trap record", e);
    cairn__trap_host = (cairn_device_trap_record *)host;
}

/* After a launch from the region at `region`: a lane's trap, or a CUDA error. */
CAIRN__HOST void cairn_device_wait(cairn_loc region) {
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    if (cairn__trap_host->set) {
        cairn_loc at = {cairn__trap_host->line ? region.file : NULL, cairn__trap_host->line,
                        cairn__trap_host->col};
        cairn_trap_at(cairn__trap_host->reason, at);
    }
    if (e != cudaSuccess) {
        fprintf(stderr, "cairn: the device region at %s:%d:%d failed: %s (%s)\n", region.file,
                region.line, region.col, cudaGetErrorString(e), cudaGetErrorName(e));
        exit(CAIRN_EXIT_CANNOT_RUN);
    }
}

/* Blocks of a grid of n lanes, 256 threads each; more than CUDA's grid holds traps. */
CAIRN__HOST unsigned cairn_device_grid(uint64_t n, cairn_loc at) {
    uint64_t blocks = n / 256 + (n % 256 != 0);
    if (blocks > 0x7fffffffu) cairn_trap_at("too many lanes for one device launch", at);
    return (unsigned)blocks;
}

extern "C" void *cairn_device_zeroed(uint64_t n, size_t size, int place, cairn_loc at) {
    if (place == CAIRN_PLACE_HOST) return cairn_zeroed(n, size, at);
    if (n == 0) return NULL;
    if (n > SIZE_MAX / size) cairn_trap_at("buffer too large", at);
    cairn_device_start();
    void *p = NULL;
    cudaError_t e = place == CAIRN_PLACE_DEVICE
                        ? cudaMalloc(&p, (size_t)n * size)
                        : cudaMallocManaged(&p, (size_t)n * size, cudaMemAttachGlobal);
    if (e == cudaSuccess) e = cudaMemset(p, 0, (size_t)n * size);
    if (e != cudaSuccess) cairn_trap_at("out of device memory for a buffer", at);
    return p;
}

extern "C" void cairn_device_free(void *p, int place) {
    if (place == CAIRN_PLACE_HOST) free(p);
    else if (p) cudaFree(p);
}

extern "C" void cairn_copy(void *dst, uint64_t dn, const void *src, uint64_t sn, size_t size,
                           cairn_loc at) {
    if (dn != sn) cairn_trap_at("copy between arrays of different lengths", at);
    if (!dn) return;
    cairn_device_start();
    cudaError_t e = cudaMemcpy(dst, src, (size_t)dn * size, cudaMemcpyDefault);
    if (e != cudaSuccess) cairn_device_fail("copy failed", e);
}

extern "C" void cairn_device_observe(const char *name, const char *type, const void *p, uint64_t n,
                                     size_t size) {
    void *host = n ? malloc((size_t)n * size) : NULL;
    if (n && !host) cairn_trap("out of memory for an observation");
    if (n) {
        cairn_device_start();
        cudaError_t e = cudaMemcpy(host, p, (size_t)n * size, cudaMemcpyDefault);
        if (e != cudaSuccess) cairn_device_fail("cannot read a device view to observe it", e);
    }
    cairn_observe(name, type, host, (size_t)n, size);
    free(host);
}

/* ---- device: shuffles over the full warp ---- */

#define CAIRN_FULL_WARP 0xffffffffu

template <typename T>
__device__ inline T cairn_shfl(T v, unsigned lane, bool xor_mode) {
    unsigned long long w[(sizeof(T) + 7) / 8] = {0};
    memcpy(w, &v, sizeof v);
    for (unsigned k = 0; k < (sizeof(T) + 7) / 8; k++)
        w[k] = xor_mode ? __shfl_xor_sync(CAIRN_FULL_WARP, w[k], (int)lane)
                        : __shfl_sync(CAIRN_FULL_WARP, w[k], (int)lane);
    memcpy(&v, w, sizeof v);
    return v;
}
template <typename T>
__device__ inline T cairn_shfl_xor(T v, unsigned mask) {
    return cairn_shfl(v, mask, true);
}
template <typename T>
__device__ inline T cairn_shfl_idx(T v, unsigned src) {
    return cairn_shfl(v, src, false);
}

/* ---- device: integer atomics (old value back) ---- */

/* *p = f(*p) atomically; gives the old value. */
template <typename T, typename F>
__device__ inline T cairn__atomic_update(T *p, F f) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long *wp = (unsigned long long *)p, old = *(volatile unsigned long long *)wp,
                           seen;
        do {
            seen = old;
            T cur, next;
            memcpy(&cur, &seen, sizeof cur);
            next = f(cur);
            unsigned long long nw;
            memcpy(&nw, &next, sizeof nw);
            old = atomicCAS(wp, seen, nw);
        } while (old != seen);
        T r;
        memcpy(&r, &old, sizeof r);
        return r;
    } else {
        /* 1, 2 or 4 bytes: the aligned 32-bit word holding them (little-endian) */
        uintptr_t a = (uintptr_t)p;
        unsigned *wp = (unsigned *)(a & ~(uintptr_t)3), shift = (unsigned)(a & 3) * 8;
        unsigned mask = (unsigned)(((1ull << (8 * sizeof(T))) - 1) << shift);
        unsigned old = *(volatile unsigned *)wp, seen;
        do {
            seen = old;
            unsigned bits = (seen & mask) >> shift, nbits = 0;
            T cur, next;
            memcpy(&cur, &bits, sizeof cur);
            next = f(cur);
            memcpy(&nbits, &next, sizeof next);
            old = atomicCAS(wp, seen, (seen & ~mask) | ((nbits << shift) & mask));
        } while (old != seen);
        unsigned rbits = (old & mask) >> shift;
        T r;
        memcpy(&r, &rbits, sizeof r);
        return r;
    }
}

template <typename T>
__device__ inline T cairn_device_atomic_add_wrap(T *p, T v) {
    return cairn__atomic_update(
        p, [v](T a) { return (T)((unsigned long long)a + (unsigned long long)v); });
}
template <typename T>
__device__ inline T cairn_device_atomic_min(T *p, T v) {
    return cairn__atomic_update(p, [v](T a) { return v < a ? v : a; });
}
template <typename T>
__device__ inline T cairn_device_atomic_max(T *p, T v) {
    return cairn__atomic_update(p, [v](T a) { return a < v ? v : a; });
}
template <typename T>
__device__ inline T cairn_device_atomic_and(T *p, T v) {
    return cairn__atomic_update(p, [v](T a) { return (T)(a & v); });
}
template <typename T>
__device__ inline T cairn_device_atomic_or(T *p, T v) {
    return cairn__atomic_update(p, [v](T a) { return (T)(a | v); });
}
template <typename T>
__device__ inline T cairn_device_atomic_xor(T *p, T v) {
    return cairn__atomic_update(p, [v](T a) { return (T)(a ^ v); });
}
template <typename T>
__device__ inline T cairn_device_atomic_cas(T *p, T expected, T desired) {
    return cairn__atomic_update(p,
                                [expected, desired](T a) { return a == expected ? desired : a; });
}

#endif
