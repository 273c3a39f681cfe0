/* cairn_args.h: main's parameters from the command line (docs/language.md, "main's
 * parameters").
 *
 * A program whose main takes parameters is run as `prog NAME=VALUE ... [--out DIR]`:
 * a scalar's VALUE is a number or true/false, a view's a .npy file (cairn_npy.h) holding
 * its element type, or `zeros` for an rw view. The generated main describes the
 * parameters in a table of cairn_param, calls cairn_args_read, evaluates each view's
 * declared extent and hands it to cairn_args_view, calls the CAIRN main, and ends with
 * cairn_args_finish, which writes every rw view to DIR/NAME.npy when --out was given.
 *
 * Every mistake (a missing, unknown or repeated parameter, a value that does not parse
 * or fit its type, a file that is not .npy, truncated, in Fortran order, of another
 * dtype or of another length than the declared extent) is one message on stderr naming
 * the parameter, the file and what it holds, and the process exits with
 * CAIRN_EXIT_CANNOT_RUN (126) before main runs. `prog --help` lists the parameters. */
#ifndef CAIRN_ARGS_H
#define CAIRN_ARGS_H

#include <stdbool.h>
#include <stdint.h>

#include "cairn_npy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One parameter of main, as the generated table describes it. */
typedef struct cairn_param {
    const char *name;
    const char *type; /* a scalar's type, or a view's element type: "f32", "usize" ... */
    int view;         /* 0 a scalar, 1 an ro view, 2 an rw view */
    int extent_param; /* for a view whose extent is exactly a scalar parameter: its index */
    const char *decl; /* the type as written: "ro<f32>[n]" */
} cairn_param;

/* What the command line gave for one parameter. */
typedef struct cairn_arg {
    const char *text; /* VALUE of NAME=VALUE; NULL when not given */
    union {
        int64_t i;  /* signed integers */
        uint64_t u; /* unsigned integers and usize */
        double f64;
        float f32;
        bool b;
    } value;
    void *data;     /* a view's elements (malloc'd) */
    uint64_t count; /* a view's element count */
    int ndim;       /* a view's shape, as its file had it (zeros: 1-D) */
    uint64_t shape[CAIRN_NPY_MAX_DIMS];
} cairn_arg;

typedef struct cairn_args {
    const cairn_param *params;
    int n;
    cairn_arg *args;     /* n of them */
    const char *prog;    /* argv[0]'s last component, for messages */
    const char *out_dir; /* --out DIR, or NULL */
} cairn_args;

/* Reads argv into a->args: every scalar parsed (one named by a view's extent and not
 * given: that view's file's element count), every view's file read and its dtype
 * checked. `--help` prints the parameters and exits 0; a mistake exits 126. */
void cairn_args_read(cairn_args *a, int argc, char **argv);

/* View k's declared extent, evaluated by the caller: its file must hold that many
 * elements; `zeros` allocates them. A mismatch exits 126. */
void cairn_args_view(cairn_args *a, int k, uint64_t extent);

/* After main: with --out DIR, every rw view to DIR/NAME.npy (DIR is created); then
 * everything is freed. A write that fails exits 126. */
void cairn_args_finish(cairn_args *a);

#ifdef __cplusplus
}
#endif

#endif
