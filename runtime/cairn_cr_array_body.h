/* cairn_cr_array_body.h: the vector fast paths of cairn_cr_array.c, written once over
 * the lane primitives V_* that the includer defines for one ISA (AVX2: 4 doubles,
 * AVX-512: 8), with VF(name) naming this ISA's copy. Each step mirrors its scalar fast
 * path in cairn_cr.h operation for operation (the comments there carry the error
 * analysis): the same IEEE double additions, multiplications and divisions in the same
 * order, the same tables, no fused multiply-add. A step returns the lanes that must take
 * the scalar function instead: those the scalar function sends to its edge path and
 * those whose rounding test fails. No include guard: included once per ISA. */

/* y 2^k for the k of ki (cairn__cr_scale_ki). */
static inline V_ATTR VD VF(scale_ki)(VD y, VI ki) {
    return V_FROMBITS(V_ADD64(V_BITS(y), V_SLLI64(V_SRLI64(ki, 9), 52)));
}

/* cairn__cr_expm1_poly */
static inline V_ATTR VD VF(expm1_poly)(VD r) {
    VD r2 = V_MUL(r, r);
    return V_ADD(r, V_MUL(r2, V_ADD(V_ADD(V_SET(0.5), V_MUL(r, V_SET(CAIRN__CR_INVF3))),
                                    V_MUL(r2, V_SET(CAIRN__CR_INVF4)))));
}

/* cairn__cr_expf_d */
static inline V_ATTR VD VF(expf_d)(VD x) {
    VD z = V_MUL(x, V_SET(CAIRN__CR_INVLN2N)), s = V_ADD(z, V_SET(0x1.8p52));
    VI ki = V_BITS(s);
    VD r = V_MUL(V_SUB(z, V_SUB(s, V_SET(0x1.8p52))), V_SET(CAIRN__CR_LN2N));
    VD t = V_GATHER(cairn__cr_exp_rn, V_AND64(ki, 511));
    return VF(scale_ki)(V_ADD(t, V_MUL(t, VF(expm1_poly)(r))), ki);
}

/* cairn__cr_expm1_d */
static inline V_ATTR VD VF(expm1_d)(VD x) {
    VD s = V_ADD(V_MUL(x, V_SET(CAIRN__CR_INVLN2N)), V_SET(0x1.8p52));
    VD kd = V_SUB(s, V_SET(0x1.8p52));
    VI ki = V_BITS(s), j2 = V_SLLI64(V_AND64(ki, 511), 1);
    VD r = V_SUB(V_SUB(x, V_MUL(kd, V_SET(CAIRN__CR_LN2N_1))), V_MUL(kd, V_SET(CAIRN__CR_LN2N_2)));
    VD hi = V_GATHER(&cairn__cr_exp_tab[0][0], j2), lo = V_GATHER(&cairn__cr_exp_tab[0][1], j2);
    VD sc = VF(scale_ki)(V_SET(1.0), ki), p = VF(expm1_poly)(r);
    return V_ADD(V_SUB(V_MUL(hi, sc), V_SET(1.0)), V_MUL(sc, V_ADD(lo, V_MUL(V_ADD(hi, lo), p))));
}

/* Lanes where cairn__cr_f32_sure_normal(y) fails. */
static inline V_ATTR unsigned VF(unsure)(VD y) {
#ifdef CAIRN_CR_FORCE_SLOW
    (void)y;
    return V_ALL;
#else
    VI t = V_AND64(V_SUB64(V_SLLI64(V_BITS(y), 3), V_SET64(0x7FFFF800)), 0xFFFFFFFFu);
    return V_LE64(t, 0x1000);
#endif
}

/* Lanes where cairn__cr_f32_sure_rel(y) may fail: |y| < 2^-126, where the scalar test
 * takes its general form, or the bits test fails. */
static inline V_ATTR unsigned VF(unsure_rel)(VD y) {
    VI e = V_AND64(V_SRLI64(V_BITS(y), 52), 0x7FF);
    return V_LT64(e, 1023 - 126) | VF(unsure)(y);
}

