/* cairn_pool.c: the host thread pool behind `parallel` regions and pooled reductions
 * (see cairn_pool.h and docs/concurrency.md).
 *
 * Shape: one process-wide pool, started on first use, of width W = CAIRN_THREADS (or the
 * CPUs this process may run on). W - 1 worker threads plus the thread that calls
 * cairn_pool_run, which works as worker 0. A region is published under the pool mutex
 * by bumping a generation number; workers claim blocks with one atomic counter, so no
 * region allocates and blocks go to whoever is free. Threads wait for work, and the
 * caller for the end of a region, by spinning only briefly (this may be a 2-core
 * machine shared with other processes) and then sleeping on a condition variable.
 * Top-level regions from different application threads take turns (region_lock), so
 * the worker ids of concurrent block calls are always distinct; a region started from
 * inside a block runs serially on that block's worker. At exit the workers are woken,
 * told to stop and joined. */
#include "cairn_pool.h"
#include "cairn_trap.h" /* CAIRN_EXIT_CANNOT_RUN */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_MAX_WIDTH CAIRN_POOL_MAX_WIDTH
/* Pause instructions to spin before sleeping: at most about 50 us on current x86 (a
 * pause is 10-50 ns), enough to catch back-to-back regions without taking a core away
 * from anyone for long. Measured on a shared 2-core machine, 400 to 4000 made no
 * difference that rose above the noise of the other tenants. */
#ifndef POOL_SPIN
#define POOL_SPIN 1000
#endif
/* grain == 0: aim at this many blocks per thread (load balance), but at least this
 * many indices per block (a block call costs an indirect call and an atomic). */
#define POOL_BLOCKS_PER_THREAD 4
#define POOL_MIN_GRAIN         64

typedef struct pool_region {
    cairn_task_fn fn;
    void *ctx;
    size_t n, grain, nblocks;
} pool_region;

static struct {
    pthread_once_t once;
    unsigned width;
    unsigned nthreads; /* worker threads actually running (width - 1) */
    pthread_t threads[POOL_MAX_WIDTH];
    pthread_mutex_t region_lock; /* one top-level region at a time */
    pthread_mutex_t mu;          /* guards the sleeps below */
    pthread_cond_t work_cv, done_cv;
    _Atomic unsigned long generation; /* bumped per region; workers wait for a change */
    atomic_bool stopping;
    pool_region region; /* written before generation is bumped */
    atomic_size_t next_block;
    atomic_uint busy; /* workers still inside the current region */
} pool = {.once = PTHREAD_ONCE_INIT,
          .region_lock = PTHREAD_MUTEX_INITIALIZER,
          .mu = PTHREAD_MUTEX_INITIALIZER,
          .work_cv = PTHREAD_COND_INITIALIZER,
          .done_cv = PTHREAD_COND_INITIALIZER};

/* 0 outside any block; worker id + 1 while this thread runs a block. */
static _Thread_local unsigned current_worker_plus1;

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* CAIRN_THREADS: a whole number 1..64. Anything else is refused loudly (exit 2) rather
 * than guessed at: a silently clamped width would change timings, not results, and a
 * typo deserves to be seen. Unset or empty means the CPUs this process may use. */
static unsigned width_from_env(void) {
    const char *s = getenv("CAIRN_THREADS");
    if (s && *s) {
        char *end = NULL;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || *end != '\0' || v < 1 || v > POOL_MAX_WIDTH) {
            fprintf(stderr,
                    "cairn: error[E-THREADS]: CAIRN_THREADS='%s' is not a thread count\n"
                    "  help: set CAIRN_THREADS to a whole number from 1 to %d, or unset it "
                    "to use every CPU\n",
                    s, POOL_MAX_WIDTH);
            exit(CAIRN_EXIT_CANNOT_RUN);
        }
        return (unsigned)v;
    }
    long cpus = 0;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
#endif
    if (cpus < 1) cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    return cpus > POOL_MAX_WIDTH ? POOL_MAX_WIDTH : (unsigned)cpus;
}

/* Claim and run blocks of the current region until none are left. */
static void run_blocks(const pool_region *r, unsigned worker) {
    current_worker_plus1 = worker + 1;
    for (;;) {
        size_t b = atomic_fetch_add_explicit(&pool.next_block, 1, memory_order_relaxed);
        if (b >= r->nblocks) break;
        size_t begin = b * r->grain;
        size_t end = r->n - begin < r->grain ? r->n : begin + r->grain;
        r->fn(r->ctx, begin, end, worker);
    }
    current_worker_plus1 = 0;
}

