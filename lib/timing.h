/* timing.h: clocks and sleeping (naming: see err.h; `clock_` and `timer_` belong to
 * POSIX, hence `timing_`). */
#ifndef CAIRN_LIB_TIMING_H
#define CAIRN_LIB_TIMING_H

#include <pthread.h>
#include <time.h>

/* Wall-clock time in seconds since 1970: timestamps others read. */
double timing_now_seconds(void);
/* A clock that never steps back, in seconds: for measuring how long something took. */
double timing_monotonic_seconds(void);
/* Wall-clock seconds since 1970 as this process first read them, advanced since by the
 * monotonic clock: a step of the wall clock (NTP, an operator) moves it neither way. For
 * deadlines others read as wall time (leases, long polls) that a step must not make run
 * out at once or hold for an hour. */
double timing_steady_seconds(void);
/* A condition variable whose timed waits run on the monotonic clock, and the deadline
 * SECONDS from now to hand pthread_cond_timedwait for it. */
void timing_cond_init(pthread_cond_t *c);
struct timespec timing_cond_deadline(double seconds);
/* Sleeps MS milliseconds, resuming after signals. */
void timing_sleep_ms(long ms);

#endif
