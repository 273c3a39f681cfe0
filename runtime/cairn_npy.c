/* cairn_npy.c: .npy headers parsed and written, files read and written (see cairn_npy.h).
 *
 * The header is a Python dict literal; this reads the small part of Python's literal
 * syntax NumPy writes there (strings in either quote, True and False, tuples of whole
 * numbers, an old file's `3L`) and refuses everything else with a message that names
 * what it found. Every index is checked against the bytes there are: the parser never
 * reads past `len`, whatever the file says. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* fileno, fstat under -std=c11 */
#endif
#include "cairn_npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the header's dict literal ---- */

typedef struct Cursor {
    const char *p, *end;
    char *err;
    size_t errlen;
} Cursor;

static void skip_space(Cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n'))
        c->p++;
}

static int at(Cursor *c, char ch) { return c->p < c->end && *c->p == ch; }

/* What the cursor is looking at, for messages: up to 12 printable characters. */
static const char *found(Cursor *c, char buf[16]) {
    if (c->p >= c->end) return "the end of the header";
    size_t k = 0;
    buf[k++] = '\'';
    for (const char *q = c->p; q < c->end && k < 13; q++)
        buf[k++] = (*q >= 32 && *q < 127) ? *q : '?';
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

static int expect(Cursor *c, char ch, const char *what) {
    skip_space(c);
    char buf[16];
    if (!at(c, ch))
        return fail(c->err, c->errlen, "the header is not a dict literal: expected %s, found %s",
                    what, found(c, buf));
    c->p++;
    return 0;
}

/* A string in single or double quotes, without escapes, into out (size bytes). */
static int parse_string(Cursor *c, char *out, size_t size) {
    skip_space(c);
    char buf[16];
    if (!at(c, '\'') && !at(c, '"'))
        return fail(c->err, c->errlen,
                    "the header is not a dict literal: expected a string, found %s", found(c, buf));
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != quote) {
        if (*c->p == '\\' || (unsigned char)*c->p < 32)
            return fail(c->err, c->errlen,
                        "the header holds a string with an escape or a control character");
        if (n + 1 >= size)
            return fail(c->err, c->errlen, "the header holds a string longer than %zu characters",
                        size - 1);
        out[n++] = *c->p++;
    }
    if (c->p >= c->end) return fail(c->err, c->errlen, "the header holds an unterminated string");
    c->p++;
    out[n] = '\0';
    return 0;
}

static int parse_bool(Cursor *c, int *out) {
    skip_space(c);
    size_t left = (size_t)(c->end - c->p);
    if (left >= 4 && memcmp(c->p, "True", 4) == 0) {
        c->p += 4;
        *out = 1;
        return 0;
    }
    if (left >= 5 && memcmp(c->p, "False", 5) == 0) {
        c->p += 5;
        *out = 0;
        return 0;
    }
    char buf[16];
    return fail(c->err, c->errlen, "'fortran_order' is True or False, not %s", found(c, buf));
}

/* A whole number (an old file's trailing L allowed) that fits in 63 bits. */
static int parse_dim(Cursor *c, uint64_t *out) {
    skip_space(c);
    char buf[16];
    if (!(c->p < c->end && *c->p >= '0' && *c->p <= '9'))
        return fail(c->err, c->errlen, "'shape' holds %s where a whole number goes", found(c, buf));
    if (*c->p == '0' && c->p + 1 < c->end && c->p[1] >= '0' && c->p[1] <= '9')
        return fail(c->err, c->errlen, "'shape' holds a number with a leading zero");
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p++ - '0');
        if (v > (((uint64_t)1 << 63) - 1 - d) / 10)
            return fail(c->err, c->errlen, "'shape' holds a dimension past 2^63 - 1");
        v = v * 10 + d;
    }
    if (at(c, 'L')) c->p++;
    *out = v;
    return 0;
}

/* (d0, d1, ...) with Python's rule that one element needs its trailing comma. */
static int parse_shape(Cursor *c, cairn_npy *out) {
    if (expect(c, '(', "'(' (the shape is a tuple)")) return -1;
    out->ndim = 0;
    int commas = 0;
    skip_space(c);
    while (!at(c, ')')) {
        if (out->ndim == CAIRN_NPY_MAX_DIMS)
            return fail(c->err, c->errlen, "'shape' has more than %d dimensions",
                        CAIRN_NPY_MAX_DIMS);
        if (parse_dim(c, &out->shape[out->ndim++])) return -1;
        skip_space(c);
        if (at(c, ',')) {
            c->p++;
            commas++;
            skip_space(c);
        } else if (!at(c, ')')) {
            char buf[16];
            return fail(c->err, c->errlen, "'shape' holds %s where ',' or ')' goes", found(c, buf));
        }
    }
    c->p++;
    if (out->ndim == 1 && commas == 0)
        return fail(c->err, c->errlen, "'shape' is (N) where Python writes a tuple as (N,)");
    out->count = 1;
    for (int k = 0; k < out->ndim; k++) {
        if (out->shape[k] && out->count > UINT64_MAX / out->shape[k])
            return fail(c->err, c->errlen, "'shape' has more elements than 2^64");
        out->count *= out->shape[k];
    }
    return 0;
}

