/* arena.c: the bump allocator behind the syntax tree (see arena.h). */
#include "base/arena.h"

#include <assert.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct Chunk {
    struct Chunk *next;
    size_t used, cap;
    max_align_t data[];
} Chunk;

struct Arena {
    Chunk *head;
};

/* Chunks grow from 16 KiB to 1 MiB, so a small program stays small and a large one
 * gets chunks that come from mmap already zeroed (calloc knows: no memset). */
enum { FIRST_CHUNK = 16 * 1024, CHUNK_BYTES = 1024 * 1024 };

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) {
        fputs("cairn: out of memory\n", stderr);
        abort();
    }
    return p;
}

Arena *arena_new(void) {
    Arena *a = xmalloc(sizeof *a);
    a->head = NULL;
    return a;
}

void arena_free(Arena *a) {
    if (!a) return;
    for (Chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

void *arena_alloc(Arena *a, size_t size) {
    size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size == 0) size = align;
    Chunk *c = a->head;
    if (c) c->used = (c->used + align - 1) / align * align; /* strings leave it unaligned */
    if (!c || c->used > c->cap || c->cap - c->used < size) {
        size_t cap = c ? (c->cap < CHUNK_BYTES ? c->cap * 2 : CHUNK_BYTES) : FIRST_CHUNK;
        if (cap < size) cap = size;
        c = calloc(1, sizeof(Chunk) + cap);
        if (!c) {
            fputs("cairn: out of memory\n", stderr);
            abort();
        }
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used; /* zero: chunks are calloc'ed, never reused */
    c->used += size;
    assert(c->used <= c->cap && (uintptr_t)p % _Alignof(max_align_t) == 0);
    return p;
}

/* Bytes with no alignment (strings), from the current chunk's end. */
static char *arena_bytes(Arena *a, size_t n) {
    Chunk *c = a->head;
    if (c && c->cap - c->used >= n) {
        char *p = (char *)c->data + c->used;
        c->used += n;
        return p;
    }
    return arena_alloc(a, n);
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
    char *p = arena_bytes(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void *arena_copy(Arena *a, const void *src, size_t size) {
    void *p = arena_alloc(a, size);
    if (size) memcpy(p, src, size);
    return p;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
    if (!fmt) fmt = ""; /* also quiets gcc's -Wformat-truncation under UBSan */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    char *p = arena_alloc(a, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}
