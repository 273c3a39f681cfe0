/* cmd_run.c: `cairn run FILE [flags] [--observe LOG] [--observe-raw DIR] [--show]
 * [--observe-file FILE] [-- ARGS]`: builds into the content-addressed cache (driver.h)
 * and replaces itself with the program, so the exit status is main's return value and a
 * trap's abort is the program's own. With --show or --observe-file it runs the program as
 * a child instead, reads what it observed (lib/obs_set.h) once it ends, prints or saves
 * it, and then ends as the program did: its exit status, or the signal that killed it.
 * Its own failures use the statuses env(1) and timeout(1) use (125, 126, 127), which a
 * program's main is not taken for. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "driver/driver.h"
#include "lib/fs.h"
#include "lib/obs_set.h"

/* cairn run's own failures, apart from every status main can be meant to give. */
enum {
    RUN_FAILED = 125,      /* refused, a bad flag, an internal error: no program ran */
    RUN_CANNOT_EXEC = 126, /* built, but it could not be started */
    RUN_NO_COMPILER = 127, /* no C compiler (or nvcc) to build it with */
};

const char cmd_run_help[] =
    "usage: cairn run FILE [--cc gcc|clang|PATH] [--sanitize address,undefined|thread]\n"
    "                 [-O0..-O3] [--emit-c DIR] [--target host|sm_NN] [--emulate]\n"
    "                 [--observe LOG] [--observe-raw DIR] [--show] [--observe-file FILE]\n"
    "                 [-- ARGS...]\n"
    "\n"
    "Builds FILE as `cairn build` does, into the cache ($CAIRN_CACHE, else ~/.cache/cairn;\n"
    "an unchanged program and flags reuse the last build), then runs it with ARGS.\n"
    "\n"
    "  --show              when the program ends, print every observe(...) it made,\n"
    "                      decoded (as cairn show does): a scalar's value and bits; an\n"
    "                      array's type[count], min, max, NaN and inf counts, first and\n"
    "                      last elements\n"
    "  --observe-file FILE save every observation, bits included, in one observation file\n"
    "                      (cairn show and cairn diff read it)\n"
    "  --observe LOG       append one JSON line per observe(...) to LOG:\n"
    "                      {\"name\":...,\"type\":...,\"count\":N,\"sha256\":...} (sets CAIRN_OBSERVE)\n"
    "  --observe-raw DIR   write each observation's raw bits to DIR/NAME.SEQ.bin and its\n"
    "                      line to DIR/index.jsonl (sets CAIRN_OBSERVE_RAW; DIR is created)\n"
    "  --target, --emulate as for cairn build: a CUDA target runs its device work on the\n"
    "                      GPU; the host target and --emulate run it on host threads\n"
    "  CAIRN_THREADS=N     width of the host pool that runs parallel regions (and emulated\n"
    "                      device work)\n"
    "\n"
    "Exit status: the program's. main's return value (modulo 256); a failed guard prints\n"
    "`trap: REASON at FILE:LINE:COL` and aborts (SIGABRT: 134 in a shell). cairn run's own\n"
    "failures use the statuses env and timeout use, which main is not taken for:\n"
    "  125  cairn run failed: the program was refused, a bad flag, an internal error\n"
    "  126  the program was built but could not run (it could not be started; or no\n"
    "       CUDA device, a bad CAIRN_THREADS: the runtime's own 126)\n"
    "  127  no C compiler (or nvcc) to build it with\n";

typedef struct RunOptions {
    BuildOptions build;
    const char *observe, *observe_raw, *observe_file;
    int show;
    char **args; /* after `--` */
    int nargs;
} RunOptions;

/* Takes argv[*i] when it is one of run's own flags: 1, 0 when not, -1 on error. */
static int run_flag(int argc, char **argv, int *i, RunOptions *o, Err *err) {
    const char *a = argv[*i];
    if (strcmp(a, "--show") == 0) return o->show = 1;
    const char **slot = strcmp(a, "--observe") == 0        ? &o->observe
                        : strcmp(a, "--observe-raw") == 0  ? &o->observe_raw
                        : strcmp(a, "--observe-file") == 0 ? &o->observe_file
                                                           : NULL;
    if (!slot) return 0;
    if (*i + 1 >= argc) return err_set(err, "%s needs a value", a);
    *slot = argv[++*i];
    return 1;
}

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
        int own = run_flag(argc, argv, &i, o, err);
        if (own < 0) return RUN_FAILED;
        if (own) continue;
        if (strcmp(a, "-o") == 0)
            return err_fail(err, RUN_FAILED,
                            "%s: cairn run builds into its cache (use cairn build -o)", a);
        int taken = driver_parse_flag(&o->build, argc, argv, &i, err);
        if (taken < 0) return RUN_FAILED;
        if (taken) continue;
        if (a[0] == '-' && a[1])
            return err_fail(err, RUN_FAILED, "unknown flag '%s' (see cairn run --help)", a);
        if (o->build.source)
            return err_fail(err, RUN_FAILED,
                            "one source file at a time ('%s'); pass program "
                            "arguments after --",
                            a);
        o->build.source = a;
    }
    return 0;
}

