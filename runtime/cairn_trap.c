/* cairn_trap.c: host side of the trap (see cairn_trap.h). */
#include "cairn_trap.h"
#ifdef CAIRN_LIB
#include "cairn_lib.h"
#endif

#include <stdio.h>
#include <stdlib.h>

_Noreturn void cairn_trap_at(const char *reason, cairn_loc loc) {
#ifdef CAIRN_LIB
    cairn_lib_trap(reason, loc); /* a library: the caller's entry returns an error (cairn_lib.h) */
#endif
    if (loc.file) fprintf(stderr, "trap: %s at %s:%d:%d\n", reason, loc.file, loc.line, loc.col);
    else fprintf(stderr, "trap: %s\n", reason);
    fflush(stderr);
    abort();
}

_Noreturn void cairn_trap(const char *reason) {
    cairn_loc none = {0, 0, 0};
    cairn_trap_at(reason, none);
}
