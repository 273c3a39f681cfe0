/* strbuf.h: the compiler's growable strings (the generated C, command lines, cache
 * keys) and lists of strings (argv). Running out of memory ends the process (exit 3).
 * Files, digests and child processes are lib/'s (lib/fs.h, lib/sha256.h, lib/proc.h). */
#ifndef CAIRN_STRBUF_H
#define CAIRN_STRBUF_H

#include <stddef.h>

/* A growable byte string, always NUL-terminated. */
typedef struct strbuf {
    char *data;
    size_t len, cap;
} strbuf;

void sb_append(strbuf *sb, const char *bytes, size_t len);
void sb_puts(strbuf *sb, const char *text);
void sb_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_free(strbuf *sb);

/* A NULL-terminated list of owned strings, e.g. an argv. */
typedef struct strvec {
    char **items;
    size_t len, cap;
} strvec;

void sv_push(strvec *sv, const char *text);
void sv_free(strvec *sv);

#endif
