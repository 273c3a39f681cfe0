/* cairn_float.c: bulk storage-float conversions over arrays (see cairn_float.h).
 *
 * Each loop calls the scalar routine of cairn_float.h, so the bits are the same by
 * construction; only the speed differs. The f32 -> f16 and f32 -> bf16 routines have no
 * branch, so the loops vectorize. The loops run in fixed blocks of CAIRN__BLOCK
 * elements (a constant trip count, which GCC's -O2 cost model vectorizes) and are
 * compiled twice: for the baseline ISA, and for AVX2 (8 lanes, per-lane shifts and
 * unsigned min), picked once per call by what the CPU reports. */
#include "cairn_float.h"

#define CAIRN__BLOCK 32

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CAIRN__HAVE_AVX2_CLONE 1
#define CAIRN__AVX2 __attribute__((target("avx2")))
#endif

/* One loop body per conversion, instantiated for each ISA below. */
#define CAIRN__DEFINE_LOOP(name, in_t, out_t, convert)                                   \
    static inline __attribute__((always_inline)) void name(                              \
        const in_t *restrict in, out_t *restrict out, size_t n) {                        \
        size_t i = 0;                                                                     \
        for (; i + CAIRN__BLOCK <= n; i += CAIRN__BLOCK)                                  \
            for (size_t j = 0; j < CAIRN__BLOCK; j++)                                     \
                out[i + j] = convert(in[i + j]);                                          \
        for (; i < n; i++)                                                                \
            out[i] = convert(in[i]);                                                      \
    }

CAIRN__DEFINE_LOOP(f32_to_f16_loop, float, cairn_f16, cairn_f32_to_f16)
CAIRN__DEFINE_LOOP(f32_to_bf16_loop, float, cairn_bf16, cairn_f32_to_bf16)
CAIRN__DEFINE_LOOP(f16_to_f32_loop, cairn_f16, float, cairn_f16_to_f32)
CAIRN__DEFINE_LOOP(bf16_to_f32_loop, cairn_bf16, float, cairn_bf16_to_f32)

#ifdef CAIRN__HAVE_AVX2_CLONE
/* __builtin_cpu_supports reads what the compiler's start-up code probed once. */
static int cpu_has_avx2(void) { return __builtin_cpu_supports("avx2"); }
#define CAIRN__DISPATCH(loop, in, out, n)                                                 \
    do {                                                                                  \
        if (cpu_has_avx2())                                                               \
            loop##_avx2(in, out, n);                                                      \
        else                                                                              \
            loop(in, out, n);                                                             \
    } while (0)
#define CAIRN__AVX2_CLONE(loop, in_t, out_t)                                              \
    CAIRN__AVX2 static void loop##_avx2(const in_t *restrict in, out_t *restrict out,     \
                                        size_t n) {                                       \
        loop(in, out, n);                                                                 \
    }
CAIRN__AVX2_CLONE(f32_to_f16_loop, float, cairn_f16)
CAIRN__AVX2_CLONE(f32_to_bf16_loop, float, cairn_bf16)
CAIRN__AVX2_CLONE(f16_to_f32_loop, cairn_f16, float)
CAIRN__AVX2_CLONE(bf16_to_f32_loop, cairn_bf16, float)
#else
#define CAIRN__DISPATCH(loop, in, out, n) loop(in, out, n)
#endif

void cairn_f32_to_f16_array(const float *in, cairn_f16 *out, size_t n) {
    CAIRN__DISPATCH(f32_to_f16_loop, in, out, n);
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
