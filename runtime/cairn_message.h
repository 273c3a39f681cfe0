/* cairn_message.h: trap messages that name what failed.
 *
 * A guard that fails says which values made it fail: `index 7 out of bounds for extent
 * 5`, `integer overflow: 2147483647 + 1 does not fit in i32`, `quantize scale must be
 * positive and finite (scale = -0.5)`. The message is built in a fixed buffer without the
 * C library's allocation, by functions that run on the host and in CUDA device lanes
 * alike (a device lane's message goes into the trap record of cairn_trap.h, whose reason
 * holds 116 bytes, so a message is cut at CAIRN_MSG_MAX). Floats are written as the
 * shortest decimal that reads back to the same value on the host, and as their bits in
 * a device lane (which has no snprintf).
 *
 * The cairn__trap_* functions below are the cold paths of cairn_checked.h and
 * cairn_float.h: out of line, so a guard's fast path stays one compare and a branch. */
#ifndef CAIRN_MESSAGE_H
#define CAIRN_MESSAGE_H

#include <stdint.h>

#include "cairn_trap.h"

#ifndef __CUDA_ARCH__
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#endif

#define CAIRN_MSG_MAX 112

#ifdef __CUDACC__
#define CAIRN__MSG_FN  static __host__ __device__ __attribute__((unused))
#define CAIRN__COLD_FN static __host__ __device__ __noinline__ __attribute__((unused))
#else
#define CAIRN__MSG_FN  static inline
#define CAIRN__COLD_FN static __attribute__((unused, noinline, cold))
#endif

typedef struct cairn_msg {
    char text[CAIRN_MSG_MAX];
    unsigned len; /* text[len] == '\0' */
} cairn_msg;

CAIRN__MSG_FN void cairn_msg_put(cairn_msg *m, const char *s) {
    while (*s && m->len + 1 < CAIRN_MSG_MAX) m->text[m->len++] = *s++;
    m->text[m->len] = '\0';
}

CAIRN__MSG_FN void cairn_msg_u64(cairn_msg *m, uint64_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    char text[24];
    for (int k = 0; k < n; k++) text[k] = digits[n - 1 - k];
    text[n] = '\0';
    cairn_msg_put(m, text);
}

CAIRN__MSG_FN void cairn_msg_i64(cairn_msg *m, int64_t v) {
    if (v < 0) cairn_msg_put(m, "-");
    cairn_msg_u64(m, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

CAIRN__MSG_FN void cairn_msg_hex(cairn_msg *m, uint64_t v, int digits) {
    char text[20] = "0x";
    for (int k = 0; k < digits; k++)
        text[2 + k] = "0123456789abcdef"[(v >> (4 * (digits - 1 - k))) & 15];
    text[2 + digits] = '\0';
    cairn_msg_put(m, text);
}

/* A double (single when `single`): the shortest round-trip decimal on the host; the bits
 * in a device lane. */
CAIRN__MSG_FN void cairn_msg_float(cairn_msg *m, double v, int single) {
#ifdef __CUDA_ARCH__
    if (single) {
        float f = (float)v;
        cairn_msg_put(m, "bits ");
        cairn_msg_hex(m, (uint64_t)__float_as_uint(f), 8);
    } else {
        cairn_msg_put(m, "bits ");
        cairn_msg_hex(m, (uint64_t)__double_as_longlong(v), 16);
    }
#else
    /* The fewest significant digits that read back to v, laid out as Python's repr
     * lays them out: positional for exponents -4 .. 15, scientific outside. */
    char text[512]; /* %f of a constant near DBL_MAX, for the compiler's range analysis */
    int digits = 1;
    for (; digits < 17; digits++) {
        snprintf(text, sizeof text, "%.*e", digits - 1, v);
        if (v != v || (single ? strtof(text, NULL) == (float)v : strtod(text, NULL) == v)) break;
    }
    snprintf(text, sizeof text, "%.*e", digits - 1, v);
    const char *e = strchr(text, 'e');
    int exp10 = e ? atoi(e + 1) : 0;
    if (v == v && v - v == 0 && exp10 >= -4 && exp10 < 16) {
        int decimals = digits - 1 - exp10;
        snprintf(text, sizeof text, "%.*f", decimals > 0 ? decimals : 0, v);
    }
    cairn_msg_put(m, text);
#endif
}

/* ---- the cold paths of the guards ---- */

/* "HEAD: A OP B does not fit in TYPE" (a signed, or unsigned when !is_signed). */
CAIRN__COLD_FN void cairn__trap_binop(const char *head, uint64_t a, const char *op, uint64_t b,
                                      int is_signed, const char *type, cairn_loc at) {
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, head);
    cairn_msg_put(&m, ": ");
    if (is_signed) cairn_msg_i64(&m, (int64_t)a);
    else cairn_msg_u64(&m, a);
    cairn_msg_put(&m, op);
    if (is_signed) cairn_msg_i64(&m, (int64_t)b);
    else cairn_msg_u64(&m, b);
    if (type) {
        cairn_msg_put(&m, " does not fit in ");
        cairn_msg_put(&m, type);
    }
    cairn_trap_at(m.text, at);
}

/* "integer overflow: -(A) does not fit in TYPE" */
CAIRN__COLD_FN void cairn__trap_neg(int64_t a, const char *type, cairn_loc at) {
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, "integer overflow: -(");
    cairn_msg_i64(&m, a);
    cairn_msg_put(&m, ") does not fit in ");
    cairn_msg_put(&m, type);
    cairn_trap_at(m.text, at);
}

