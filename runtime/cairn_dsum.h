/* cairn_dsum.h: the exact float sum of a device `reduce + parallel` (docs/devices.md,
 * "The exact device sum"), one algorithm for a GPU and for its emulation on the host.
 *
 * The answer is the exact sum of the terms rounded once, with the special values of the
 * spec's table: the bits of the host's exact sum (runtime/cairn_sum.h), because the exact
 * sum is one number whatever adds it, and the one rounding is the host's own
 * (cairn_dsum*_round builds a cairn_sum state and calls cairn_sum*_round).
 *
 * How a launch of B blocks of T threads adds n terms:
 *  - thread g = b * T + t takes terms g, g + B*T, g + 2*B*T, ... (grid-stride, so a warp
 *    reads consecutive elements), widened to double exactly (an f32 term too), into one
 *    expansion (hi, lo) by two of Knuth's TwoSum steps, in registers, exactly as the
 *    host's expansions do. A step that is not clean (a leftover, an infinity, a NaN, an
 *    overflow) takes the slow path: specials become flags; a finite term's leftover (or,
 *    when the expansion would overflow, the term) goes into the block's integer.
 *  - the block's integer is a carry-save array of D signed 64-bit counters, counter k
 *    holding a multiple of 2^(32k) units (the unit: the least subnormal, 2^-1074 for f64,
 *    2^-149 for f32; D * 32 bits is the host accumulator's width, 2176 and 384). A finite
 *    double adds as at most three 32-bit pieces into three counters, with no carry to
 *    propagate, so a GPU's threads add into shared memory with atomics in any order. At
 *    the end each thread adds its hi and lo the same way.
 *  - the block then normalises its counters (each digit into [0, 2^32), the top one
 *    signed) into a record with its flags and term count; the records of all blocks are
 *    summed digit by digit (a second pass: one block on a GPU) and normalised again.
 *    Integers add exactly in any order, so neither the launch shape nor the schedule nor
 *    the GPU changes a bit.
 * A counter takes at most three pieces below 2^32 per term (and two per thread at the
 * end), so it cannot overflow while a block adds fewer than 2^30 terms: a launch gives
 * each block at most CAIRN_DSUM_BLOCK_TERMS terms, and a larger sum is cut into launches.
 *
 * Everything below is CAIRN_HD but the host's rounding and emulated runner (bottom), and
 * the emulated block (host C only).
 * STRICT FLOATING POINT is required as in cairn_sum.h: every + and - rounded on its own
 * (nvcc --fmad=false, -ffp-contract=off). */
#ifndef CAIRN_DSUM_H
#define CAIRN_DSUM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cairn_sum.h"
#include "cairn_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN__DS static inline CAIRN_HD

#define CAIRN_DSUM64_DIGITS    68 /* 32-bit digits of the f64 accumulator: 2176 bits */
#define CAIRN_DSUM32_DIGITS    12 /* f32: 384 bits */
#define CAIRN_DSUM_MAX_DIGITS  CAIRN_DSUM64_DIGITS
#define CAIRN_DSUM_BLOCK_TERMS ((uint64_t)1 << 30) /* the most terms one block adds */

/* Flags, as cairn_sum.h's, and one more: a term that is not -0.0 came. */
#define CAIRN_DSUM_F_NAN    CAIRN_SUM_F_NAN
#define CAIRN_DSUM_F_PINF   CAIRN_SUM_F_PINF
#define CAIRN_DSUM_F_NINF   CAIRN_SUM_F_NINF
#define CAIRN_DSUM_F_NONNEG 16u

/* One thread's share: the expansion, its flags and how many terms it took. */
typedef struct cairn_dsum_thread {
    double hi, lo;
    uint32_t flags;
    uint64_t count;
} cairn_dsum_thread;

/* A block's (or a whole launch's) sum: normalised digits (digit k in [0, 2^32) for k below
 * the top one, which is signed), flags and the number of terms. */
