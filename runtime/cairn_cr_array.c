/* cairn_cr_array.c: the array forms of the correctly rounded f32 math (cairn_cr_array.h).
 *
 * The vector fast paths are written once (cairn_cr_array_body.h) over lane primitives
 * that this file defines twice, for AVX2 (4 doubles a vector) and for AVX-512 F/DQ/VL
 * (8), each copy compiled for its ISA by a target attribute; the CPU (and
 * CAIRN_CR_KERNEL) chooses one at the first call, as the exact sum and the bracket GEMM
 * choose their kernels. The ISAs' fused multiply-add is never used: the intrinsics
 * written are separate multiplies and adds, and the build's -ffp-contract=off keeps the
 * compiler from fusing them. exp, exp2, expm1, log, log2, tanh, sigmoid, sin and cos
 * have vector steps; log1p runs the scalar function in a loop on every kernel. */
#include "cairn_cr_array.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cairn_cr.h"

#ifdef CAIRN_CR_PLANT
/* tests/c/cr_vec_plant.c: a planted wrong rounding, one unit in the last place on the
 * vector path's results whose low 12 bits are 0x123, to show the tests catch it */
#define CAIRN__CR_PLANT_ON 1
#define CAIRN__CR_PLANTED(v)                                                                       \
    ((cairn__f32_bits(v) & 0xFFFu) == 0x123u ? cairn__f32_from_bits(cairn__f32_bits(v) ^ 1u) : (v))
#else
#define CAIRN__CR_PLANT_ON   0
#define CAIRN__CR_PLANTED(v) (v)
#endif

unsigned cairn__cr_array_force;
static _Thread_local unsigned long long fallbacks;

unsigned long long cairn__cr_array_fallbacks(void) { return fallbacks; }

/* The lanes of mask m of one vector (in, tmp) through the scalar function f, counted;
 * with CAIRN_CR_PLANT, a planted wrong rounding in the other lanes (tests only). Out of
 * line and compiled for the baseline ISA, so that a vector step calls it after clearing
 * the upper halves of its registers (vzeroupper), never running the SSE code of the
 * scalar functions with them dirty, which costs hundreds of cycles a call. */
static __attribute__((noinline)) void cairn__cr_fallback(float (*f)(float), const float *in,
                                                         float *tmp, unsigned m, int lanes) {
    for (int j = 0; j < lanes; j++) {
        if (m >> j & 1) {
            fallbacks++;
            tmp[j] = f(in[j]);
        } else {
            tmp[j] = CAIRN__CR_PLANTED(tmp[j]);
        }
    }
}

/* The last n < 16 elements of an array, through the scalar function f (baseline ISA). */
static __attribute__((noinline)) void cairn__cr_tail(float (*f)(float), const float *in, float *out,
                                                     size_t n) {
    for (size_t i = 0; i < n; i++) out[i] = f(in[i]);
}

enum { K_SCALAR = 1, K_AVX2 = 2, K_AVX512 = 3 };

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CAIRN__CR_X86 1
#include <immintrin.h>

/* ---- AVX2: 4 lanes ---- */
#define V_ATTR   __attribute__((target("avx2")))
#define VF(name) cairn__cr_##name##_avx2
#define V_N      4
#define V_ALL    0xFu
typedef __m256d VD;
typedef __m256i VI;
typedef __m128i VH;
typedef __m128 VF32;
#define V_SET(c)      _mm256_set1_pd(c)
#define V_SET64(c)    _mm256_set1_epi64x((long long)(c))
#define V_ADD         _mm256_add_pd
#define V_SUB         _mm256_sub_pd
#define V_MUL         _mm256_mul_pd
#define V_DIV         _mm256_div_pd
#define V_BITS        _mm256_castpd_si256
#define V_FROMBITS    _mm256_castsi256_pd
#define V_ADD64       _mm256_add_epi64
#define V_SUB64       _mm256_sub_epi64
#define V_AND64(x, c) _mm256_and_si256(x, V_SET64(c))
#define V_SLLI64      _mm256_slli_epi64
#define V_SRLI64      _mm256_srli_epi64
/* both operands below 2^32 here, so the signed compare is the unsigned one */
#define V_LE64(t, c)                                                                               \
    ((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(t, V_SET64(c)))) ^ V_ALL)