/* "index I out of bounds for extent N" (I signed when is_signed). */
CAIRN__COLD_FN void cairn__trap_index(uint64_t i, int is_signed, uint64_t n, cairn_loc at) {
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, "index ");
    if (is_signed) cairn_msg_i64(&m, (int64_t)i);
    else cairn_msg_u64(&m, i);
    cairn_msg_put(&m, " out of bounds for extent ");
    cairn_msg_u64(&m, n);
    cairn_trap_at(m.text, at);
}

/* "HEAD: V does not fit in TYPE" for an integer V (signed when is_signed), or a float
 * V (kind 'f': f64, 's': f32). */
CAIRN__COLD_FN void cairn__trap_value(const char *head, uint64_t bits, double f, char kind,
                                      const char *what, cairn_loc at) {
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, head);
    cairn_msg_put(&m, ": ");
    if (kind == 'i') cairn_msg_i64(&m, (int64_t)bits);
    else if (kind == 'u') cairn_msg_u64(&m, bits);
    else cairn_msg_float(&m, f, kind == 's');
    cairn_msg_put(&m, what);
    cairn_trap_at(m.text, at);
}

/* "integer overflow: the terms sum to S, which does not fit in TYPE": a reduction whose
 * exact total (held in 128 bits) does not fit its type. */
CAIRN__COLD_FN void cairn__trap_sum(int negative, unsigned __int128 magnitude, const char *type,
                                    cairn_loc at) {
    char digits[48];
    int n = 0;
    do digits[n++] = (char)('0' + (int)(magnitude % 10));
    while ((magnitude /= 10) != 0);
    char text[50];
    int k = 0;
    if (negative) text[k++] = '-';
    while (n > 0) text[k++] = digits[--n];
    text[k] = '\0';
    cairn_msg m = {{0}, 0};
    cairn_msg_put(&m, "integer overflow: the terms sum to ");
    cairn_msg_put(&m, text);
    cairn_msg_put(&m, ", which does not fit in ");
    cairn_msg_put(&m, type);
    cairn_trap_at(m.text, at);
}
CAIRN__COLD_FN void cairn__trap_sum_s(__int128 total, const char *type, cairn_loc at) {
    cairn__trap_sum(total < 0,
                    total < 0 ? (unsigned __int128)0 - (unsigned __int128)total
                              : (unsigned __int128)total,
                    type, at);
}
CAIRN__COLD_FN void cairn__trap_sum_u(unsigned __int128 total, const char *type, cairn_loc at) {
    cairn__trap_sum(0, total, type, at);
}

#endif
