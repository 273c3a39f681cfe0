/* err.h: the one error value of cairn, cairn-farm and cairn-agent. A failure is carried
 * as a value (a one-line message, plus the status a function returns) up to the one place
 * that reports it; nothing in lib/ prints.
 *
 * lib/ is what the three binaries share (docs/design.md, "Folders are passes"): err (this), fs (whole
 * files, crash-safe writes, folders), hex, json (cJSON field access), proc (child
 * processes), sha256, timing, command (subcommand dispatch), version, obs (observation
 * values decoded) and obs_set (observation sets read and written). Naming: every external name of lib/ starts with its
 * module's name, which is its file's name (err_set, fs_read, proc_run, sha256_hex,
 * timing_sleep_ms, ...); types are capitalised (Err, ProcTick), macros upper case with
 * the module's name (SHA256_HEX_LEN, PROC_TIMEOUT). Callers include "lib/NAME.h". */
#ifndef CAIRN_LIB_ERR_H
#define CAIRN_LIB_ERR_H

/* An error carried as a value: a message for the one place that reports it. */
typedef struct {
    char msg[1024];
} Err;

/* Formats the message into E (E may be NULL) and returns -1. errno is kept, so a caller
 * may still read it after a failure was recorded. */
int err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same, returning STATUS: for callers whose failures have several statuses. */
int err_fail(Err *e, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
