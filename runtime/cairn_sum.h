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
 * One term at a time (what a `yield` lowers to):
 *     cairn_sum64 acc;  cairn_sum64_init(&acc);
 *     for (size_t i = 0; i < n; i++) cairn_sum64_add(&acc, x[i] * y[i]);
 *     double s = cairn_sum64_round(&acc);
 *
 * On the pool, `reduce + parallel i in n yield e` without allocating:
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

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__FAST_MATH__)
#error "cairn_sum.h needs strict floating point: build without -ffast-math (see the header comment)"
#endif
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "cairn_sum.h needs doubles rounded as doubles (FLT_EVAL_METHOD 0: SSE2, not x87)"
#endif

#define CAIRN_SUM_LANES 8          /* expansions per accumulator */
#define CAIRN_SUM64_LIMBS 34       /* 2176-bit integer of 2^-1074 units */
#define CAIRN_SUM32_LIMBS 6        /* 384-bit integer of 2^-149 units */

/* The expansions and flags, shared by both formats. hi[k] starts as -0.0 so that it
 * stays -0.0 exactly while every term it took was -0.0 (IEEE: -0 + -0 = -0, and a sum
 * that cancels to zero is +0): that is how round knows "every term -0.0". */
typedef struct cairn_sum_state {
    double hi[CAIRN_SUM_LANES], lo[CAIRN_SUM_LANES];
    uint64_t count;                /* terms taken (merges add counts) */
    uint32_t flags;                /* CAIRN_SUM_F_* below */
} cairn_sum_state;

#define CAIRN_SUM_F_NAN 1u         /* a NaN term */
#define CAIRN_SUM_F_PINF 2u        /* a +inf term */
#define CAIRN_SUM_F_NINF 4u        /* a -inf term */
#define CAIRN_SUM_F_ACC 8u         /* acc[] is in use (else it is zero, unwritten) */

typedef struct cairn_sum64 {
    cairn_sum_state st;
    uint64_t acc[CAIRN_SUM64_LIMBS];   /* two's complement, little-endian limbs */
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
float cairn_sum32_round(const cairn_sum32 *s);   /* from the exact integer, never via a double */

/* Out-of-line slow path of add: term x (not yet added) into expansion k, exactly. */
void cairn_sum64_add_slow(cairn_sum64 *s, unsigned k, double x);
void cairn_sum32_add_slow(cairn_sum32 *s, unsigned k, double x);

/* Expansion (H, L) plus term X by two of Knuth's TwoSum steps, on doubles or on vectors
 * of doubles: A + B + E2 == H + L + X exactly, unless a sum overflowed, and then E2 is
 * NaN (an infinity or NaN anywhere makes E2 NaN). E2 is almost always 0.
 * Each line is six separately rounded operations: see STRICT FLOATING POINT above. */
#define CAIRN_SUM_TWO_STEP(T, H, L, X, A, B, E2)                                     \
    T A = (H) + (X), A##v_ = A - (H), A##e_ = ((H) - (A - A##v_)) + ((X) - A##v_);  \
    T B = (L) + A##e_, B##v_ = B - (L), E2 = ((L) - (B - B##v_)) + (A##e_ - B##v_)

/* The inline fast path: expansion k takes x, or, when the step is not clean (a leftover,
 * an infinity, a NaN, an overflow), stays unchanged and 1 says: take the slow path. */
static inline int cairn_sum__step(cairn_sum_state *st, unsigned k, double x) {
    CAIRN_SUM_TWO_STEP(double, st->hi[k], st->lo[k], x, a, b, e2);
    if (__builtin_expect(e2 != 0, 0))
        return 1;
    st->hi[k] = a;
    st->lo[k] = b;
    return 0;
}

/* Terms go to the expansions in turn, so consecutive adds do not wait on each other. */
static inline void cairn_sum64_add(cairn_sum64 *s, double x) {
    unsigned k = (unsigned)(s->st.count++ % CAIRN_SUM_LANES);
    if (cairn_sum__step(&s->st, k, x))
        cairn_sum64_add_slow(s, k, x);
}

static inline void cairn_sum32_add(cairn_sum32 *s, float x) {
    unsigned k = (unsigned)(s->st.count++ % CAIRN_SUM_LANES);
    if (cairn_sum__step(&s->st, k, (double)x))      /* the widening is exact */
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

/* Defines `static void NAME(void *, size_t, size_t, cairn_sumNN *)` that adds EXPR for
 * each index VAR of its block, with CTXVAR a CTXTYPE * to the caller's context. EXPR is
 * evaluated once per index, into a stack buffer of CAIRN_SUM_BUF terms that goes to
 * add_block when full: the vector kernel then does the adding, 2x to 3x faster than
 * cairn_sumNN_add one term at a time (bench_sum, n = 10^5: 1.4x to 2.8x the ordered
 * fold against 4.2x). 64 measured no slower than 256 or 1024 on our machine. */
#ifndef CAIRN_SUM_BUF
#define CAIRN_SUM_BUF 64
#endif
#define CAIRN_SUM__BLOCK(NAME, SUMT, T, ADD_BLOCK, CTXTYPE, CTXVAR, VAR, EXPR)          \
    static void NAME(void *cairn_ctx_, size_t cairn_b_, size_t cairn_e_, SUMT *cairn_acc_) { \
        CTXTYPE *CTXVAR = (CTXTYPE *)cairn_ctx_;                                     \
        T cairn_buf_[CAIRN_SUM_BUF];                                                 \
        size_t cairn_j_ = 0;                                                         \
        for (size_t VAR = cairn_b_; VAR < cairn_e_; VAR++) {                         \
            cairn_buf_[cairn_j_++] = (EXPR);                                         \
            if (cairn_j_ == CAIRN_SUM_BUF) {                                         \
                ADD_BLOCK(cairn_acc_, cairn_buf_, CAIRN_SUM_BUF);                    \
                cairn_j_ = 0;                                                        \
            }                                                                        \
        }                                                                            \
        ADD_BLOCK(cairn_acc_, cairn_buf_, cairn_j_);                                 \
        (void)CTXVAR;                                                                \
    }
#define CAIRN_SUM64_BLOCK(NAME, CTXTYPE, CTXVAR, VAR, EXPR) \
    CAIRN_SUM__BLOCK(NAME, cairn_sum64, double, cairn_sum64_add_block, CTXTYPE, CTXVAR, VAR, EXPR)
#define CAIRN_SUM32_BLOCK(NAME, CTXTYPE, CTXVAR, VAR, EXPR) \
    CAIRN_SUM__BLOCK(NAME, cairn_sum32, float, cairn_sum32_add_block, CTXTYPE, CTXVAR, VAR, EXPR)

#ifdef __cplusplus
}
#endif

#endif