static inline V_ATTR unsigned VF(expf_step)(const float *p, VF32 *res) {
    unsigned m = V_GT32(V_AND32(V_LOADBITS(p), 0x7FFFFFFFu), 0x42AE0000u);
    VD y = VF(expf_d)(V_LOAD(p));
    *res = V_NARROW(y);
    return m | VF(unsure)(y);
}

static inline V_ATTR unsigned VF(exp2f_step)(const float *p, VF32 *res) {
    unsigned m = V_GT32(V_AND32(V_LOADBITS(p), 0x7FFFFFFFu), 0x42FBFFFFu);
    VD x = V_LOAD(p), s = V_ADD(V_MUL(x, V_SET(512.0)), V_SET(0x1.8p52));
    VD r = V_SUB(x, V_MUL(V_SUB(s, V_SET(0x1.8p52)), V_SET(0x1p-9))), r2 = V_MUL(r, r);
    VI ki = V_BITS(s);
    VD q = V_ADD(V_SET(CAIRN__CR_EXP2_C4), V_MUL(r, V_SET(CAIRN__CR_EXP2_C5)));
    VD pp = V_ADD(V_ADD(V_SET(CAIRN__CR_EXP2_C1), V_MUL(r, V_SET(CAIRN__CR_EXP2_C2))),
                  V_MUL(r2, V_ADD(V_SET(CAIRN__CR_EXP2_C3), V_MUL(r, q))));
    VD t = V_GATHER(cairn__cr_exp_rn, V_AND64(ki, 511));
    VD y = VF(scale_ki)(V_ADD(t, V_MUL(t, V_MUL(r, pp))), ki);
    *res = V_NARROW(y);
    return m | VF(unsure)(y);
}

static inline V_ATTR unsigned VF(expm1f_step)(const float *p, VF32 *res) {
    VH ab = V_AND32(V_LOADBITS(p), 0x7FFFFFFFu); /* 0 and |x| >= 20 go to the edge */
    unsigned m = V_GT32(V_SUB32(ab, 1), 0x41A00000u - 2);
    VD y = VF(expm1_d)(V_LOAD(p));
    *res = V_NARROW(y);
    return m | VF(unsure_rel)(y);
}

/* tanh: as cairn_cr_tanhf, and the edge's 9.1 <= |x| <= inf (the result +-1) here too */
static inline V_ATTR unsigned VF(tanhf_step)(const float *p, VF32 *res) {
    VH b = V_LOADBITS(p), ab = V_AND32(b, 0x7FFFFFFFu);
    unsigned sat = V_GT32(ab, 0x4111999Au - 1) & ~V_GT32(ab, 0x7F800000u);
    unsigned m = V_GT32(V_SUB32(ab, 1), 0x4111999Au - 2) & ~sat; /* 0 and NaN: the edge */
    VD e = VF(expm1_d)(V_MUL(V_SET(2.0), V_WIDENF(ab)));
    VD y = V_DIV(e, V_ADD(e, V_SET(2.0)));
    VF32 t = V_SELECT_GT32(ab, 0x4111999Au - 1, V_SETF(1.0f), V_NARROW(y));
    *res = V_XORSIGN(t, b); /* -(float)y, or -1, for negative x */
    return m | (VF(unsure_rel)(y) & ~sat);
}

static inline V_ATTR unsigned VF(sigmoidf_step)(const float *p, VF32 *res) {
    VH ab = V_AND32(V_LOADBITS(p), 0x7FFFFFFFu);
    unsigned m = V_GT32(ab, 0x41F00000u);
    VD x = V_LOAD(p), e = VF(expf_d)(V_NEG(V_WIDENF(ab)));
    VD y = V_DIV(V_PICKNEG(x, e, V_SET(1.0)), V_ADD(V_SET(1.0), e));
    *res = V_NARROW(y);
    return m | VF(unsure)(y);
}

