/* strbuf.h: the compiler's growable strings (the generated C, command lines, cache
 * keys) and lists of strings (argv). Running out of memory ends the process (exit 3).
 * Files, digests and child processes are lib/'s (lib/fs.h, lib/sha256.h, lib/proc.h). */
#ifndef CAIRN_STRBUF_H
#define CAIRN_STRBUF_H

#include <stddef.h>

/* A growable byte string, always NUL-terminated. */
typedef struct StrBuf {
    char *data;
    size_t len, cap;
} StrBuf;

void sb_append(StrBuf *sb, const char *bytes, size_t len);
void sb_puts(StrBuf *sb, const char *text);
void sb_printf(StrBuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(StrBuf *sb);

/* A NULL-terminated list of owned strings, e.g. an argv. */
typedef struct StrVec {
    char **items;
    size_t len, cap;
} StrVec;

void sv_push(StrVec *sv, const char *text);
void sv_free(StrVec *sv);

#endif
