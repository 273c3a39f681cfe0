/* util.h: small shared helpers for cairn-farm and cairn-agent: errors as values,
 * SHA-256 and base64 through OpenSSL, files written crash-safely, JSON field access. */
#ifndef CAIRN_FARM_UTIL_H
#define CAIRN_FARM_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>

/* An error carried as a value: a short message for the one place that reports it. */
typedef struct {
    char msg[256];
} Err;
int err_set(Err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* SHA-256 as 64 lowercase hex characters plus NUL. */
#define SHA256_HEX_LEN 65
void sha256_hex(const void *data, size_t len, char out[SHA256_HEX_LEN]);
int sha256_file_hex(const char *path, char out[SHA256_HEX_LEN], size_t *size, Err *e);
int sha256_is_hex(const char *s);

/* Base64 (standard alphabet, padded, no newlines). Returned buffers are malloc'd.
 * Decoding accepts only the canonical encoding (NULL otherwise). */
char *util_b64_encode(const void *data, size_t len);
unsigned char *util_b64_decode(const char *text, size_t *len);

/* Whole files. fs_read NUL-terminates the buffer it returns (len excludes the NUL). */
char *fs_read(const char *path, size_t *len, Err *e);
/* Writes to PATH.tmp.<pid>, fsyncs, renames over PATH, fsyncs the folder. */
int fs_write_atomic(const char *path, const void *data, size_t len, Err *e);
/* Writes and fsyncs PATH (no rename): for files inside a folder renamed later. */
int fs_write_synced(const char *path, const void *data, size_t len, Err *e);
int fs_sync_dir(const char *dir);
int fs_mkdirs(const char *path, Err *e);
int fs_remove_tree(const char *path);

/* A name that is safe as one path component: [A-Za-z0-9._+-], not "." or "..". */
int util_is_safe_component(const char *s);
/* A relative path of safe components joined by '/'. */
int util_is_safe_relpath(const char *s);

/* A set of names, each with a number (an index), for lookups in constant time: bundles
 * carry thousands of subjects, and a list searched per name made uploads quadratic. The
 * set keeps pointers: the names must outlive it. */
typedef struct {
    const char **names;
    size_t *values;
    size_t cap, n;
} NameSet;
/* 0 when NAME was added, 1 when it was there already (its value unchanged). */
int util_nameset_add(NameSet *set, const char *name, size_t value);
/* 1 and *value when NAME is in the set (VALUE may be NULL), else 0. */
int util_nameset_get(const NameSet *set, const char *name, size_t *value);
void util_nameset_free(NameSet *set);

double timing_now_seconds(void);
void timing_sleep_ms(long ms);

/* JSON field access with type checks; NULL/fallback when absent or of another type. */
const char *json_str(const cJSON *obj, const char *key);
double json_num(const cJSON *obj, const char *key, double fallback);
/* KEY as an integer in [LO, HI]: 1 (and *out) when it is one, 0 when absent, -1 when it
 * is anything else (another type, a fraction, out of range: never cast unchecked). */
int json_int(const cJSON *obj, const char *key, double lo, double hi, long *out);
cJSON *json_parse_file(const char *path, Err *e);

#endif
