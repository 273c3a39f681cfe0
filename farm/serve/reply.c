/* reply.c: the answers handlers put in a Reply (serve.h): JSON, an error with its code
 * and status from the protocol's one table (farm/proto/api.h), raw bytes, or an open
 * file streamed from disk. server.c
 * sends them; these only fill them in. */
#include "serve/serve_internal.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int reply_error(Reply *r, ProtoErrorCode code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    reply_json(r, proto_error_status(code), proto_error_build(code, r->error));
    return -1;
}

void reply_json(Reply *r, int status, cJSON *json) {
    cJSON_Delete(r->json);
    r->status = status;
    r->json = json;
}

void reply_raw(Reply *r, char *data, size_t len, const char *type) {
    free(r->raw);
    r->raw = data;
    r->raw_len = len;
    r->raw_type = type;
    r->status = 200;
}

void reply_file(Reply *r, int fd, size_t len, const char *sha, const char *type) {
    assert(fd >= 0 && !r->file && sha256_is_hex(sha));
    char empty[SHA256_HEX_LEN];
    sha256_hex("", 0, empty);
    if (len == 0 && strcmp(sha, empty) != 0) { /* no piece to hold back: refused whole */
        close(fd);
        fprintf(stderr, "farm: blob %s is damaged (empty): not served\n", sha);
        reply_error(r, PROTO_E_INTERNAL, "blob %.16s... is damaged in the store", sha);
        return;
    }
    memcpy(r->file_sha, sha, SHA256_HEX_LEN);
    free(r->raw);
    r->raw = NULL;
    r->file = fd + 1;
    r->file_len = len;
    r->raw_type = type;
    r->status = 200;
}

void reply_free(Reply *r) {
    cJSON_Delete(r->json);
    free(r->raw);
    if (r->file) close(r->file - 1);
    r->json = NULL;
    r->raw = NULL;
    r->file = 0;
}
