/* cairn_device_cuda.h: the CUDA side of device work, included by the .cu file a CUDA
 * build generates (one per program, so the extern "C" definitions here are defined
 * once). nvcc only: host functions that start the device, launch, wait and report
 * traps; the device memory functions cairn_device.h declares; and the device lanes'
 * warp shuffles and atomics.
 *
 * Start-up (cairn_device_start): no usable device is one line on stderr and exit 126
 * (CAIRN_EXIT_CANNOT_RUN, cairn_trap.h), before any device work. The trap record of
 * cairn_trap.h is allocated in mapped, pinned host memory, so a lane's trap stays
 * readable after __trap() has stopped the kernel.
 *
 * Waiting. A launch does not wait for the device (cairn_device_launched checks only that
 * it started) unless the device cannot share managed memory with the host while it runs
 * (cudaDevAttrConcurrentManagedAccess 0: WSL2), when every launch waits; the host waits where it reads what lanes wrote or must report a trap
 * (cairn_device_sync): after a region that touches @unified memory (the host may read
 * it next), when a device view is copied or observed (copies come back through
 * cudaMemcpy, then the record is read), before any observation (so a run that trapped
 * observes what the emulated run observes), before a host trap (cairn_trap_set_earlier:
 * a lane's earlier trap is reported instead), and when the program exits. A recorded
 * trap is reported with the host's own cairn_trap_at (the same `trap: ... at
 * FILE:LINE:COL` line and abort as a host trap); any other CUDA error is one line and
 * exit 126 (CAIRN_EXIT_CANNOT_RUN), naming the last region launched. A failed
 * allocation is the trap "out of device memory for a buffer" only when CUDA says
 * cudaErrorMemoryAllocation; any other error (a sticky one left by an earlier launch)
 * is that CUDA error and exit 126. In a library (CAIRN_LIB) nothing exits: the entry
 * returns 1 with the trap or the CUDA error as its last error, a lane's trap is
 * reported once, and no exit handler is installed.
 *
 * Shuffles move a value's bytes in 32-bit words (one shfl.sync for a 32-bit or smaller
 * value, two for 64 bits) with __shfl_sync and __shfl_xor_sync over the full warp ("Warp
 * Shuffle Functions", CUDA C++ Programming Guide), so every CAIRN scalar (bool, the 8-
 * and 16-bit integers, __int128 partial sums) crosses lanes bit for bit. The integer
 * atomics are PTX's own where it has them (atom.add/min/max on .u32/.s32/.u64/.s64,
 * atom.and/or/xor on .b32/.b64, atom.cas on .b16/.b32/.b64; "atom", PTX ISA), and/or/xor
 * of 8- and 16-bit elements a 32-bit atom on the word holding them with the other bytes
 * masked out; compare-and-swap loops only for 8- and 16-bit add, min and max and 8-bit
 * cas, which PTX lacks. Each gives back the old value, as the host's __atomic builtins
 * do. atomic_add_unordered is atomicAdd (atom.add.f32 / .f64: on global memory the f32
 * add flushes subnormals, on shared memory it keeps them). */
#ifndef CAIRN_DEVICE_CUDA_H
#define CAIRN_DEVICE_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cairn_checked.h"
#include "cairn_device.h"
#include "cairn_observe.h"
#include "cairn_trap.h"

/* ---- host: start, wait, memory ---- */

static cairn_device_trap_record *cairn__trap_host;
static cairn_loc cairn__last_region; /* the last region launched, for a failure's message */
/* cudaDevAttrConcurrentManagedAccess of the device: 0 (WSL2, Windows, some Jetsons) means
 * the host may not touch any managed memory while a kernel runs, so every launch waits. */
static int cairn__managed_concurrent = 1;

#define CAIRN__HOST static inline __attribute__((unused))

/* The device cannot run the work: in a program one line on stderr and exit 126; in a
 * library (CAIRN_LIB) the entry returns 1 with the line as its error (a trap without a
 * place), since the process is the caller's. */