/* cairn__cr_logf_d(b, 0, want_log2) for positive normal b. */
static inline V_ATTR VD VF(logf_d)(VH b, int want_log2) {
    VH t = V_SUB32(b, CAIRN__CR_LOGF_OFF), idx = V_AND32(V_SRLI32(t, 14), 0x1FE);
    VH w = V_SUB32V(b, V_AND32(t, 0xFF800000u));
    VD z = V_FROMBITS(V_ADD64(V_SLLI64(V_WIDENU(w), 29), V_SET64((uint64_t)(1023 - 127) << 52)));
    VD e0 = V_GATHER32(cairn__cr_logf_tab, idx), e1 = V_GATHER32(cairn__cr_logf_tab + 1, idx);
    VD r = V_SUB(V_MUL(z, e0), V_SET(1.0)), r2 = V_MUL(r, r);
    VD p = V_MUL(r2, V_ADD(V_ADD(V_SET(-0.5), V_MUL(r, V_SET(CAIRN__CR_INV3))),
                           V_MUL(r2, V_ADD(V_SET(-0.25), V_MUL(r, V_SET(CAIRN__CR_INV5))))));
    VD kd = V_CVTI32(V_SRAI32(t, 23));
    if (want_log2) return V_ADD(kd, V_MUL(V_ADD(V_ADD(e1, r), p), V_SET(CAIRN__CR_INVLN2)));
    return V_ADD(V_ADD(V_ADD(V_MUL(kd, V_SET(CAIRN__CR_LN2)), e1), r), p);
}

static inline V_ATTR unsigned VF(logf_step)(const float *p, VF32 *res) {
    VH b = V_LOADBITS(p); /* not positive, normal and finite: the edge */
    unsigned m = V_GT32(V_SUB32(b, 0x00800000u), 0x7F000000u - 1);
    VD y = VF(logf_d)(b, 0);
    *res = V_NARROW(y);
    return m | VF(unsure)(y);
}

static inline V_ATTR unsigned VF(log2f_step)(const float *p, VF32 *res) {
    VH b = V_LOADBITS(p);
    unsigned m = V_GT32(V_SUB32(b, 0x00800000u), 0x7F000000u - 1);
    VD y = VF(logf_d)(b, 1);
    *res = V_NARROW(y);
    return m | VF(unsure)(y);
}

/* cairn__cr_sincos_poly(r, 1) and (r, 0) */
static inline V_ATTR VD VF(cos_poly)(VD z) {
    VD c = V_ADD(
        V_SET(CAIRN__CR_COS4),
        V_MUL(z, V_ADD(V_SET(CAIRN__CR_COS5),
                       V_MUL(z, V_ADD(V_SET(CAIRN__CR_COS6), V_MUL(z, V_SET(CAIRN__CR_COS7)))))));
    VD q = V_ADD(V_SET(CAIRN__CR_COS2), V_MUL(z, V_ADD(V_SET(CAIRN__CR_COS3), V_MUL(z, c))));
    return V_ADD(V_SET(1.0), V_MUL(z, V_ADD(V_SET(CAIRN__CR_COS1), V_MUL(z, q))));
}

static inline V_ATTR VD VF(sin_poly)(VD r, VD z) {
    VD c = V_ADD(
        V_SET(CAIRN__CR_SIN4),
        V_MUL(z, V_ADD(V_SET(CAIRN__CR_SIN5),
                       V_MUL(z, V_ADD(V_SET(CAIRN__CR_SIN6), V_MUL(z, V_SET(CAIRN__CR_SIN7)))))));
    VD q = V_ADD(V_SET(CAIRN__CR_SIN2), V_MUL(z, V_ADD(V_SET(CAIRN__CR_SIN3), V_MUL(z, c))));
    return V_ADD(r, V_MUL(V_MUL(r, z), V_ADD(V_SET(CAIRN__CR_SIN1), V_MUL(z, q))));
}

/* cairn__cr_sincosf's fast path for |x| < 2^20 (0, the rest and NaN: the edge). Lanes
 * with |x| <= pi/4 take k = 0, for which the reduction's three steps give r = x exactly
 * (x - 0 - 0 - 0), as the scalar's r = x; the others cairn__cr_reduce_mid's k and r.
 * Both polynomials are evaluated and one picked by bits, as the scalar does; a reduced
 * lane with |r| < 2^-40 goes to the scalar function (its edge). */
