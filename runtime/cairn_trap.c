/* cairn_trap.c: host side of the trap (see cairn_trap.h).
 *
 * One trap per process: the first thread to trap prints its line and aborts; a thread
 * that traps after it (another pool worker whose lane failed at the same moment) prints
 * nothing and waits for the abort, so a region whose lanes fail at once reports one
 * line, as a device launch does (docs/devices.md, "Traps"). */
#include "cairn_trap.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int cairn__trapping; /* set by the first trap; never cleared (the process ends) */

_Noreturn void cairn_trap_at(const char *reason, cairn_loc loc) {
    if (__atomic_exchange_n(&cairn__trapping, 1, __ATOMIC_SEQ_CST))
        for (;;) pause(); /* another thread is reporting its trap and aborting */
    if (loc.file) fprintf(stderr, "trap: %s at %s:%d:%d\n", reason, loc.file, loc.line, loc.col);
    else fprintf(stderr, "trap: %s\n", reason);
    fflush(stderr);
    abort();
}

_Noreturn void cairn_trap(const char *reason) {
    cairn_loc none = {0, 0, 0};
    cairn_trap_at(reason, none);
}