/* Sets the observation variables (an empty value turns them off for the program). A raw
 * folder's index is removed first, so it never shows an earlier run's observations. */
static int observe_env(const RunOptions *o, const char *raw, Err *err) {
    if (raw && fs_mkdirs(raw, NULL) != 0)
        return err_fail(err, RUN_FAILED, "cannot create %s: %s", raw, strerror(errno));
    if (raw) {
        char index[4200];
        snprintf(index, sizeof index, "%s/index.jsonl", raw);
        if (unlink(index) != 0 && errno != ENOENT)
            return err_fail(err, RUN_FAILED, "cannot remove %s: %s", index, strerror(errno));
        setenv("CAIRN_OBSERVE_RAW", raw, 1);
    }
    if (o->observe) setenv("CAIRN_OBSERVE", o->observe, 1);
    return 0;
}

/* The program's argv: EXE, then the arguments after `--`; malloc'd. */
static char **child_argv(const RunOptions *o, char *exe) {
    char **child = calloc((size_t)o->nargs + 2, sizeof *child);
    if (!child) return NULL;
    child[0] = exe;
    for (int i = 0; i < o->nargs; i++) child[i + 1] = o->args[i];
    return child;
}

/* Runs EXE as a child and waits; its wait status, or -1. Interrupts from the terminal
 * reach the child; this process outlives them to show what was observed. */
static int run_child(const RunOptions *o, char *exe, Err *err) {
    char **child = child_argv(o, exe);
    if (!child) return err_set(err, "out of memory");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execv(exe, child);
        fprintf(stderr, "cairn run: error: cannot run %s: %s\n", exe, strerror(errno));
        _exit(RUN_CANNOT_EXEC);
    }
    free(child);
    if (pid < 0) return err_set(err, "cannot start %s: %s", exe, strerror(errno));
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ignore, &old_int);
    sigaction(SIGQUIT, &ignore, &old_quit);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return status;
}

/* Ends this process as the program ended: its exit status, or the same signal (with
 * core dumps off, as timeout(1) does: the program's own core, if any, is the one). */
static int end_like(int status) {
    if (!WIFSIGNALED(status)) return WEXITSTATUS(status);
    int sig = WTERMSIG(status);
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    fflush(NULL);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    return 128 + sig; /* a signal that does not end a process */
}

/* --show / --observe-file: run as a child, then print or save what it observed from the
 * raw folder RAW. */
static int run_and_report(const RunOptions *o, char *exe, const char *raw, Err *err) {
    int status = run_child(o, exe, err);
    if (status < 0) return RUN_FAILED;
    char index[4200];
    snprintf(index, sizeof index, "%s/index.jsonl", raw);
    ObsSet set = {0};
    int rc = access(index, F_OK) == 0 ? obs_set_read(raw, &set, err) : 0;
    if (rc == 0 && o->show) cmd_show_print(stdout, &set, 0);
    if (rc == 0 && o->observe_file) rc = obs_set_write(o->observe_file, &set, err);
    obs_set_free(&set);
    if (rc != 0) {
        fprintf(stderr, "cairn run: error: %s\n", err->msg);
        return RUN_FAILED;
    }
    return end_like(status);
}

/* The build's failure as run's status (the driver's statuses are cairn build's). */
static int failure_status(int driver_status) {
    return driver_status == DRIVER_NO_TOOL ? RUN_NO_COMPILER : RUN_FAILED;
}

int cmd_run(int argc, char **argv) {
    RunOptions o = {0};
    Err err = {{0}};
    int status = parse(argc, argv, &o, &err);
    if (status < 0) return 0;
    char *exe = NULL, tmp[64] = "";
    int build = status == 0 ? driver_build_cached(&o.build, &exe, &err) : 0;
    if (build != 0) status = failure_status(build);
    const char *raw = o.observe_raw;
    if (status == 0 && !raw && (o.show || o.observe_file)) {
        const char *dir = getenv("TMPDIR");
        snprintf(tmp, sizeof tmp, "%s/cairn-run-XXXXXX",
                 dir && *dir && strlen(dir) < 40 ? dir : "/tmp");
        if (!mkdtemp(tmp))
            status = err_fail(&err, RUN_FAILED, "cannot create %s: %s", tmp, strerror(errno));
        raw = tmp;
    }
    if (status == 0) status = observe_env(&o, raw, &err);
    if (status == 0 && (o.show || o.observe_file)) {
        status = run_and_report(&o, exe, raw, &err);
        if (*tmp) fs_remove_tree(tmp);
        free(exe);
        return status;
    }
    if (status == 0) {
        char **child = child_argv(&o, exe);
        fflush(NULL);
        if (child) execv(exe, child);
        err_set(&err, "cannot run %s: %s", exe, strerror(errno));
        free(child);
        status = RUN_CANNOT_EXEC;
    }
    if (*tmp) fs_remove_tree(tmp);
    free(exe);
    if (build != DRIVER_REFUSED) fprintf(stderr, "cairn run: error: %s\n", err.msg);
    return status;
}