CAIRN__HOST void cairn__device_cannot(const char *line) {
#ifdef CAIRN_LIB
    cairn_trap(line);
#else
    fprintf(stderr, "cairn: %s\n", line);
    fflush(stderr);
    exit(CAIRN_EXIT_CANNOT_RUN);
#endif
}

CAIRN__HOST void cairn_device_fail(const char *what, cudaError_t e) {
    char line[400];
    snprintf(line, sizeof line, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
    cairn__device_cannot(line);
}

/* A lane's trap, published (cairn_trap.h): its reason and location in *reason, *loc. */
CAIRN__HOST int cairn__device_trapped(const char **reason, cairn_loc *loc) {
    if (!cairn__trap_host || !*(volatile int *)&cairn__trap_host->ready) return 0;
    *reason = cairn__trap_host->reason;
    loc->file = cairn__trap_host->line ? cairn__last_region.file : NULL;
    loc->line = cairn__trap_host->line;
    loc->col = cairn__trap_host->col;
    return 1;
}

/* cairn_trap_set_earlier's function: waits for the device, then any lane's trap. */
CAIRN__HOST int cairn__device_earlier(const char **reason, cairn_loc *loc) {
    (void)cudaDeviceSynchronize();
    return cairn__device_trapped(reason, loc);
}

/* The one line of a CUDA error that is not a lane's trap, naming the region (or copy)
 * at `at`, the last one launched. */
CAIRN__HOST void cairn__device_failed(cudaError_t e, cairn_loc at, char *line, size_t size) {
    snprintf(line, size, "the device work up to the region at %s:%d:%d failed: %s (%s)",
             at.file ? at.file : "(none)", at.line, at.col, cudaGetErrorString(e),
             cudaGetErrorName(e));
}

/* Reports what the device did wrong, if anything: a lane's trap (as a host trap), or
 * the CUDA error e (one line, exit CAIRN_EXIT_CANNOT_RUN). `at` names the region or the copy. */
CAIRN__HOST void cairn__device_report(cudaError_t e, cairn_loc at) {
    const char *reason;
    cairn_loc loc;
    if (cairn__device_trapped(&reason, &loc)) {
#ifdef CAIRN_LIB /* reported once: the next call meets the context's own error */
        static char kept[sizeof cairn__trap_host->reason];
        snprintf(kept, sizeof kept, "%s", reason);
        *(volatile int *)&cairn__trap_host->ready = 0;
        reason = kept;
#endif
        cairn_trap_at(reason, loc);
    }
    if (e != cudaSuccess) {
        char line[400];
        cairn__device_failed(e, at, line, sizeof line);
        cairn__device_cannot(line);
    }
}

/* Waits for every launch so far; reports a lane's trap or a CUDA error. */
CAIRN__HOST void cairn_device_sync(void) {
    if (!cairn__trap_host) return; /* nothing launched */
    cudaError_t e = cudaDeviceSynchronize();
    cairn__device_report(e, cairn__last_region);
}

/* At exit (returning from main included): the last launches' traps and errors. Inside
 * exit() a failure may not call exit again, so it ends the process with _exit. */
CAIRN__HOST void cairn__device_at_exit(void) {
    const char *reason;
    cairn_loc loc;
    cudaError_t e = cudaDeviceSynchronize();
    if (cairn__device_trapped(&reason, &loc)) cairn_trap_at(reason, loc);
    if (e != cudaSuccess) {
        char line[400];
        cairn__device_failed(e, cairn__last_region, line, sizeof line);
        fprintf(stderr, "cairn: %s\n", line);
        fflush(stderr);
        _exit(CAIRN_EXIT_CANNOT_RUN);
    }
}

CAIRN__HOST void cairn_device_start(void) {
    if (cairn__trap_host) return;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        char line[300];
        snprintf(line, sizeof line,
                 "no CUDA device to run on (%s); build with --emulate to run the device work "
                 "on host threads",
                 e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        (void)cudaGetLastError(); /* a library's next call asks again */
        cairn__device_cannot(line);
    }
    void *host = NULL, *dev = NULL;
    if ((e = cudaHostAlloc(&host, sizeof *cairn__trap_host, cudaHostAllocMapped)) != cudaSuccess)
        cairn_device_fail("cannot allocate the trap record", e);
    memset(host, 0, sizeof *cairn__trap_host);
    if ((e = cudaHostGetDevicePointer(&dev, host, 0)) != cudaSuccess ||
        (e = cudaMemcpyToSymbol(cairn__device_trap, &dev, sizeof dev)) != cudaSuccess)
        cairn_device_fail("cannot map the trap record", e);
    cairn__trap_host = (cairn_device_trap_record *)host;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&cairn__managed_concurrent, cudaDevAttrConcurrentManagedAccess,
                               device) != cudaSuccess)
        cairn__managed_concurrent = 0; /* unknown: the safe side */
    cairn_trap_set_earlier(cairn__device_earlier);
