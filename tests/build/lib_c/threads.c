/* threads.c: many threads call kern.cairn's library at once. Each thread traps with an
 * index of its own (kern_pick with k = 1000 + thread), traps in pool lanes (kern_stride)
 * and calls entries that succeed in between; after every call it checks the status, its
 * own last error and the result. A trap on one thread must never show on another, nor
 * end the process, nor leave a lock held (the calls would hang). Prints "ok N calls". */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libkern.h"

#define THREADS 8
#define ROUNDS  300

static int failures;

static void fail(int t, int round, const char *what) {
    fprintf(stderr, "thread %d round %d: %s (last error: [%s])\n", t, round, what,
            kern_last_error()->message);
    __atomic_add_fetch(&failures, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg) {
    int t = (int)(size_t)arg;
    int32_t v[64];
    for (int i = 0; i < 64; i++) v[i] = i * (t + 1);
    float s[256], out[256];
    for (int i = 0; i < 256; i++) s[i] = (float)i;
    double x[3] = {1e16, (double)t, -1e16}, ones[3] = {1, 1, 1};
    char want[64];
    snprintf(want, sizeof want, "index %d out of bounds for extent 64", 1000 + t);
    for (int round = 0; round < ROUNDS; round++) {
        int32_t got = 0;
        if (kern_pick(64, v, 64, (uint64_t)(1000 + t), &got) != 1)
            fail(t, round, "pick did not trap");
        else if (strcmp(kern_last_error()->message, want) != 0)
            fail(t, round, "another thread's trap");
        if (kern_pick(64, v, 64, 5, &got) != 0 || got != 5 * (t + 1)) fail(t, round, "pick");
        if (kern_last_error()->message[0]) fail(t, round, "a success kept the last error");
        if (round % 10 == 0 && kern_stride(256, s, 256, out, 256) != 1) fail(t, round, "stride");
        else if (round % 10 == 0 && !strstr(kern_last_error()->message, "for extent 256"))
            fail(t, round, "stride's trap");
        double d = 0;
        if (kern_dot(3, x, 3, ones, 3, &d) != 0 || d != (double)t) fail(t, round, "dot");
    }
    return NULL;
}

int main(void) {
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    if (failures) return 1;
    printf("ok %d calls\n", THREADS * ROUNDS * 4);
    return 0;
}