typedef struct cairn_dsum_record {
    int64_t dig[CAIRN_DSUM_MAX_DIGITS];
    uint32_t flags;
    uint64_t count;
} cairn_dsum_record;

CAIRN__DS void cairn_dsum_thread_init(cairn_dsum_thread *s) {
    s->hi = -0.0; /* stays -0.0 while every term is -0.0 (cairn_sum.h's rule) */
    s->lo = 0.0;
    s->flags = 0;
    s->count = 0;
}

/* The pieces of finite x (a whole number of units, 2^-1074 shifted up by `skip`, 925 for
 * f32): x == sum of piece[j] * 2^(32 * (*digit + j)) units, each |piece| < 2^32. Returns
 * how many pieces (0 for a zero). */
CAIRN__DS int cairn_dsum_pieces(double x, unsigned skip, unsigned *digit, int64_t piece[3]) {
    unsigned pos; /* of mant's lowest bit, in 2^-1074 steps */
    uint64_t mant = cairn_sum_unpack(x, &pos);
    if (mant == 0) return 0;
    if (pos < skip) { /* f32: the low bits below the unit are zeros */
        mant >>= skip - pos;
        pos = 0;
    } else {
        pos -= skip;
    }
    unsigned off = pos % 32;
    *digit = pos / 32;
    uint64_t lo = mant << off, hi = off ? mant >> (64 - off) : 0; /* mant * 2^off, 85 bits */
    int64_t sign = x < 0 ? -1 : 1;                                /* x is finite and not zero */
    piece[0] = sign * (int64_t)(lo & 0xffffffffu);
    piece[1] = sign * (int64_t)(lo >> 32);
    piece[2] = sign * (int64_t)hi;
    return 3;
}

/* Adds finite x into `digits` digits (plain adds: the emulation, or one thread's). */
CAIRN__DS void cairn_dsum_digits_add(int64_t *dig, int digits, unsigned skip, double x) {
    unsigned k;
    int64_t p[3];
    if (!cairn_dsum_pieces(x, skip, &k, p)) return;
    for (int j = 0; j < 3 && k + (unsigned)j < (unsigned)digits; j++) dig[k + j] += p[j];
}

/* One term into a thread's expansion; the slow path adds into dig plainly (a GPU's lanes
 * spell their own, with atomics on shared memory: cairn_dred_cuda.h). */
CAIRN__DS void cairn_dsum_take(cairn_dsum_thread *s, int64_t *dig, int digits, unsigned skip,
                               double x) {
    s->count++;
    CAIRN_SUM_TWO_STEP(double, s->hi, s->lo, x, a, b, e);
    if (e == 0) { /* clean: exact in hi + lo (an infinity or NaN makes e NaN) */
        s->hi = a;
        s->lo = b;
        return;
    }
    if (x != x) {
        s->flags |= CAIRN_DSUM_F_NAN | CAIRN_DSUM_F_NONNEG;
    } else if (x - x != 0) {
        s->flags |= (x > 0 ? CAIRN_DSUM_F_PINF : CAIRN_DSUM_F_NINF) | CAIRN_DSUM_F_NONNEG;
    } else {
        double add = x; /* the expansion would overflow: the term itself */
        if (a - a == 0 && b - b == 0 && e - e == 0) { /* finite: hi + lo + e is exact */
            s->hi = a;
            s->lo = b;
            add = e;
        }
        cairn_dsum_digits_add(dig, digits, skip, add);
        s->flags |= CAIRN_DSUM_F_NONNEG;
    }
}

/* A thread's expansion into the block's digits at the end (its flags into *flags). */
CAIRN__DS void cairn_dsum_thread_end(const cairn_dsum_thread *s, int64_t *dig, int digits,
                                     unsigned skip, uint32_t *flags) {
    uint64_t hibits;
    memcpy(&hibits, &s->hi, sizeof hibits);
    *flags |= s->flags | (hibits != 1ull << 63 ? CAIRN_DSUM_F_NONNEG : 0u);
    cairn_dsum_digits_add(dig, digits, skip, s->hi);
    cairn_dsum_digits_add(dig, digits, skip, s->lo);
}