#define V_LT64(e, c)                                                                               \
    ((unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(V_SET64(c), e))))
#define V_GATHER(tab, idx)   _mm256_i64gather_pd(tab, idx, 8)
#define V_GATHER32(tab, idx) _mm256_i32gather_pd(tab, idx, 8)
#define V_LOADBITS(p)        _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V_LOAD(p)            _mm256_cvtps_pd(_mm_loadu_ps(p))
#define V_NARROW             _mm256_cvtpd_ps
#define V_STORE              _mm_storeu_ps
#define V_SET32(c)           _mm_set1_epi32((int)(uint32_t)(c))
#define V_AND32(x, c)        _mm_and_si128(x, V_SET32(c))
#define V_SUB32(x, c)        _mm_sub_epi32(x, V_SET32(c))
#define V_SUB32V             _mm_sub_epi32
/* unsigned x > c: both sides moved by 2^31, then the signed compare */
#define V_GT32(x, c)                                                                               \
    ((unsigned)_mm_movemask_ps(_mm_castsi128_ps(                                                   \
        _mm_cmpgt_epi32(_mm_xor_si128(x, V_SET32(0x80000000u)), V_SET32((c) ^ 0x80000000u)))))
#define V_SRLI32           _mm_srli_epi32
#define V_SRAI32           _mm_srai_epi32
#define V_WIDENU           _mm256_cvtepu32_epi64
#define V_WIDENF(h)        _mm256_cvtps_pd(_mm_castsi128_ps(h))
#define V_CVTI32           _mm256_cvtepi32_pd
#define V_NEG(x)           _mm256_xor_pd(x, _mm256_set1_pd(-0.0))
#define V_PICKNEG(x, a, b) _mm256_blendv_pd(b, a, _mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ))
#define V_XORSIGN(f, b)    _mm_xor_ps(f, _mm_castsi128_ps(V_AND32(b, 0x80000000u)))
#define V_SETF             _mm_set1_ps
#define V_SELECT_GT32(x, c, a, b)                                                                  \
    _mm_blendv_ps(b, a,                                                                            \
                  _mm_castsi128_ps(_mm_cmpgt_epi32(_mm_xor_si128(x, V_SET32(0x80000000u)),         \
                                                   V_SET32((c) ^ 0x80000000u))))
#define V_CMPGT(a, b) _mm256_cmp_pd(a, b, _CMP_GT_OQ)
#define V_CMPLT(a, b) _mm256_cmp_pd(a, b, _CMP_LT_OQ)
#define V_AND         _mm256_and_pd
#define V_ABS(x)      _mm256_andnot_pd(_mm256_set1_pd(-0.0), x)
#define V_MASK(c)     ((unsigned)_mm256_movemask_pd(c))
#define V_AND64V      _mm256_and_si256
#define V_ANDNOT64V   _mm256_andnot_si256
#define V_OR64V       _mm256_or_si256
#define V_XOR64V      _mm256_xor_si256
#include "cairn_cr_array_body.h"
#undef V_ATTR
#undef VF
#undef V_N
#undef V_ALL
#undef V_SET
#undef V_SET64
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_BITS
#undef V_FROMBITS
#undef V_ADD64
#undef V_SUB64
#undef V_AND64
#undef V_SLLI64
#undef V_SRLI64
#undef V_LE64
#undef V_LT64
#undef V_GATHER
#undef V_GATHER32
#undef V_LOADBITS
#undef V_LOAD
#undef V_NARROW
#undef V_STORE
#undef V_SET32
#undef V_AND32
#undef V_SUB32
#undef V_SUB32V
#undef V_GT32
#undef V_SRLI32
#undef V_SRAI32
#undef V_WIDENU
#undef V_WIDENF
#undef V_CVTI32
#undef V_NEG
#undef V_PICKNEG
#undef V_XORSIGN
#undef V_SETF
#undef V_SELECT_GT32
#undef V_CMPGT
#undef V_CMPLT
#undef V_AND
#undef V_ABS
#undef V_MASK
#undef V_AND64V
#undef V_ANDNOT64V
#undef V_OR64V
#undef V_XOR64V
#undef V_SETF
#undef V_SELECT_GT32
#define VD   VD512
#define VI   VI512
#define VH   VH512
#define VF32 VF32_512

