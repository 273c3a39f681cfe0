/* cairn_observe.c: observation log and raw dumps (see cairn_observe.h).
 * JSON through cJSON, SHA-256 through OpenSSL's EVP interface. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* open, write, O_CLOEXEC under -std=c11 */
#endif
#include "cairn_observe.h"
#include "cairn_trap.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t observe_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long observe_seq; /* observations so far, under observe_lock */

/* The little-endian bytes of the elements: a copy on a big-endian host, else `bits`. */
static const unsigned char *little_endian_bytes(const void *bits, size_t count, size_t elem_size,
                                                unsigned char **owned) {
    *owned = NULL;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    size_t total = count * elem_size;
    unsigned char *copy = malloc(total ? total : 1);
    if (!copy) cairn_trap("observe: out of memory");
    const unsigned char *src = bits;
    for (size_t e = 0; e < count; e++)
        for (size_t b = 0; b < elem_size; b++)
            copy[e * elem_size + b] = src[e * elem_size + elem_size - 1 - b];
    *owned = copy;
    return copy;
#else
    (void)count;
    (void)elem_size;
    return bits;
#endif
}

static void sha256_hex(const unsigned char *bytes, size_t len, char hex[65]) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_len = 0;
    if (!EVP_Digest(bytes, len, digest, &digest_len, EVP_sha256(), NULL))
        cairn_trap("observe: SHA-256 failed");
    for (unsigned int i = 0; i < digest_len; i++) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
}

/* Writes all of buf to fd, retrying short writes; false on error. */
static int write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        buf += n;
        len -= (size_t)n;
    }
    return 1;
}

/* The log line of one observation, newline included (malloc'd): name, type, count,
 * sha256 and, for a raw folder's index, the file that holds its bits. */
static char *log_line(const char *name, const char *type, size_t count, const char *hex,
                      const char *file, size_t *len) {
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "name", name);
    cJSON_AddStringToObject(line, "type", type);
    cJSON_AddNumberToObject(line, "count", (double)count);
    cJSON_AddStringToObject(line, "sha256", hex);
    if (file) cJSON_AddStringToObject(line, "file", file);
    char *text = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    if (!text) cairn_trap("observe: out of memory");
    *len = strlen(text);
    char *with_newline = malloc(*len + 2);
    if (!with_newline) cairn_trap("observe: out of memory");
    memcpy(with_newline, text, *len);
    with_newline[(*len)++] = '\n';
    cJSON_free(text);
    return with_newline;
}

/* Appends TEXT to PATH with one write(2) (FLAGS: O_APPEND, or O_TRUNC to start afresh);
 * false when it cannot. */
static int write_file(const char *path, int flags, const char *text, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0644);
    int ok = fd >= 0 && write_all(fd, text, len);
    if (fd >= 0) close(fd);
    return ok;
}

static void append_log_line(const char *path, const char *name, const char *type, size_t count,
                            const char *hex) {
    size_t len;
    char *line = log_line(name, type, count, hex, NULL, &len);
    int ok = write_file(path, O_APPEND, line, len);
    free(line);
    if (!ok) cairn_trap("observe: cannot append to the CAIRN_OBSERVE log");
}

/* DIR/NAME.SEQ.bin gets the bits, and DIR/index.jsonl the log line naming that file (the
 * process's first observation starts the index afresh, as it starts SEQ at 0), so the
 * folder says what each file holds. */
static void write_raw(const char *dir, const char *name, const char *type, size_t count,
                      const char *hex, unsigned long seq, const unsigned char *bytes, size_t len) {
    size_t path_len = strlen(dir) + strlen(name) + 32;
    char *path = malloc(path_len);
    if (!path) cairn_trap("observe: out of memory");
    snprintf(path, path_len, "%s/%s.%lu.bin", dir, name, seq);
    int ok = write_file(path, O_TRUNC, (const char *)bytes, len);
    size_t line_len;
    char *line = log_line(name, type, count, hex, strrchr(path, '/') + 1, &line_len);
    snprintf(path, path_len, "%s/index.jsonl", dir);
    ok = ok && write_file(path, seq == 0 ? O_TRUNC : O_APPEND, line, line_len);
    free(line);
    free(path);
    if (!ok) cairn_trap("observe: cannot write raw bits into CAIRN_OBSERVE_RAW");
}

void cairn_observe(const char *name, const char *type, const void *bits, size_t count,
                   size_t elem_size) {
    const char *log = getenv("CAIRN_OBSERVE");
    const char *raw = getenv("CAIRN_OBSERVE_RAW");
    if ((!log || !*log) && (!raw || !*raw)) return;
    unsigned char *owned;
    const unsigned char *bytes = little_endian_bytes(bits, count, elem_size, &owned);
    size_t len = count * elem_size;
    char hex[65] = {0};
    sha256_hex(bytes, len, hex);
    pthread_mutex_lock(&observe_lock);
    unsigned long seq = observe_seq++;
    if (log && *log) append_log_line(log, name, type, count, hex);
    if (raw && *raw) write_raw(raw, name, type, count, hex, seq, bytes, len);
    pthread_mutex_unlock(&observe_lock);
    free(owned);
}