#ifndef CAIRN_LIB                  /* a library's caller owns the process and its exit */
    atexit(cairn__device_at_exit); /* after CUDA's own: it runs first */
#endif
}

/* After a launch from the region at `region`: did it start? `sync`: and wait for it
 * (a region that touches @unified memory, which the host may read next). */
CAIRN__HOST void cairn_device_launched(cairn_loc region, int sync) {
    cairn__last_region = region;
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && (sync || !cairn__managed_concurrent)) e = cudaDeviceSynchronize();
    cairn__device_report(e, region);
}

/* Before a block region's launch: a block of `threads` is no more than the kernel
 * launches with on this device (cudaFuncGetAttributes: its registers, its launch
 * bounds), else the trap the emulation gives past 1024 threads, with this limit. */
CAIRN__HOST void cairn_device_check_block(const void *kern, uint64_t threads, cairn_loc at) {
    struct cudaFuncAttributes a;
    cudaError_t e = cudaFuncGetAttributes(&a, kern);
    if (e != cudaSuccess) cairn__device_report(e, at);
    if (threads <= (uint64_t)a.maxThreadsPerBlock) return;
    char reason[160];
    snprintf(reason, sizeof reason,
             "a block of more than %d threads (this kernel's most on this device: %d registers "
             "a thread)",
             a.maxThreadsPerBlock, a.numRegs);
    cairn_trap_at(reason, at);
}

/* Blocks of a grid of n lanes, 256 threads each (the lowering has checked n against the
 * launch's limits, on both sides: at most 2^31 - 1 blocks). */
CAIRN__HOST unsigned cairn_device_grid(uint64_t n) {
    uint64_t blocks = n / 256 + (n % 256 != 0);
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
    if (e == cudaErrorMemoryAllocation) { /* the program's own: a trap, as on the host */
        (void)cudaGetLastError();         /* not left for the next launch to find */
        if (p) cudaFree(p);
        cairn_trap_at("out of device memory for a buffer", at);
    }
    if (e != cudaSuccess) { /* a lane's earlier trap, else the CUDA error itself (126) */
        cairn__device_report(cudaSuccess, at);
        cairn_device_fail("cannot allocate a device buffer", e);
    }
    return p;
}

extern "C" void cairn_device_free(void *p, int place) {
    if (place == CAIRN_PLACE_HOST) free(p);
    else if (p) cudaFree(p);
}

/* The names of the memory cudaPointerGetAttributes finds at a pointer. */
CAIRN__HOST const char *cairn__memory_kind(enum cudaMemoryType t) {
    return t == cudaMemoryTypeDevice    ? "device memory"
           : t == cudaMemoryTypeManaged ? "managed memory"
           : t == cudaMemoryTypeHost    ? "pinned host memory"
                                        : "host memory";
}

