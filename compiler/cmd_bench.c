/* cmd_bench.c: `cairn bench FILE --function F [--size NAME=V ...]`: measures how long one
 * call of F takes on this machine, wall clock and CPU, so that `cairn predict --device
 * host` can be held against a measurement (docs/tools.md).
 *
 * The measurement is the program itself: cairn writes a harness (FILE with its main
 * blanked, every line kept, and a main that binds each scalar parameter from --size,
 * allocates and fills each view with its extent, then calls F R times), builds it twice
 * (with R calls and with none) and runs each K times; a call costs (best wall with R -
 * best wall with none) / R, the same for CPU time (the children's user + system time).
 * Subtracting the baseline takes out the process start, the allocation and the filling.
 * The calls' inputs are read through two-element buffers indexed by the repetition, and
 * their results folded into one observed value, so the C compiler cannot hoist a call
 * out of the loop or drop it. CAIRN_THREADS sets the pool's width, as for any run.
 * Exit 0 measured, 1 refused or the harness trapped, 2 usage, I/O or build errors. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "commands.h"
#include "check/check.h"
#include "driver/driver.h"
#include "predict/predict.h"
#include "lib/fs.h"
#include "lib/timing.h"

const char cmd_bench_help[] =
    "usage: cairn bench FILE --function F [--size NAME=VALUE ...] [--repeat R] [--runs K]\n"
    "                  [--fill one|zero|index] [--json] [--cc ...] [-O0..-O3]\n"
    "\n"
    "Measures one call of F on this machine: wall clock and CPU time per call, from a\n"
    "harness that binds F's scalar parameters from --size (every one must be given; views\n"
    "get their extents from them and are filled with --fill, default one), built with R\n"
    "calls and with none, each run K times (default 5); the best of each is taken and the\n"
    "difference divided by R (0 when the calls are lost in the runs' noise: raise R).\n"
    "Without --repeat, R is chosen so the calls take about 0.3 s\n"
    "(probing with 1, 10, 100, ... calls until they take 0.05 s).\n"
    "CAIRN_THREADS sets the pool's width. Compare with cairn predict FILE --device host.\n"
    "\n"
    "exit status: 0 measured, 1 refused program or a trap in the harness, 2 usage, I/O or\n"
    "build error\n";

typedef struct BenchOptions {
    BuildOptions build;
    const char *function, *fill;
    PSizes sizes;
    long repeat;
    int runs;
    bool json;
} BenchOptions;

static int usage(const char *fmt, const char *arg) {
    fprintf(stderr, "cairn bench: error: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (cairn bench --help)\n");
    return 2;
}

static int parse(int argc, char **argv, BenchOptions *o) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool valued = !strcmp(a, "--function") || !strcmp(a, "--size") || !strcmp(a, "--repeat") ||
                      !strcmp(a, "--runs") || !strcmp(a, "--fill");
        if (valued && i + 1 >= argc) return usage("%s needs a value", a);
        Err err = {{0}};
        if (!strcmp(a, "--json")) o->json = true;
        else if (!strcmp(a, "--function")) o->function = argv[++i];
        else if (!strcmp(a, "--fill")) o->fill = argv[++i];
        else if (!strcmp(a, "--size")) {
            char msg[160];
            if (!predict_parse_sizes(argv[++i], &o->sizes, false, msg, sizeof msg))
                return usage("%s", msg);
        } else if (!strcmp(a, "--repeat") || !strcmp(a, "--runs")) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 100000000) return usage("%s takes a count", a);
            if (!strcmp(a, "--repeat")) o->repeat = v;
            else o->runs = (int)v;
        } else {
            int taken = driver_parse_flag(&o->build, argc, argv, &i, &err);
            if (taken < 0) return usage("%s", err.msg);
            if (taken) continue;
            if (a[0] == '-' && a[1]) return usage("unknown option '%s'", a);
            if (o->build.source) return usage("one file at a time ('%s')", a);
            o->build.source = a;
        }
    }
    if (!o->build.source) return usage("%s", "no file given");
    if (!o->function) return usage("%s", "--function F is required");
    if (strcmp(o->fill, "one") && strcmp(o->fill, "zero") && strcmp(o->fill, "index"))
        return usage("--fill takes one, zero or index, not '%s'", o->fill);
    return 0;
}

/* ---- the harness ---- */

