/* pool_harness.c: drives the host thread pool for tests/runtime/test_pool*.py and
 * tests/bench/bench_sum.sh.
 *
 *   pool_harness width                    print cairn_pool_width()
 *   pool_harness visit N GRAIN REPS       REPS regions over [0, N): every index once
 *   pool_harness nested N GRAIN           a region whose blocks start regions
 *   pool_harness concurrent T N REPS      T application threads starting regions at once
 *   pool_harness idle MS                  one region, then MS ms asleep: CPU time used
 *   pool_harness exit-inside              exit(0) from inside a block
 *   pool_harness fork N                   regions in a child after fork() (serial there)
 *   pool_harness cost REPS                ns per region: n = 0, n = 1, and one block per worker
 *
 * Checks print "FAIL: ..." and exit 1; success prints one "ok ..." line. Worker ids are
 * checked for uniqueness among concurrent block calls with one in-use flag per id. */
#include "cairn.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static atomic_int in_use[CAIRN_POOL_MAX_WIDTH];
static atomic_int seen[CAIRN_POOL_MAX_WIDTH];
static atomic_int failures;

static void fail(const char *what, unsigned long a, unsigned long b) {
    if (atomic_fetch_add(&failures, 1) < 5) fprintf(stdout, "FAIL: %s (%lu, %lu)\n", what, a, b);
}

static void enter(unsigned worker) {
    if (worker >= cairn_pool_width()) fail("worker id out of range", worker, cairn_pool_width());
    else if (atomic_exchange(&in_use[worker], 1))
        fail("worker id used by two concurrent calls", worker, 0);
    else atomic_store(&seen[worker], 1);
}

static void leave(unsigned worker) {
    if (worker < cairn_pool_width()) atomic_store(&in_use[worker], 0);
}

typedef struct visit_ctx {
    atomic_uchar *hits;
    size_t n;
} visit_ctx;

static void visit_block(void *ctx, size_t begin, size_t end, unsigned worker) {
    visit_ctx *v = ctx;
    enter(worker);
    if (begin >= end || end > v->n) fail("bad block", begin, end);
    for (size_t i = begin; i < end && i < v->n; i++)
        atomic_fetch_add_explicit(&v->hits[i], 1, memory_order_relaxed);
    leave(worker);
}

/* One region over [0, n); every index must be hit exactly once. */
static void one_region(size_t n, size_t grain, atomic_uchar *hits) {
    visit_ctx v = {hits, n};
    for (size_t i = 0; i < n; i++) atomic_store_explicit(&hits[i], 0, memory_order_relaxed);
    cairn_pool_run(n, grain, visit_block, &v);
    for (size_t i = 0; i < n; i++)
        if (atomic_load_explicit(&hits[i], memory_order_relaxed) != 1)
            fail("index not visited exactly once", i, hits[i]);
}

static atomic_uchar *hits_array(size_t n) {
    atomic_uchar *h = calloc(n ? n : 1, sizeof *h);
    if (!h) {
        fprintf(stderr, "pool_harness: out of memory\n");
        exit(1);
    }
    return h;
}

static int workers_seen(void) {
    int k = 0;
    for (int i = 0; i < CAIRN_POOL_MAX_WIDTH; i++) k += atomic_load(&seen[i]);
    return k;
}

static int cmd_visit(size_t n, size_t grain, long reps) {
    atomic_uchar *hits = hits_array(n);
    for (long r = 0; r < reps; r++) one_region(n, grain, hits);
    free(hits);
    printf("ok width=%u workers_seen=%d\n", cairn_pool_width(), workers_seen());
    return 0;
}

/* Nested: each outer block runs an inner region, which must run serially on the same
 * worker id over the whole inner range. */
typedef struct nest_ctx {
    size_t inner_n;
    atomic_long inner_total;
} nest_ctx;
typedef struct inner_ctx {
    unsigned outer_worker;
    size_t sum;
} inner_ctx;

static void inner_block(void *ctx, size_t begin, size_t end, unsigned worker) {
    inner_ctx *c = ctx;
    if (worker != c->outer_worker)
        fail("nested region ran on another worker", worker, c->outer_worker);
    c->sum += end - begin;
}

static void outer_block(void *ctx, size_t begin, size_t end, unsigned worker) {
    nest_ctx *c = ctx;
    enter(worker);
    for (size_t i = begin; i < end; i++) {
        inner_ctx in = {worker, 0};
        cairn_pool_run(c->inner_n, 1, inner_block, &in);
        if (in.sum != c->inner_n) fail("nested region missed indices", in.sum, c->inner_n);
        atomic_fetch_add(&c->inner_total, (long)in.sum);
    }
    leave(worker);
}

