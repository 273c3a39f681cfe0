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

static double steady_base;
static pthread_once_t steady_once = PTHREAD_ONCE_INIT;

static void steady_start(void) {
    steady_base = seconds_of(CLOCK_REALTIME) - seconds_of(CLOCK_MONOTONIC);
}

double timing_steady_seconds(void) {
    pthread_once(&steady_once, steady_start);
    return steady_base + seconds_of(CLOCK_MONOTONIC);
}

void timing_cond_init(pthread_cond_t *c) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

struct timespec timing_cond_deadline(double seconds) {
    double at = seconds_of(CLOCK_MONOTONIC) + (seconds > 0 ? seconds : 0);
    struct timespec ts = {(time_t)at, (long)((at - (double)(time_t)at) * 1e9)};
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec += 1, ts.tv_nsec -= 1000000000L;
    return ts;
}

void timing_sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}
