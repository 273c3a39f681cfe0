/* log.c: the coordinator's log lines, on stderr. As text (the default), each is
 * "farm: MESSAGE", for people; with "log_format": "json", each is one JSON object on one
 * line, {"time", "level", "event", "message"} and whichever of "run", "job", "agent",
 * "route", "status", "duration_ms" the event has, for a log pipeline to index (docs/
 * farm.md, "Logs"). Either way a line is written with one call, so lines of concurrent
 * threads never interleave. */
#include "serve/serve_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The time now as ISO 8601 UTC with milliseconds. */
static void utc_now(char *out, size_t cap) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(out, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + n, cap - n, ".%03ldZ", ts.tv_nsec / 1000000);
}

static char *json_line(const LogFields *f, const char *message) {
    char when[40];
    utc_now(when, sizeof when);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "time", when);
    cJSON_AddStringToObject(j, "level", f->level ? f->level : "info");
    cJSON_AddStringToObject(j, "event", f->event ? f->event : "message");
    cJSON_AddStringToObject(j, "message", message);
    if (f->run > 0) cJSON_AddNumberToObject(j, "run", (double)f->run);
    if (f->job > 0) cJSON_AddNumberToObject(j, "job", (double)f->job);
    if (f->agent > 0) cJSON_AddNumberToObject(j, "agent", (double)f->agent);
    if (f->route) cJSON_AddStringToObject(j, "route", f->route);
    if (f->status > 0) cJSON_AddNumberToObject(j, "status", f->status);
    if (f->duration_ms >= 0) cJSON_AddNumberToObject(j, "duration_ms", f->duration_ms);
    char *text = cJSON_PrintUnformatted(j); /* escapes every string: one line always */
    cJSON_Delete(j);
    return text;
}

void log_event(const Server *s, const LogFields *f, const char *fmt, ...) {
    char message[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    if (!s->cfg.log_json) {
        fprintf(stderr, "farm: %s\n", message);
        return;
    }
    char *line = json_line(f, message);
    fprintf(stderr, "%s\n", line);
    free(line);
}
