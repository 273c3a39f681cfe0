/* cairn_sum.h: the exact float sum behind `reduce + parallel` (and the ordered fold
 * behind `reduce + for`), for generated code and C users.
 *
 * A cairn_sum64 (f64 terms) or cairn_sum32 (f32 terms) accumulates terms exactly; round
 * gives their exact sum rounded once to nearest, ties to even, with the special values
 * of the spec's table. The bits never depend on how the terms were split between
 * accumulators or in which order the accumulators were merged. Nothing allocates.
 *
 * How (docs/numerics.md, "The exact parallel sum"): eight expansions (hi, lo pairs of
 * doubles) take the terms in turn, each term through two TwoSum steps; what the second
 * step leaves over (almost always nothing) goes to a fixed-point integer that counts the
 * format's least subnormal (34 64-bit limbs for f64, 6 for f32). Infinities, NaNs and
 * terms that would overflow an expansion go to flags or straight into the integer.
 *
 * STRICT FLOATING POINT IS REQUIRED: the TwoSum steps below are error-free only if every
 * + and - is a separately rounded IEEE double operation. A compiler that contracts them
 * into a fused multiply-add or reassociates them (-ffp-contract=fast, -ffast-math,
 * x87 extended precision) computes a different "error" and the sum is no longer exact.
 * CAIRN builds everything with -ffp-contract=off -fno-fast-math on SSE2 or later; the
 * header refuses -ffast-math outright.
 *
 * One term at a time:
 *     cairn_sum64 acc;  cairn_sum64_init(&acc);
 *     for (size_t i = 0; i < n; i++) cairn_sum64_add(&acc, x[i] * y[i]);
 *     double s = cairn_sum64_round(&acc);
 *
 * On the pool without allocating, as `reduce + parallel i in n yield e` does (below: the
 * terms go straight into the expansions, in registers; generated code uses
 * CAIRN_SUM_CHECKED, which adds the hoisted index checks and the tiny path):
 *     CAIRN_SUM64_BLOCK(dot_block, struct dot_ctx, c, i, c->x[i] * c->y[i])
 *     ...
 *     struct dot_ctx ctx = {x, y};
 *     double s = cairn_sum64_pooled(n, 0, dot_block, &ctx);
 * cairn_sum64_pooled keeps one accumulator per pool worker in a stack array, runs the
 * block function over [0, n) with cairn_pool_run, merges in worker order and rounds. */
#ifndef CAIRN_SUM_H
#define CAIRN_SUM_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__FAST_MATH__)
#error "cairn_sum.h needs strict floating point: build without -ffast-math (see the header comment)"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "cairn_sum.h needs doubles rounded as doubles (FLT_EVAL_METHOD 0: SSE2, not x87)"
#endif

/* Finite x's magnitude as mant * 2^-1074 * 2^pos: its significand (with a normal
 * number's hidden bit; 0 for a zero) and, in *pos, its lowest bit's position in 2^-1074
 * steps. Host and device (the exact device sum, cairn_dsum.h, cuts x the same way). */
#ifdef __CUDACC__
__host__ __device__
#endif
    static inline uint64_t
    cairn_sum_unpack(double x, unsigned *pos) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned biased = (unsigned)(bits >> 52) & 0x7ff;
    uint64_t mant = bits & ((1ull << 52) - 1);
    *pos = biased ? biased - 1 : 0;
    return biased ? mant | 1ull << 52 : mant;
}

#define CAIRN_SUM_LANES   8  /* expansions per accumulator */
#define CAIRN_SUM64_LIMBS 34 /* 2176-bit integer of 2^-1074 units */
#define CAIRN_SUM32_LIMBS 6  /* 384-bit integer of 2^-149 units */

/* The expansions and flags, shared by both formats. hi[k] starts as -0.0 so that it
 * stays -0.0 exactly while every term it took was -0.0 (IEEE: -0 + -0 = -0, and a sum
 * that cancels to zero is +0): that is how round knows "every term -0.0". */