/* A scalar of type t with value v, as CAIRN source. */
static char *scalar_text(const Type *t, double v) {
    StrBuf sb = {0};
    if (t->kind == TY_F64) {
        uint64_t u;
        memcpy(&u, &v, 8);
        sb_printf(&sb, "from_bits[f64](0x%" PRIx64 ")", u);
    } else if (t->kind == TY_F32) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        sb_printf(&sb, "from_bits[f32](0x%" PRIx32 ")", u);
    } else if (t->kind == TY_BOOL) {
        sb_puts(&sb, v != 0 ? "true" : "false");
    } else if (v < 0) {
        sb_printf(&sb, "(%.0f)", v);
    } else {
        sb_printf(&sb, "%.0f", v);
    }
    return sb.data;
}

/* The value every element gets (k: the element's index). */
static const char *fill_text(Arena *a, const Type *t, const char *fill) {
    const char *kw = type_kind_keyword(t->kind);
    bool index = !strcmp(fill, "index");
    if (t->kind == TY_BOOL) return index ? "cairn_k % 2 == 0" : "true";
    if (type_is_int(t)) return index ? arena_printf(a, "%s(cairn_k %% 100)", kw) : "1";
    if (type_is_compute_float(t)) return index ? arena_printf(a, "%s(cairn_k %% 100)", kw) : "1.0";
    return index ? arena_printf(a, "%s(f32(cairn_k %% 100))", kw) : arena_printf(a, "%s(1.0)", kw);
}

/* The parameter's value as a call passes it: a view or reference by name, a scalar read
 * through its two-element buffer. */
static void bind_param(Program *p, const Param *pr, const BenchOptions *o, StrBuf *sb, Err *err) {
    const Type *t = pr->type;
    if (t->kind == TY_VIEW && !t->u.view.extent) {
        sb_printf(sb, "  let mut %s:%s = %s;\n", pr->name, type_kind_keyword(t->u.view.elem->kind),
                  fill_text(p->arena, t->u.view.elem, "one"));
        return;
    }
    if (t->kind == TY_VIEW) {
        const Type *e = t->u.view.elem;
        const char *kw = type_kind_keyword(e->kind);
        char *ext = cairn_print_expr(t->u.view.extent);
        bool dev = t->u.view.place == PLACE_DEVICE;
        const char *fill = dev ? arena_printf(p->arena, "cairn_%s_host", pr->name) : pr->name;
        sb_printf(sb, "  let cairn_%s_n:usize = %s;\n", pr->name, ext);
        sb_printf(sb, "  buffer %s:%s[cairn_%s_n]%s = zeroed;\n", fill, kw, pr->name,
                  t->u.view.place == PLACE_UNIFIED ? " @unified" : "");
        if (strcmp(o->fill, "zero"))
            sb_printf(sb, "  for cairn_k in 0..cairn_%s_n { %s[cairn_k] = %s; }\n", pr->name, fill,
                      fill_text(p->arena, e, o->fill));
        if (dev)
            sb_printf(sb, "  buffer %s:%s[cairn_%s_n] @device = zeroed;\n  copy(%s, %s);\n",
                      pr->name, kw, pr->name, pr->name, fill);
        free(ext);
        return;
    }
    int k = 0;
    while (k < o->sizes.n && strcmp(o->sizes.name[k], pr->name) != 0) k++;
    if (k == o->sizes.n) {
        err_set(err, "parameter '%s' of %s needs a value: --size %s=V", pr->name, o->function,
                pr->name);
        return;
    }
    char *v = scalar_text(t, o->sizes.value[k]);
    const char *kw = type_kind_keyword(t->kind);
    sb_printf(sb, "  let %s:%s = %s;\n  buffer cairn_%s_in:%s[2] = zeroed;\n", pr->name, kw, v,
              pr->name, kw);
    sb_printf(sb, "  cairn_%s_in[0] = %s;\n  cairn_%s_in[1] = %s;\n", pr->name, pr->name, pr->name,
              pr->name);
    free(v);
}

