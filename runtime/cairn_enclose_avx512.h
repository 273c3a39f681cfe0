/* cairn_enclose_avx512.h: internal to the bracket GEMM's x86 kernels
 * (cairn_enclose_x86.c, cairn_enclose_amx.c): eight elements at a time in AVX-512
 * lanes, decoded and floored to X + 2^w as the portable code does it one by one
 * (cairn_enclose.c's biased_narrow, cairn_enclose_core.h's decode). */
#ifndef CAIRN_ENCLOSE_AVX512_H
#define CAIRN_ENCLOSE_AVX512_H

#include <immintrin.h>

#include "cairn_enclose_impl.h"

#define CAIRN_ENC_INLINE      static inline __attribute__((always_inline))
#define CAIRN_ENC_IFMA_TARGET __attribute__((target("avx512f,avx512vl,avx512cd,avx512ifma")))
#define INLINE                CAIRN_ENC_INLINE
#define IFMA_TARGET           CAIRN_ENC_IFMA_TARGET

/* A format's fields as the vector code needs them. */
typedef struct {
    int frac_bits, sign_bit, field_max, q_base; /* q = max(field, 1) - q_base */
} vfmt;

static inline vfmt vfmt_of(cairn_enc_format f) {
    vfmt v = {f.prec - 1, f.size * 8 - 1, 2 * f.bias + 1, f.bias + f.prec - 1};
    return v;
}

/* Eight elements (count valid) of row-major data at base[idx], zero-extended. */
INLINE IFMA_TARGET __m512i load8(const void *base, size_t idx, int size, int count) {
    __mmask8 m = (__mmask8)((1u << count) - 1);
    if (size == 8) return _mm512_maskz_loadu_epi64(m, (const uint64_t *)base + idx);
    return _mm512_cvtepu32_epi64(_mm256_maskz_loadu_epi32(m, (const uint32_t *)base + idx));
}

/* Decoded lanes: mant, q (as in cairn_enc_decode), the sign and non-finite masks. */
typedef struct {
    __m512i mant, q;
    __mmask8 neg, bad;
} vdecoded;

INLINE IFMA_TARGET vdecoded vdecode(__m512i bits, vfmt F) {
    vdecoded d;
    __m512i frac = _mm512_and_si512(bits, _mm512_set1_epi64((INT64_C(1) << F.frac_bits) - 1));
    __m512i field = _mm512_and_si512(_mm512_srli_epi64(bits, (unsigned)F.frac_bits),
                                     _mm512_set1_epi64(F.field_max));
    __mmask8 normal = _mm512_test_epi64_mask(field, field);
    d.mant = _mm512_mask_or_epi64(frac, normal, frac, _mm512_set1_epi64(INT64_C(1) << F.frac_bits));
    d.q = _mm512_sub_epi64(_mm512_max_epi64(field, _mm512_set1_epi64(1)),
                           _mm512_set1_epi64(F.q_base));
    d.neg = _mm512_test_epi64_mask(bits, _mm512_set1_epi64((long long)(UINT64_C(1) << F.sign_bit)));
    d.bad = _mm512_cmpeq_epi64_mask(field, _mm512_set1_epi64(F.field_max));
    return d;
}

/* X + 2^w (below 2^128, w < 128) of eight elements with scales `scale`, as the low and
 * high words of 128-bit lanes: the steps of the portable biased_narrow. */
INLINE IFMA_TARGET void vbiased(__m512i bits, __m512i scale, int w, vfmt F, __m512i *xlo,
                                __m512i *xhi) {
    vdecoded d = vdecode(bits, F);
    const __m512i zero = _mm512_setzero_si512(), c64 = _mm512_set1_epi64(64);
    __m512i sh = _mm512_add_epi64(d.q, scale);
    __mmask8 up = _mm512_cmpge_epi64_mask(sh, zero);
    /* sh >= 0: mag = mant << sh; the variable shifts give 0 for counts above 63 */
    __m512i lo_up = _mm512_sllv_epi64(d.mant, sh);
    __m512i hi_up = _mm512_or_si512(_mm512_srlv_epi64(d.mant, _mm512_sub_epi64(c64, sh)),
                                    _mm512_sllv_epi64(d.mant, _mm512_sub_epi64(sh, c64)));
    /* sh < 0: floor, one more for a negative value that dropped bits */
    __m512i nsh = _mm512_sub_epi64(zero, sh);
    __m512i kept = _mm512_srlv_epi64(d.mant, nsh);
    __m512i below =
        _mm512_sub_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), nsh), _mm512_set1_epi64(1));
    __mmask8 inexact = _mm512_test_epi64_mask(d.mant, below) & d.neg;
    __m512i lo_down = _mm512_mask_add_epi64(kept, inexact, kept, _mm512_set1_epi64(1));
    __m512i lo = _mm512_mask_blend_epi64(up, lo_down, lo_up);
    __m512i hi = _mm512_maskz_mov_epi64(up, hi_up);
    /* negate where negative: (lo, hi) -> (-lo, -hi - (lo != 0)) */
    __mmask8 borrow = _mm512_test_epi64_mask(lo, lo) & d.neg;
    lo = _mm512_mask_sub_epi64(lo, d.neg, zero, lo);
    hi = _mm512_mask_sub_epi64(hi, d.neg, zero, hi);
    hi = _mm512_mask_sub_epi64(hi, borrow, hi, _mm512_set1_epi64(1));
    /* + 2^w */
    __m512i blo = _mm512_set1_epi64(w < 64 ? (long long)(UINT64_C(1) << w) : 0);
    __m512i bhi = _mm512_set1_epi64(w >= 64 ? (long long)(UINT64_C(1) << (w - 64)) : 0);
    __m512i rlo = _mm512_add_epi64(lo, blo);
    __mmask8 carry = _mm512_cmplt_epu64_mask(rlo, lo);
    __m512i rhi = _mm512_mask_add_epi64(_mm512_add_epi64(hi, bhi), carry, _mm512_add_epi64(hi, bhi),
                                        _mm512_set1_epi64(1));
    *xlo = rlo;
    *xhi = rhi;
}

/* X + 2^w in 51-bit digits d0, d1 (X + 2^w < 2^102): Karatsuba's digits. */
INLINE IFMA_TARGET void vdigits51(__m512i bits, __m512i scale, int w, vfmt F, __m512i *d0,
                                  __m512i *d1) {
    __m512i rlo, rhi;
    vbiased(bits, scale, w, F, &rlo, &rhi);
    const __m512i m51 = _mm512_set1_epi64((INT64_C(1) << 51) - 1);
    *d0 = _mm512_and_si512(rlo, m51);
    *d1 = _mm512_or_si512(_mm512_srli_epi64(rlo, 51), _mm512_slli_epi64(rhi, 13));
}

#endif