typedef struct cairn_sum_state {
    double hi[CAIRN_SUM_LANES], lo[CAIRN_SUM_LANES];
    uint64_t count; /* terms taken (merges add counts) */
    uint32_t flags; /* CAIRN_SUM_F_* below */
} cairn_sum_state;

#define CAIRN_SUM_F_NAN  1u /* a NaN term */
#define CAIRN_SUM_F_PINF 2u /* a +inf term */
#define CAIRN_SUM_F_NINF 4u /* a -inf term */
#define CAIRN_SUM_F_ACC  8u /* acc[] is in use (else it is zero, unwritten) */

typedef struct cairn_sum64 {
    cairn_sum_state st;
    uint64_t acc[CAIRN_SUM64_LIMBS]; /* two's complement, little-endian limbs */
} cairn_sum64;

typedef struct cairn_sum32 {
    cairn_sum_state st;
    uint64_t acc[CAIRN_SUM32_LIMBS];
} cairn_sum32;

void cairn_sum64_init(cairn_sum64 *s);
void cairn_sum64_add_block(cairn_sum64 *s, const double *x, size_t n);
void cairn_sum64_merge(cairn_sum64 *dst, const cairn_sum64 *src);
double cairn_sum64_round(const cairn_sum64 *s);

void cairn_sum32_init(cairn_sum32 *s);
void cairn_sum32_add_block(cairn_sum32 *s, const float *x, size_t n);
void cairn_sum32_merge(cairn_sum32 *dst, const cairn_sum32 *src);
float cairn_sum32_round(const cairn_sum32 *s); /* from the exact integer, never via a double */

/* Out-of-line slow path of add: term x (not yet added) into expansion k, exactly. */
void cairn_sum64_add_slow(cairn_sum64 *s, unsigned k, double x);
void cairn_sum32_add_slow(cairn_sum32 *s, unsigned k, double x);

/* Expansion (H, L) plus term X by two of Knuth's TwoSum steps, on doubles or on vectors
 * of doubles: A + B + E2 == H + L + X exactly, unless a sum overflowed, and then E2 is
 * NaN (an infinity or NaN anywhere makes E2 NaN). E2 is almost always 0.
 * Each line is six separately rounded operations: see STRICT FLOATING POINT above. */
