/* driver.h: `cairn build` and `cairn run` behind their command lines.
 *
 * The driver loads and checks a program once (check/check.h), hands the checked program
 * to the lowering (lower/lower.h: C for the host, device work emulated; or C plus CUDA C++
 * for --target sm_NN), finds the C compiler (and nvcc for a CUDA build), compiles the
 * runtime that travels inside this binary into a content-addressed cache, compiles and
 * links the program (nvcc links a CUDA build), and writes the build receipt
 * (receipt.h). Errors come back as a status and a one-line message (lib/err.h's Err)
 * for the one place that prints them (cmd_build.c, cmd_run.c). Statuses: 0 built, 1 the program was refused (diagnostics already
 * printed), 2 usage or environment (bad flag, unwritable output), 3 the C compiler failed
 * on generated code or the runtime (a bug in cairn), 4 no C compiler (or nvcc) to build
 * with (`cairn build` reports it as 2, `cairn run` as 127, as a shell reports a command
 * it cannot find). */
#ifndef CAIRN_DRIVER_H
#define CAIRN_DRIVER_H

#include <stddef.h>

#include "base/base.h"
#include "lib/err.h"

enum {
    DRIVER_OK = 0,
    DRIVER_REFUSED = 1,
    DRIVER_USAGE = 2,
    DRIVER_INTERNAL = 3,
    DRIVER_NO_TOOL = 4
};

/* The runtime's sources carried inside the binary (scripts/embed_runtime.py). */
extern const EmbeddedFile cairn_runtime_files[];
extern const size_t cairn_runtime_file_count;

/* What the build flags say; zero-initialised means the defaults. */
typedef struct BuildOptions {
    const char *source;     /* the .cairn file */
    const char *output;     /* -o; NULL: the source's stem in the current folder */
    const char *cc;         /* --cc gcc|clang|PATH; NULL: $CC, else gcc, else clang */
    const char *sanitize;   /* --sanitize address,undefined|thread; NULL: none */
    const char *emit_c_dir; /* --emit-c DIR: also write the generated C there */
    int opt_level;          /* -O0..-O3; -1 (or 0-initialised opt_set == 0): 2 */
    int opt_set;
    const char *target; /* --target host|sm_NN; NULL: host */
    int emulate;        /* --emulate: device work on host threads, built by the C compiler */
    int emit_only;      /* --emit-only: write --emit-c's files and stop (no compiler runs) */
    int lib;            /* --lib: OUT.so, OUT.a and OUT.h, one entry per pub fn */
    const char *prefix; /* --prefix P: the library's symbols are P_fn (default: from OUT) */
    int no_elide;       /* --no-elide: every guard checked where it runs (none proved) */
    int explain_guards; /* --explain-guards: print the receipt's guard list by line:col */
} BuildOptions;

/* Takes argv[*i] (and its value) when it is a flag `cairn build` knows; returns 1 when
 * taken, 0 when not a build flag, -1 when malformed (err set). */
int driver_parse_flag(BuildOptions *opt, int argc, char **argv, int *i, Err *err);

/* Builds opt->source into opt->output (plus OUT.receipt.json). */
int driver_build(const BuildOptions *opt, Err *err);

/* For `cairn run`: the cached executable for these options, built if missing; its path
 * is stored (malloc'd) in *exe. */
int driver_build_cached(const BuildOptions *opt, char **exe, Err *err);

#endif
