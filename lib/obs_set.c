/* obs_set.c: observation sets read from raw folders and observation files, and written
 * as observation files (see obs_set.h). */
#include "lib/obs_set.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/fs.h"
#include "lib/json.h"

enum { HEADER_MAX = 1 << 16 }; /* the longest log line a file may hold */

/* Bytes in memory: a line of an index, an observation file's text, a record's bits. */
typedef struct Bytes {
    const char *data;
    size_t len;
} Bytes;

void obs_set_free(ObsSet *set) {
    for (size_t i = 0; i < set->len; i++) {
        free(set->items[i].name);
        free(set->items[i].bytes);
    }
    free(set->items);
    memset(set, 0, sizeof *set);
}

/* The fields of one log line, checked: a name, a known type, a count, a digest. WHERE
 * names the line in messages. On success *r holds a copy of the name (bytes unset). */
static int parse_line(const cJSON *line, const char *where, ObsRecord *r, Err *e) {
    const char *name = json_str(line, "name"), *type = json_str(line, "type");
    const char *digest = json_str(line, "sha256");
    long count = 0;
    if (!name || !*name) return err_set(e, "%s: no observation name", where);
    if (!type || obs_type_parse(type, &r->type) != 0)
        return err_set(e, "%s: observation '%s' has no known type ('%s')", where, name,
                       type ? type : "none");
    if (json_int(line, "count", 0, 1e15, &count) != 1)
        return err_set(e, "%s: observation '%s' has no element count", where, name);
    if (!digest || !sha256_is_hex(digest))
        return err_set(e, "%s: observation '%s' has no sha256", where, name);
    r->count = (size_t)count;
    snprintf(r->sha256, sizeof r->sha256, "%s", digest);
    r->name = strdup(name);
    if (!r->name) return err_set(e, "out of memory");
    return 0;
}

/* Copies BITS into R after checking their length and digest; adds R to SET. */
static int add_record(ObsSet *set, ObsRecord *r, Bytes bits, const char *where, Err *e) {
    const char *bytes = bits.data;
    size_t len = bits.len;
    char hex[SHA256_HEX_LEN];
    int rc = 0;
    if (len != r->count * obs_type_size(r->type))
        rc = err_set(e, "%s: observation '%s' holds %zu bytes, not the %zu of %zu %s", where,
                     r->name, len, r->count * obs_type_size(r->type), r->count,
                     obs_type_name(r->type));
    if (rc == 0) sha256_hex(bytes, len, hex);
    if (rc == 0 && strcmp(hex, r->sha256) != 0)
        rc = err_set(e, "%s: observation '%s': its bits do not match its sha256", where, r->name);
    if (rc == 0 && set->len == set->cap) {
        size_t cap = set->cap ? 2 * set->cap : 16;
        ObsRecord *items = realloc(set->items, cap * sizeof *items);
        if (!items) rc = err_set(e, "out of memory");
        else set->items = items, set->cap = cap;
    }
    if (rc == 0 && !(r->bytes = malloc(len ? len : 1))) rc = err_set(e, "out of memory");
    if (rc != 0) {
        free(r->name);
        return rc;
    }
    memcpy(r->bytes, bytes, len);
    set->items[set->len++] = *r;
    return 0;
}

/* One LINE of DIR/index.jsonl (number LINENO): the record and the bits of its file. */
static int read_indexed(const char *dir, Bytes text, int lineno, ObsSet *set, Err *e) {
    char where[4200], path[4200];
    snprintf(where, sizeof where, "%s/index.jsonl:%d", dir, lineno);
    cJSON *line = cJSON_ParseWithLength(text.data, text.len);
    ObsRecord r = {0};
    int rc = line ? parse_line(line, where, &r, e) : err_set(e, "%s: not a JSON line", where);
    const char *file = line ? json_str(line, "file") : NULL;
    if (rc == 0 &&
        (!file || !*file || strchr(file, '/') || !strcmp(file, ".") || !strcmp(file, ".."))) {
        rc = err_set(e, "%s: observation '%s' names no file in the folder", where, r.name);
        free(r.name);
    }
    size_t size = 0;
    char *bits = NULL;
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/%s", dir, file);
        bits = fs_read(path, &size, NULL);
        if (!bits) {
            rc = err_set(e, "cannot read %s: %s", path, strerror(errno));
            free(r.name);
        }
    }
    if (rc == 0) rc = add_record(set, &r, (Bytes){bits, size}, path, e);
    free(bits);
    cJSON_Delete(line);
    return rc;
}

