/* proc.h: child processes: the C compiler and nvcc the compiler drives, the builds,
 * programs and probes the agent runs (naming: see err.h). A child's stdout and stderr go
 * to a log file; its status comes back as a number: the exit status, 128+signal when a
 * signal killed it, or a negative PROC_ value. */
#ifndef CAIRN_LIB_PROC_H
#define CAIRN_LIB_PROC_H

#include <stddef.h>
#include <sys/types.h>

#define PROC_FAILED  (-1) /* could not be started or waited for */
#define PROC_TIMEOUT (-2) /* proc_watch: ran past its time and was killed */
#define PROC_STOPPED (-3) /* proc_watch: its tick asked to stop it, and it was killed */

/* Starts ARGV (argv[0] a path, or a name found on PATH) in folder CWD (NULL: here) with
 * stdout and stderr written over LOG (NULL: inherited); the pid, or -1. */
pid_t proc_start(char *const argv[], const char *cwd, const char *log);
/* Waits for PID: its status as above. */
int proc_wait(pid_t pid);
/* proc_start + proc_wait. */
int proc_run(char *const argv[], const char *cwd, const char *log);

/* Runs ARGV (as proc_start does) with stdout and stderr captured: *out gets what it
 * wrote, NUL-terminated and malloc'd (*len its length when LEN is not NULL), even when
 * it failed; the status as above. */
int proc_output(char *const argv[], char **out, size_t *len);
/* The same with ENV (NAME=VALUE list, NULL-ended) as the child's whole environment
 * (NULL: this process's): nothing else of this one's reaches it. */
int proc_output_env(char *const argv[], char *const env[], char **out, size_t *len);

/* Runs ARGV in W->cwd with the extra environment W->env (NAME=VALUE list, NULL-ended, or
 * NULL), stdin from /dev/null and stdout and stderr appended to W->log (NULL: discarded),
 * in its own process group that dies with this process (even by SIGKILL), so a timeout
 * or a cancellation stops all of it and a killed parent leaves nothing running. Every
 * W->tick_s seconds calls W->tick(W->ctx) (when tick is not NULL), which may ask to stop
 * by returning nonzero. W->timeout_s <= 0: no time limit. */
typedef int (*ProcTick)(void *ctx);
typedef struct ProcWatch {
    const char *cwd;
    char *const *env;
    const char *log;
    double timeout_s, tick_s;
    ProcTick tick;
    void *ctx;
} ProcWatch;
int proc_watch(char *const argv[], const ProcWatch *w);

#endif