extern "C" void cairn_device_check_place(const void *p, uint64_t n, int place, const char *name,
                                         cairn_loc at) {
    if (!p && n == 0) return;
    char reason[200];
    if (!p) {
        snprintf(reason, sizeof reason, "%.64s is a NULL pointer with %llu elements", name,
                 (unsigned long long)n);
        cairn_trap_at(reason, at);
    }
    cairn_device_start();
    struct cudaPointerAttributes a;
    cudaError_t e = cudaPointerGetAttributes(&a, p);
    if (e != cudaSuccess) cairn_device_fail("cannot ask where a view's pointer points", e);
    bool ok = place == CAIRN_PLACE_UNIFIED
                  ? a.type == cudaMemoryTypeManaged
                  : a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
    if (ok) return;
    snprintf(reason, sizeof reason, "%.64s must be %s, and its pointer is to %s", name,
             place == CAIRN_PLACE_UNIFIED ? "managed memory (@unified)" : "device memory (@device)",
             cairn__memory_kind(a.type));
    cairn_trap_at(reason, at);
}

extern "C" void *cairn_device_copy_in(const void *host, uint64_t n, size_t size, int place,
                                      cairn_loc at) {
    void *dev = cairn_device_zeroed(n, size, place, at);
    cairn_copy(dev, n, host, n, size, at);
    return dev;
}

extern "C" void cairn_device_copy_out(void *host, const void *dev, uint64_t n, size_t size,
                                      cairn_loc at) {
    cairn_copy(host, n, dev, n, size, at);
}

extern "C" void cairn_device_drop(void *dev, int place) { cairn_device_free(dev, place); }

extern "C" void cairn_copy(void *dst, uint64_t dn, const void *src, uint64_t sn, size_t size,
                           cairn_loc at) {
    if (dn != sn) cairn_trap_at("copy between arrays of different lengths", at);
    if (!dn) return;
    cairn_device_start();
    cudaError_t e = cudaMemcpy(dst, src, (size_t)dn * size, cudaMemcpyDefault);
    cairn__device_report(e, at); /* a lane's trap before the copy, or the copy's error */
}

/* observe(name, view) in a CUDA build, any placement: the device has finished what came
 * before (a lane's trap is reported, not observed past), then the bits are copied to the
 * host and digested. */
extern "C" void cairn_device_observe(const char *name, const char *type, const void *p, uint64_t n,
                                     size_t size) {
    cairn_device_sync();
    if (!cairn__trap_host) { /* the device never started: every array is host memory */
        cairn_observe(name, type, p, (size_t)n, size);
        return;
    }
    void *host = n ? malloc((size_t)n * size) : NULL;
    if (n && !host) cairn_trap("out of memory for an observation");
    if (n) {
        cudaError_t e = cudaMemcpy(host, p, (size_t)n * size, cudaMemcpyDefault);
        if (e != cudaSuccess) cairn_device_fail("cannot read a device view to observe it", e);
    }
    cairn_observe(name, type, host, (size_t)n, size);
    free(host);
}

/* ---- device: shuffles over the full warp ---- */

#define CAIRN_FULL_WARP 0xffffffffu

/* v's bytes in 32-bit words, each in one shfl.sync: one for a value of 32 bits or fewer,
 * two for 64, four for a 128-bit partial sum. */
template <typename T>
__device__ inline T cairn_shfl(T v, unsigned lane, bool xor_mode) {
    unsigned w[(sizeof(T) + 3) / 4] = {0};
    memcpy(w, &v, sizeof v);
    for (unsigned k = 0; k < (sizeof(T) + 3) / 4; k++)
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

/* ---- device: float atomics on a block's shared memory ---- */

/* atomic_add_unordered on a shared array: PTX's atom.shared.add, whose f32 form keeps
 * subnormal operands and results (only the global one flushes them: "atom", PTX ISA;
 * "Floating-Point Standard", CUDA C++ Programming Guide). Spelled in PTX so that the
 * space is explicit, not left to nvcc's address-space inference. */
__device__ inline float cairn_device_atomic_add_shared(float *p, float v) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    float old;
    asm volatile("atom.shared.add.f32 %0, [%1], %2;" : "=f"(old) : "r"(a), "f"(v) : "memory");
    return old;
}
__device__ inline double cairn_device_atomic_add_shared(double *p, double v) {
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    double old;
    asm volatile("atom.shared.add.f64 %0, [%1], %2;" : "=d"(old) : "r"(a), "d"(v) : "memory");
    return old;
}