/* Counters to normalised digits: each below the top in [0, 2^32), carries moved up. */
CAIRN__DS void cairn_dsum_normalise(int64_t *dig, int digits) {
    for (int k = 0; k + 1 < digits; k++) {
        int64_t carry = dig[k] >> 32; /* floor: an arithmetic shift */
        dig[k] -= carry * ((int64_t)1 << 32);
        dig[k + 1] += carry;
    }
}

/* dst += src, record by record (digit sums stay far from overflow for any number of
 * records below 2^30), then normalised. */
CAIRN__DS void cairn_dsum_merge(cairn_dsum_record *dst, const cairn_dsum_record *src, int digits) {
    for (int k = 0; k < digits; k++) dst->dig[k] += src->dig[k];
    dst->flags |= src->flags;
    dst->count += src->count;
    cairn_dsum_normalise(dst->dig, digits);
}

CAIRN__DS void cairn_dsum_record_init(cairn_dsum_record *r) { memset(r, 0, sizeof *r); }

/* The one rounding of a launch's record: the host's exact sum's (cairn_sum.h), from a
 * cairn_sum state holding the record's integer. */
double cairn_dsum64_round(const cairn_dsum_record *r);
float cairn_dsum32_round(const cairn_dsum_record *r);

/* The emulated launch: blocks of `threads` threads over n terms, run on the host pool one
 * block per task, each block's threads as a GPU's (grid-stride), then the records merged
 * and rounded. block(ctx, n, b, nblocks, threads, rec) adds block b's terms into rec. */
typedef void (*cairn_dsum_block_fn)(void *ctx, uint64_t n, uint64_t b, uint64_t nblocks,
                                    unsigned threads, cairn_dsum_record *rec);
double cairn_dsum64_emulate(uint64_t n, uint64_t blocks, unsigned threads,
                            cairn_dsum_block_fn block, void *ctx);
float cairn_dsum32_emulate(uint64_t n, uint64_t blocks, unsigned threads, cairn_dsum_block_fn block,
                           void *ctx);
/* The launch shape the emulation uses for n terms (that of cairn_dsum_shape on a GPU
 * with `sms` multiprocessors, 4 pool workers' worth when sms is 0), threads 256. */
uint64_t cairn_dsum_blocks(uint64_t n, unsigned threads, unsigned sms);

#if !defined(__CUDACC__)
/* The block function of an emulated launch for a term function TERM(ctx, k) (a double or
 * a float). Thread t of the block takes, row after row, term row + t (grid-stride: rows
 * G = blocks * threads apart). The block's rows go in chunks of CAIRN_DSUM_EMU_ROWS (their
 * terms stay in cache); in a chunk, each group of eight threads keeps its expansions in
 * two vector pairs across the chunk's rows, one vector step a row, checked once every
 * eight rows: when some step was not clean, the expansions go back to before those rows
 * and the rows' terms (kept as they were computed: a yield runs once) go again thread by
 * thread (cairn_dsum_take), in row order; so do the rows left over and a row's last
 * threads short of eight. Each thread meets its terms in the GPU's order. Compiled for SSE2 and
 * for AVX2, picked per call by the CPU, as cairn_sum.h's block functions are (the same
 * rounded operations either way). */
#define CAIRN_DSUM_EMU_ROWS 64
#define CAIRN_DSUM__TAKE(DIGITS, SKIP, T, X)                                                       \
    do {                                                                                           \
        cairn_dsum_thread_init(&cairn_th_);                                                        \
        cairn_th_.hi = cairn_hi_[T], cairn_th_.lo = cairn_lo_[T];                                  \
        cairn_dsum_take(&cairn_th_, cairn_rec_->dig, DIGITS, SKIP, X);                             \
        cairn_hi_[T] = cairn_th_.hi, cairn_lo_[T] = cairn_th_.lo;                                  \
        cairn_fl_ |= cairn_th_.flags;                                                              \
    } while (0)
