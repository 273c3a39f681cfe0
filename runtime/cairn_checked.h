/* cairn_checked.h: the guards generated host C calls, as static inline functions.
 *
 * CAIRN's integer arithmetic is checked: an operation whose exact result does not fit
 * its type traps ("integer overflow"), so does a division or remainder by zero, a shift
 * count outside [0, bits), a conversion whose value does not fit, and an index outside
 * a view. Each guard takes the .cairn location the trap names. Floats need no guard;
 * the helpers here give min and max an answer that does not depend on argument order
 * (so a pooled min/max reduction has fixed bits) and move f32/f64 to and from bits.
 * Only compiler/lower/lower_c.c's output uses this header. */
#ifndef CAIRN_CHECKED_H
#define CAIRN_CHECKED_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cairn_message.h"
#include "cairn_trap.h"

/* Everything but the allocation and the host atomics is CAIRN_HD: a CUDA build's
 * device lanes call the same guards (nvcc has no __builtin_*_overflow in device code,
 * so there the overflow tests are templates over 128-bit arithmetic, where every
 * operation on 64-bit or narrower operands is exact). */
#define CAIRN__FN static inline CAIRN_HD

#ifdef __CUDA_ARCH__
template <typename T>
__device__ inline bool cairn__overflowed(T *r, __int128 w) {
    *r = (T)w;
    return (__int128)*r != w;
}
template <typename T>
__device__ inline bool cairn__overflowed(T *r, unsigned __int128 w) {
    *r = (T)w;
    return (unsigned __int128)*r != w;
}
template <typename T>
__device__ inline bool cairn__add_overflow(T a, T b, T *r) {
    if (T(-1) < T(0)) return cairn__overflowed(r, (__int128)a + (__int128)b);
    return cairn__overflowed(r, (unsigned __int128)a + (unsigned __int128)b);
}
template <typename T>
__device__ inline bool cairn__sub_overflow(T a, T b, T *r) {
    if (T(-1) < T(0)) return cairn__overflowed(r, (__int128)a - (__int128)b);
    if (b > a) {
        *r = (T)(a - b);
        return true;
    }
    return cairn__overflowed(r, (unsigned __int128)(a - b));
}
template <typename T>
__device__ inline bool cairn__mul_overflow(T a, T b, T *r) {
    if (T(-1) < T(0)) return cairn__overflowed(r, (__int128)a * (__int128)b);
    return cairn__overflowed(r, (unsigned __int128)a * (unsigned __int128)b);
}
#define CAIRN__ADD_OVF cairn__add_overflow
#define CAIRN__SUB_OVF cairn__sub_overflow
#define CAIRN__MUL_OVF cairn__mul_overflow
#else
#define CAIRN__ADD_OVF __builtin_add_overflow
#define CAIRN__SUB_OVF __builtin_sub_overflow
#define CAIRN__MUL_OVF __builtin_mul_overflow
#endif

#define CAIRN__OVERFLOW "integer overflow"
#define CAIRN__DIVZERO  "division by zero"
/* The cold path of a failed operation on two S operands (signed when MIN != 0). */
#define CAIRN__TRAP_OP(HEAD, A, OP, B, MIN, TYPE)                                                  \
    cairn__trap_binop(HEAD, (uint64_t)(A), OP, (uint64_t)(B), (MIN) != 0, TYPE, at)

/* + - * / % negation and shifts for one integer type S (C type T, minimum MIN, width
 * BITS); MIN is 0 for unsigned types. A failed guard names its operands and the type
 * (cairn_message.h): `integer overflow: 2147483647 + 1 does not fit in i32`. */