static inline V_ATTR unsigned VF(sincosf_step)(const float *p, VF32 *res, int want_cos) {
    VH b = V_LOADBITS(p), ab = V_AND32(b, 0x7FFFFFFFu);
    unsigned m = V_GT32(V_SUB32(ab, 1), 0x49800000u - 2);
    VD x = V_WIDENF(ab), big = V_CMPGT(x, V_SET((double)0x1.921fb4p-1f)); /* 0x3F490FDA */
    VD s = V_ADD(V_MUL(x, V_SET(CAIRN__CR_2_PI)), V_SET(0x1.8p52));
    VD k = V_AND(V_SUB(s, V_SET(0x1.8p52)), big);
    VD r =
        V_SUB(V_SUB(V_SUB(x, V_MUL(k, V_SET(CAIRN__CR_PIO2_1))), V_MUL(k, V_SET(CAIRN__CR_PIO2_2))),
              V_MUL(k, V_SET(CAIRN__CR_PIO2_3)));
    VD z = V_MUL(r, r);
    m |= V_MASK(V_AND(big, V_CMPLT(V_ABS(r), V_SET(0x1p-40))));
    /* q + want_cos: the quadrant is k mod 4, the low bits of k + 1.5 2^52 */
    VI qw = V_ADD64(V_BITS(V_ADD(k, V_SET(0x1.8p52))), V_SET64(want_cos));
    VI which = V_SUB64(V_SET64(0), V_AND64(qw, 1)); /* all ones: the cos polynomial */
    VD y = V_FROMBITS(V_OR64V(V_AND64V(V_BITS(VF(cos_poly)(z)), which),
                              V_ANDNOT64V(which, V_BITS(VF(sin_poly)(r, z)))));
    m |= VF(unsure_rel)(y);
    VI neg = V_SLLI64(V_SRLI64(qw, 1), 63);
    if (!want_cos) neg = V_XOR64V(neg, V_AND64(V_BITS(V_WIDENF(b)), 0x8000000000000000u));
    *res = V_NARROW(V_FROMBITS(V_XOR64V(V_BITS(y), neg)));
    return m;
}

static inline V_ATTR unsigned VF(sinf_step)(const float *p, VF32 *res) {
    return VF(sincosf_step)(p, res, 0);
}

static inline V_ATTR unsigned VF(cosf_step)(const float *p, VF32 *res) {
    return VF(sincosf_step)(p, res, 1);
}

/* The array loop of one function: a vector of lanes at a time, the lanes a step (or
 * the tests' mask) rejects through the scalar function (cairn__cr_fallback), the tail
 * scalar (cairn__cr_tail; both out of line, baseline ISA). The result
 * goes straight to out when every lane passed; otherwise through tmp, so that in == out
 * still reads each input before its output is written. */
#define V_ARRAY(NAME)                                                                              \
    static V_ATTR void VF(NAME##_array)(const float *in, float *out, size_t n) {                   \
        size_t i = 0;                                                                              \
        for (; i + 2 * V_N <= n; i += 2 * V_N) { /* two vectors a turn: more to overlap */         \
            VF32 r0, r1;                                                                           \
            unsigned m0 = VF(NAME##_step)(in + i, &r0), m1 = VF(NAME##_step)(in + i + V_N, &r1);   \
            unsigned m = ((m0 | cairn__cr_array_force) & V_ALL) |                                  \
                         ((m1 | cairn__cr_array_force) & V_ALL) << V_N;                            \
            if (!m && !CAIRN__CR_PLANT_ON) {                                                       \
                V_STORE(out + i, r0);                                                              \
                V_STORE(out + i + V_N, r1);                                                        \
                continue;                                                                          \
            }                                                                                      \
            float tmp[2 * V_N];                                                                    \
            V_STORE(tmp, r0);                                                                      \
            V_STORE(tmp + V_N, r1);                                                                \
            cairn__cr_fallback(cairn_cr_##NAME, in + i, tmp, m, 2 * V_N);                          \
            memcpy(out + i, tmp, sizeof tmp);                                                      \
        }                                                                                          \
        if (i < n) cairn__cr_tail(cairn_cr_##NAME, in + i, out + i, n - i);                        \
    }
V_ARRAY(expf)
V_ARRAY(exp2f)
V_ARRAY(expm1f)
V_ARRAY(logf)
V_ARRAY(log2f)
V_ARRAY(tanhf)
V_ARRAY(sigmoidf)
V_ARRAY(sinf)
V_ARRAY(cosf)
#undef V_ARRAY