/* One `'key': value` of the dict; seen[] says which keys came already. */
static int parse_entry(Cursor *c, cairn_npy *out, int seen[3]) {
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
    char key[32];
    if (parse_string(c, key, sizeof key)) return -1;
    int k = 0;
    while (k < 3 && strcmp(key, keys[k]) != 0) k++;
    if (k == 3)
        return fail(c->err, c->errlen, "the header has a key '%s' NumPy does not write", key);
    if (seen[k]) return fail(c->err, c->errlen, "the header has the key '%s' twice", key);
    seen[k] = 1;
    if (expect(c, ':', "':'")) return -1;
    skip_space(c);
    if (k == 0 && (at(c, '[') || at(c, '{')))
        return fail(c->err, c->errlen,
                    "'descr' is a structured dtype (a list), not one number type");
    if (k == 0) return parse_string(c, out->descr, sizeof out->descr);
    if (k == 1) return parse_bool(c, &out->fortran_order);
    return parse_shape(c, out);
}

static int parse_dict(Cursor *c, cairn_npy *out) {
    int seen[3] = {0, 0, 0};
    if (expect(c, '{', "'{'")) return -1;
    skip_space(c);
    while (!at(c, '}')) {
        if (parse_entry(c, out, seen)) return -1;
        skip_space(c);
        if (at(c, ',')) {
            c->p++;
            skip_space(c);
        } else if (!at(c, '}')) {
            char buf[16];
            return fail(c->err, c->errlen,
                        "the header is not a dict literal: expected ',' or '}', found %s",
                        found(c, buf));
        }
    }
    c->p++;
    skip_space(c);
    if (c->p != c->end)
        return fail(c->err, c->errlen, "the header has text after its dict literal");
    static const char *const names[3] = {"descr", "fortran_order", "shape"};
    for (int k = 0; k < 3; k++)
        if (!seen[k]) return fail(c->err, c->errlen, "the header lacks '%s'", names[k]);
    return 0;
}

int cairn_npy_parse(const unsigned char *bytes, size_t len, cairn_npy *out, char *err,
                    size_t errlen) {
    memset(out, 0, sizeof *out);
    if (len < 8 || memcmp(bytes, "\x93NUMPY", 6) != 0)
        return fail(err, errlen, "not a .npy file: it does not start with \\x93NUMPY");
    out->major = bytes[6];
    out->minor = bytes[7];
    if (!((out->major == 1 || out->major == 2 || out->major == 3) && out->minor == 0))
        return fail(err, errlen, ".npy format version %d.%d (CAIRN reads 1.0, 2.0 and 3.0)",
                    out->major, out->minor);
    size_t field = out->major == 1 ? 2 : 4;
    if (len < 8 + field) return fail(err, errlen, "truncated: the file ends inside its preamble");
    uint64_t hlen = bytes[8] | (uint64_t)bytes[9] << 8;
    if (field == 4) hlen |= (uint64_t)bytes[10] << 16 | (uint64_t)bytes[11] << 24;
    if (hlen > CAIRN_NPY_MAX_HEADER)
        return fail(err, errlen, "the header is %llu bytes long (more than %u: not a NumPy file)",
                    (unsigned long long)hlen, CAIRN_NPY_MAX_HEADER);
    if (hlen > len - 8 - field)
        return fail(err, errlen, "truncated: the header is %llu bytes, the file ends after %zu",
                    (unsigned long long)hlen, len - 8 - field);
    out->data_offset = 8 + field + (size_t)hlen;
    Cursor c = {(const char *)bytes + 8 + field, (const char *)bytes + out->data_offset, err,
                errlen};
    return parse_dict(&c, out);
}

void cairn_npy_shape_text(int ndim, const uint64_t *shape, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "(");
    for (int k = 0; k < ndim && n < size; k++)
        n += (size_t)snprintf(out + n, size - n, "%s%llu", k ? ", " : "",
                              (unsigned long long)shape[k]);
    if (n < size) snprintf(out + n, size - n, ndim == 1 ? ",)" : ")");
}

/* ---- files ---- */

/* The preamble and header of f (the file's first bytes) into *info; the file is left at
 * the first element. */
