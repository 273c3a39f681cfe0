/* cairn_trap.c: host side of the trap (see cairn_trap.h). */
#include "cairn_trap.h"

#include <stdio.h>
#include <stdlib.h>

_Noreturn void cairn_trap_at(const char *reason, cairn_loc loc) {
    if (loc.file) fprintf(stderr, "trap: %s at %s:%d:%d\n", reason, loc.file, loc.line, loc.col);
    else fprintf(stderr, "trap: %s\n", reason);
    fflush(stderr);
    abort();
}

_Noreturn void cairn_trap(const char *reason) {
    cairn_loc none = {0, 0, 0};
    cairn_trap_at(reason, none);
}