#define CAIRN_SUM_TWO_STEP(T, H, L, X, A, B, E2)                                                   \
    CAIRN_SUM_TWO_SUM(T, H, X, A, A##e_);                                                          \
    CAIRN_SUM_TWO_SUM(T, L, A##e_, B, E2)
/* One TwoSum step: S + E == X + Y exactly (E NaN past the range, or for an infinity or
 * NaN). Six separately rounded operations. */
#define CAIRN_SUM_TWO_SUM(T, X, Y, S, E)                                                           \
    T S = (X) + (Y), S##v_ = S - (X), E = ((X) - (S - S##v_)) + ((Y)-S##v_)

/* The inline fast path: expansion k takes x, or, when the step is not clean (a leftover,
 * an infinity, a NaN, an overflow), stays unchanged and 1 says: take the slow path. */
static inline int cairn_sum__step(cairn_sum_state *st, unsigned k, double x) {
    CAIRN_SUM_TWO_STEP(double, st->hi[k], st->lo[k], x, a, b, e2);
    if (__builtin_expect(e2 != 0, 0)) return 1;
    st->hi[k] = a;
    st->lo[k] = b;
    return 0;
}

/* Terms go to the expansions in turn, so consecutive adds do not wait on each other. */
static inline void cairn_sum64_add(cairn_sum64 *s, double x) {
    unsigned k = (unsigned)(s->st.count++ % CAIRN_SUM_LANES);
    if (cairn_sum__step(&s->st, k, x)) cairn_sum64_add_slow(s, k, x);
}

static inline void cairn_sum32_add(cairn_sum32 *s, float x) {
    unsigned k = (unsigned)(s->st.count++ % CAIRN_SUM_LANES);
    if (cairn_sum__step(&s->st, k, (double)x)) /* the widening is exact */
        cairn_sum32_add_slow(s, k, (double)x);
}

/* Plain arrays, exact, on the pool (small n runs on the calling thread). */
double cairn_sum_f64(const double *x, size_t n);
float cairn_sum_f32(const float *x, size_t n);

/* The ordered fold of `reduce + for`: the first term, then each next one added left to
 * right, every partial sum rounded (no terms: +0.0; all -0.0: -0.0). */
double cairn_fold_f64(const double *x, size_t n);
float cairn_fold_f32(const float *x, size_t n);

/* Pooled reduction: block(ctx, begin, end, acc) adds terms begin..end-1 into acc. */
typedef void (*cairn_sum64_block_fn)(void *ctx, size_t begin, size_t end, cairn_sum64 *acc);
typedef void (*cairn_sum32_block_fn)(void *ctx, size_t begin, size_t end, cairn_sum32 *acc);
double cairn_sum64_pooled(size_t n, size_t grain, cairn_sum64_block_fn block, void *ctx);
float cairn_sum32_pooled(size_t n, size_t grain, cairn_sum32_block_fn block, void *ctx);

/* ---- terms computed in the block function (what a `yield` lowers to) ----------------
 *
 * A block function that computes its own terms adds them straight into the eight
 * expansions, held in registers for the whole block (cairn_sum_run): each group of eight
 * consecutive terms is computed into eight locals and goes through one vector TwoSum
 * step, term j into expansion j, with one check per chunk of 64 terms (then per 16 for
 * the rest). The chunk's terms are also written to a stack buffer that is read only when
 * some step of the chunk was not clean (a leftover, an infinity, a NaN, an overflow):
 * then the expansions go back to what they were before the chunk, and the buffer goes
 * through add_block, which handles every case exactly; the rest of the block carries on
 * in registers. The term computation vectorizes when it has no branch (generated code
 * hoists its index checks, CAIRN_SUM_CHECKED below). A block shorter than
 * CAIRN_SUM_SHORT goes into expansion 0 alone, so that rounding a small sum has nothing
 * to fold. On x86-64 the block function is compiled twice, for SSE2 and for AVX2 (the
 * vectors then use 256-bit registers), and picks one per call by the CPU; each operation
 * is one rounded IEEE operation per lane either way, so the choice changes speed, never
 * bits.
 *
 * CAIRN_SUM64_TERMS(NAME, TERM) defines `static void NAME(void *ctx, size_t begin,
 * size_t end, cairn_sum64 *acc)` (a cairn_sum64_block_fn) adding TERM(ctx, k) for k in
 * [begin, end); TERM is a function or macro of (void *, size_t) giving a double
 * (CAIRN_SUM32_TERMS: a float). Generated code defines TERM as a static inline function
 * holding the yield's lowering. CAIRN_SUM64_BLOCK(NAME, CTXTYPE, CTXVAR, VAR, EXPR) is
 * the same for C users, with the term an expression EXPR of the index VAR and CTXVAR, a
 * CTXTYPE * to the context. */
#if !defined(__CUDACC__)
#include <string.h>

#define CAIRN_SUM_SHORT 16 /* a block function's shorter blocks go into expansion 0 */
#define CAIRN_SUM_TINY  16 /* NAME_sum and cairn_sum_fNN: fewer terms take the tiny path */

typedef double cairn_sum__v2d __attribute__((vector_size(16)));
typedef long long cairn_sum__v2l __attribute__((vector_size(16)));
typedef double cairn_sum__v4d __attribute__((vector_size(32)));
typedef long long cairn_sum__v4l __attribute__((vector_size(32)));

typedef struct cairn_sum_run {
    cairn_sum__v4d h0, h1, l0, l1; /* hi and lo of expansions 0-3 and 4-7 */
} cairn_sum_run;

int cairn_sum_use_avx2(void); /* the CPU runs AVX2 (cached) */

/* The rounded total of a sum held exactly in hi + lo alone (no integer, no other
 * expansion). One addition rounds it: the f64 answer, and the f32 one when hi alone
 * holds the total or the addition was exact (then one (float) rounds the exact total
 * once). An exact zero is -0.0 when there were terms (`any`) and hi is still -0.0
 * (every term was -0.0), else +0.0. Returns 0 where the integer must decide (an f32
 * total that is no double). */
static inline int cairn_sum__pair_zero(double hi, int any) {
    uint64_t bits;
    memcpy(&bits, &hi, sizeof bits);
    return any && bits == 1ull << 63;
}

static inline int cairn_sum__pair64(double hi, double lo, int any, double *out) {
    double total = hi + lo;
    *out = total != 0 ? total : cairn_sum__pair_zero(hi, any) ? -0.0 : 0.0;
    return 1;
}

static inline int cairn_sum__pair32(double hi, double lo, int any, float *out) {
    if (lo == 0 && hi != 0) { /* the usual short f32 sum: hi is exact */
        *out = (float)hi;
        return 1;
    }
    CAIRN_SUM_TWO_STEP(double, hi, 0.0, lo, total, err, unused);
    (void)unused;
    if (total == 0) { /* a sum of two doubles rounds to 0 only if 0 */
        *out = cairn_sum__pair_zero(hi, any) ? -0.0f : 0.0f;
        return 1;
    }
    if (err != 0) return 0;
    *out = (float)total;
    return 1;
}

/* Terms I and I + 1 of N as a vector of two doubles, the second -0.0 past the end. */
#define CAIRN_SUM__TWO_TERMS(TERM, C, I, N)                                                        \
    { (double)TERM(C, I), (I) + 1 < (N) ? (double)TERM(C, (I) + 1) : -0.0 }

/* NAME(c, n, &hi, &lo): terms TERM(c, 0 .. n-1), 0 < n < CAIRN_SUM_TINY, in two
 * expansions held in one SSE2 register pair (even and odd terms; an odd count is padded
 * with -0.0, which changes nothing), joined into one, hi + lo: half the instructions of
 * one scalar expansion, and no state. The second lo joins the first lo, not hi, so that
 * a +0.0 there cannot turn an all -0.0 hi into +0.0. Returns 0 when some step was not
 * clean (a leftover, an infinity, a NaN, an overflow): then nothing is decided. */
#define CAIRN_SUM__TINY(NAME, TERM)                                                                \
    static inline __attribute__((always_inline)) int NAME(void *cairn_c_, size_t cairn_n_,         \
                                                          double *cairn_hi_, double *cairn_lo_) {  \
        cairn_sum__v2d cairn_h_ = {-0.0, -0.0}, cairn_l_ = {0.0, 0.0}, cairn_z_ = {0.0, 0.0};      \
        cairn_sum__v2l cairn_bad_ = {0, 0};                                                        \
        for (size_t cairn_i_ = 0; cairn_i_ < cairn_n_; cairn_i_ += 2) {                            \
            cairn_sum__v2d cairn_x_ = CAIRN_SUM__TWO_TERMS(TERM, cairn_c_, cairn_i_, cairn_n_);    \
            CAIRN_SUM_TWO_STEP(cairn_sum__v2d, cairn_h_, cairn_l_, cairn_x_, cairn_a_, cairn_b_,   \
                               cairn_e_);                                                          \
            cairn_h_ = cairn_a_, cairn_l_ = cairn_b_;                                              \
            cairn_bad_ |= cairn_e_ != cairn_z_;                                                    \
        }                                                                                          \
        CAIRN_SUM_TWO_STEP(double, cairn_h_[0], cairn_l_[0], cairn_h_[1], cairn_a_, cairn_b_,      \
                           cairn_e_); /* hi joins hi */                                            \
        CAIRN_SUM_TWO_STEP(double, cairn_b_, 0.0, cairn_l_[1], cairn_d_, cairn_f_,                 \
                           cairn_g_); /* lo joins lo */                                            \
        (void)cairn_g_;                                                                            \
        *cairn_hi_ = cairn_a_, *cairn_lo_ = cairn_d_;                                              \
        return !(cairn_bad_[0] | cairn_bad_[1]) && cairn_e_ == 0 && cairn_f_ == 0;                 \
    }

/* NAME(c, n, &out) for f32 terms TERM(c, 0 .. n-1), 0 < n < CAIRN_SUM_TINY: their fold
 * in doubles (even and odd terms in the two lanes of one SSE2 register, an odd count
 * padded with -0.0), each addition checked by one TwoSum step to have been exact. An f32
 * widens exactly, and a few f32 terms of no wide exponent spread add exactly in a double
 * (53 bits hold the 24 of a term, the spread and the carries): then the double is the
 * exact total, and one (float) rounds it once. Half the work of two expansions; returns
 * 0 (nothing decided) when some addition was not exact, or met an infinity or a NaN
 * (their error is NaN). */
#define CAIRN_SUM__TINY32(NAME, TERM)                                                              \
    static inline __attribute__((always_inline, unused)) int NAME(void *cairn_c_, size_t cairn_n_, \
                                                                  float *cairn_out_) {             \
        cairn_sum__v2d cairn_s_ = {-0.0, -0.0}, cairn_z_ = {0.0, 0.0};                             \
        cairn_sum__v2l cairn_bad_ = {0, 0};                                                        \
        for (size_t cairn_i_ = 0; cairn_i_ < cairn_n_; cairn_i_ += 2) {                            \
            cairn_sum__v2d cairn_x_ = CAIRN_SUM__TWO_TERMS(TERM, cairn_c_, cairn_i_, cairn_n_);    \
            CAIRN_SUM_TWO_SUM(cairn_sum__v2d, cairn_s_, cairn_x_, cairn_a_, cairn_e_);             \
            cairn_s_ = cairn_a_;                                                                   \
            cairn_bad_ |= cairn_e_ != cairn_z_;                                                    \
        }                                                                                          \
        CAIRN_SUM_TWO_SUM(double, cairn_s_[0], cairn_s_[1], cairn_t_, cairn_e_);                   \
        *cairn_out_ = (float)cairn_t_;                                                             \
        return !(cairn_bad_[0] | cairn_bad_[1]) && cairn_e_ == 0;                                  \
    }

static inline __attribute__((always_inline)) cairn_sum_run
cairn_sum__run_load(const cairn_sum_state *st) {
    cairn_sum_run r;
    memcpy(&r.h0, st->hi, 32), memcpy(&r.h1, st->hi + 4, 32);
    memcpy(&r.l0, st->lo, 32), memcpy(&r.l1, st->lo + 4, 32);
    return r;
}

static inline __attribute__((always_inline)) void cairn_sum__run_store(const cairn_sum_run *r,
                                                                       cairn_sum_state *st) {
    memcpy(st->hi, &r->h0, 32), memcpy(st->hi + 4, &r->h1, 32);
    memcpy(st->lo, &r->l0, 32), memcpy(st->lo + 4, &r->l1, 32);
}

/* Terms x0 (four) into expansions 0..3 and x1 into 4..7; the lanes whose step was not
 * clean (a leftover, an infinity, a NaN, an overflow) come back set in the mask, and
 * then the run must be restored and the terms added the slow way. */
static inline __attribute__((always_inline)) void cairn_sum__run8(cairn_sum_run *r,
                                                                  const cairn_sum__v4d *t0,
                                                                  const cairn_sum__v4d *t1,
                                                                  cairn_sum__v4l *bad) {
    cairn_sum__v4d x0 = *t0, x1 = *t1, zero = {0.0, 0.0, 0.0, 0.0};
    CAIRN_SUM_TWO_STEP(cairn_sum__v4d, r->h0, r->l0, x0, a0, b0, e0);
    CAIRN_SUM_TWO_STEP(cairn_sum__v4d, r->h1, r->l1, x1, a1, b1, e1);
    r->h0 = a0, r->l0 = b0, r->h1 = a1, r->l1 = b1;
    *bad |= (e0 != zero) | (e1 != zero);
}

static inline __attribute__((always_inline)) int cairn_sum__any(const cairn_sum__v4l *m) {
    return __builtin_expect(((*m)[0] | (*m)[1] | (*m)[2] | (*m)[3]) != 0, 0);
}

/* Terms TERM(c, k .. k + 7) as T locals t0..t7 and as two vectors x0, x1 of doubles. */
#define CAIRN_SUM__EIGHT(T, TERM, C, K, P)                                                         \
    T P##0 = TERM(C, K), P##1 = TERM(C, K + 1), P##2 = TERM(C, K + 2), P##3 = TERM(C, K + 3);      \
    T P##4 = TERM(C, K + 4), P##5 = TERM(C, K + 5), P##6 = TERM(C, K + 6), P##7 = TERM(C, K + 7);  \
    cairn_sum__v4d P##x0 = {P##0, P##1, P##2, P##3}, P##x1 = {P##4, P##5, P##6, P##7}

#if defined(__x86_64__) && !defined(CAIRN_SUM_NO_AVX2)
#define CAIRN_SUM__AVX2             __attribute__((target("avx2")))
#define CAIRN_SUM__PICK(NAME, ARGS) (cairn_sum_use_avx2() ? NAME##_avx2 ARGS : NAME##_sse2 ARGS)
#else
#define CAIRN_SUM__AVX2
#define CAIRN_SUM__PICK(NAME, ARGS) NAME##_sse2 ARGS
#endif

/* Inside CAIRN_SUM__TERMS's body: chunks of N terms (a multiple of 8) while the block
 * has them, the run in registers, the terms also written to a buffer that is read only
 * when some step of the chunk was not clean: then the run goes back to what it was
 * before the chunk and the buffer through add_block, exactly. */
#define CAIRN_SUM__CHUNKS(T, P, TERM, N)                                                           \
    for (; cairn_e_ - cairn_k_ >= N; cairn_k_ += N) {                                              \
        cairn_sum_run cairn_before_ = cairn_r_;                                                    \
        cairn_sum__v4l cairn_bad_ = {0, 0, 0, 0};                                                  \
        T cairn_t_[N];                                                                             \
        for (size_t cairn_j_ = 0; cairn_j_ < N; cairn_j_ += 8) {                                   \
            CAIRN_SUM__EIGHT(T, TERM, cairn_c_, cairn_k_ + cairn_j_, cairn_a_);                    \
            T *cairn_p_ = cairn_t_ + cairn_j_;                                                     \
            cairn_p_[0] = cairn_a_0, cairn_p_[1] = cairn_a_1, cairn_p_[2] = cairn_a_2;             \
            cairn_p_[3] = cairn_a_3, cairn_p_[4] = cairn_a_4, cairn_p_[5] = cairn_a_5;             \
            cairn_p_[6] = cairn_a_6, cairn_p_[7] = cairn_a_7;                                      \
            cairn_sum__run8(&cairn_r_, &cairn_a_x0, &cairn_a_x1, &cairn_bad_);                     \
        }                                                                                          \
        if (cairn_sum__any(&cairn_bad_)) {                                                         \
            cairn_sum__run_store(&cairn_before_, &cairn_acc_->st);                                 \
            P##_add_block(cairn_acc_, cairn_t_, N);                                                \
            cairn_r_ = cairn_sum__run_load(&cairn_acc_->st);                                       \
        } else {                                                                                   \
            cairn_clean_ += N;                                                                     \
        }                                                                                          \
    }

#define CAIRN_SUM__TERMS(NAME, SUMT, T, P, TERM)                                                   \
    static inline __attribute__((always_inline)) void NAME##_body(                                 \
        void *cairn_c_, size_t cairn_b_, size_t cairn_e_, SUMT *cairn_acc_) {                      \
        size_t cairn_k_ = cairn_b_;                                                                \
        if (cairn_e_ - cairn_b_ < CAIRN_SUM_SHORT) { /* expansion 0 only, in registers */          \
            double cairn_h_ = cairn_acc_->st.hi[0], cairn_l_ = cairn_acc_->st.lo[0];               \
            for (; cairn_k_ < cairn_e_; cairn_k_++) {                                              \
                double cairn_x_ = (double)(TERM(cairn_c_, cairn_k_));                              \
                CAIRN_SUM_TWO_STEP(double, cairn_h_, cairn_l_, cairn_x_, cairn_a_, cairn_s_,       \
                                   cairn_e2_);                                                     \
                if (__builtin_expect(cairn_e2_ != 0, 0)) {                                         \
                    cairn_acc_->st.hi[0] = cairn_h_, cairn_acc_->st.lo[0] = cairn_l_;              \
                    P##_add_slow(cairn_acc_, 0, cairn_x_);                                         \
                    cairn_h_ = cairn_acc_->st.hi[0], cairn_l_ = cairn_acc_->st.lo[0];              \
                } else {                                                                           \
                    cairn_h_ = cairn_a_, cairn_l_ = cairn_s_;                                      \
                }                                                                                  \
            }                                                                                      \
            cairn_acc_->st.hi[0] = cairn_h_, cairn_acc_->st.lo[0] = cairn_l_;                      \
            cairn_acc_->st.count += cairn_e_ - cairn_b_;                                           \
            return;                                                                                \
        }                                                                                          \
        cairn_sum_run cairn_r_ = cairn_sum__run_load(&cairn_acc_->st);                             \
        uint64_t cairn_clean_ = 0;                                                                 \
        CAIRN_SUM__CHUNKS(T, P, TERM, 64) /* one check per 64 terms */                             \
        CAIRN_SUM__CHUNKS(T, P, TERM, 16) /* then per 16 */                                        \
        cairn_sum__run_store(&cairn_r_, &cairn_acc_->st);                                          \
        cairn_acc_->st.count += cairn_clean_;                                                      \
        for (; cairn_k_ < cairn_e_; cairn_k_++) P##_add(cairn_acc_, TERM(cairn_c_, cairn_k_));     \
    }                                                                                              \
    static CAIRN_SUM__AVX2 void NAME##_avx2(void *c, size_t b, size_t e, SUMT *acc) {              \
        NAME##_body(c, b, e, acc);                                                                 \
    }                                                                                              \
    static void NAME##_sse2(void *c, size_t b, size_t e, SUMT *acc) { NAME##_body(c, b, e, acc); } \
    static void NAME(void *c, size_t b, size_t e, SUMT *acc) {                                     \
        CAIRN_SUM__PICK(NAME, (c, b, e, acc));                                                     \
    }
