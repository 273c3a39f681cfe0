/* timing.h: clocks and sleeping (naming: see err.h; `clock_` and `timer_` belong to
 * POSIX, hence `timing_`). */
#ifndef CAIRN_LIB_TIMING_H
#define CAIRN_LIB_TIMING_H

/* Wall-clock time in seconds since 1970: timestamps others read. */
double timing_now_seconds(void);
/* A clock that never steps back, in seconds: for measuring how long something took. */
double timing_monotonic_seconds(void);
/* Sleeps MS milliseconds, resuming after signals. */
void timing_sleep_ms(long ms);

#endif
