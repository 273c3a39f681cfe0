/* lower.h: checked CAIRN programs to C11 for the host, and to C11 plus CUDA C++ for a
 * GPU target.
 *
 * The pipeline: the driver loads and checks the program once (frontend.h), then hands
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
 * trapping with the .cairn location. Alongside, it collects the program's roundings for
 * the receipt (numerics.c) and the runtime modules it calls. */
#ifndef CAIRN_LOWER_H
#define CAIRN_LOWER_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "syntax/syntax.h"
#include "base/base.h"

/* The runtime modules a lowered program calls (LowerOutput.modules): each place in the
 * lowering that emits a call into a runtime source records its module with
 * lower_use_runtime (lower_c_internal.h), as it records roundings, and the driver links
 * exactly those sources and the modules they call in turn (driver.c's table). */
enum {
    LOWER_MODULE_TRAP = 1u << 0,           /* cairn_trap.c: every program (its guards) */
    LOWER_MODULE_POOL = 1u << 1,           /* cairn_pool.c: parallel regions, pooled reduces */
    LOWER_MODULE_SUM = 1u << 2,            /* cairn_sum.c: reduce + parallel over floats */
    LOWER_MODULE_FLOAT = 1u << 3,          /* cairn_float.c: array conversions (no caller) */
    LOWER_MODULE_OBSERVE = 1u << 4,        /* cairn_observe.c: observe */
    LOWER_MODULE_ENCLOSE = 1u << 5,        /* cairn_enclose.c: the exact bracket GEMM */
    LOWER_MODULE_ENCLOSE_DIGEST = 1u << 6, /* cairn_enclose_digest.c (no caller) */
    LOWER_MODULE_MM_ENCLOSE = 1u << 7,     /* cairn_mm_enclose.c: mm_enclose */
    LOWER_MODULE_MMA = 1u << 8,            /* cairn_mma.c: mma, mma_unordered's checks */
    LOWER_MODULE_MMA_TILED = 1u << 9,      /* cairn_mma_tiled.c: emulated mma_unordered */
    LOWER_MODULE_DEVICE = 1u << 10,        /* cairn_device_cuda.h: a CUDA build's device work */
    LOWER_MODULE_ARGS = 1u << 11,          /* cairn_args.c: main's command-line parameters */
    LOWER_MODULE_NPY = 1u << 12,           /* cairn_npy.c: .npy files (through args) */
    LOWER_MODULE_LIB = 1u << 13,           /* cairn_lib.c: a library's traps as statuses */
    LOWER_MODULE_CR = 1u << 14,            /* cairn_cr.h (header only): std.cr in either file */
    LOWER_MODULE_DSUM = 1u << 15,          /* cairn_dsum.c: a device reduce + over floats */
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
     * k_last_error) and the file name of its header, which the C includes ("libk.h").
     * NULL: an executable, whose C has a main. */
    const char *lib_prefix, *lib_header;
} LowerOptions;

typedef struct LowerOutput {
    StrBuf c;         /* the host C file */
    StrBuf cu;        /* CUDA: kernels and launchers; empty for the host */
    StrBuf h;         /* a library's C header: one entry per pub fn; empty otherwise */
    cJSON *library;   /* a library: its entries for the receipt (made here); else NULL */
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
