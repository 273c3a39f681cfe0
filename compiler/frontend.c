/* frontend.c: reading a program and running the front end's stages (frontend.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

Program *cairn_load_text(const char *path, const char *text, size_t len, Diags *d) {
    Program *p = cairn_parse(path, text, len, d);
    d->src = &p->src;
    if (!diags_has_errors(d)) cairn_check(p, d);
    if (diags_has_errors(d)) {
        /* Keep the source readable for diags_print: the refused program's arena stays
         * alive until diags_free (it is small, and a refused program ends the run). */
        d->keep = p;
        return NULL;
    }
    return p;
}

char *cairn_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int err = ferror(f) ? EIO : 0;
    fclose(f);
    if (buf && err) {
        free(buf);
        buf = NULL;
        errno = err;
    }
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

Program *cairn_load(const char *path, Diags *d, LoadStatus *status) {
    size_t len = 0;
    char *text = cairn_read_file(path, &len);
    if (!text) {
        if (status) *status = LOAD_IO_ERROR;
        return NULL;
    }
    Program *p = cairn_load_text(path, text, len, d);
    free(text);
    if (status) *status = p ? LOAD_OK : LOAD_REFUSED;
    return p;
}
