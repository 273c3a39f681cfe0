/* arena.h: a bump allocator. A compile allocates every node, string and type from one
 * arena and frees them all at once; nothing in the tree is freed alone. Allocation never
 * fails silently: out of memory aborts with a message (the compiler cannot go on). */
#ifndef CAIRN_ARENA_H
#define CAIRN_ARENA_H

#include <stddef.h>

typedef struct Arena Arena;

Arena *arena_new(void);
void arena_free(Arena *a);
/* Zeroed memory, aligned for any object (strings below are packed unaligned). */
void *arena_alloc(Arena *a, size_t size);
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
/* A copy of n pointers (e.g. a list grown with malloc while parsing). */
void *arena_copy(Arena *a, const void *src, size_t size);
/* printf into the arena. */
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
