/* enclose_casefile.c: reader for the bracket GEMM case format (see enclose_casefile.h). */
#include "enclose_casefile.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static long current_line = 1; /* for messages; the reader is single-threaded */

/* The next whitespace-separated token, skipping comments; 0 at end of file. */
static int next_token(FILE *fp, char *tok, size_t cap) {
    int ch;
    for (;;) {
        ch = getc(fp);
        if (ch == '#')
            while (ch != '\n' && ch != EOF) ch = getc(fp);
        if (ch == '\n') current_line++;
        if (ch == EOF) return 0;
        if (!isspace(ch)) break;
    }
    size_t len = 0;
    while (ch != EOF && !isspace(ch) && ch != '#') {
        if (len + 1 < cap) tok[len++] = (char)ch;
        ch = getc(fp);
    }
    if (ch != EOF) ungetc(ch, fp);
    tok[len] = '\0';
    return 1;
}

static int parse_size(const char *s, size_t *out) {
    size_t v = 0;
    if (!*s) return -1;
    for (; *s; s++) {
        if (!isdigit((unsigned char)*s) || v > ((size_t)-1 - 9) / 10) return -1;
        v = v * 10 + (size_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static int parse_hex(const char *s, int width, uint64_t *out) {
    uint64_t v = 0;
    size_t len = strlen(s);
    if (len == 0 || len > (size_t)width / 4) return -1;
    for (; *s; s++) {
        int c = tolower((unsigned char)*s);
        int d = isdigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
        if (d < 0) return -1;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

static int fail(char *err, size_t errlen, const char *what) {
    snprintf(err, errlen, "line %ld: %s", current_line, what);
    return -1;
}

/* Reads `count` bit patterns after the section keyword `key`. */
static int read_matrix(FILE *fp, const char *key, size_t count, int width, void **out, char *err,
                       size_t errlen) {
    char tok[64];
    if (!next_token(fp, tok, sizeof tok) || strcmp(tok, key) != 0)
        return fail(err, errlen,
                    key[0] == 'a' ? "expected 'a' and the M*K patterns"
                                  : "expected 'b' and the K*N patterns");
    size_t size = (size_t)width / 8;
    unsigned char *buf = malloc(count ? count * size : 1);
    if (!buf) return fail(err, errlen, "out of memory");
    for (size_t i = 0; i < count; i++) {
        uint64_t v;
        if (!next_token(fp, tok, sizeof tok) || parse_hex(tok, width, &v)) {
            free(buf);
            return fail(err, errlen, "expected a hex bit pattern of the case's width");
        }
        if (width == 64) {
            memcpy(buf + i * 8, &v, 8);
        } else {
            uint32_t u = (uint32_t)v;
            memcpy(buf + i * 4, &u, 4);
        }
    }
    *out = buf;
    return 0;
}

int enclose_case_read(FILE *fp, enclose_case *c, char *err, size_t errlen) {
    char tok[64], dims[3][64];
    memset(c, 0, sizeof *c);
    if (ftell(fp) == 0) current_line = 1; /* a new file */
    if (!next_token(fp, tok, sizeof tok)) return 0;
    if (strcmp(tok, "case") != 0) return fail(err, errlen, "expected 'case NAME f64|f32 M N K'");
    if (!next_token(fp, c->name, sizeof c->name) || !next_token(fp, tok, sizeof tok))
        return fail(err, errlen, "truncated case header");
    c->width = strcmp(tok, "f64") == 0 ? 64 : strcmp(tok, "f32") == 0 ? 32 : 0;
    if (!c->width) return fail(err, errlen, "the format must be f64 or f32");
    for (int i = 0; i < 3; i++)
        if (!next_token(fp, dims[i], sizeof dims[i]))
            return fail(err, errlen, "truncated case header");
    if (parse_size(dims[0], &c->m) || parse_size(dims[1], &c->n) || parse_size(dims[2], &c->k) ||
        (c->m && c->k > (size_t)-1 / c->m / 8) || (c->n && c->k > (size_t)-1 / c->n / 8))
        return fail(err, errlen, "M N K must be decimal sizes");
    if (read_matrix(fp, "a", c->m * c->k, c->width, &c->a, err, errlen)) return -1;
    if (read_matrix(fp, "b", c->k * c->n, c->width, &c->b, err, errlen)) {
        enclose_case_free(c);
        return -1;
    }
    return 1;
}

void enclose_case_free(enclose_case *c) {
    free(c->a);
    free(c->b);
    c->a = c->b = NULL;
}

int enclose_write_le(FILE *fp, const void *bits, size_t count, int width) {
    const unsigned char *p = bits;
    size_t size = (size_t)width / 8;
    for (size_t i = 0; i < count; i++) {
        uint64_t v = 0;
        if (size == 8) {
            memcpy(&v, p + i * 8, 8);
        } else {
            uint32_t u;
            memcpy(&u, p + i * 4, 4);
            v = u;
        }
        for (size_t b = 0; b < size; b++)
            if (putc((int)(v >> (8 * b) & 0xff), fp) == EOF) return -1;
    }
    return 0;
}
