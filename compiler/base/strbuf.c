/* strbuf.c: growable strings and lists of strings (see strbuf.h). */
#include "base/strbuf.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *p, size_t size) {
    void *q = realloc(p, size);
    if (!q) {
        fputs("cairn: out of memory\n", stderr);
        exit(3);
    }
    return q;
}

void sb_append(StrBuf *sb, const char *bytes, size_t len) {
    if (sb->len + len + 1 > sb->cap) {
        sb->cap = (sb->len + len + 1) * 2;
        sb->data = xrealloc(sb->data, sb->cap);
    }
    memcpy(sb->data + sb->len, bytes, len);
    sb->len += len;
    sb->data[sb->len] = '\0';
    assert(sb->len < sb->cap);
}

void sb_puts(StrBuf *sb, const char *text) { sb_append(sb, text, strlen(text)); }

void sb_printf(StrBuf *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) return;
    char *tmp = xrealloc(NULL, (size_t)need + 1);
    va_start(ap, fmt);
    vsnprintf(tmp, (size_t)need + 1, fmt, ap);
    va_end(ap);
    sb_append(sb, tmp, (size_t)need);
    free(tmp);
}

void sb_free(StrBuf *sb) {
    free(sb->data);
    *sb = (StrBuf){0};
}

void sv_push(StrVec *sv, const char *text) {
    if (sv->len + 2 > sv->cap) {
        sv->cap = (sv->len + 2) * 2;
        sv->items = xrealloc(sv->items, sv->cap * sizeof *sv->items);
    }
    sv->items[sv->len++] = text ? strdup(text) : NULL;
    sv->items[sv->len] = NULL;
    assert(sv->len < sv->cap);
}

void sv_free(StrVec *sv) {
    for (size_t i = 0; i < sv->len; i++) free(sv->items[i]);
    free(sv->items);
    *sv = (StrVec){0};
}