static int cmd_nested(size_t n, size_t grain) {
    nest_ctx c = {.inner_n = 37};
    atomic_init(&c.inner_total, 0);
    cairn_pool_run(n, grain, outer_block, &c);
    if ((size_t)atomic_load(&c.inner_total) != n * c.inner_n)
        fail("nested total", (unsigned long)atomic_load(&c.inner_total), n * c.inner_n);
    printf("ok width=%u workers_seen=%d\n", cairn_pool_width(), workers_seen());
    return 0;
}

typedef struct app_thread {
    size_t n;
    long reps;
} app_thread;

static void *app_main(void *arg) {
    app_thread *t = arg;
    atomic_uchar *hits = hits_array(t->n);
    for (long r = 0; r < t->reps; r++) one_region(t->n, 1 + (size_t)r % 7, hits);
    free(hits);
    return NULL;
}

static int cmd_concurrent(int threads, size_t n, long reps) {
    pthread_t tid[16];
    app_thread t = {n, reps};
    if (threads < 1 || threads > 16) {
        fprintf(stderr, "concurrent: 1..16 threads\n");
        return 2;
    }
    for (int i = 0; i < threads; i++) pthread_create(&tid[i], NULL, app_main, &t);
    for (int i = 0; i < threads; i++) pthread_join(tid[i], NULL);
    printf("ok width=%u workers_seen=%d\n", cairn_pool_width(), workers_seen());
    return 0;
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int cmd_idle(long ms) {
    atomic_uchar *hits = hits_array(1000);
    one_region(1000, 1, hits); /* wakes every worker */
    free(hits);
    double before = cpu_seconds();
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    printf("ok width=%u idle_cpu_ms=%.1f\n", cairn_pool_width(), (cpu_seconds() - before) * 1e3);
    return 0;
}

static void exit_block(void *ctx, size_t begin, size_t end, unsigned worker) {
    (void)ctx, (void)end, (void)worker;
    if (begin == 0) {
        fflush(stdout);
        exit(0);
    }
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void nothing(void *ctx, size_t begin, size_t end, unsigned worker) {
    (void)ctx, (void)begin, (void)end, (void)worker;
}

static double ns_per_region(size_t n, size_t grain, long reps) {
    cairn_pool_run(n, grain, nothing, NULL);
    double t0 = now_ns();
    for (long r = 0; r < reps; r++) cairn_pool_run(n, grain, nothing, NULL);
    return (now_ns() - t0) / reps;
}

static int cmd_cost(long reps) {
    unsigned w = cairn_pool_width();
    printf("ok width=%u empty_ns=%.1f one_ns=%.1f spread_ns=%.1f\n", w, ns_per_region(0, 0, reps),
           ns_per_region(1, 0, reps), ns_per_region(w, 1, reps));
    return 0;
}

static int cmd_fork(size_t n) {
    atomic_uchar *hits = hits_array(n);
    one_region(n, 1, hits);
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        one_region(n, 1, hits);
        _exit(atomic_load(&failures) ? 1 : 0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
        fail("child after fork", (unsigned long)pid, (unsigned long)status);
    one_region(n, 1, hits);
    free(hits);
    printf("ok width=%u\n", cairn_pool_width());
    return 0;
}

static long arg(char **argv, int i) { return strtol(argv[i], NULL, 10); }

int main(int argc, char **argv) {
    const char *cmd = argc > 1 ? argv[1] : "";
    int rc = 2;
    if (!strcmp(cmd, "width") && argc == 2) {
        printf("%u\n", cairn_pool_width());
        rc = 0;
    } else if (!strcmp(cmd, "visit") && argc == 5) {
        rc = cmd_visit((size_t)arg(argv, 2), (size_t)arg(argv, 3), arg(argv, 4));
    } else if (!strcmp(cmd, "nested") && argc == 4) {
        rc = cmd_nested((size_t)arg(argv, 2), (size_t)arg(argv, 3));
    } else if (!strcmp(cmd, "concurrent") && argc == 5) {
        rc = cmd_concurrent((int)arg(argv, 2), (size_t)arg(argv, 3), arg(argv, 4));
    } else if (!strcmp(cmd, "idle") && argc == 3) {
        rc = cmd_idle(arg(argv, 2));
    } else if (!strcmp(cmd, "exit-inside") && argc == 2) {
        cairn_pool_run(1000, 1, exit_block, NULL);
        rc = 1; /* not reached */
    } else if (!strcmp(cmd, "fork") && argc == 3) {
        rc = cmd_fork((size_t)arg(argv, 2));
    } else if (!strcmp(cmd, "cost") && argc == 3) {
        rc = cmd_cost(arg(argv, 2));
    } else {
        fprintf(stderr, "usage: pool_harness width | visit N GRAIN REPS | nested N GRAIN | "
                        "concurrent T N REPS | idle MS | exit-inside | fork N | cost REPS\n");
        return !strcmp(cmd, "--help") ? 0 : 2;
    }
    if (atomic_load(&failures)) return 1;
    return rc;
}
