/* cairn_dsum.c: the host's half of the exact device sum (see cairn_dsum.h): the one
 * rounding of a launch's record, through the host exact sum's own (cairn_sum.c), and the
 * emulated launch, which runs a GPU's blocks on the host pool. */
#include "cairn_dsum.h"
#include "cairn_pool.h"

#include <stdlib.h>

/* The record as a cairn_sum state: its integer (the digits, two's complement in 64-bit
 * limbs), flags and count; expansion 0's hi is -0.0 while every term was -0.0 (cairn_sum.h's
 * rule for the sign of a zero), +0.0 otherwise. */
static void to_state(const cairn_dsum_record *r, int digits, cairn_sum_state *st, uint64_t *acc) {
    for (int j = 0; j < digits / 2; j++)
        acc[j] = (uint64_t)(uint32_t)r->dig[2 * j] | (uint64_t)(uint32_t)r->dig[2 * j + 1] << 32;
    st->count = r->count;
    st->flags |=
        CAIRN_SUM_F_ACC | (r->flags & (CAIRN_SUM_F_NAN | CAIRN_SUM_F_PINF | CAIRN_SUM_F_NINF));
    if (r->flags & CAIRN_DSUM_F_NONNEG) st->hi[0] = 0.0;
}

double cairn_dsum64_round(const cairn_dsum_record *r) {
    cairn_sum64 s;
    cairn_sum64_init(&s);
    to_state(r, CAIRN_DSUM64_DIGITS, &s.st, s.acc);
    return cairn_sum64_round(&s);
}

float cairn_dsum32_round(const cairn_dsum_record *r) {
    cairn_sum32 s;
    cairn_sum32_init(&s);
    to_state(r, CAIRN_DSUM32_DIGITS, &s.st, s.acc);
    return cairn_sum32_round(&s);
}

uint64_t cairn_dsum_blocks(uint64_t n, unsigned threads, unsigned sms) {
    uint64_t want = sms ? (uint64_t)sms * 8 : 4 * (uint64_t)cairn_pool_width();
    uint64_t rows = n / threads + (n % threads != 0);
    uint64_t least = n / CAIRN_DSUM_BLOCK_TERMS + 1; /* each block under 2^30 terms */
    uint64_t b = rows < want ? rows : want;
    return b < least ? least : b ? b : 1;
}

typedef struct dsum_job {
    cairn_dsum_block_fn block;
    void *ctx;
    uint64_t n, nblocks;
    unsigned threads;
    cairn_dsum_record *recs;
} dsum_job;

static void dsum_task(void *ctx, size_t begin, size_t end, unsigned worker) {
    dsum_job *job = ctx;
    (void)worker;
    for (size_t b = begin; b < end; b++) {
        cairn_dsum_record_init(&job->recs[b]);
        job->block(job->ctx, job->n, b, job->nblocks, job->threads, &job->recs[b]);
    }
}

/* Runs the blocks, then merges their records in block order (integers: any order gives
 * the same) into one, as a GPU's second pass does. */
static void emulate(uint64_t n, uint64_t blocks, unsigned threads, cairn_dsum_block_fn block,
                    void *ctx, int digits, cairn_dsum_record *all) {
    if (threads == 0 || threads > CAIRN_DSUM_EMU_THREADS || blocks == 0 || blocks > 0x7fffffff ||
        n / blocks >= CAIRN_DSUM_BLOCK_TERMS)
        cairn_trap("exact device sum: a launch shape out of range (internal error)");
    cairn_dsum_record *recs = malloc(sizeof *recs * (size_t)blocks);
    if (!recs) cairn_trap("out of memory for an exact device sum");
    dsum_job job = {block, ctx, n, blocks, threads, recs};
    cairn_pool_run((size_t)blocks, 1, dsum_task, &job);
    cairn_dsum_record_init(all);
    for (uint64_t b = 0; b < blocks; b++) cairn_dsum_merge(all, &recs[b], digits);
    free(recs);
}

double cairn_dsum64_emulate(uint64_t n, uint64_t blocks, unsigned threads,
                            cairn_dsum_block_fn block, void *ctx) {
    cairn_dsum_record all;
    emulate(n, blocks, threads, block, ctx, CAIRN_DSUM64_DIGITS, &all);
    return cairn_dsum64_round(&all);
}

float cairn_dsum32_emulate(uint64_t n, uint64_t blocks, unsigned threads, cairn_dsum_block_fn block,
                           void *ctx) {
    cairn_dsum_record all;
    emulate(n, blocks, threads, block, ctx, CAIRN_DSUM32_DIGITS, &all);
    return cairn_dsum32_round(&all);
}
