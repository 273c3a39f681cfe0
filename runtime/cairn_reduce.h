/* cairn_reduce.h: the rule of a pooled or device integer product, `reduce * parallel`
 * (docs/concurrency.md, "Pooled integer reductions").
 *
 * The language's value of an integer product is the index-order fold: acc = 1, then
 * acc = acc * x[i] for i = 0, 1, ..., each multiplication checked, so it traps exactly
 * when some running product in index order does not fit. A pool (or a device) that
 * multiplied per worker, each partial checked, would trap by schedule instead: a
 * worker's partial may overflow where the running product never does, because a zero
 * comes first in index order (0 * anything stays 0) or a later factor's sign brings a
 * product of magnitude 2^(bits-1) back into range. Here every block of indices keeps a
 * summary that no schedule changes, the summaries join in index order, and the whole
 * range's summary says exactly what the fold would do.
 *
 * Why a summary is enough. Until the first zero factor, running products never shrink
 * in magnitude (every factor has magnitude 1 or more), so in index order:
 *  - unsigned: the fold traps iff the product of the factors before the first zero
 *    exceeds the type's maximum;
 *  - signed (M = 2^(bits-1), range [-M, M-1]): it traps iff that product's magnitude
 *    exceeds M, or reaches M with a positive sign at some step. Once the magnitude is M,
 *    only factors 1 and -1 follow before the end or the zero, and the value alternates
 *    between -M (in range) and M (a trap) with each -1. So with final magnitude M it traps
 *    iff the final value is M, or a -1 comes after the last factor whose magnitude is not
 *    1 (every value from that factor on has magnitude M).
 * A summary holds that product's magnitude (saturated above 2^64, where every type has
 * overflowed), its sign, whether a zero came, and whether a -1 came after the last
 * factor whose magnitude is not 1. Two summaries join (left, then right) into the
 * summary of the concatenation, so blocks can be combined in index order by any tree.
 * After the first zero the fold's value is 0 and no later step can trap, so factors
 * after a zero are ignored (each term's own guards still run where it is computed).
 *
 * Everything below is CAIRN_HD: the host pool, its emulation of device work and a CUDA
 * build's device tree share it. tests/runtime/test_reduce_product.py holds it to a
 * Python model of the index-order fold at pool widths 1, 2, 7 and 16. */
#ifndef CAIRN_REDUCE_H
#define CAIRN_REDUCE_H

#include <stddef.h>
#include <stdint.h>

#include "cairn_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN__RD static inline CAIRN_HD

/* The summary of a run of factors (see above). */
typedef struct cairn_prod {
    unsigned __int128 mag; /* |product| of the factors before the first zero, <= 2^65 */
    uint8_t neg;           /* its sign */
    uint8_t zero;          /* a zero factor came */
    uint8_t neg1_tail;     /* a -1 came after the last factor of magnitude other than 1 */
} cairn_prod;

/* Past every type's range (a magnitude above 2^64): where mag saturates. */
#define CAIRN_PROD_HUGE ((unsigned __int128)1 << 65)

CAIRN__RD cairn_prod cairn_prod_one(void) {
    cairn_prod p = {1, 0, 0, 0};
    return p;
}

CAIRN__RD unsigned __int128 cairn__prod_mul(unsigned __int128 a, unsigned __int128 b) {
    if (a == 0 || b == 0) return 0;
    if (a >= CAIRN_PROD_HUGE || b >= CAIRN_PROD_HUGE || a > CAIRN_PROD_HUGE / b)
        return CAIRN_PROD_HUGE;
    return a * b;
}

/* The summary of `left` followed by `right`. */
CAIRN__RD cairn_prod cairn_prod_join(cairn_prod left, cairn_prod right) {
    if (left.zero) return left;
    cairn_prod r;
    r.mag = cairn__prod_mul(left.mag, right.mag);
    r.neg = left.neg ^ right.neg;
    r.zero = right.zero;
    /* right's factors all of magnitude 1 (or none): the tail runs on from left's */
    r.neg1_tail = right.mag == 1 ? (uint8_t)(left.neg1_tail | right.neg1_tail) : right.neg1_tail;
    return r;
}

