/* err.c: the error value (see err.h). */
#include "lib/err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static void err_vset(Err *e, const char *fmt, va_list ap) {
    if (!e) return;
    int saved = errno;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    errno = saved;
}

int err_set(Err *e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, fmt, ap);
    va_end(ap);
    return -1;
}

int err_fail(Err *e, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err_vset(e, fmt, ap);
    va_end(ap);
    return status;
}