static int read_folder(const char *dir, ObsSet *set, Err *e) {
    char path[4200];
    snprintf(path, sizeof path, "%s/index.jsonl", dir);
    size_t len = 0;
    char *text = fs_read(path, &len, NULL);
    if (!text)
        return err_set(e, "%s has no index.jsonl (%s): not a folder written by --observe-raw", dir,
                       strerror(errno));
    int rc = 0, lineno = 0;
    for (char *line = text; rc == 0 && line < text + len; lineno++) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        size_t n = end ? (size_t)(end - line) : (size_t)(text + len - line);
        if (n > 0) rc = read_indexed(dir, (Bytes){line, n}, lineno + 1, set, e);
        line += n + 1;
    }
    free(text);
    return rc;
}

/* The next observation of the observation file PATH (whose text is FILE), at *pos: its
 * line, its bits and the newline. */
static int read_framed(const char *path, Bytes file, size_t *pos, ObsSet *set, Err *e) {
    const char *text = file.data;
    size_t len = file.len;
    char where[4200];
    snprintf(where, sizeof where, "%s: observation %zu", path, set->len + 1);
    const char *start = text + *pos, *nl = memchr(start, '\n', len - *pos);
    if (!nl || nl - start > HEADER_MAX) return err_set(e, "%s: no header line", where);
    cJSON *line = cJSON_ParseWithLength(start, (size_t)(nl - start));
    ObsRecord r = {0};
    int rc = line ? parse_line(line, where, &r, e) : err_set(e, "%s: not a JSON line", where);
    cJSON_Delete(line);
    if (rc != 0) return rc;
    size_t at = (size_t)(nl - text) + 1, size = r.count * obs_type_size(r.type);
    if (r.count > (len - at) / obs_type_size(r.type) || len - at - size < 1 ||
        text[at + size] != '\n') {
        err_set(e, "%s ('%s'): the file ends inside its %zu elements", where, r.name, r.count);
        free(r.name);
        return -1;
    }
    *pos = at + size + 1;
    return add_record(set, &r, (Bytes){text + at, size}, path, e);
}

static int read_file(const char *path, ObsSet *set, Err *e) {
    size_t len = 0, magic = strlen(OBS_SET_MAGIC);
    char *text = fs_read(path, &len, NULL);
    if (!text) return err_set(e, "cannot read %s: %s", path, strerror(errno));
    int rc = 0;
    if (len < magic || memcmp(text, OBS_SET_MAGIC, magic) != 0)
        rc = err_set(e, "%s is not an observation file (it does not begin with %.*s)", path,
                     (int)magic - 1, OBS_SET_MAGIC);
    for (size_t pos = magic; rc == 0 && pos < len;)
        rc = read_framed(path, (Bytes){text, len}, &pos, set, e);
    free(text);
    return rc;
}

int obs_set_read(const char *path, ObsSet *set, Err *e) {
    struct stat st;
    memset(set, 0, sizeof *set);
    if (stat(path, &st) != 0) return err_set(e, "cannot read %s: %s", path, strerror(errno));
    int rc = S_ISDIR(st.st_mode) ? read_folder(path, set, e) : read_file(path, set, e);
    if (rc != 0) obs_set_free(set);
    return rc;
}

/* The log line of R (the runtime's key order), newline included; malloc'd. */
static char *header(const ObsRecord *r) {
    cJSON *line = cJSON_CreateObject();
    cJSON_AddStringToObject(line, "name", r->name);
    cJSON_AddStringToObject(line, "type", obs_type_name(r->type));
    cJSON_AddNumberToObject(line, "count", (double)r->count);
    cJSON_AddStringToObject(line, "sha256", r->sha256);
    char *text = cJSON_PrintUnformatted(line);
    cJSON_Delete(line);
    return text;
}

int obs_set_write(const char *path, const ObsSet *set, Err *e) {
    size_t len = strlen(OBS_SET_MAGIC);
    char *buf = malloc(len + 1);
    if (!buf) return err_set(e, "out of memory");
    memcpy(buf, OBS_SET_MAGIC, len);
    for (size_t i = 0; i < set->len; i++) {
        const ObsRecord *r = &set->items[i];
        char *line = header(r);
        size_t n = line ? strlen(line) : 0, size = r->count * obs_type_size(r->type);
        char *grown = line ? realloc(buf, len + n + size + 2) : NULL;
        if (!grown) {
            free(line);
            free(buf);
            return err_set(e, "out of memory");
        }
        buf = grown;
        memcpy(buf + len, line, n);
        buf[len + n] = '\n';
        memcpy(buf + len + n + 1, r->bytes, size);
        buf[len + n + 1 + size] = '\n';
        len += n + size + 2;
        free(line);
    }
    int rc = fs_write_atomic(path, buf, len, e);
    free(buf);
    return rc;
}
