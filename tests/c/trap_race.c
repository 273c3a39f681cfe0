/* trap_race.c: many threads trap at the same moment; the process must print one trap
 * line (docs/devices.md, "Traps": an emulated region whose lanes fail at once reports
 * one trap). Usage: trap_race THREADS. Each thread waits at a barrier, then calls
 * cairn_trap_at with its own reason; the test reads stderr. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cairn_trap.h"

static pthread_barrier_t trap_race_start;

static void *trap_race_thread(void *arg) {
    static const char *reasons[] = {"integer overflow", "index out of bounds"};
    int id = (int)(size_t)arg;
    pthread_barrier_wait(&trap_race_start);
    cairn_loc at = {"trap_race.cairn", id + 1, 7};
    cairn_trap_at(reasons[id % 2], at);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 8;
    if (n < 1 || n > 256) return 2;
    pthread_t threads[256];
    pthread_barrier_init(&trap_race_start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        if (pthread_create(&threads[i], NULL, trap_race_thread, (void *)(size_t)i) != 0) return 2;
    for (int i = 0; i < n; i++) pthread_join(threads[i], NULL);
    return 0; /* unreachable: every thread traps */
}
