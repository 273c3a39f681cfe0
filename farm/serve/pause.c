/* pause.c: named points where a test build of the coordinator (tbin/cairn-farm-pauses,
 * built with FARM_TEST_PAUSES; never bin/cairn-farm) waits for its test, so that a test
 * drives an interleaving of threads instead of counting on one happening. With
 * CAIRN_FARM_PAUSES=DIR, a thread reaching point NAME while the file DIR/NAME exists
 * (the gate, closed) writes DIR/NAME.reached.N (N counts arrivals, from 1) and waits
 * until the test removes DIR/NAME; after PAUSE_GIVE_UP_S it says so and goes on, so a
 * test that forgets a gate fails by its checks instead of hanging the coordinator. */
#include "serve/serve_internal.h"

#ifdef FARM_TEST_PAUSES

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/util.h"

#define PAUSE_GIVE_UP_S 120.0

void pause_point(const char *name) {
    static unsigned long arrivals;
    const char *dir = getenv("CAIRN_FARM_PAUSES");
    char gate[1024], reached[1100];
    if (!dir || snprintf(gate, sizeof gate, "%s/%s", dir, name) >= (int)sizeof gate) return;
    if (access(gate, F_OK) != 0) return; /* the gate is open */
    snprintf(reached, sizeof reached, "%s.reached.%lu", gate,
             __atomic_add_fetch(&arrivals, 1, __ATOMIC_SEQ_CST));
    int fd = open(reached, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    double give_up = timing_monotonic_seconds() + PAUSE_GIVE_UP_S;
    while (access(gate, F_OK) == 0) {
        if (timing_monotonic_seconds() > give_up) {
            fprintf(stderr, "farm: test pause %s held over %.0f s: going on\n", name,
                    PAUSE_GIVE_UP_S);
            return;
        }
        timing_sleep_ms(5);
    }
}

#endif