#define CAIRN__CHECKED(S, T, MIN, BITS)                                                            \
    CAIRN__FN T cairn_add_##S(T a, T b, cairn_loc at) {                                            \
        T r;                                                                                       \
        if (CAIRN__ADD_OVF(a, b, &r)) CAIRN__TRAP_OP(CAIRN__OVERFLOW, a, " + ", b, MIN, #S);       \
        return r;                                                                                  \
    }                                                                                              \
    CAIRN__FN T cairn_sub_##S(T a, T b, cairn_loc at) {                                            \
        T r;                                                                                       \
        if (CAIRN__SUB_OVF(a, b, &r)) CAIRN__TRAP_OP(CAIRN__OVERFLOW, a, " - ", b, MIN, #S);       \
        return r;                                                                                  \
    }                                                                                              \
    CAIRN__FN T cairn_mul_##S(T a, T b, cairn_loc at) {                                            \
        T r;                                                                                       \
        if (CAIRN__MUL_OVF(a, b, &r)) CAIRN__TRAP_OP(CAIRN__OVERFLOW, a, " * ", b, MIN, #S);       \
        return r;                                                                                  \
    }                                                                                              \
    CAIRN__FN T cairn_neg_##S(T a, cairn_loc at) {                                                 \
        T r;                                                                                       \
        if (CAIRN__SUB_OVF((T)0, a, &r)) cairn__trap_neg((int64_t)a, #S, at);                      \
        return r;                                                                                  \
    }                                                                                              \
    CAIRN__FN T cairn_div_##S(T a, T b, cairn_loc at) {                                            \
        if (b == 0) CAIRN__TRAP_OP(CAIRN__DIVZERO, a, " / ", b, MIN, NULL);                        \
        if ((MIN) != 0 && a == (T)(MIN) && b == (T)-1)                                             \
            CAIRN__TRAP_OP(CAIRN__OVERFLOW, a, " / ", b, 1, #S);                                   \
        return (T)(a / b);                                                                         \
    }                                                                                              \
    CAIRN__FN T cairn_rem_##S(T a, T b, cairn_loc at) {                                            \
        if (b == 0) CAIRN__TRAP_OP(CAIRN__DIVZERO, a, " % ", b, MIN, NULL);                        \
        if ((MIN) != 0 && b == (T)-1) return 0;                                                    \
        return (T)(a % b);                                                                         \
    }                                                                                              \
    CAIRN__FN T cairn_shl_##S(T a, int64_t b, cairn_loc at) {                                      \
        if (b < 0 || b >= (BITS))                                                                  \
            cairn__trap_value("shift count out of range", (uint64_t)b, 0, 'i',                     \
                              " is not in 0.." #BITS " (" #S ")", at);                             \
        T r = (T)((uint64_t)a << b);                                                               \
        if ((T)(r >> b) != a) CAIRN__TRAP_OP(CAIRN__OVERFLOW, a, " << ", b, MIN, #S);              \
        return r;                                                                                  \
    }                                                                                              \
    CAIRN__FN T cairn_shr_##S(T a, int64_t b, cairn_loc at) {                                      \
        if (b < 0 || b >= (BITS))                                                                  \
            cairn__trap_value("shift count out of range", (uint64_t)b, 0, 'i',                     \
                              " is not in 0.." #BITS " (" #S ")", at);                             \
        return (T)(a >> b);                                                                        \
    }                                                                                              \
    CAIRN__FN T cairn_min_##S(T a, T b) { return a < b ? a : b; }                                  \
    CAIRN__FN T cairn_max_##S(T a, T b) { return a < b ? b : a; }

/* Conversions into S from a signed or unsigned integer and from a float; lo and hi
 * bound T, and f_hi is hi + 1 as a double (a power of two, exact). A failed one names
 * the value: `integer conversion out of range: 300 does not fit in u8`. */
#define CAIRN__CONVERT(S, T, LO, HI, F_HI)                                                         \
    CAIRN__FN T cairn_to_##S##_from_signed(int64_t v, cairn_loc at) {                              \
        if (v < (int64_t)(LO) || ((HI) <= INT64_MAX && v > (int64_t)(HI)))                         \
            cairn__trap_value("integer conversion out of range", (uint64_t)v, 0, 'i',              \
                              " does not fit in " #S, at);                                         \
        return (T)v;                                                                               \
    }                                                                                              \
    CAIRN__FN T cairn_to_##S##_from_unsigned(uint64_t v, cairn_loc at) {                           \
        if (v > (uint64_t)(HI))                                                                    \
            cairn__trap_value("integer conversion out of range", v, 0, 'u',                        \
                              " does not fit in " #S, at);                                         \
        return (T)v;                                                                               \
    }                                                                                              \
    CAIRN__FN T cairn_to_##S##_from_float(double v, cairn_loc at) {                                \
        double t = trunc(v);                                                                       \
        if (!(t >= (double)(LO) && t < (F_HI)))                                                    \
            cairn__trap_value("float to integer conversion out of range", 0, v, 'f',               \
                              " does not fit in " #S, at);                                         \
        return (T)t;                                                                               \
    }

CAIRN__CHECKED(i8, int8_t, INT8_MIN, 8)
CAIRN__CHECKED(i16, int16_t, INT16_MIN, 16)
CAIRN__CHECKED(i32, int32_t, INT32_MIN, 32)
CAIRN__CHECKED(i64, int64_t, INT64_MIN, 64)
CAIRN__CHECKED(u8, uint8_t, 0, 8)
CAIRN__CHECKED(u16, uint16_t, 0, 16)
CAIRN__CHECKED(u32, uint32_t, 0, 32)
CAIRN__CHECKED(u64, uint64_t, 0, 64)

/* abs of a signed integer: |MIN| does not fit. */
#define CAIRN__ABS(S, T)                                                                           \
    CAIRN__FN T cairn_abs_##S(T a, cairn_loc at) { return a < 0 ? cairn_neg_##S(a, at) : a; }
CAIRN__ABS(i8, int8_t)
CAIRN__ABS(i16, int16_t)
CAIRN__ABS(i32, int32_t)
CAIRN__ABS(i64, int64_t)

CAIRN__CONVERT(i8, int8_t, INT8_MIN, INT8_MAX, 0x1p7)
CAIRN__CONVERT(i16, int16_t, INT16_MIN, INT16_MAX, 0x1p15)
CAIRN__CONVERT(i32, int32_t, INT32_MIN, INT32_MAX, 0x1p31)
CAIRN__CONVERT(i64, int64_t, INT64_MIN, INT64_MAX, 0x1p63)
CAIRN__CONVERT(u8, uint8_t, 0, UINT8_MAX, 0x1p8)
CAIRN__CONVERT(u16, uint16_t, 0, UINT16_MAX, 0x1p16)
CAIRN__CONVERT(u32, uint32_t, 0, UINT32_MAX, 0x1p32)
CAIRN__CONVERT(u64, uint64_t, 0, UINT64_MAX, 0x1p64)

/* v[i]: the index, when it lies inside the view's n elements. */
CAIRN__FN uint64_t cairn_index_u(uint64_t i, uint64_t n, cairn_loc at) {
    if (i >= n) cairn__trap_index(i, 0, n, at);
    return i;
}
CAIRN__FN uint64_t cairn_index_s(int64_t i, uint64_t n, cairn_loc at) {
    if (i < 0 || (uint64_t)i >= n) cairn__trap_index((uint64_t)i, 1, n, at);
    return (uint64_t)i;
}

/* A view `name` passed with `have` elements where its parameter declares `extent`. */
CAIRN__FN void cairn_check_extent(uint64_t have, uint64_t extent, const char *name, cairn_loc at) {
    if (have == extent) return;
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, "view extent mismatch: ");
    cairn_msg_put(&m, name);
    cairn_msg_put(&m, " has ");
    cairn_msg_u64(&m, have);
    cairn_msg_put(&m, " elements, its parameter declares ");
    cairn_msg_u64(&m, extent);
    cairn_trap_at(m.text, at);
}