/* main: the inputs, then `repeat` calls whose results are folded into one observation. */
static char *harness(Program *p, const Item *fn, const BenchOptions *o, long repeat, Err *err) {
    StrBuf sb = {0};
    sb_puts(&sb, "\nfn main() -> i32 {\n");
    for (int i = 0; i < fn->u.fn.nparams && !err->msg[0]; i++)
        bind_param(p, fn->u.fn.params[i], o, &sb, err);
    const Type *ret = fn->u.fn.ret;
    bool value = ret && ret->kind != TY_VOID && (type_is_scalar(ret) || type_is_storage_float(ret));
    bool bits = value && (type_is_compute_float(ret) || type_is_storage_float(ret));
    const char *acc_t = !value ? NULL
                        : bits ? (type_bits(ret) > 32   ? "u64"
                                  : type_bits(ret) > 16 ? "u32"
                                  : type_bits(ret) > 8  ? "u16"
                                                        : "u8")
                               : type_kind_keyword(ret->kind);
    if (value)
        sb_printf(&sb, "  let mut cairn_acc:%s = %s;\n", acc_t,
                  ret->kind == TY_BOOL ? "false" : "0");
    sb_printf(&sb, "  for cairn_r in 0..%ld {\n    %s%s(", repeat, value ? "let cairn_v = " : "",
              fn->name);
    for (int i = 0; i < fn->u.fn.nparams; i++) {
        const Param *pr = fn->u.fn.params[i];
        bool scalar = pr->type->kind != TY_VIEW;
        sb_printf(&sb, "%s%s%s%s", i ? ", " : "", scalar ? "cairn_" : "", pr->name,
                  scalar ? "_in[cairn_r % 2]" : "");
    }
    sb_puts(&sb, ");\n");
    if (value)
        sb_printf(&sb, "    cairn_acc = cairn_acc ^ %s;\n", bits ? "to_bits(cairn_v)" : "cairn_v");
    sb_puts(&sb, "  }\n");
    if (value) sb_puts(&sb, "  observe(\"bench\", cairn_acc);\n");
    sb_puts(&sb, "  return 0;\n}\n");
    return sb.data;
}

typedef struct Bench {
    Program *prog;
    const Item *fn;
    const BenchOptions *o;
    char dir[64];
} Bench;

/* The program's text with main blanked (lines kept), then the harness's main. */
static int write_harness(const Bench *B, long repeat, const char *path, Err *err) {
    Program *p = B->prog;
    const Item *fn = B->fn;
    const BenchOptions *o = B->o;
    char *text = strdup(p->src.text);
    for (int i = 0; i < p->nitems; i++) {
        const Item *it = p->items[i];
        if (it->kind != ITEM_FN || strcmp(it->name, "main") != 0) continue;
        for (int k = it->span.off; k < it->span.off + it->span.len; k++)
            if (text[k] != '\n') text[k] = ' ';
    }
    char *main_text = harness(p, fn, o, repeat, err);
    int rc = 0;
    if (!err->msg[0]) {
        StrBuf sb = {0};
        sb_puts(&sb, text);
        sb_puts(&sb, main_text);
        rc = fs_write_atomic(path, sb.data, sb.len, err);
        sb_free(&sb);
    } else {
        rc = -1;
    }
    free(text);
    free(main_text);
    return rc;
}

/* ---- building and timing ---- */

typedef struct Timed {
    double wall, cpu; /* the best of the runs, seconds */
} Timed;

/* Runs exe `runs` times (stdout discarded, stderr into err_log); the best wall and CPU
 * times; nonzero when a run failed (its status). */
static int time_runs(const char *exe, int runs, const char *err_log, Timed *best) {
    best->wall = best->cpu = INFINITY;
    for (int r = 0; r < runs; r++) {
        double t0 = timing_monotonic_seconds();
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout) || !freopen(err_log, "w", stderr)) _exit(126);
            execl(exe, exe, (char *)NULL);
            _exit(127);
        }
        int status;
        struct rusage ru;
        if (wait4(pid, &status, 0, &ru) < 0) return -1;
        double wall = timing_monotonic_seconds() - t0;
        double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
                     (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        if (wall < best->wall) best->wall = wall;
        if (cpu < best->cpu) best->cpu = cpu;
    }
    return 0;
}

