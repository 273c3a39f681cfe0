/* cairn_enclose_residue.h: the bracket GEMM's residue algorithm, the integer steps the
 * CUDA backend (cairn_enclose_cuda.h) runs on the GPU and cairn_enclose_residue.c runs
 * on the host (an emulated device run): the same lines under both compilers, so that
 * emulation and device agree by construction, and both agree with the CPU backend
 * because the exact sum they recover is the same integer.
 *
 * The exact sum S = sum_t X[i][t] Y[t][j] of the plan's integers (cairn_enclose_core.h)
 * is recovered from its residues modulo L pairwise coprime moduli m_l <= 255 (M their
 * product): X and Y are reduced to signed residues in [-127, 127], each modulus takes
 * one int8 GEMM with int32 sums (|sum| <= 127^2 2^17 < 2^31: exact, which is why k <=
 * 2^17), and the Chinese remainder theorem gives S back:
 *
 *   T = sum_l c_l (M / m_l),  c_l = r_l (M / m_l)^-1 mod m_l,  S = T - q M,
 *
 * with q = round(T / M) = round(sum_l c_l / m_l). L is the least with M >
 * 2^(bits_a + bits_b + ceil(log2 k)) >= 4 |S|, so T / M lies within 1/4 of an integer
 * and a 40-bit fixed-point estimate of sum c_l / m_l rounds to q exactly. The budget
 * bits_a + bits_b + ceil(log2 k) <= 332 takes at most all 48 moduli (M > 2^334).
 *
 * Integers only, and no division: every reduction mod m is a multiply by a precomputed
 * reciprocal (cairn_enc_mod), exact for the ranges used here (a GPU's integer division
 * would run through its floating-point reciprocal unit). */
#ifndef CAIRN_ENCLOSE_RESIDUE_H
#define CAIRN_ENCLOSE_RESIDUE_H

#include "cairn_enclose_core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CAIRN_ENC_MODULI = 48, /* greedy pairwise coprime from 255 down: M > 2^334 */
    CAIRN_ENC_LIMBS = 12,  /* 32-bit limbs of T and M (384 bits) */
    CAIRN_ENC_POW2 = 256   /* 2^s mod m for s < 256: X = mant 2^s with s <= 254 */
};

/* What the kernels need for the L moduli of one call (built on the host by
 * cairn_enclose_crt_make; constant memory on a GPU). */
typedef struct cairn_enc_crt {
    int L, limbs;                                  /* moduli used; limbs of T */
    uint32_t m[CAIRN_ENC_MODULI];                  /* the moduli */
    uint32_t inv[CAIRN_ENC_MODULI];                /* (M / m)^-1 mod m */
    uint64_t recip[CAIRN_ENC_MODULI];              /* floor(2^34 / m) + 1 */
    uint64_t frac[CAIRN_ENC_MODULI];               /* floor(2^40 / m) */
    uint32_t pow16[CAIRN_ENC_MODULI][4];           /* 2^(16 i) mod m */
    uint32_t W[CAIRN_ENC_MODULI][CAIRN_ENC_LIMBS]; /* M / m */
    uint32_t M[CAIRN_ENC_LIMBS];
    uint8_t pow2[CAIRN_ENC_MODULI][CAIRN_ENC_POW2]; /* 2^s mod m */
} cairn_enc_crt;

/* Fills c for the least L whose moduli multiply past 2^need_bits; -1 when even 48 do
 * not (need_bits > 334: the plan never asks). Host code (cairn_enclose_residue.c). */
int cairn_enclose_crt_make(int need_bits, cairn_enc_crt *c);

/* x mod m for x < 2^26 and m <= 255: with R = floor(2^34 / m) + 1, x R 2^-34 exceeds
 * x / m by less than x 2^-34 < 2^-8 < 1 / m, which cannot carry it past the next
 * multiple of 1 / m: the floor is floor(x / m). */
CAIRN_ENC_FN uint32_t cairn_enc_mod(uint32_t x, uint32_t m, uint64_t recip) {
    uint32_t q = (uint32_t)(((uint64_t)x * recip) >> 34);
    return x - q * m;
}

/* One element ready for its residues: X = (-1)^neg mant 2^sh (sh >= 0, mant < 2^53), as
 * cairn_enc_scaled_magnitude floors it. */
