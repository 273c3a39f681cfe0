/* cairn_lib.c: traps as error statuses in a library build (see cairn_lib.h).
 *
 * Per thread: the innermost frame, the last trap's record, and the buffers allocated
 * and not yet released, newest first, each numbered in allocation order so that a jump
 * to a frame frees exactly those numbered after the frame's mark. */
#include "cairn_lib.h"
#include "cairn_device.h" /* the host entries' copies of an emulated build */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Put before every buffer: its neighbours in this thread's list and its number. The
 * union keeps the data that follows aligned as malloc's would be. */
typedef union lib_header {
    struct {
        union lib_header *prev, *next; /* next is older */
        unsigned long seq;
    } h;
    max_align_t align;
} lib_header;

static _Thread_local cairn_trap_frame *lib_top;
static _Thread_local cairn_trap_record lib_record;
static _Thread_local lib_header *lib_newest;
static _Thread_local unsigned long lib_seq;

void cairn_lib_push(cairn_trap_frame *f, int clear) {
    if (clear) memset(&lib_record, 0, sizeof lib_record);
    f->prev = lib_top;
    f->mark = lib_seq;
    lib_top = f;
}

void cairn_lib_leave(cairn_trap_frame *f) { lib_top = f->prev; }

int cairn_lib_caught(cairn_trap_frame *f) {
    lib_top = f->prev;
    while (lib_newest && lib_newest->h.seq > f->mark) {
        lib_header *h = lib_newest;
        lib_newest = h->h.next;
        if (lib_newest) lib_newest->h.prev = NULL;
        free(h);
    }
    return 1;
}

const cairn_trap_record *cairn_lib_last(void) { return &lib_record; }

void cairn_lib_trap(const char *reason, cairn_loc loc) {
    if (!lib_top) return;
    snprintf(lib_record.message, sizeof lib_record.message, "%s", reason);
    lib_record.file = loc.file;
    lib_record.line = loc.file ? loc.line : 0;
    lib_record.col = loc.file ? loc.col : 0;
    longjmp(lib_top->jump, 1);
}

CAIRN_NORETURN void cairn_lib_rethrow(const cairn_trap_record *r) {
    cairn_loc at = {r->file, r->line, r->col};
    cairn_trap_at(r->message, at);
}

void cairn_lib_check_pointer(const void *p, uint64_t n, const char *name, cairn_loc at) {
    if (p || n == 0) return;
    char reason[160];
    snprintf(reason, sizeof reason, "%.64s is a NULL pointer with %llu elements", name,
             (unsigned long long)n);
    cairn_trap_at(reason, at);
}

#ifndef CAIRN_CUDA /* an emulated build: every placement is host memory */
void cairn_device_check_place(const void *p, uint64_t n, int place, const char *name,
                              cairn_loc at) {
    (void)place;
    cairn_lib_check_pointer(p, n, name, at);
}

void *cairn_device_copy_in(const void *host, uint64_t n, size_t size, int place, cairn_loc at) {
    (void)place;
    void *dev = cairn_lib_zeroed(n, size, at);
    if (n) memcpy(dev, host, (size_t)n * size);
    return dev;
}

void cairn_device_copy_out(void *host, const void *dev, uint64_t n, size_t size, cairn_loc at) {
    (void)at;
    if (n) memcpy(host, dev, (size_t)n * size);
}

void cairn_device_drop(void *dev, int place) {
    (void)place;
    cairn_lib_release(dev);
}
#endif

void *cairn_lib_zeroed(uint64_t n, size_t size, cairn_loc at) {
    if (n == 0) return NULL;
    if (n > (SIZE_MAX - sizeof(lib_header)) / size) cairn_trap_at("buffer too large", at);
    lib_header *h = calloc(1, sizeof(lib_header) + (size_t)n * size);
    if (!h) cairn_trap_at("out of memory for a buffer", at);
    h->h.seq = ++lib_seq;
    h->h.next = lib_newest;
    if (lib_newest) lib_newest->h.prev = h;
    lib_newest = h;
    return h + 1;
}

void cairn_lib_release(void *p) {
    if (!p) return;
    lib_header *h = (lib_header *)p - 1;
    if (h->h.prev) h->h.prev->h.next = h->h.next;
    else lib_newest = h->h.next;
    if (h->h.next) h->h.next->h.prev = h->h.prev;
    free(h);
}
