/* probe.c: what this machine can run: host compilers and their versions, which
 * sanitizers actually work with each (a tiny program is built and run), GPUs, driver
 * and CUDA version from nvidia-smi, CPU and OS, the cairn version, and labels. */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "proto/evidence.h"

/* The first line ARGV prints (stdout and stderr), trimmed; NULL when it fails or prints
 * nothing. */
static char *first_line(char *const argv[]) {
    char *text = NULL;
    if (proc_output(argv, &text, NULL) == 0 && text[0] && text[0] != '\n') {
        text[strcspn(text, "\r\n")] = '\0';
        return text;
    }
    free(text);
    return NULL;
}

/* The same for a shell pipeline. */
static char *first_line_sh(const char *pipeline) {
    char *argv[] = {"/bin/sh", "-c", (char *)pipeline, NULL};
    return first_line(argv);
}

static int listed(const char *list, const char *item) {
    if (!list) return 1;
    size_t n = strlen(item);
    for (const char *p = list; (p = strstr(p, item)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

/* Builds and runs a tiny program with -fsanitize=FLAG under CC in a scratch folder. */
static int sanitizer_works(const char *cc, const char *flag, const char *work) {
    char src[1200], exe[1200], fsan[64];
    snprintf(src, sizeof src, "%s/probe-%s.c", work, cc);
    snprintf(exe, sizeof exe, "%s/probe-%s", work, cc);
    FILE *f = fopen(src, "w");
    if (!f) return 0;
    fputs("#include <stdlib.h>\nint main(void){char *p=malloc(4);p[0]=1;int r=p[0]-1;"
          "free(p);return r;}\n",
          f);
    fclose(f);
    snprintf(fsan, sizeof fsan, "-fsanitize=%s", flag);
    char *compile[] = {(char *)cc, fsan, "-o", exe, src, NULL}, *run[] = {exe, NULL};
    int ok = proc_run(compile, NULL, "/dev/null") == 0 && proc_run(run, NULL, "/dev/null") == 0;
    unlink(exe);
    unlink(src);
    return ok;
}

static cJSON *probe_compilers(const AgentOptions *o) {
    static const char *const names[] = {"gcc", "clang"};
    static char *const version_argv[][3] = {{"gcc", "-dumpfullversion", NULL},
                                            {"clang", "-dumpversion", NULL}};
    cJSON *all = cJSON_CreateObject();
    for (int i = 0; i < 2; i++) {
        char *version = listed(o->compilers, names[i]) ? first_line(version_argv[i]) : NULL;
        if (!version) continue;
        cJSON *c = cJSON_AddObjectToObject(all, names[i]);
        cJSON_AddStringToObject(c, "version", version);
        cJSON *sans = cJSON_AddArrayToObject(c, "sanitizers");
        if (listed(o->sanitizers, "asan") &&
            sanitizer_works(names[i], "address,undefined", o->work))
            cJSON_AddItemToArray(sans, cJSON_CreateString("asan"));
        if (listed(o->sanitizers, "tsan") && sanitizer_works(names[i], "thread", o->work))
            cJSON_AddItemToArray(sans, cJSON_CreateString("tsan"));
        free(version);
    }
    return all;
}

/* GPUs as nvidia-smi's query flags list them (name, memory, compute capability and the
 * target it builds for, driver); an empty list where there is none. */
static void probe_gpus(cJSON *caps) {
    cJSON *gpus = cJSON_AddArrayToObject(caps, "gpus");
    FILE *p = popen("nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version "
                    "--format=csv,noheader,nounits 2>/dev/null",
                    "r");
    char line[512], driver[64] = "";
    while (p && fgets(line, sizeof line, p)) {
        char name[256], mem[64], cap[32];
        if (sscanf(line, "%255[^,], %63[^,], %31[^,], %63[^\r\n]", name, mem, cap, driver) != 4)
            continue;
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", name);
        cJSON_AddNumberToObject(g, "memory_mib", atof(mem));
        cJSON_AddStringToObject(g, "compute_cap", cap);
        char target[32];
        evidence_gpu_target(cap, target, sizeof target);
        cJSON_AddStringToObject(g, "target", target); /* what device cells ask for */
        cJSON_AddStringToObject(g, "driver", driver);
        cJSON_AddItemToArray(gpus, g);
    }
    if (p) pclose(p);
    if (driver[0]) cJSON_AddStringToObject(caps, "driver", driver);
    char *cuda =
        first_line_sh("nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\\([0-9.]*\\).*/\\1/p'");
    if (cuda && *cuda) cJSON_AddStringToObject(caps, "cuda", cuda);
    free(cuda);
    char *nvcc =
        first_line_sh("nvcc --version 2>/dev/null | sed -n 's/.*release \\([0-9.]*\\).*/\\1/p'");
    if (nvcc && *nvcc) cJSON_AddStringToObject(caps, "nvcc", nvcc);
    free(nvcc);
}

int probe_cairn_version(const char *cairn, char *out, size_t cap, Err *e) {
    char *argv[] = {(char *)cairn, "--version", NULL};
    char *line = first_line(argv);
    if (!line)
        return err_set(e, "cannot run %s --version (give the cairn binary with --cairn PATH)",
                       cairn);
    const char *v = strrchr(line, ' ');
    snprintf(out, cap, "%s", v ? v + 1 : line);
    free(line);
    return util_is_safe_component(out) ? 0 : err_set(e, "odd cairn version \"%s\"", out);
}

static void add_labels(cJSON *caps, const char *labels) {
    cJSON *arr = cJSON_AddArrayToObject(caps, "labels");
    struct utsname u;
    if (uname(&u) == 0) cJSON_AddItemToArray(arr, cJSON_CreateString(u.machine));
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", labels ? labels : "");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (util_is_safe_component(t)) cJSON_AddItemToArray(arr, cJSON_CreateString(t));
}

cJSON *probe_machine(const AgentOptions *o, Err *e) {
    char version[64];
    if (probe_cairn_version(o->cairn, version, sizeof version, e) != 0) return NULL;
    cJSON *caps = cJSON_CreateObject();
    cJSON_AddStringToObject(caps, "cairn", version);
    /* Whether this cairn takes --emulate (builds that run device code on the emulator);
     * one that does not runs device lanes on the host the same way by default. */
    char *help_argv[] = {(char *)o->cairn, "build", "--help", NULL}, *help = NULL;
    proc_output(help_argv, &help, NULL);
    cJSON_AddBoolToObject(caps, "cairn_emulate_flag", help && strstr(help, "--emulate"));
    free(help);
    cJSON_AddItemToObject(caps, "compilers", probe_compilers(o));
    probe_gpus(caps);
    char *cpu = first_line_sh("sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo | head -n 1");
    cJSON_AddStringToObject(caps, "cpu", cpu ? cpu : "unknown");
    free(cpu);
    cJSON_AddNumberToObject(caps, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
    struct utsname u;
    if (uname(&u) == 0) {
        char os[512];
        snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
        cJSON_AddStringToObject(caps, "os", os);
    }
    add_labels(caps, o->labels);
    return caps;
}
