/* lower_c.h: checked CAIRN programs to C11 for the host, and to C11 plus CUDA C++ for a
 * GPU target.
 *
 * The pipeline: the driver loads and checks the program once (frontend.h), then hands
 * the checked Program here. For the host target (and --emulate) everything becomes one
 * C file; device work runs on host threads (lower_emulate.c: device parallel regions on
 * the pool, blocks over the pool with each block's threads phase by phase). For a CUDA
 * target the host code is the same C and each device region becomes a kernel and a
 * launcher in a .cu file (lower_cuda.c) that nvcc compiles beside it.
 *
 * The generated C includes "cairn.h" and compiles without warnings under gcc and clang
 * with -std=c11 -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math. Every guard the
 * language demands is explicit in it (overflow, division by zero, bounds, extents), each
 * trapping with the .cairn location. Alongside, it collects the program's roundings for
 * the receipt (numerics.c) and the runtime modules it calls. */
#ifndef CAIRN_LOWER_C_H
#define CAIRN_LOWER_C_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "ast.h"
#include "diag.h"
#include "driver_fs.h"

typedef struct lower_output {
    strbuf c;         /* the host C file */
    strbuf cu;        /* CUDA: kernels and launchers; empty for the host */
    cJSON *numerics;  /* caller's object: {"function": [entries...]} is added */
    unsigned modules; /* LOWER_MODULE_* (lower_c_internal.h): runtime modules called */
    bool has_device;  /* the program holds device work */
} lower_output;

/* Lowers the checked program p (p->checked) for the host (cuda false: device work
 * emulated) or for a CUDA target. Returns 0, or 1 when something cannot be lowered
 * (reported to d). */
int lower_program(Program *p, Diags *d, bool cuda, lower_output *out);

#endif