static int read_header(FILE *f, cairn_npy *info, char *err, size_t errlen) {
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    int known =
        got >= 8 && memcmp(pre, "\x93NUMPY", 6) == 0 && pre[6] >= 1 && pre[6] <= 3 && pre[7] == 0;
    size_t field = known && pre[6] == 1 ? 2 : 4;
    if (!known || got < 8 + field) return cairn_npy_parse(pre, got, info, err, errlen);
    uint64_t hlen = pre[8] | (uint64_t)pre[9] << 8;
    if (field == 4) hlen |= (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
    if (hlen > CAIRN_NPY_MAX_HEADER) return cairn_npy_parse(pre, got, info, err, errlen);
    size_t total = 8 + field + (size_t)hlen;
    unsigned char *head = malloc(total);
    if (!head) return fail(err, errlen, "out of memory for the header");
    memcpy(head, pre, got < total ? got : total);
    int rc = 0;
    if (got < total && fread(head + got, 1, total - got, f) != total - got)
        rc = fail(err, errlen, "truncated: the header is %llu bytes, the file ends inside it",
                  (unsigned long long)hlen);
    if (rc == 0) rc = cairn_npy_parse(head, total, info, err, errlen);
    free(head);
    if (rc == 0 && fseek(f, (long)info->data_offset, SEEK_SET) != 0)
        rc = fail(err, errlen, "cannot seek past the header: %s", strerror(errno));
    return rc;
}

/* The data's length checked against the header: exactly count * item bytes follow it. */
static int check_length(uint64_t size, const cairn_npy *info, size_t item, char *err,
                        size_t errlen) {
    uint64_t have = size - info->data_offset; /* read_header read the whole header */
    if (item && info->count > UINT64_MAX / item)
        return fail(err, errlen, "its shape has more bytes than 2^64");
    uint64_t want = info->count * item;
    if (have < want)
        return fail(err, errlen,
                    "truncated: its header says %llu elements (%llu bytes), the file holds %llu "
                    "bytes after the header",
                    (unsigned long long)info->count, (unsigned long long)want,
                    (unsigned long long)have);
    if (have > want)
        return fail(err, errlen,
                    "it holds %llu bytes after the header, more than its %llu elements take "
                    "(%llu)",
                    (unsigned long long)have, (unsigned long long)info->count,
                    (unsigned long long)want);
    if (want > SIZE_MAX - 1) return fail(err, errlen, "too large for this machine");
    return 0;
}

int cairn_npy_read(const char *path, size_t item, cairn_npy *info, void **data, char *err,
                   size_t errlen) {
    *data = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, "cannot open it: %s", strerror(errno));
    struct stat st;
    int rc = fstat(fileno(f), &st) != 0 ? fail(err, errlen, "cannot stat it: %s", strerror(errno))
             : S_ISDIR(st.st_mode)      ? fail(err, errlen, "it is a folder")
                                        : read_header(f, info, err, errlen);
    if (rc == 0 && check_length((uint64_t)st.st_size, info, item, err, errlen) != 0) rc = -2;
    size_t want = rc == 0 ? (size_t)(info->count * item) : 0;
    if (rc == 0 && !(*data = malloc(want ? want : 1)))
        rc = fail(err, errlen, "out of memory for %zu bytes", want);
    if (rc == 0 && fread(*data, 1, want, f) != want)
        rc = fail(err, errlen, "cannot read its data: %s",
                  ferror(f) ? strerror(errno) : "short read");
    fclose(f);
    if (rc != 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int cairn_npy_write(const char *path, const char *descr, int ndim, const uint64_t *shape,
                    const void *data, size_t item, char *err, size_t errlen) {
    char shape_text[CAIRN_NPY_MAX_DIMS * 22 + 4], head[1024];
    cairn_npy_shape_text(ndim, shape, shape_text, sizeof shape_text);
    int n = snprintf(head + 10, sizeof head - 10,
                     "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape_text);
    if (n < 0 || (size_t)n + 10 + 64 >= sizeof head) return fail(err, errlen, "header too long");
    size_t total = 10 + (size_t)n + 1; /* preamble, dict, the final newline */
    size_t padded = (total + 63) / 64 * 64;
    memset(head + 10 + n, ' ', padded - total);
    head[padded - 1] = '\n';
    memcpy(head, "\x93NUMPY\x01\x00", 8);
    head[8] = (char)((padded - 10) & 0xff);
    head[9] = (char)((padded - 10) >> 8);
    uint64_t count = 1;
    for (int k = 0; k < ndim; k++) count *= shape[k];
    size_t plen = strlen(path) + 32;
    char *tmp = malloc(plen);
    if (!tmp) return fail(err, errlen, "out of memory");
    snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int rc = f ? 0 : fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (rc == 0 && (fwrite(head, 1, padded, f) != padded ||
                    (count && fwrite(data, item, (size_t)count, f) != (size_t)count)))
        rc = fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0)
        rc = fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (rc != 0) unlink(tmp);
    free(tmp);
    return rc;
}
