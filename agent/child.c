/* child.c: the agent's child processes (cairn build, the built program, probes). Each
 * runs in its own process group so a timeout or a cancellation can stop all of it, and
 * dies with the agent (a parent-death signal), so a killed agent leaves no case running. */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void exec_child(char *const argv[], const char *cwd, char *const env[], const char *log,
                       pid_t agent) {
    /* A killed agent (even by SIGKILL) takes its case with it: the kernel sends the child
     * SIGKILL when the agent's thread dies. Checked after, in case it already has. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != agent) _exit(125);
    setpgid(0, 0);
    if (cwd && chdir(cwd) != 0) _exit(126);
    int fd = log ? open(log, O_WRONLY | O_CREAT | O_APPEND, 0644) : open("/dev/null", O_WRONLY);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    int null_in = open("/dev/null", O_RDONLY);
    if (null_in >= 0) {
        dup2(null_in, 0);
        close(null_in);
    }
    for (int i = 0; env && env[i]; i++) putenv(env[i]);
    execvp(argv[0], argv);
    fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int proc_watch(char *const argv[], const char *cwd, char *const env[], const char *log,
               double timeout_s, double tick_s, ProcTick tick, void *ctx) {
    pid_t agent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) exec_child(argv, cwd, env, log, agent);
    setpgid(pid, pid);
    double start = timing_now_seconds(), next_tick = start + tick_s;
    int status = 0, outcome = 0;
    for (;;) {
        pid_t got = waitpid(pid, &status, WNOHANG);
        if (got == pid) break;
        double now = timing_now_seconds();
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
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
