/* cmd_run.c: `cairn run FILE [flags] [--observe LOG] [--observe-raw DIR] [-- ARGS]`:
 * builds into the content-addressed cache (driver.h) and replaces itself with the
 * program, so the exit status is main's return value and a trap's abort is the
 * program's own. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "driver/driver.h"
#include "lib/fs.h"

const char cmd_run_help[] =
    "usage: cairn run FILE [--cc gcc|clang|PATH] [--sanitize address,undefined|thread]\n"
    "                 [-O0..-O3] [--emit-c DIR] [--target host|sm_NN] [--emulate]\n"
    "                 [--observe LOG] [--observe-raw DIR] [-- ARGS...]\n"
    "\n"
    "Builds FILE as `cairn build` does, into the cache ($CAIRN_CACHE, else ~/.cache/cairn;\n"
    "an unchanged program and flags reuse the last build), then runs it with ARGS.\n"
    "The exit status is main's return value; a failed guard prints\n"
    "`trap: REASON at FILE:LINE:COL` and exits non-zero (SIGABRT).\n"
    "\n"
    "  --observe LOG      append one JSON line per observe(...) to LOG:\n"
    "                     {\"name\":...,\"type\":...,\"count\":N,\"sha256\":...} (sets CAIRN_OBSERVE)\n"
    "  --observe-raw DIR  also write each observation's raw bits to DIR/NAME.SEQ.bin\n"
    "                     (sets CAIRN_OBSERVE_RAW; DIR is created)\n"
    "  --target, --emulate  as for cairn build: a CUDA target runs its device work on the\n"
    "                     GPU (no GPU: one line, exit 2); the host target and --emulate\n"
    "                     run it on host threads\n"
    "  CAIRN_THREADS=N    width of the host pool that runs parallel regions (and emulated\n"
    "                     device work)\n"
    "\n"
    "Exit codes of cairn itself (before the program starts): 1 refused, 2 bad flag or\n"
    "environment, 3 internal error.\n";

typedef struct RunOptions {
    BuildOptions build;
    const char *observe, *observe_raw;
    char **args; /* after `--` */
    int nargs;
} RunOptions;

static int parse(int argc, char **argv, RunOptions *o, Err *err) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(cmd_run_help, stdout);
            return -1;
        }
        if (strcmp(a, "--") == 0) {
            o->args = argv + i + 1;
            o->nargs = argc - i - 1;
            break;
        }
        if (strcmp(a, "--observe") == 0 || strcmp(a, "--observe-raw") == 0) {
            if (i + 1 >= argc) return err_fail(err, DRIVER_USAGE, "%s needs a value", a);
            *(strcmp(a, "--observe") == 0 ? &o->observe : &o->observe_raw) = argv[++i];
            continue;
        }
        if (strcmp(a, "-o") == 0)
            return err_fail(err, DRIVER_USAGE,
                            "%s: cairn run builds into its cache (use cairn build -o)", a);
        int taken = driver_parse_flag(&o->build, argc, argv, &i, err);
        if (taken < 0) return DRIVER_USAGE;
        if (taken) continue;
        if (a[0] == '-' && a[1])
            return err_fail(err, DRIVER_USAGE, "unknown flag '%s' (see cairn run --help)", a);
        if (o->build.source)
            return err_fail(err, DRIVER_USAGE,
                            "one source file at a time ('%s'); pass program "
                            "arguments after --",
                            a);
        o->build.source = a;
    }
    return 0;
}

/* Sets the observation variables (an empty value turns them off for the program). */
static int observe_env(const RunOptions *o, Err *err) {
    if (o->observe_raw && fs_mkdirs(o->observe_raw, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "--observe-raw: cannot create %s", o->observe_raw);
    if (o->observe) setenv("CAIRN_OBSERVE", o->observe, 1);
    if (o->observe_raw) setenv("CAIRN_OBSERVE_RAW", o->observe_raw, 1);
    return 0;
}

int cmd_run(int argc, char **argv) {
    RunOptions o = {0};
    Err err = {{0}};
    int status = parse(argc, argv, &o, &err);
    if (status < 0) return 0;
    char *exe = NULL;
    if (status == 0) status = driver_build_cached(&o.build, &exe, &err);
    if (status == 0) status = observe_env(&o, &err);
    if (status == 0) {
        char **child = calloc((size_t)o.nargs + 2, sizeof *child);
        child[0] = exe;
        for (int i = 0; i < o.nargs; i++) child[i + 1] = o.args[i];
        fflush(NULL);
        execv(exe, child);
        err_set(&err, "cannot run %s: %s", exe, strerror(errno));
        free(child);
        status = DRIVER_USAGE;
    }
    free(exe);
    if (status != DRIVER_REFUSED) fprintf(stderr, "cairn run: error: %s\n", err.msg);
    return status;
}
