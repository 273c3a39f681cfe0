/* proc.c: child processes (see proc.h). Both ways of running a child go through one
 * fork-and-exec (start_child); proc_watch adds the process group, the parent-death
 * signal and the polling loop that enforces its time limit. */
#include "lib/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/timing.h"

/* How the child is set up between fork and exec. */
typedef struct {
    const char *cwd;
    char *const *env;
    const char *log;
    int log_flags; /* O_TRUNC or O_APPEND */
    int out_fd;    /* stdout and stderr to this descriptor instead, when >= 0 */
    bool watched;  /* own process group, dies with its parent, stdin from /dev/null */
    pid_t parent;
    bool clean; /* env is the child's whole environment, not additions to this one's */
} ChildSetup;

static void redirect(int fd_target, const char *path, int flags) {
    int fd = open(path, flags, 0644);
    if (fd < 0) _exit(126);
    dup2(fd, fd_target);
    if (fd_target == 1) dup2(fd, 2);
    close(fd);
}

/* In the child: never returns. 125 when the parent is already gone, 126 when the child
 * could not be set up, 127 when ARGV[0] could not be run (the reason in the log). */
static void exec_child(char *const argv[], const ChildSetup *s) {
    if (s->watched) {
        /* A killed parent (even by SIGKILL) takes its child with it: the kernel sends the
         * child SIGKILL when the parent's thread dies. Checked after, in case it has. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != s->parent) _exit(125);
        setpgid(0, 0);
        redirect(0, "/dev/null", O_RDONLY);
    }
    if (s->cwd && chdir(s->cwd) != 0) _exit(126);
    if (s->out_fd >= 0) {
        dup2(s->out_fd, 1);
        dup2(s->out_fd, 2);
    } else if (s->log) {
        redirect(1, s->log, O_WRONLY | O_CREAT | s->log_flags);
    }
    if (s->clean) clearenv();
    for (int i = 0; s->env && s->env[i]; i++) putenv(s->env[i]);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

static pid_t start_child(char *const argv[], const ChildSetup *s) {
    fflush(NULL); /* what stdio holds must not be written twice */
    pid_t pid = fork();
    if (pid == 0) exec_child(argv, s);
    return pid;
}

static int status_of(int status) {
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return PROC_FAILED;
}

pid_t proc_start(char *const argv[], const char *cwd, const char *log) {
    ChildSetup s = {cwd, NULL, log, O_TRUNC, -1, false, getpid(), false};
    return start_child(argv, &s);
}

int proc_wait(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return PROC_FAILED;
    return status_of(status);
}

int proc_run(char *const argv[], const char *cwd, const char *log) {
    pid_t pid = proc_start(argv, cwd, log);
    return pid < 0 ? PROC_FAILED : proc_wait(pid);
}

int proc_output(char *const argv[], char **out, size_t *len) {
    return proc_output_env(argv, NULL, out, len);
}

int proc_output_env(char *const argv[], char *const env[], char **out, size_t *len) {
    *out = NULL;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return PROC_FAILED;
    ChildSetup s = {NULL, env, NULL, 0, fds[1], false, getpid(), env != NULL};
    pid_t pid = start_child(argv, &s); /* dup2 leaves the child's copies open at exec */
    close(fds[1]);
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (ssize_t got = 1; buf && pid > 0 && got != 0;) {
        got = read(fds[0], buf + n, cap - n - 1);
        if (got < 0 && errno != EINTR) break;
        n += got > 0 ? (size_t)got : 0;
        if (cap - n - 1 == 0) {
            char *bigger = realloc(buf, 2 * cap);
            if (!bigger) free(buf);
            buf = bigger;
            cap *= 2;
        }
    }
    close(fds[0]);
    int status = pid < 0 ? PROC_FAILED : proc_wait(pid);
    if (!buf) return PROC_FAILED;
    buf[n] = '\0';
    *out = buf;
    if (len) *len = n;
    return status;
}

int proc_watch(char *const argv[], const ProcWatch *w) {
    const double timeout_s = w->timeout_s, tick_s = w->tick_s;
    const ProcTick tick = w->tick;
    void *ctx = w->ctx;
    ChildSetup s = {w->cwd,   w->env, w->log ? w->log : "/dev/null", O_APPEND, -1, true,
                    getpid(), false};
    pid_t pid = start_child(argv, &s);
    if (pid < 0) return PROC_FAILED;
    setpgid(pid, pid); /* also here: the group exists before any kill(-pid) below */
    double start = timing_monotonic_seconds(), next_tick = start + tick_s;
    int status = 0, outcome = 0;
    while (waitpid(pid, &status, WNOHANG) != pid) {
        double now = timing_monotonic_seconds();
        if (!outcome && timeout_s > 0 && now - start > timeout_s) outcome = PROC_TIMEOUT;
        if (!outcome && tick && now >= next_tick) {
            next_tick = now + tick_s;
            if (tick(ctx) != 0) outcome = PROC_STOPPED;
        }
        if (outcome) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            return outcome;
        }
        timing_sleep_ms(10);
    }
    return status_of(status);
}
