/* clock_shift.c: an LD_PRELOAD library for tests that steps a process's wall clock. With
 * CAIRN_CLOCK_SHIFT_FILE=PATH, clock_gettime(CLOCK_REALTIME[_COARSE]), gettimeofday and
 * time answer the real time plus the seconds PATH holds (a decimal, read at each call,
 * 0 while it is missing), as if NTP or an operator stepped the clock; the monotonic
 * clocks are left alone. tests/farm/test_clock_steps.py steps a coordinator's clock
 * both ways while it holds leases. */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

typedef int (*ClockGettime)(clockid_t, struct timespec *);

static double shift_seconds(void) {
    const char *path = getenv("CAIRN_CLOCK_SHIFT_FILE");
    char buf[64] = "";
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    buf[n > 0 ? n : 0] = '\0';
    return strtod(buf, NULL);
}

static void shift(struct timespec *ts) {
    double at = (double)ts->tv_sec + (double)ts->tv_nsec * 1e-9 + shift_seconds();
    ts->tv_sec = (time_t)at;
    ts->tv_nsec = (long)((at - (double)ts->tv_sec) * 1e9);
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    static ClockGettime real;
    if (!real) real = (ClockGettime)dlsym(RTLD_NEXT, "clock_gettime");
    int rc = real(clock, ts);
    if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) shift(ts);
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    (void)tz;
    struct timespec ts;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    struct timeval *out = tv; /* glibc declares TV nonnull; callers may still pass NULL */
    if (rc == 0 && out != NULL) *out = (struct timeval){ts.tv_sec, ts.tv_nsec / 1000};
    return rc;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