/* atomic_add_unordered on an f32 the lowering classes as global memory: a @device or
 * @unified view, or a function's view parameter, which a caller may give a block's
 * shared array. On global memory it is atom.global.add.f32, which flushes subnormal
 * operands and results; on a shared array reached that way it flushes them too (a
 * compare-and-swap loop), so the device agrees with the emulation's
 * cairn_atomic_add_f32_ftz and the receipt's "flush_subnormals": true wherever the
 * element lives. */
__device__ inline float cairn_device_atomic_add_f32_ftz(float *p, float v) {
    float old;
    if (!__isShared(p)) {
        asm volatile("atom.global.add.f32 %0, [%1], %2;"
                     : "=f"(old)
                     : "l"(__cvta_generic_to_global(p)), "f"(v)
                     : "memory");
        return old;
    }
    unsigned *word = (unsigned *)p, seen = *(volatile unsigned *)word, expect;
    do {
        expect = seen;
        unsigned a = expect, b = __float_as_uint(v), r;
        if ((a & 0x7f800000u) == 0) a &= 0x80000000u; /* a subnormal to its signed zero */
        if ((b & 0x7f800000u) == 0) b &= 0x80000000u;
        r = __float_as_uint(__uint_as_float(a) + __uint_as_float(b));
        if ((r & 0x7f800000u) == 0) r &= 0x80000000u;
        seen = atomicCAS(word, expect, r);
    } while (seen != expect);
    return __uint_as_float(seen);
}

/* ---- device: integer atomics (old value back) ---- */

/* The 32- or 64-bit unsigned word type of a T of that size (the native atomics take it). */
template <typename T>
using cairn__word = typename std::conditional<sizeof(T) == 8, unsigned long long, unsigned>::type;

template <typename T>
__device__ inline T cairn__from_word(cairn__word<T> w) {
    T r;
    memcpy(&r, &w, sizeof r);
    return r;
}
template <typename T>
__device__ inline cairn__word<T> cairn__to_word(T v) {
    cairn__word<T> w;
    memcpy(&w, &v, sizeof w);
    return w;
}

/* *p = f(*p) by compare-and-swap, for what PTX has no atom of (8- and 16-bit add, min
 * and max, 8-bit cas): on the aligned 32-bit word holding the element (little-endian);
 * gives the old value. */