/* ---- AVX-512 F, DQ, VL: 8 lanes ---- */
#define V_ATTR   __attribute__((target("avx2,avx512f,avx512dq,avx512vl")))
#define VF(name) cairn__cr_##name##_avx512
#define V_N      8
#define V_ALL    0xFFu
typedef __m512d VD;
typedef __m512i VI;
typedef __m256i VH;
typedef __m256 VF32;
#define V_SET(c)             _mm512_set1_pd(c)
#define V_SET64(c)           _mm512_set1_epi64((long long)(c))
#define V_ADD                _mm512_add_pd
#define V_SUB                _mm512_sub_pd
#define V_MUL                _mm512_mul_pd
#define V_DIV                _mm512_div_pd
#define V_BITS               _mm512_castpd_si512
#define V_FROMBITS           _mm512_castsi512_pd
#define V_ADD64              _mm512_add_epi64
#define V_SUB64              _mm512_sub_epi64
#define V_AND64(x, c)        _mm512_and_si512(x, V_SET64(c))
#define V_SLLI64             _mm512_slli_epi64
#define V_SRLI64             _mm512_srli_epi64
#define V_LE64(t, c)         ((unsigned)_mm512_cmple_epu64_mask(t, V_SET64(c)))
#define V_LT64(e, c)         ((unsigned)_mm512_cmplt_epi64_mask(e, V_SET64(c)))
#define V_GATHER(tab, idx)   _mm512_i64gather_pd(idx, tab, 8)
#define V_GATHER32(tab, idx) _mm512_i32gather_pd(idx, tab, 8)
#define V_LOADBITS(p)        _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V_LOAD(p)            _mm512_cvtps_pd(_mm256_loadu_ps(p))
#define V_NARROW             _mm512_cvtpd_ps
#define V_STORE              _mm256_storeu_ps
#define V_SET32(c)           _mm256_set1_epi32((int)(uint32_t)(c))
#define V_AND32(x, c)        _mm256_and_si256(x, V_SET32(c))
#define V_SUB32(x, c)        _mm256_sub_epi32(x, V_SET32(c))
#define V_SUB32V             _mm256_sub_epi32
#define V_GT32(x, c)         ((unsigned)_mm256_cmpgt_epu32_mask(x, V_SET32(c)))
#define V_SRLI32             _mm256_srli_epi32
#define V_SRAI32             _mm256_srai_epi32
#define V_WIDENU             _mm512_cvtepu32_epi64
#define V_WIDENF(h)          _mm512_cvtps_pd(_mm256_castsi256_ps(h))
#define V_CVTI32             _mm512_cvtepi32_pd
#define V_NEG(x)             _mm512_xor_pd(x, _mm512_set1_pd(-0.0))
#define V_PICKNEG(x, a, b)                                                                         \
    _mm512_mask_blend_pd(_mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_LT_OQ), b, a)