#define CAIRN_DSUM__ONE(TERM, DIGITS, SKIP, T, K)                                                  \
    CAIRN_DSUM__TAKE(DIGITS, SKIP, T, (double)TERM(cairn_c_, K))
#define CAIRN_DSUM_BLOCK(NAME, TERM, DIGITS, SKIP)                                                 \
    static inline __attribute__((always_inline)) void NAME##_body(                                 \
        void *cairn_c_, uint64_t cairn_n_, uint64_t cairn_b_, uint64_t cairn_nb_,                  \
        unsigned cairn_t_, cairn_dsum_record *cairn_rec_) {                                        \
        double cairn_hi_[CAIRN_DSUM_EMU_THREADS], cairn_lo_[CAIRN_DSUM_EMU_THREADS];               \
        cairn_dsum_thread cairn_th_;                                                               \
        uint32_t cairn_fl_ = 0;                                                                    \
        uint64_t cairn_count_ = 0, cairn_grid_ = cairn_nb_ * cairn_t_;                             \
        for (unsigned t = 0; t < cairn_t_; t++) cairn_hi_[t] = -0.0, cairn_lo_[t] = 0.0;           \
        for (uint64_t r = cairn_b_ * cairn_t_; r < cairn_n_; r += cairn_grid_)                     \
            cairn_count_ += cairn_n_ - r < cairn_t_ ? cairn_n_ - r : cairn_t_;                     \
        for (uint64_t cairn_r0_ = cairn_b_ * cairn_t_; cairn_r0_ < cairn_n_;                       \
             cairn_r0_ += CAIRN_DSUM_EMU_ROWS * cairn_grid_) {                                     \
            for (unsigned t = 0; t < cairn_t_; t += 8) {                                           \
                cairn_sum__v4d z = {0, 0, 0, 0}, h0 = z, h1 = z, l0 = z, l1 = z;                   \
                int vec_ = t + 8 <= cairn_t_;                                                      \
                if (vec_) {                                                                        \
                    memcpy(&h0, cairn_hi_ + t, 32), memcpy(&h1, cairn_hi_ + t + 4, 32);            \
                    memcpy(&l0, cairn_lo_ + t, 32), memcpy(&l1, cairn_lo_ + t + 4, 32);            \
                }                                                                                  \
                unsigned q = 0;                                                                    \
                for (; vec_ && q + 8 <= CAIRN_DSUM_EMU_ROWS; q += 8) { /* 8 rows, one check */     \
                    uint64_t last = cairn_r0_ + (q + 7) * cairn_grid_;                             \
                    if (last >= cairn_n_ || cairn_n_ - last < t + 8) break;                        \
                    cairn_sum__v4d s0 = h0, s1 = h1, u0 = l0, u1 = l1, kept[16];                   \
                    cairn_sum__v4l bad = {0, 0, 0, 0};                                             \
                    for (unsigned p = q; p < q + 8; p++) {                                         \
                        uint64_t row = cairn_r0_ + p * cairn_grid_ + t;                            \
                        cairn_sum__v4d x0 = {TERM(cairn_c_, row), TERM(cairn_c_, row + 1),         \
                                             TERM(cairn_c_, row + 2), TERM(cairn_c_, row + 3)};    \
                        cairn_sum__v4d x1 = {TERM(cairn_c_, row + 4), TERM(cairn_c_, row + 5),     \
                                             TERM(cairn_c_, row + 6), TERM(cairn_c_, row + 7)};    \
                        kept[2 * (p - q)] = x0, kept[2 * (p - q) + 1] = x1;                        \
                        CAIRN_SUM_TWO_STEP(cairn_sum__v4d, h0, l0, x0, a0, b0, e0);                \
                        CAIRN_SUM_TWO_STEP(cairn_sum__v4d, h1, l1, x1, a1, b1, e1);                \
                        h0 = a0, h1 = a1, l0 = b0, l1 = b1;                                        \
                        bad |= (e0 != z) | (e1 != z);                                              \
                    }                                                                              \
                    if (!(bad[0] | bad[1] | bad[2] | bad[3])) continue;                            \
                    memcpy(cairn_hi_ + t, &s0, 32), memcpy(cairn_hi_ + t + 4, &s1, 32);            \
                    memcpy(cairn_lo_ + t, &u0, 32), memcpy(cairn_lo_ + t + 4, &u1, 32);            \
                    for (unsigned p = 0; p < 8; p++) /* again, the slow way, in row order */       \
                        for (unsigned j = 0; j < 8; j++)                                           \
                            CAIRN_DSUM__TAKE(DIGITS, SKIP, t + j, kept[2 * p + j / 4][j % 4]);     \
                    memcpy(&h0, cairn_hi_ + t, 32), memcpy(&h1, cairn_hi_ + t + 4, 32);            \
                    memcpy(&l0, cairn_lo_ + t, 32), memcpy(&l1, cairn_lo_ + t + 4, 32);            \
                }                                                                                  \
                if (vec_) { /* the rows left, thread by thread */                                  \
                    memcpy(cairn_hi_ + t, &h0, 32), memcpy(cairn_hi_ + t + 4, &h1, 32);            \
                    memcpy(cairn_lo_ + t, &l0, 32), memcpy(cairn_lo_ + t + 4, &l1, 32);            \
                }                                                                                  \
                for (; q < CAIRN_DSUM_EMU_ROWS; q++) {                                             \
                    uint64_t row = cairn_r0_ + q * cairn_grid_;                                    \
                    if (row >= cairn_n_) break;                                                    \
                    uint64_t m = cairn_n_ - row < cairn_t_ ? cairn_n_ - row : cairn_t_;            \
                    for (unsigned j = t; j < t + 8 && j < m; j++)                                  \
                        CAIRN_DSUM__ONE(TERM, DIGITS, SKIP, j, row + j);                           \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        for (unsigned t = 0; t < cairn_t_; t++) {                                                  \
            cairn_dsum_thread_init(&cairn_th_);                                                    \
            cairn_th_.hi = cairn_hi_[t], cairn_th_.lo = cairn_lo_[t];                              \
            cairn_dsum_thread_end(&cairn_th_, cairn_rec_->dig, DIGITS, SKIP, &cairn_fl_);          \
        }                                                                                          \
        cairn_dsum_normalise(cairn_rec_->dig, DIGITS);                                             \
        cairn_rec_->flags |= cairn_fl_;                                                            \
        cairn_rec_->count += cairn_count_;                                                         \
    }                                                                                              \
    static CAIRN_SUM__AVX2 void NAME##_avx2(void *c, uint64_t n, uint64_t b, uint64_t nb,          \
                                            unsigned t, cairn_dsum_record *rec) {                  \
        NAME##_body(c, n, b, nb, t, rec);                                                          \
    }                                                                                              \
    static void NAME##_sse2(void *c, uint64_t n, uint64_t b, uint64_t nb, unsigned t,              \
                            cairn_dsum_record *rec) {                                              \
        NAME##_body(c, n, b, nb, t, rec);                                                          \
    }                                                                                              \
    static void NAME(void *c, uint64_t n, uint64_t b, uint64_t nb, unsigned t,                     \
                     cairn_dsum_record *rec) {                                                     \
        CAIRN_SUM__PICK(NAME, (c, n, b, nb, t, rec));                                              \
    }
#define CAIRN_DSUM64_BLOCK(NAME, TERM) CAIRN_DSUM_BLOCK(NAME, TERM, CAIRN_DSUM64_DIGITS, 0)
#define CAIRN_DSUM32_BLOCK(NAME, TERM) CAIRN_DSUM_BLOCK(NAME, TERM, CAIRN_DSUM32_DIGITS, 925)
#define CAIRN_DSUM_EMU_THREADS         1024 /* the most threads an emulated block has */
#endif                                      /* !__CUDACC__ */

#ifdef __cplusplus
}
#endif

#endif