/* Builds the harness with `repeat` calls and times it. */
static int build_and_time(Bench *B, long repeat, int runs, Timed *t, Err *err) {
    char src[128], exe[128], log[128];
    snprintf(src, sizeof src, "%s/bench_%ld.cairn", B->dir, repeat);
    snprintf(exe, sizeof exe, "%s/bench_%ld", B->dir, repeat);
    snprintf(log, sizeof log, "%s/bench_%ld.stderr", B->dir, repeat);
    if (write_harness(B, repeat, src, err) != 0) return 2;
    BuildOptions opt = B->o->build;
    opt.source = src;
    opt.output = exe;
    int rc = driver_build(&opt, err);
    if (rc != 0) return rc == DRIVER_REFUSED ? 1 : 2;
    rc = time_runs(exe, runs, log, t);
    if (rc != 0) {
        char *text = fs_read(log, NULL, NULL);
        err_set(err, "the harness exited %d: %s", rc, text && *text ? text : "(no message)");
        free(text);
        return 1;
    }
    return 0;
}

static void report(const Bench *B, long repeat, int runs, const Timed *base, const Timed *full) {
    /* below the runs' noise the difference can come out negative: none measured */
    double wall = full->wall > base->wall ? (full->wall - base->wall) / (double)repeat : 0;
    double cpu = full->cpu > base->cpu ? (full->cpu - base->cpu) / (double)repeat : 0;
    const char *threads = getenv("CAIRN_THREADS");
    if (!B->o->json) {
        printf("%s: %.4g s wall, %.4g s CPU a call (%ld calls, best of %d runs, %s; the harness "
               "without the calls took %.4g s)\n",
               B->fn->name, wall, cpu, repeat, runs,
               threads ? "CAIRN_THREADS set" : "the default pool", base->wall);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "function", B->fn->name);
    cJSON *sizes = cJSON_AddObjectToObject(j, "sizes");
    for (int i = 0; i < B->o->sizes.n; i++)
        cJSON_AddNumberToObject(sizes, B->o->sizes.name[i], B->o->sizes.value[i]);
    if (threads) cJSON_AddStringToObject(j, "threads", threads);
    else cJSON_AddNullToObject(j, "threads");
    cJSON_AddNumberToObject(j, "repeat", (double)repeat);
    cJSON_AddNumberToObject(j, "runs", runs);
    cJSON_AddNumberToObject(j, "baseline_wall_s", base->wall);
    cJSON_AddNumberToObject(j, "wall_s", full->wall);
    cJSON_AddNumberToObject(j, "wall_s_per_call", wall);
    cJSON_AddNumberToObject(j, "cpu_s_per_call", cpu);
    char *text = cJSON_PrintUnformatted(j);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(j);
}

/* The baseline, a short probe to size R when --repeat is not given, then the full run. */
static int measure(Bench *B, Err *err) {
    const BenchOptions *o = B->o;
    int runs = o->runs ? o->runs : 5;
    Timed base, probe, full;
    int rc = build_and_time(B, 0, runs, &base, err);
    long repeat = o->repeat;
    for (long r = 1; rc == 0 && !repeat; r *= 10) { /* until the calls take 0.05 s */
        rc = build_and_time(B, r, 3, &probe, err);
        double took = probe.wall - base.wall;
        if (took >= 0.05 || r >= 1000000) repeat = took > 0 ? (long)(r * 0.3 / took) : r;
    }
    if (repeat < 1) repeat = 1;
    if (rc == 0) rc = build_and_time(B, repeat, runs, &full, err);
    if (rc == 0) report(B, repeat, runs, &base, &full);
    return rc;
}

int cmd_bench(int argc, char **argv) {
    BenchOptions o = {.fill = "one"};
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    Program *p = cmd_load_program("bench", o.build.source, &rc);
    if (!p) return rc;
    Bench B = {.prog = p, .o = &o};
    for (int i = 0; i < p->nitems && !B.fn; i++)
        if (p->items[i]->kind == ITEM_FN && strcmp(p->items[i]->name, o.function) == 0)
            B.fn = p->items[i];
    Err err = {{0}};
    if (!B.fn) {
        err_set(&err, "no function '%s' in %s", o.function, o.build.source);
        rc = 2;
    } else if (!mkdtemp(strcpy(B.dir, "/tmp/cairn-bench-XXXXXX"))) {
        err_set(&err, "cannot make a folder for the harness: %s", strerror(errno));
        rc = 2;
    } else {
        rc = measure(&B, &err);
        fs_remove_tree(B.dir);
    }
    if (rc) fprintf(stderr, "cairn bench: error: %s\n", err.msg);
    ast_program_free(p);
    return rc;
}
