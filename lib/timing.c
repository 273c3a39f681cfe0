/* timing.c: clocks and sleeping (see timing.h). */
#include "lib/timing.h"

#include <errno.h>
#include <time.h>

static double seconds_of(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double timing_now_seconds(void) { return seconds_of(CLOCK_REALTIME); }

double timing_monotonic_seconds(void) { return seconds_of(CLOCK_MONOTONIC); }

void timing_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