#define V_XORSIGN(f, b)           _mm256_xor_ps(f, _mm256_castsi256_ps(V_AND32(b, 0x80000000u)))
#define V_SETF                    _mm256_set1_ps
#define V_SELECT_GT32(x, c, a, b) _mm256_mask_blend_ps(_mm256_cmpgt_epu32_mask(x, V_SET32(c)), b, a)
#define V_SETF                    _mm256_set1_ps
#define V_SELECT_GT32(x, c, a, b) _mm256_mask_blend_ps(_mm256_cmpgt_epu32_mask(x, V_SET32(c)), b, a)
/* a double-lane condition as all-ones bits (AVX-512 compares give masks) */
#define V_CMPGT(a, b) _mm512_castsi512_pd(_mm512_movm_epi64(_mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)))
#define V_CMPLT(a, b) _mm512_castsi512_pd(_mm512_movm_epi64(_mm512_cmp_pd_mask(a, b, _CMP_LT_OQ)))
#define V_AND         _mm512_and_pd
#define V_ABS(x)      _mm512_andnot_pd(_mm512_set1_pd(-0.0), x)
#define V_MASK(c)     ((unsigned)_mm512_movepi64_mask(_mm512_castpd_si512(c)))
#define V_AND64V      _mm512_and_si512
#define V_ANDNOT64V   _mm512_andnot_si512
#define V_OR64V       _mm512_or_si512
#define V_XOR64V      _mm512_xor_si512
#include "cairn_cr_array_body.h"

/* What the CPU can run: AVX-512 needs F, DQ and VL (the OS saving the ZMM state, which
 * __builtin_cpu_supports checks). */
static int best_kernel(void) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return K_AVX512;
    if (__builtin_cpu_supports("avx2")) return K_AVX2;
    return K_SCALAR;
}
#else
static int best_kernel(void) { return K_SCALAR; }
#endif

/* The kernel, chosen at the first call: the best the CPU runs, or CAIRN_CR_KERNEL's
 * where the CPU runs it (an unknown name is ignored). Racing threads store one value. */
static int kernel(void) {
    static atomic_int chosen;
    int k = atomic_load_explicit(&chosen, memory_order_relaxed);
    if (k) return k;
    k = best_kernel();
    const char *force = getenv("CAIRN_CR_KERNEL");
    if (force && strcmp(force, "scalar") == 0) k = K_SCALAR;
    else if (force && strcmp(force, "avx2") == 0 && k >= K_AVX2) k = K_AVX2;
    atomic_store_explicit(&chosen, k, memory_order_relaxed);
    return k;
}

const char *cairn_cr_array_kernel(void) {
    static const char *const names[] = {"", "scalar", "avx2", "avx512"};
    return names[kernel()];
}

#define CAIRN__CR_SCALAR_LOOP(NAME)                                                                \
    for (size_t i = 0; i < n; i++) out[i] = cairn_cr_##NAME(in[i])

#ifdef CAIRN__CR_X86
#define CAIRN__CR_ARRAY(NAME)                                                                      \
    void cairn_cr_##NAME##_array(const float *in, float *out, size_t n) {                          \
        switch (kernel()) {                                                                        \
        case K_AVX512: cairn__cr_##NAME##_array_avx512(in, out, n); break;                         \
        case K_AVX2: cairn__cr_##NAME##_array_avx2(in, out, n); break;                             \
        default: CAIRN__CR_SCALAR_LOOP(NAME);                                                      \
        }                                                                                          \
    }
#else
#define CAIRN__CR_ARRAY(NAME)                                                                      \
    void cairn_cr_##NAME##_array(const float *in, float *out, size_t n) {                          \
        CAIRN__CR_SCALAR_LOOP(NAME);                                                               \
    }
#endif
#define CAIRN__CR_ARRAY_SCALAR(NAME)                                                               \
    void cairn_cr_##NAME##_array(const float *in, float *out, size_t n) {                          \
        CAIRN__CR_SCALAR_LOOP(NAME);                                                               \
    }

CAIRN__CR_ARRAY(expf)
CAIRN__CR_ARRAY(exp2f)
CAIRN__CR_ARRAY(expm1f)
CAIRN__CR_ARRAY(logf)
CAIRN__CR_ARRAY(log2f)
CAIRN__CR_ARRAY(tanhf)
CAIRN__CR_ARRAY(sigmoidf)
CAIRN__CR_ARRAY_SCALAR(log1pf)
CAIRN__CR_ARRAY(sinf)
CAIRN__CR_ARRAY(cosf)
