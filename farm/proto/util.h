/* util.h: small helpers only cairn-farm and cairn-agent need: base64, safe path names
 * and a name set. Its external names start with util_. What the compiler needs too
 * (errors, files, hashing, JSON access, clocks) is in lib/; this header brings those
 * headers in, since every farm and agent file uses them. */
#ifndef CAIRN_FARM_UTIL_H
#define CAIRN_FARM_UTIL_H

#include <stddef.h>

#include "lib/err.h"
#include "lib/fs.h"
#include "lib/hex.h"
#include "lib/json.h"
#include "lib/sha256.h"
#include "lib/timing.h"

/* Base64 (standard alphabet, padded, no newlines). Returned buffers are malloc'd.
 * Decoding accepts only the canonical encoding (NULL otherwise). */
char *util_b64_encode(const void *data, size_t len);
unsigned char *util_b64_decode(const char *text, size_t *len);

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
/* cJSON says nothing when an allocation fails: a node is left out, a print returns NULL.
 * util_json_watch (once, at start) routes its allocations through a counter of the
 * calling thread's failures, and util_json_failures reads it: a value built between two
 * equal readings is whole. */
void util_json_watch(void);
unsigned long util_json_failures(void);
/* 0 when NAME was added, 1 when it was there already (its value unchanged), -1 when the
 * set could not grow (out of memory: the set is as it was). */
int util_nameset_add(NameSet *set, const char *name, size_t value);
/* 1 and *value when NAME is in the set (VALUE may be NULL), else 0. */
int util_nameset_get(const NameSet *set, const char *name, size_t *value);
void util_nameset_free(NameSet *set);

/* Secrets in files: a warning on stderr (from WHO, about WHAT the file holds) when any
 * user may read the file PATH (a group's read is left alone: Kubernetes' fsGroup gives
 * one); and the token in PATH, its first
 * non-blank line with white space around it dropped, into OUT (CAP bytes), warning so. */
void util_warn_if_readable(const char *who, const char *path, const char *what);
int util_read_token_file(const char *who, const char *path, char *out, size_t cap, Err *e);

#endif
