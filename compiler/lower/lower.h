/* lower.h: checked CAIRN programs to C11 for the host, and to C11 plus CUDA C++ for a
 * GPU target.
 *
 * The pipeline: the driver loads and checks the program once (check/check.h), then hands
 * the checked Program here. For the host target (and --emulate) everything becomes one
 * C file; device work runs on host threads (lower_emulate.c: device parallel regions on
 * the pool, blocks over the pool with each block's threads phase by phase). For a CUDA
 * target the host code is the same C and each device region becomes a kernel and a
 * launcher in a .cu file (lower_cuda.c) that nvcc compiles beside it. Each target's
 * choices are one table of functions (lower/target_internal.h).
 *
 * The generated C includes "cairn.h" and compiles without warnings under gcc and clang
 * with -std=c11 -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math. Every guard the
 * language demands is explicit in it (overflow, division by zero, bounds, extents), each
 * trapping with the .cairn location. Alongside, it writes the program's roundings for
 * the receipt from the entries the checker recorded (numerics.c serializes them) and
 * collects the runtime modules it calls. */
#ifndef CAIRN_LOWER_H
#define CAIRN_LOWER_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "syntax/syntax.h"
#include "base/base.h"

/* The runtime modules a lowered program calls (LowerOutput.modules), one bit per MODULE
 * row of syntax/ops.def: each place in the lowering that emits a call into a runtime
 * source records its module with lower_use_runtime (lower_c_internal.h), as does every
 * call of a builtin whose module column names one, and the driver links exactly those
 * sources and the modules they call in turn (the same rows). */
enum {
#define MODULE(id, source, calls) LOWER_MODULE_INDEX_##id,
#include "syntax/ops.def"
    LOWER_MODULE_COUNT
};
enum {
    LOWER_MODULE_NONE = 0,
#define MODULE(id, source, calls) LOWER_MODULE_##id = 1u << LOWER_MODULE_INDEX_##id,
#include "syntax/ops.def"
};

/* A place the generated code can trap at, and the function or constant holding it (NULL:
 * an entry's checks of its command line or its caller's arguments). */
typedef struct LowerSite {
    Span span;
    const Item *item;
} LowerSite;

/* What to lower for. */
typedef struct LowerOptions {
    bool cuda; /* a CUDA target: device work as kernels; else emulated on the host */
    /* The device target whose limits the guards of device work keep on both sides
     * ("sm_90", ...; NULL or "host": the device a host build emulates, sm_90). */
    const char *device;
    /* A library (cairn build --lib): the prefix of its exported names ("k": k_dot,
     * k_last_error) and the file name of its header, which the C includes (OUT's file name plus .h).
     * NULL: an executable, whose C has a main. */
    const char *lib_prefix, *lib_header;
    /* cairn build --no-elide: every guard checked where it runs, none proved for a loop
     * (lower_guard.c). */
    bool no_elide;
} LowerOptions;

typedef struct LowerOutput {
    StrBuf c;       /* the host C file */
    StrBuf cu;      /* CUDA: kernels and launchers; empty for the host */
    StrBuf h;       /* a library's C header: one entry per pub fn; empty otherwise */
    cJSON *library; /* a library: its entries for the receipt (made here); else NULL */
    /* The receipt's guard list (made here; the caller deletes it): per function or
     * constant, {"proved": [{"at": "L:C", "guard": KIND, "by": WHY}], "kept": ["L:C"]}. */
    cJSON *guards;
    cJSON *numerics;  /* caller's object: {"function": [entries...]} is added */
    unsigned modules; /* LOWER_MODULE_* bits: the runtime modules it calls */
    /* Every source place the generated code can trap at (each guard's location, as
     * lower_at writes it), in the program's arena: cairn verify gives each a verdict. */
    const LowerSite *sites;
    int nsites;
    bool has_device; /* the program holds device work */
} LowerOutput;

/* Lowers the checked program p (p->checked) for the host (opt->cuda false: device work
 * emulated) or for a CUDA target (opt->device names whose limits the guards keep), as an
 * executable or a library. Returns 0, or 1 when something cannot be lowered (reported
 * to d). */
int lower_program(Program *p, Diags *d, const LowerOptions *opt, LowerOutput *out);

#endif