typedef struct cairn_enc_prep {
    int neg, sh;
    uint64_t mant;
} cairn_enc_prep;

CAIRN_ENC_FN cairn_enc_prep cairn_enc_prepare(uint64_t bits, cairn_enc_format f, int scale) {
    cairn_enc_decoded d;
    cairn_enc_decode(bits, f, &d);
    cairn_enc_prep p = {d.neg, d.q + scale, d.mant};
    if (!d.mant) p.sh = 0, p.neg = 0;
    else if (p.sh < 0) { /* floor: one more in magnitude for a negative value that lost bits */
        int sh = p.sh;
        uint64_t kept = sh > -64 ? d.mant >> -sh : 0;
        int inexact = sh > -64 ? (d.mant << (64 + sh)) != 0 : 1;
        p.mant = kept + (uint64_t)(d.neg & inexact);
        p.sh = 0;
    }
    return p;
}

/* The signed residue of X modulo modulus l, in [-127, 127]. */
CAIRN_ENC_FN int cairn_enc_residue(cairn_enc_prep p, const cairn_enc_crt *c, int l,
                                   const uint8_t *pow2) {
    uint32_t m = c->m[l];
    uint64_t recip = c->recip[l];
    uint32_t x = 0; /* mant mod m from its 16-bit pieces: below 2^26 */
    for (int i = 0; i < 4; i++) x += (uint32_t)((p.mant >> (16 * i)) & 0xffff) * c->pow16[l][i];
    uint32_t r = cairn_enc_mod(cairn_enc_mod(x, m, recip) * pow2[p.sh], m, recip);
    if (p.neg && r) r = m - r;
    return r > (m >> 1) ? (int)r - (int)m : (int)r;
}

/* A GEMM sum (|s| < 2^31) reduced to [0, m). */
CAIRN_ENC_FN uint32_t cairn_enc_reduce_sum(int32_t s, const cairn_enc_crt *c, int l) {
    uint32_t m = c->m[l];
    uint32_t mag = s < 0 ? (uint32_t)0 - (uint32_t)s : (uint32_t)s;
    uint32_t x = (mag >> 16) * c->pow16[l][1] + (mag & 0xffff); /* below 2^24 */
    uint32_t r = cairn_enc_mod(x, m, c->recip[l]);
    return s < 0 && r ? m - r : r;
}

/* S from its residues r[l * stride] (each in [0, m_l)), as a 384-bit two's complement. */
CAIRN_ENC_FN void cairn_enc_crt_value(const uint8_t *r, size_t stride, const cairn_enc_crt *c,
                                      cairn_enc_wide *s) {
    uint64_t acc[CAIRN_ENC_LIMBS];
    for (int w = 0; w < CAIRN_ENC_LIMBS; w++) acc[w] = 0;
    uint64_t qsum = 0;
    for (int l = 0; l < c->L; l++) {
        uint32_t cl =
            cairn_enc_mod((uint32_t)r[(size_t)l * stride] * c->inv[l], c->m[l], c->recip[l]);
        qsum += cl * c->frac[l];
        for (int w = 0; w < c->limbs; w++) acc[w] += (uint64_t)cl * c->W[l][w];
    }
    uint64_t q = (qsum + (UINT64_C(1) << 39)) >> 40;
    uint64_t carry = 0, borrow = 0;
    uint32_t limb[CAIRN_ENC_LIMBS];
    for (int w = 0; w < CAIRN_ENC_LIMBS; w++) { /* T's limbs, then T - q M modulo 2^384 */
        uint64_t t = acc[w] + carry;
        carry = t >> 32;
        uint64_t sub = q * c->M[w] + borrow; /* q <= 48: below 2^38 */
        uint64_t lo = (uint32_t)t, need = sub & 0xffffffffu;
        limb[w] = (uint32_t)(lo - need);
        borrow = (sub >> 32) + (lo < need);
    }
    for (int i = 0; i < CAIRN_ENC_WORDS; i++)
        s->w[i] = (uint64_t)limb[2 * i] | (uint64_t)limb[2 * i + 1] << 32;
}

#ifdef __cplusplus
}
#endif

#endif
