/* cairn_trap.c: host side of the trap (see cairn_trap.h).
 *
 * One trap per process: the first thread to trap prints its line and aborts; a thread
 * that traps after it (another pool worker whose lane failed at the same moment) prints
 * nothing and waits for the abort, so a region whose lanes fail at once reports one
 * line, as a device launch does (docs/devices.md, "Traps"). A CUDA build may have
 * installed a function (cairn_trap_set_earlier) that finds a lane's trap from a region
 * that ran before this host trap: that one is reported instead, as the program would
 * have stopped there. A library (CAIRN_LIB) hands a trap under an entry's frame to
 * cairn_lib_trap before any of this: it jumps back to the entry, which returns a status
 * (cairn_lib.h); only a trap with no frame to go to is reported here. */
#include "cairn_trap.h"
#ifdef CAIRN_LIB
#include "cairn_lib.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int cairn__trapping; /* set by the first trap; never cleared (the process ends) */
static cairn_trap_earlier_fn cairn__earlier;

void cairn_trap_set_earlier(cairn_trap_earlier_fn fn) {
    __atomic_store_n(&cairn__earlier, fn, __ATOMIC_SEQ_CST);
}

_Noreturn void cairn_trap_at(const char *reason, cairn_loc loc) {
#ifdef CAIRN_LIB
    cairn_lib_trap(reason, loc); /* a library: the caller's entry returns an error (cairn_lib.h) */
#endif
    if (__atomic_exchange_n(&cairn__trapping, 1, __ATOMIC_SEQ_CST))
        for (;;) pause(); /* another thread is reporting its trap and aborting */
    cairn_trap_earlier_fn earlier = __atomic_load_n(&cairn__earlier, __ATOMIC_SEQ_CST);
    if (earlier) earlier(&reason, &loc);
    if (loc.file) fprintf(stderr, "trap: %s at %s:%d:%d\n", reason, loc.file, loc.line, loc.col);
    else fprintf(stderr, "trap: %s\n", reason);
    fflush(stderr);
    abort();
}

_Noreturn void cairn_trap(const char *reason) {
    cairn_loc none = {0, 0, 0};
    cairn_trap_at(reason, none);
}
