/* cairn_trap.h: the one place a CAIRN program stops on a failed guard.
 *
 * A trap prints "trap: REASON" (and " at FILE:LINE:COL" when generated code passes a
 * location) to stderr and aborts. Host code and CUDA device code both call
 * cairn_trap(); in a device lane it prints and executes the trap instruction. */
#ifndef CAIRN_TRAP_H
#define CAIRN_TRAP_H

#ifdef __CUDACC__
#define CAIRN_HD __host__ __device__
#else
#define CAIRN_HD
#endif

#ifdef __cplusplus
#define CAIRN_NORETURN [[noreturn]]
extern "C" {
#else
#define CAIRN_NORETURN _Noreturn
#endif

/* Where a guard sits in the .cairn source; file may be NULL when unknown. */
typedef struct cairn_loc {
    const char *file;
    int line, col;
} cairn_loc;

/* For callers (C users) that have no source location to give. */
#ifdef __cplusplus
#define CAIRN_NOLOC (cairn_loc{0, 0, 0})
#else
#define CAIRN_NOLOC ((cairn_loc){0, 0, 0})
#endif

#ifndef __CUDA_ARCH__
/* Host side: prints and aborts; never returns. */
CAIRN_NORETURN void cairn_trap_at(const char *reason, cairn_loc loc);
CAIRN_NORETURN void cairn_trap(const char *reason);
#endif

#ifdef __cplusplus
}
#endif

#ifdef __CUDA_ARCH__
#include <cstdio>
/* Device side: the same message, then the hardware trap (kills the kernel). */
static __device__ inline void cairn_trap_at(const char *reason, cairn_loc loc) {
    if (loc.file)
        printf("trap: %s at %s:%d:%d\n", reason, loc.file, loc.line, loc.col);
    else
        printf("trap: %s\n", reason);
    __trap();
}
static __device__ inline void cairn_trap(const char *reason) {
    cairn_loc none = {0, 0, 0};
    cairn_trap_at(reason, none);
}
#endif

#endif
