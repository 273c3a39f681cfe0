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

/* The exit status of a program the runtime could not run: no CUDA device, a bad
 * CAIRN_THREADS, a CUDA error that is not a trap. 126, as a shell or `env` reports a
 * command it found but could not run, so it is never taken for main's own status
 * (`cairn run` passes main's status through; docs/tools.md has the table). */
#define CAIRN_EXIT_CANNOT_RUN 126

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

/* An earlier failure to report instead of a host trap: a CUDA build's launches do not
 * wait for the device, so when host code traps, a lane may already have trapped in a
 * region that came before it. cairn_device_cuda.h installs a function that waits for the
 * device and, when a lane's trap is recorded, gives its reason and location (returning
 * 1); cairn_trap_at then reports that one. NULL (the default): none. */
typedef int (*cairn_trap_earlier_fn)(const char **reason, cairn_loc *loc);
void cairn_trap_set_earlier(cairn_trap_earlier_fn fn);

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
/* Where a device lane's trap goes: the first trap of the program is written into host
 * memory the device maps (cairn_device_cuda.h sets the pointer at start-up), so the
 * host can read it even after the trap has stopped the grid, and reports it as a host
 * trap would: `trap: REASON at FILE:LINE:COL`, then abort. The lane that claims the
 * record (set) writes reason, line and column, fences (system scope) and only then
 * publishes ready; every other trapping lane waits for ready before its own __trap(),
 * so no trap can end the grid while the record is half written. */
typedef struct cairn_device_trap_record {
    int set;       /* 0 until the first trap claims the record */
    int ready;     /* 1 once reason, line and col are written and fenced */
    int line, col; /* 0 when the trap has no source location */
    char reason[112];
} cairn_device_trap_record;
static __device__ cairn_device_trap_record *cairn__device_trap;
#endif

#ifdef __CUDA_ARCH__
#include <cstdio>
/* Device side: the first trap is recorded for the host and published, then the hardware
 * trap stops the kernel (the host reads the record where it waits for the device).
 * Without a record (a C++ user's kernel) it prints the message instead. */
static __device__ __noinline__ void cairn_trap_at(const char *reason, cairn_loc loc) {
    cairn_device_trap_record *r = cairn__device_trap;
    if (r && atomicCAS(&r->set, 0, 1) == 0) {
        volatile cairn_device_trap_record *w = r;
        int k = 0;
        for (; reason[k] && k + 1 < (int)sizeof r->reason; k++) w->reason[k] = reason[k];
        w->reason[k] = '\0';
        w->line = loc.file ? loc.line : 0;
        w->col = loc.file ? loc.col : 0;
        __threadfence_system(); /* the fields reach the host before ready does */
        atomicExch(&r->ready, 1);
        __threadfence_system();
    } else if (r) {
        while (!*(volatile int *)&r->ready) { /* the winner is still writing */
        }
    } else {
        if (loc.file) printf("trap: %s at %s:%d:%d\n", reason, loc.file, loc.line, loc.col);
        else printf("trap: %s\n", reason);
    }
    __trap();
}
static __device__ inline void cairn_trap(const char *reason) {
    cairn_loc none = {0, 0, 0};
    cairn_trap_at(reason, none);
}
#endif

#endif
