/* cairn_lib.h: a CAIRN program built as a library (`cairn build --lib`), where a trap
 * never ends the host process.
 *
 * The runtime is compiled with -DCAIRN_LIB=1 for a library. Each exported entry pushes a
 * cairn_trap_frame and calls setjmp on it; cairn_trap_at (cairn_trap.c) then records the
 * trap's message and location in this thread's cairn_trap_record and jumps back to the
 * innermost frame of the thread, where the entry frees what the call had allocated and
 * returns its error status. The record is per thread (a caller's PREFIX_last_error reads
 * it), so threads calling entries at once each see their own trap.
 *
 * Work on the pool (cairn_pool.c) runs each block under a frame of the worker's own: a
 * lane that traps ends its block, the region hands out no more blocks, and when every
 * worker has left it the first trap is raised again on the thread that started the
 * region, as if it had trapped there. Locks are never held across a call that may trap.
 *
 * Buffers (`buffer x:T[n] = zeroed`, and the runtime's own per-region arrays) come from
 * cairn_lib_zeroed and go back through cairn_lib_release; a jump to a frame frees every
 * one its thread allocated after the frame was pushed, so a trapped call leaks nothing
 * it allocated that way. */
#ifndef CAIRN_LIB_H
#define CAIRN_LIB_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include "cairn_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN_LIB_MESSAGE_MAX 256

/* What the last trap on this thread said; message "" and line 0 when none. */
typedef struct cairn_trap_record {
    char message[CAIRN_LIB_MESSAGE_MAX];
    const char *file; /* the .cairn source as the build named it; NULL when unknown */
    int line, col;
} cairn_trap_record;

/* Where a trap on this thread jumps: pushed by an entry (or a pool block), popped by
 * cairn_lib_leave on the way out or cairn_lib_caught after the jump. */
typedef struct cairn_trap_frame {
    jmp_buf jump;
    struct cairn_trap_frame *prev;
    unsigned long mark; /* allocations numbered above it are the frame's */
} cairn_trap_frame;

/* Pushes f (clear: and empties this thread's record, as an entry does on each call). */
void cairn_lib_push(cairn_trap_frame *f, int clear);
/* Pops f after its call returned. */
void cairn_lib_leave(cairn_trap_frame *f);
/* Pops f after a trap jumped to it and frees what was allocated under it; returns 1. */
int cairn_lib_caught(cairn_trap_frame *f);
/* This thread's record of its last trap. */
const cairn_trap_record *cairn_lib_last(void);

/* From cairn_trap_at: records the trap and jumps to this thread's innermost frame;
 * returns only when the thread has none (the caller then reports it as a program would). */
void cairn_lib_trap(const char *reason, cairn_loc loc);
/* Raises a trap recorded on another thread (a pool worker's) on this one. */
CAIRN_NORETURN void cairn_lib_rethrow(const cairn_trap_record *r);

/* An entry's pointer argument `name`: NULL with n > 0 elements traps at `at`. */
void cairn_lib_check_pointer(const void *p, uint64_t n, const char *name, cairn_loc at);

/* n zeroed elements of `size` bytes, freed by cairn_lib_release or by a trap's jump. */
void *cairn_lib_zeroed(uint64_t n, size_t size, cairn_loc at);
void cairn_lib_release(void *p);

#ifdef __cplusplus
}
#endif

#endif