/* Allocation for `buffer`: zeroed, or a trap. */
static inline void *cairn_zeroed(uint64_t n, size_t size, cairn_loc at);

/* Float min/max with an answer independent of argument order: a NaN argument gives the
 * quiet NaN, and of two zeros min picks -0.0 and max +0.0. */
#define CAIRN__FMINMAX(S, T)                                                                       \
    CAIRN__FN T cairn_min_##S(T a, T b) {                                                          \
        if (a != a || b != b) return (T)NAN;                                                       \
        if (a == b) return signbit(a) ? a : b;                                                     \
        return a < b ? a : b;                                                                      \
    }                                                                                              \
    CAIRN__FN T cairn_max_##S(T a, T b) {                                                          \
        if (a != a || b != b) return (T)NAN;                                                       \
        if (a == b) return signbit(a) ? b : a;                                                     \
        return a < b ? b : a;                                                                      \
    }
CAIRN__FMINMAX(f32, float)
CAIRN__FMINMAX(f64, double)

/* A device lane's NaN (docs/devices.md, "NaN bits"): every f32 and f64 operation in a
 * device lane that can produce a NaN gives this one canonical NaN, on the GPU and in its
 * emulation alike. f32: 0x7fffffff, what NVIDIA GPUs return for a single-precision
 * operation with a NaN input ("Floating-Point Standard", CUDA C++ Programming Guide) and
 * CUDART_NAN_F; f64: 0xfff8000000000000, CUDART_NAN (math_constants.h), since the PTX ISA
 * keeps double-precision payloads ("Floating-Point Instructions") and leaves the NaN of
 * an invalid operation to the hardware. The lowering applies it where a value leaves the
 * expression that made it (lower_expr_out, lower_c_expr.c). Host lanes keep the host's NaNs. */
CAIRN__FN float cairn_dnan_f32(float x) {
    uint32_t u = 0x7fffffffu;
    float nan;
    memcpy(&nan, &u, 4);
    return x != x ? nan : x;
}
CAIRN__FN double cairn_dnan_f64(double x) {
    uint64_t u = 0xfff8000000000000ull;
    double nan;
    memcpy(&nan, &u, 8);
    return x != x ? nan : x;
}

CAIRN__FN uint32_t cairn_bits_f32(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
CAIRN__FN uint64_t cairn_bits_f64(double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}
CAIRN__FN float cairn_from_bits_f32(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}
CAIRN__FN double cairn_from_bits_f64(uint64_t u) {
    double x;
    memcpy(&x, &u, 8);
    return x;
}

/* atomic_add_unordered on the host: one compare-and-swap loop per add, so each add is
 * one rounding of the current value plus v, in whatever order the threads arrive. */
static inline void cairn_atomic_add_f64(double *p, double v) {
    double old, sum;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do sum = old + v;
    while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}
static inline void cairn_atomic_add_f32(float *p, float v) {
    float old, sum;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do sum = old + v;
    while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

#include <stdlib.h>
#ifdef CAIRN_LIB
#include "cairn_lib.h"
#endif
static inline void *cairn_zeroed(uint64_t n, size_t size, cairn_loc at) {
#ifdef CAIRN_LIB
    return cairn_lib_zeroed(n, size, at); /* freed by a trap's jump too (cairn_lib.h) */
#else
    if (n == 0) return NULL;
    if (n > SIZE_MAX / size) cairn_trap_at("buffer too large", at);
    void *p = calloc((size_t)n, size);
    if (!p) cairn_trap_at("out of memory for a buffer", at);
    return p;
#endif
}

/* Frees what cairn_zeroed allocated. */
static inline void cairn_release(void *p) {
#ifdef CAIRN_LIB
    cairn_lib_release(p);
#else
    free(p);
#endif
}

#endif
