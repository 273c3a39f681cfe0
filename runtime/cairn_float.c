/* cairn_float.c: bulk storage-float conversions over arrays (see cairn_float.h).
 *
 * The portable loops call the scalar routines of cairn_float.h, so their bits are the
 * same by construction. f32 -> f16 and f32 -> bf16 have no branch, so the loops
 * vectorize: they run in fixed blocks of CAIRN__BLOCK elements (a constant trip count,
 * which GCC's -O2 cost model accepts) and are compiled twice, for the baseline ISA and
 * for AVX2 (8 lanes, per-lane shifts, unsigned min), picked by what the CPU reports.
 *
 * f32 -> f16 on a CPU with F16C uses the hardware conversion (VCVTPS2PH) instead,
 * because `make matrix` proves it bit-identical to the integer routine over all 2^32
 * inputs (tests/c/float_sweep.c), also with DAZ, FTZ and a directed rounding mode set
 * in MXCSR: the immediate operand fixes nearest-even, FTZ is ignored by the
 * instruction, and DAZ only zeroes f32 subnormals, which round to +-0 anyway. It is
 * used only while every MXCSR exception is masked (the default), so it never raises
 * a signal the integer routine would not. */
#include "cairn_float.h"

#include <stdatomic.h>

#define CAIRN__BLOCK 32

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CAIRN__X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

/* One loop body per conversion, instantiated for each ISA below. */
#define CAIRN__DEFINE_LOOP(name, in_t, out_t, convert)                                             \
    static inline __attribute__((always_inline)) void name(const in_t *restrict in,                \
                                                           out_t *restrict out, size_t n) {        \
        size_t i = 0;                                                                              \
        for (; i + CAIRN__BLOCK <= n; i += CAIRN__BLOCK)                                           \
            for (size_t j = 0; j < CAIRN__BLOCK; j++) out[i + j] = convert(in[i + j]);             \
        for (; i < n; i++) out[i] = convert(in[i]);                                                \
    }

CAIRN__DEFINE_LOOP(f32_to_f16_loop, float, cairn_f16, cairn_f32_to_f16)
CAIRN__DEFINE_LOOP(f32_to_bf16_loop, float, cairn_bf16, cairn_f32_to_bf16)
CAIRN__DEFINE_LOOP(f16_to_f32_loop, cairn_f16, float, cairn_f16_to_f32)
CAIRN__DEFINE_LOOP(bf16_to_f32_loop, cairn_bf16, float, cairn_bf16_to_f32)

#ifdef CAIRN__X86
enum { CPU_AVX2 = 1, CPU_F16C = 2, CPU_PROBED = 4 };

/* The CPU's features, probed once (cpuid is slow, and traps to the hypervisor in a
 * VM). Racing threads all store the same value. */
static int cpu_features(void) {
    static atomic_int features;
    int known = atomic_load_explicit(&features, memory_order_relaxed);
    if (known) return known;
    unsigned a, b, c, d, found = CPU_PROBED;
    int ymm_state = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE) && (c & bit_AVX)) {
        unsigned lo, hi;
        __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        ymm_state = (lo & 6) == 6; /* the OS saves the YMM registers */
        found |= ymm_state && (c & bit_F16C) ? CPU_F16C : 0;
    }
    if (ymm_state && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_AVX2)) found |= CPU_AVX2;
    atomic_store_explicit(&features, (int)found, memory_order_relaxed);
    return (int)found;
}

#define CAIRN__AVX2_CLONE(loop, in_t, out_t)                                                       \
    __attribute__((target("avx2"))) static void loop##_avx2(const in_t *restrict in,               \
                                                            out_t *restrict out, size_t n) {       \
        loop(in, out, n);                                                                          \
    }
CAIRN__AVX2_CLONE(f32_to_f16_loop, float, cairn_f16)
CAIRN__AVX2_CLONE(f32_to_bf16_loop, float, cairn_bf16)
CAIRN__AVX2_CLONE(f16_to_f32_loop, cairn_f16, float)
CAIRN__AVX2_CLONE(bf16_to_f32_loop, cairn_bf16, float)
#define CAIRN__DISPATCH(loop, in, out, n)                                                          \
    do {                                                                                           \
        if (cpu_features() & CPU_AVX2) loop##_avx2(in, out, n);                                    \
        else loop(in, out, n);                                                                     \
    } while (0)

__attribute__((target("f16c,avx"))) static void f32_to_f16_f16c(const float *restrict in,
                                                                cairn_f16 *restrict out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++) out[i] = cairn_f32_to_f16(in[i]);
}

/* F16C, and every MXCSR exception masked (bits 7..12). */
static int f16c_usable(void) {
    return (cpu_features() & CPU_F16C) && (_mm_getcsr() & 0x1F80u) == 0x1F80u;
}
#else
#define CAIRN__DISPATCH(loop, in, out, n) loop(in, out, n)
#endif

void cairn__f32_to_f16_array_int(const float *in, cairn_f16 *out, size_t n) {
    CAIRN__DISPATCH(f32_to_f16_loop, in, out, n);
}

void cairn_f32_to_f16_array(const float *in, cairn_f16 *out, size_t n) {
#ifdef CAIRN__X86
    if (f16c_usable()) {
        f32_to_f16_f16c(in, out, n);
        return;
    }
#endif
    cairn__f32_to_f16_array_int(in, out, n);
}

const char *cairn_f32_to_f16_array_path(void) {
#ifdef CAIRN__X86
    if (f16c_usable()) return "f16c";
    if (cpu_features() & CPU_AVX2) return "avx2";
#endif
    return "portable";
}

void cairn_f32_to_bf16_array(const float *in, cairn_bf16 *out, size_t n) {
    CAIRN__DISPATCH(f32_to_bf16_loop, in, out, n);
}

void cairn_f16_to_f32_array(const cairn_f16 *in, float *out, size_t n) {
    CAIRN__DISPATCH(f16_to_f32_loop, in, out, n);
}

void cairn_bf16_to_f32_array(const cairn_bf16 *in, float *out, size_t n) {
    CAIRN__DISPATCH(bf16_to_f32_loop, in, out, n);
}