/* Spin a little, then sleep, until the generation differs from `seen`. */
static unsigned long wait_for_work(unsigned long seen) {
    for (int i = 0; i < POOL_SPIN; i++) {
        unsigned long g = atomic_load_explicit(&pool.generation, memory_order_acquire);
        if (g != seen) return g;
        cpu_relax();
    }
    pthread_mutex_lock(&pool.mu);
    unsigned long g;
    while ((g = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen)
        pthread_cond_wait(&pool.work_cv, &pool.mu);
    pthread_mutex_unlock(&pool.mu);
    return g;
}

static void *worker_main(void *arg) {
    unsigned worker = (unsigned)(size_t)arg;
    unsigned long seen = 0;
    for (;;) {
        seen = wait_for_work(seen);
        if (atomic_load_explicit(&pool.stopping, memory_order_acquire)) return NULL;
        pool_region r = pool.region; /* stable until every worker has left the region */
        run_blocks(&r, worker);
        if (atomic_fetch_sub_explicit(&pool.busy, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&pool.mu);
            pthread_cond_signal(&pool.done_cv);
            pthread_mutex_unlock(&pool.mu);
        }
    }
}

static void publish_generation(void) {
    pthread_mutex_lock(&pool.mu);
    atomic_fetch_add_explicit(&pool.generation, 1, memory_order_acq_rel);
    pthread_cond_broadcast(&pool.work_cv);
    pthread_mutex_unlock(&pool.mu);
}

static void pool_shutdown(void) {
    if (current_worker_plus1) /* exit() called from inside a block: cannot join ourselves */
        return;
    pthread_mutex_lock(&pool.region_lock); /* let a running region finish first */
    atomic_store_explicit(&pool.stopping, 1, memory_order_release);
    publish_generation();
    for (unsigned i = 0; i < pool.nthreads; i++) pthread_join(pool.threads[i], NULL);
    pool.nthreads = 0;
    pool.width = 1; /* anything after this (a later atexit) runs serially */
    pthread_mutex_unlock(&pool.region_lock);
}

/* In a child after fork() only the forking thread exists: the child's pool runs every
 * region serially on the calling thread, with fresh locks (the parent's may have been
 * held by another thread at the fork). */
static void pool_after_fork_in_child(void) {
    pthread_mutex_init(&pool.region_lock, NULL);
    pthread_mutex_init(&pool.mu, NULL);
    pthread_cond_init(&pool.work_cv, NULL);
    pthread_cond_init(&pool.done_cv, NULL);
    pool.nthreads = 0;
    current_worker_plus1 = 0;
}

static void pool_start(void) {
    unsigned want = width_from_env();
    for (unsigned w = 1; w < want; w++) {
        if (pthread_create(&pool.threads[w - 1], NULL, worker_main, (void *)(size_t)w) != 0)
            break; /* fewer threads than asked: the pool is just narrower */
        pool.nthreads = w;
    }
    pool.width = pool.nthreads + 1;
    atexit(pool_shutdown);
    pthread_atfork(NULL, NULL, pool_after_fork_in_child);
}

unsigned cairn_pool_width(void) {
    pthread_once(&pool.once, pool_start);
    return pool.width;
}

static size_t pick_grain(size_t n, size_t grain, unsigned width) {
    if (grain) return grain;
    size_t want = n / ((size_t)width * POOL_BLOCKS_PER_THREAD);
    return want < POOL_MIN_GRAIN ? POOL_MIN_GRAIN : want;
}

void cairn_pool_run(size_t n, size_t grain, cairn_task_fn fn, void *ctx) {
    if (n == 0) return;
    if (current_worker_plus1) { /* nested: serially, on the worker that asked */
        fn(ctx, 0, n, current_worker_plus1 - 1);
        return;
    }
    unsigned width = cairn_pool_width();
    grain = pick_grain(n, grain, width);
    size_t nblocks = n / grain + (n % grain != 0);
    pthread_mutex_lock(&pool.region_lock);
    if (nblocks == 1 || pool.nthreads == 0) { /* nothing to share: no wake-up at all */
        current_worker_plus1 = 1;
        fn(ctx, 0, n, 0);
        current_worker_plus1 = 0;
        pthread_mutex_unlock(&pool.region_lock);
        return;
    }
    pool.region = (pool_region){fn, ctx, n, grain, nblocks};
    atomic_store_explicit(&pool.next_block, 0, memory_order_relaxed);
    atomic_store_explicit(&pool.busy, pool.nthreads, memory_order_relaxed);
    publish_generation();
    pool_region r = pool.region;
    run_blocks(&r, 0);
    for (int i = 0; i < POOL_SPIN && atomic_load_explicit(&pool.busy, memory_order_acquire); i++)
        cpu_relax();
    if (atomic_load_explicit(&pool.busy, memory_order_acquire)) {
        pthread_mutex_lock(&pool.mu);
        while (atomic_load_explicit(&pool.busy, memory_order_acquire))
            pthread_cond_wait(&pool.done_cv, &pool.mu);
        pthread_mutex_unlock(&pool.mu);
    }
    pthread_mutex_unlock(&pool.region_lock);
}