/* One more factor: a signed one, or an unsigned one (u64 values above INT64_MAX too). */
CAIRN__RD void cairn_prod_take_i(cairn_prod *p, int64_t v) {
    if (p->zero) return;
    if (v == 0) {
        p->zero = 1;
        return;
    }
    unsigned __int128 m = v < 0 ? (unsigned __int128)(-(__int128)v) : (unsigned __int128)v;
    p->mag = cairn__prod_mul(p->mag, m);
    p->neg ^= (uint8_t)(v < 0);
    p->neg1_tail = m != 1 ? 0 : (uint8_t)(p->neg1_tail | (v < 0));
}

CAIRN__RD void cairn_prod_take_u(cairn_prod *p, uint64_t v) {
    if (p->zero) return;
    if (v == 0) {
        p->zero = 1;
        return;
    }
    p->mag = cairn__prod_mul(p->mag, v);
    if (v != 1) p->neg1_tail = 0;
}

/* Would the index-order fold of these factors trap, in a type of `bits` bits? */
CAIRN__RD int cairn_prod_traps(const cairn_prod *p, int bits, int is_signed) {
    unsigned __int128 m = (unsigned __int128)1 << (bits - 1);
    if (!is_signed) return p->mag > 2 * m - 1;
    if (!p->neg) return p->mag > m - 1;
    return p->mag > m || (p->mag == m && p->neg1_tail);
}

/* The fold's value (0 after a zero), trapping with "integer overflow" at `at` where the
 * fold would. */
CAIRN__RD int64_t cairn_prod_value_i(const cairn_prod *p, int bits, cairn_loc at) {
    if (cairn_prod_traps(p, bits, 1)) cairn_trap_at("integer overflow", at);
    if (p->zero) return 0;
    return p->neg ? (int64_t)(-(__int128)p->mag) : (int64_t)p->mag;
}

CAIRN__RD uint64_t cairn_prod_value_u(const cairn_prod *p, int bits, cairn_loc at) {
    if (cairn_prod_traps(p, bits, 0)) cairn_trap_at("integer overflow", at);
    return p->zero ? 0 : (uint64_t)p->mag;
}

#ifndef __CUDA_ARCH__
/* A pooled product: the range is cut into at most CAIRN_PROD_BLOCKS blocks of `grain`
 * indices (cairn_prod_start picks them); the lane function for block [b, e) multiplies
 * its factors into parts[b / grain] (cairn_prod_part), and cairn_prod_finish joins the
 * parts in index order. The parts live in the caller's job, on its stack: no allocation.
 *
 *     cairn_prod_job job;
 *     cairn_prod_start(&job, n);
 *     cairn_pool_run(n, job.grain, fn, ctx);   // fn: cairn_prod_take_i(cairn_prod_part(..))
 *     int64_t v = cairn_prod_value_i(&(cairn_prod){cairn_prod_finish(&job)}, 32, at); */
#define CAIRN_PROD_BLOCKS 256

typedef struct cairn_prod_job {
    cairn_prod parts[CAIRN_PROD_BLOCKS];
    size_t grain, nblocks;
} cairn_prod_job;

/* Blocks for n factors: at least 64 factors each (a block's call costs little next to
 * its work), at most CAIRN_PROD_BLOCKS of them; how the pool runs them changes nothing. */
static inline void cairn_prod_start(cairn_prod_job *job, size_t n) {
    size_t g = n / CAIRN_PROD_BLOCKS + (n % CAIRN_PROD_BLOCKS != 0);
    job->grain = g < 64 ? 64 : g;
    job->nblocks = n / job->grain + (n % job->grain != 0);
    for (size_t k = 0; k < job->nblocks; k++) job->parts[k] = cairn_prod_one();
}

static inline cairn_prod *cairn_prod_part(cairn_prod_job *job, size_t begin) {
    return &job->parts[begin / job->grain];
}

static inline cairn_prod cairn_prod_finish(const cairn_prod_job *job) {
    cairn_prod all = cairn_prod_one();
    for (size_t k = 0; k < job->nblocks; k++) all = cairn_prod_join(all, job->parts[k]);
    return all;
}
#endif

#ifdef __cplusplus
}
#endif

#endif