template <typename T, typename F>
__device__ inline T cairn__atomic_update(T *p, F f) {
    static_assert(sizeof(T) < 4, "32- and 64-bit elements use PTX's own atom");
    uintptr_t a = (uintptr_t)p;
    unsigned *wp = (unsigned *)(a & ~(uintptr_t)3), shift = (unsigned)(a & 3) * 8;
    unsigned mask = ((1u << (8 * sizeof(T))) - 1) << shift;
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

/* An 8- or 16-bit and/or/xor as one 32-bit atom on its word: `bits` is v's bits at the
 * element's place and `rest` what the other bytes of the word get (all ones for and,
 * zero for or and xor, which leaves them as they are). */
template <typename T>
__device__ inline T cairn__atomic_bitwise(T *p, T v, int op) {
    uintptr_t a = (uintptr_t)p;
    unsigned *wp = (unsigned *)(a & ~(uintptr_t)3), shift = (unsigned)(a & 3) * 8;
    unsigned mask = ((1u << (8 * sizeof(T))) - 1) << shift, vb = 0;
    memcpy(&vb, &v, sizeof v);
    unsigned bits = (vb << shift) & mask, old;
    if (op == 0) old = atomicAnd(wp, bits | ~mask);
    else if (op == 1) old = atomicOr(wp, bits);
    else old = atomicXor(wp, bits);
    unsigned rbits = (old & mask) >> shift;
    T r;
    memcpy(&r, &rbits, sizeof r);
    return r;
}

template <typename T>
__device__ inline T cairn_device_atomic_add_wrap(T *p, T v) {
    if constexpr (sizeof(T) >= 4) /* atom.add.u32 / .u64: two's complement wraps alike */
        return cairn__from_word<T>(
            atomicAdd((cairn__word<T> *)p, (cairn__word<T>)cairn__to_word<T>(v)));
    else
        return cairn__atomic_update(
            p, [v](T a) { return (T)((unsigned long long)a + (unsigned long long)v); });
}

/* atom.min / atom.max on .s32 .u32 .s64 .u64 (the signed ones through CUDA's int and
 * long long overloads). */
template <typename T>
__device__ inline T cairn__atomic_minmax(T *p, T v, bool is_min) {
    if constexpr (sizeof(T) == 4 && (T)-1 < (T)0)
        return (T)(is_min ? atomicMin((int *)p, (int)v) : atomicMax((int *)p, (int)v));
    else if constexpr (sizeof(T) == 4)
        return (T)(is_min ? atomicMin((unsigned *)p, (unsigned)v)
                          : atomicMax((unsigned *)p, (unsigned)v));
    else if constexpr (sizeof(T) == 8 && (T)-1 < (T)0)
        return (T)(is_min ? atomicMin((long long *)p, (long long)v)
                          : atomicMax((long long *)p, (long long)v));
    else if constexpr (sizeof(T) == 8)
        return (T)(is_min ? atomicMin((unsigned long long *)p, (unsigned long long)v)
                          : atomicMax((unsigned long long *)p, (unsigned long long)v));
    else if (is_min) return cairn__atomic_update(p, [v](T a) { return v < a ? v : a; });
    else return cairn__atomic_update(p, [v](T a) { return a < v ? v : a; });
}
template <typename T>
__device__ inline T cairn_device_atomic_min(T *p, T v) {
    return cairn__atomic_minmax(p, v, true);
}
template <typename T>
__device__ inline T cairn_device_atomic_max(T *p, T v) {
    return cairn__atomic_minmax(p, v, false);
}

/* atom.and / .or / .xor on .b32 and .b64; narrower elements on their word. */
template <typename T>
__device__ inline T cairn__atomic_logic(T *p, T v, int op) {
    if constexpr (sizeof(T) >= 4) {
        cairn__word<T> *w = (cairn__word<T> *)p, b = cairn__to_word<T>(v);
        return cairn__from_word<T>(op == 0   ? atomicAnd(w, b)
                                   : op == 1 ? atomicOr(w, b)
                                             : atomicXor(w, b));
    } else {
        return cairn__atomic_bitwise(p, v, op);
    }
}
template <typename T>
__device__ inline T cairn_device_atomic_and(T *p, T v) {
    return cairn__atomic_logic(p, v, 0);
}
template <typename T>
__device__ inline T cairn_device_atomic_or(T *p, T v) {
    return cairn__atomic_logic(p, v, 1);
}
template <typename T>
__device__ inline T cairn_device_atomic_xor(T *p, T v) {
    return cairn__atomic_logic(p, v, 2);
}

/* atom.cas on .b32 and .b64, and .b16 (sm_70 and later); an 8-bit cas on its word. */
template <typename T>
__device__ inline T cairn_device_atomic_cas(T *p, T expected, T desired) {
    if constexpr (sizeof(T) >= 4)
        return cairn__from_word<T>(atomicCAS((cairn__word<T> *)p, cairn__to_word<T>(expected),
                                             cairn__to_word<T>(desired)));
    else if constexpr (sizeof(T) == 2) {
        unsigned short e, d;
        memcpy(&e, &expected, 2);
        memcpy(&d, &desired, 2);
        unsigned short old = atomicCAS((unsigned short *)p, e, d);
        T r;
        memcpy(&r, &old, 2);
        return r;
    } else {
        return cairn__atomic_update(
            p, [expected, desired](T a) { return a == expected ? desired : a; });
    }
}

#endif
