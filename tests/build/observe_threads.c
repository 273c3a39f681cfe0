/* observe_threads.c: drives cairn_observe directly for tests/build/test_observe.py.
 * Thread t (of 8) observes a view of t+1 f64 values t*10+j, 50 times, plus one f32
 * scalar and one empty view from the main thread. */
#include "cairn.h"

#include <pthread.h>
#include <stdio.h>

enum { THREADS = 8, REPEATS = 50 };

static void *observer(void *arg) {
    int t = (int)(long)arg;
    double values[THREADS];
    for (int j = 0; j <= t; j++) values[j] = t * 10.0 + j;
    char name[32];
    snprintf(name, sizeof name, "thread%d", t);
    for (int r = 0; r < REPEATS; r++) cairn_observe(name, "f64", values, (size_t)t + 1, 8);
    return NULL;
}

int main(void) {
    float scalar = 1.5f;
    cairn_observe("scalar", "f32", &scalar, 1, sizeof scalar);
    cairn_observe("empty", "f64", NULL, 0, 8);
    pthread_t threads[THREADS];
    for (long t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, observer, (void *)t);
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    return 0;
}