#define CAIRN_SUM64_TERMS(NAME, TERM) CAIRN_SUM__TERMS(NAME, cairn_sum64, double, cairn_sum64, TERM)
#define CAIRN_SUM32_TERMS(NAME, TERM) CAIRN_SUM__TERMS(NAME, cairn_sum32, float, cairn_sum32, TERM)

#define CAIRN_SUM__BLOCK(NAME, T, TERMS, CTXTYPE, CTXVAR, VAR, EXPR)                               \
    static inline __attribute__((always_inline)) T NAME##_term(void *cairn_ctx_, size_t VAR) {     \
        CTXTYPE *CTXVAR = (CTXTYPE *)cairn_ctx_;                                                   \
        (void)CTXVAR;                                                                              \
        return (EXPR);                                                                             \
    }                                                                                              \
    TERMS(NAME, NAME##_term)
#define CAIRN_SUM64_BLOCK(NAME, CTXTYPE, CTXVAR, VAR, EXPR)                                        \
    CAIRN_SUM__BLOCK(NAME, double, CAIRN_SUM64_TERMS, CTXTYPE, CTXVAR, VAR, EXPR)
#define CAIRN_SUM32_BLOCK(NAME, CTXTYPE, CTXVAR, VAR, EXPR)                                        \
    CAIRN_SUM__BLOCK(NAME, float, CAIRN_SUM32_TERMS, CTXTYPE, CTXVAR, VAR, EXPR)

/* ---- a whole sum of computed terms, checks hoisted (what generated code calls) --------
 *
 * CAIRN_SUM_CHECKED(NAME, P, TERM, COVERS), P the accumulator (cairn_sum64 for f64
 * terms, cairn_sum32 for f32), defines the block function NAME (a P_block_fn) and
 * `static T NAME_sum(void *ctx, size_t n)`, the rounded exact sum of terms 0..n-1.
 * TERM(ctx, k, covered) gives term k; COVERS(ctx, b, e) says, for b < e, that terms
 * b..e-1 may be computed with covered = 1. Generated code checks there once per block
 * that every view the yield indexes by the loop variable is long enough, and its TERM
 * skips those index checks when covered: the block then runs as CAIRN_SUM64_TERMS does
 * (vectorizable, the checks gone from the loop). A block COVERS refuses is computed term
 * by term with covered = 0, so it traps where and how the program would without the
 * hoisting. NAME_sum takes the tiny path below CAIRN_SUM_TINY terms (for f32 first
 * CAIRN_SUM__TINY32, then CAIRN_SUM__TINY: no accumulator, no pool, no block setup) when
 * COVERS accepts them and every step was clean, and P_pooled otherwise. */
#define CAIRN_SUM__T_cairn_sum64                      double
#define CAIRN_SUM__T_cairn_sum32                      float
#define CAIRN_SUM__PAIR_cairn_sum64                   cairn_sum__pair64
#define CAIRN_SUM__PAIR_cairn_sum32                   cairn_sum__pair32
#define CAIRN_SUM__QUICK_cairn_sum64(NAME, C, N, OUT) 0 /* f64: no quicker exact fold */
#define CAIRN_SUM__QUICK_cairn_sum32(NAME, C, N, OUT) NAME##_tiny32(C, N, OUT)
#define CAIRN_SUM_CHECKED(NAME, P, TERM, COVERS)                                                   \
    static inline __attribute__((always_inline))                                                   \
    CAIRN_SUM__T_##P NAME##_fast_term(void *c, size_t k) {                                         \
        return TERM(c, k, 1);                                                                      \
    }                                                                                              \
    CAIRN_SUM__TERMS(NAME##_fast, P, CAIRN_SUM__T_##P, P, NAME##_fast_term)                        \
    CAIRN_SUM__TINY(NAME##_tiny, NAME##_fast_term)                                                 \
    CAIRN_SUM__TINY32(NAME##_tiny32, NAME##_fast_term)                                             \
    static void NAME(void *c, size_t b, size_t e, P *acc) {                                        \
        if (b < e && !COVERS(c, b, e)) /* some index is out of range: trap at it */                \
            for (size_t k = b; k < e; k++) P##_add(acc, TERM(c, k, 0));                            \
        else NAME##_fast(c, b, e, acc);                                                            \
    }                                                                                              \
    static __attribute__((unused)) CAIRN_SUM__T_##P NAME##_sum(void *c, size_t n) {                \
        double hi, lo;                                                                             \
        CAIRN_SUM__T_##P out;                                                                      \
        if (n - 1 < CAIRN_SUM_TINY - 1 && COVERS(c, 0, n)) {                                       \
            if (CAIRN_SUM__QUICK_##P(NAME, c, n, &out)) return out;                                \
            if (NAME##_tiny(c, n, &hi, &lo) && CAIRN_SUM__PAIR_##P(hi, lo, 1, &out)) return out;   \
        }                                                                                          \
        return P##_pooled(n, 0, NAME, c);                                                          \
    }
#endif /* !__CUDACC__ */

#ifdef __cplusplus
}
#endif

#endif
