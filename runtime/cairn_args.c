/* cairn_args.c: main's parameters from the command line (see cairn_args.h).
 *
 * One table says, for each CAIRN type, the .npy dtype that holds it and how a scalar of
 * it is written; every message goes through `die`, which names the program and exits
 * with CAIRN_EXIT_CANNOT_RUN, so nothing half-read ever reaches main. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* mkdir, strtof under -std=c11 */
#endif
#include "cairn_args.h"
#include "cairn_trap.h" /* CAIRN_EXIT_CANNOT_RUN */

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A CAIRN scalar type as the command line and .npy files give it. */
typedef struct ArgType {
    const char *word;  /* the CAIRN type */
    const char *descr; /* the .npy dtype NumPy writes for it */
    const char *numpy; /* NumPy's name for that dtype */
    const char *as;    /* what to pass a.astype(numpy.X) to make it */
    size_t size;
    char kind;    /* 'i' signed, 'u' unsigned, 'f' f32/f64, 'b' bool, 's' storage float bits */
    uint64_t max; /* an integer's largest value (a signed type's least is -max - 1) */
} ArgType;

static const ArgType arg_types[] = {
    {"i8", "|i1", "int8", "int8", 1, 'i', INT8_MAX},
    {"i16", "<i2", "int16", "int16", 2, 'i', INT16_MAX},
    {"i32", "<i4", "int32", "int32", 4, 'i', INT32_MAX},
    {"i64", "<i8", "int64", "int64", 8, 'i', INT64_MAX},
    {"u8", "|u1", "uint8", "uint8", 1, 'u', UINT8_MAX},
    {"u16", "<u2", "uint16", "uint16", 2, 'u', UINT16_MAX},
    {"u32", "<u4", "uint32", "uint32", 4, 'u', UINT32_MAX},
    {"u64", "<u8", "uint64", "uint64", 8, 'u', UINT64_MAX},
    {"usize", "<u8", "uint64", "uint64", 8, 'u', UINT64_MAX},
    {"f32", "<f4", "float32", "float32", 4, 'f', 0},
    {"f64", "<f8", "float64", "float64", 8, 'f', 0},
    {"bool", "|b1", "bool", "bool_", 1, 'b', 0},
    {"f16", "<f2", "float16", "float16", 2, 's', 0},
    {"bf16", "<u2", "uint16 (the bits of bf16)", "uint16", 2, 's', 0},
    {"f8e4m3", "|u1", "uint8 (the bits of f8e4m3)", "uint8", 1, 's', 0},
    {"f8e5m2", "|u1", "uint8 (the bits of f8e5m2)", "uint8", 1, 's', 0},
};

/* NumPy's names for dtypes a file may hold, for messages. */
static const struct {
    const char *descr, *name;
} numpy_names[] = {{"|i1", "int8"},
                   {"<i2", "int16"},
                   {"<i4", "int32"},
                   {"<i8", "int64"},
                   {"|u1", "uint8"},
                   {"<u2", "uint16"},
                   {"<u4", "uint32"},
                   {"<u8", "uint64"},
                   {"<f2", "float16"},
                   {"<f4", "float32"},
                   {"<f8", "float64"},
                   {"|b1", "bool"},
                   {"<c8", "complex64"},
                   {"<c16", "complex128"},
                   {">f4", "big-endian float32"},
                   {">f8", "big-endian float64"}};

static const ArgType *arg_type(const char *word) {
    for (size_t k = 0; k < sizeof arg_types / sizeof *arg_types; k++)
        if (strcmp(arg_types[k].word, word) == 0) return &arg_types[k];
    fprintf(stderr, "cairn_args: no type %s (a bug in cairn)\n", word);
    abort();
}

static _Noreturn void die(const cairn_args *a, const char *help, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void die(const cairn_args *a, const char *help, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", a->prog);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    if (help) fprintf(stderr, "help: %s\n", help);
    exit(CAIRN_EXIT_CANNOT_RUN);
}

/* "a .npy file of float32 ('<f4')" */
static void describe_file(const ArgType *t, char *out, size_t size) {
    snprintf(out, size, "a .npy file of %s ('%s')", t->numpy, t->descr);
}

/* ---- --help ---- */

static void usage(const cairn_args *a, FILE *to) {
    fprintf(to, "usage: %s", a->prog);
    for (int k = 0; k < a->n; k++)
        fprintf(to, " %s=%s", a->params[k].name,
                a->params[k].view == 0   ? "VALUE"
                : a->params[k].view == 2 ? "FILE.npy|zeros"
                                         : "FILE.npy");
    fprintf(to, " [--out DIR]\n\nmain's parameters, each given once as NAME=VALUE:\n");
    for (int k = 0; k < a->n; k++) {
        const cairn_param *p = &a->params[k];
        const ArgType *t = arg_type(p->type);
        char what[96];
        describe_file(t, what, sizeof what);
        fprintf(to, "  %-10s %-18s ", p->name, p->decl);
        if (p->view) fprintf(to, "%s%s\n", what, p->view == 2 ? ", or zeros" : "");
        else if (t->kind == 'b') fprintf(to, "true or false\n");
        else if (t->kind == 'f') fprintf(to, "a number (inf, nan allowed)\n");
        else fprintf(to, "a whole number (decimal, or 0x hex)\n");
        for (int v = 0; v < a->n; v++)
            if (a->params[v].view && a->params[v].extent_param == k) {
                fprintf(to, "  %-10s %-18s (may be left out: the length of %s)\n", "", "",
                        a->params[v].name);
                break;
            }
    }
    fprintf(to, "\n  --out DIR  when main returns, write every rw view to DIR/NAME.npy\n"
                "A mistake in the parameters exits 126 before main runs.\n");
}

/* ---- scalars ---- */

/* [+-]? then 0x-hex or decimal digits; the magnitude into *mag. 0 on success. */
static int parse_whole(const char *s, int *neg, uint64_t *mag) {
    *neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s) return -1;
    uint64_t v = 0;
    for (; *s; s++) {
        int d = *s >= '0' && *s <= '9'                 ? *s - '0'
                : base == 16 && *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
                : base == 16 && *s >= 'A' && *s <= 'F' ? *s - 'A' + 10
                                                       : -1;
        if (d < 0) return -1;
        if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return -2;
        v = v * (uint64_t)base + (uint64_t)d;
    }
    *mag = v;
    return 0;
}

static void parse_integer(const cairn_args *a, int k, const ArgType *t) {
    const cairn_param *p = &a->params[k];
    cairn_arg *g = &a->args[k];
    int neg;
    uint64_t mag;
    int rc = parse_whole(g->text, &neg, &mag);
    char range[96];
    if (t->kind == 'i')
        snprintf(range, sizeof range, "%s holds -%llu to %llu", t->word,
                 (unsigned long long)t->max + 1, (unsigned long long)t->max);
    else snprintf(range, sizeof range, "%s holds 0 to %llu", t->word, (unsigned long long)t->max);
    if (rc == -1)
        die(a, "write a whole number: 1000, -3, 0x10", "%s=%s: not a whole number (%s is %s)",
            p->name, g->text, p->name, t->word);
    bool fits =
        rc == 0 && (neg ? (t->kind == 'i' && mag <= t->max + 1) || mag == 0 : mag <= t->max);
    if (!fits) die(a, range, "%s=%s: out of range for %s", p->name, g->text, t->word);
    if (t->kind == 'i') g->value.i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
    else g->value.u = mag;
}

static void parse_scalar(const cairn_args *a, int k) {
    const cairn_param *p = &a->params[k];
    const ArgType *t = arg_type(p->type);
    cairn_arg *g = &a->args[k];
    if (t->kind == 'b') {
        if (strcmp(g->text, "true") != 0 && strcmp(g->text, "false") != 0)
            die(a, NULL, "%s=%s: %s is a bool: write true or false", p->name, g->text, p->name);
        g->value.b = strcmp(g->text, "true") == 0;
        return;
    }
    if (t->kind != 'f') {
        parse_integer(a, k, t);
        return;
    }
    char *end = NULL;
    errno = 0;
    double v = t->size == 4 ? (double)strtof(g->text, &end) : strtod(g->text, &end);
    if (!*g->text || !end || *end)
        die(a, "write a number: 0.5, -3, 1e-3, inf, nan", "%s=%s: not a number (%s is %s)", p->name,
            g->text, p->name, t->word);
    if (errno == ERANGE && isinf(v))
        die(a, "write inf for an infinity", "%s=%s: past %s's range", p->name, g->text, t->word);
    if (t->size == 4) g->value.f32 = (float)v; /* strtof rounded once; the double holds it */
    else g->value.f64 = v;
}

/* ---- views ---- */

static const char *numpy_name(const char *descr) {
    for (size_t k = 0; k < sizeof numpy_names / sizeof *numpy_names; k++)
        if (strcmp(numpy_names[k].descr, descr) == 0) return numpy_names[k].name;
    return "a dtype CAIRN does not read";
}

/* The dtype a file holds is the one T reads ('|' and '<' are one thing for one byte). */
static bool dtype_matches(const ArgType *t, const char *descr) {
    if (strcmp(descr, t->descr) == 0) return true;
    return t->size == 1 && (descr[0] == '|' || descr[0] == '<') &&
           strcmp(descr + 1, t->descr + 1) == 0;
}

static void read_view(const cairn_args *a, int k) {
    const cairn_param *p = &a->params[k];
    const ArgType *t = arg_type(p->type);
    cairn_arg *g = &a->args[k];
    if (strcmp(g->text, "zeros") == 0) {
        if (p->view != 2)
            die(a, "give it a .npy file", "%s=zeros: only an rw view starts zeroed; %s is %s",
                p->name, p->name, p->decl);
        return; /* allocated by cairn_args_view, once its extent is known */
    }
    char err[256], want[96];
    describe_file(t, want, sizeof want);
    cairn_npy info;
    void *data = NULL;
    int rc = cairn_npy_read(g->text, t->size, &info, &data, err, sizeof err);
    if (rc == -1 || (rc == -2 && dtype_matches(t, info.descr)))
        die(a, NULL, "%s=%s: %s (%s is %s, %s)", p->name, g->text, err, p->name, p->decl, want);
    if (!dtype_matches(t, info.descr)) {
        char help[160];
        snprintf(help, sizeof help, "save it as %s: numpy.save('%s', a.astype(numpy.%s))", t->descr,
                 g->text, t->as);
        die(a, help, "%s=%s: the file holds %s ('%s'); %s is %s, which reads %s ('%s')", p->name,
            g->text, numpy_name(info.descr), info.descr, p->name, p->decl, t->numpy, t->descr);
    }
    if (info.fortran_order && info.ndim > 1)
        die(a, "save it in C order: numpy.save(path, numpy.ascontiguousarray(a))",
            "%s=%s: the file is in Fortran order; %s reads its elements in C order", p->name,
            g->text, p->name);
    g->data = data;
    g->count = info.count;
    g->ndim = info.ndim;
    memcpy(g->shape, info.shape, sizeof g->shape);
    if (t->kind == 'b')
        for (uint64_t e = 0; e < g->count; e++)
            if (((unsigned char *)data)[e] > 1)
                die(a, NULL, "%s=%s: element %llu holds the byte %u, not a bool (0 or 1)", p->name,
                    g->text, (unsigned long long)e, ((unsigned char *)data)[e]);
}

/* ---- the command line ---- */

static int find_param(const cairn_args *a, const char *name, size_t len) {
    for (int k = 0; k < a->n; k++)
        if (strlen(a->params[k].name) == len && strncmp(a->params[k].name, name, len) == 0)
            return k;
    return -1;
}

static void take_word(cairn_args *a, int argc, char **argv, int *i) {
    const char *w = argv[*i];
    if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
        usage(a, stdout);
        exit(0);
    }
    if (strcmp(w, "--out") == 0 || strncmp(w, "--out=", 6) == 0) {
        const char *dir = w[5] == '=' ? w + 6 : *i + 1 < argc ? argv[++*i] : NULL;
        if (!dir || !*dir) die(a, NULL, "--out needs a folder");
        if (a->out_dir) die(a, NULL, "--out given twice");
        a->out_dir = dir;
        return;
    }
    const char *eq = strchr(w, '=');
    if (!eq || eq == w)
        die(a, "see --help", "'%s' is not NAME=VALUE (main's parameters are named)", w);
    int k = find_param(a, w, (size_t)(eq - w));
    if (k < 0) die(a, "see --help", "main has no parameter '%.*s'", (int)(eq - w), w);
    if (a->args[k].text) die(a, NULL, "%s given twice", a->params[k].name);
    a->args[k].text = eq + 1;
}

/* A scalar not given: the element count of a view whose extent it is, if any. */
static void infer_scalar(const cairn_args *a, int k) {
    for (int v = 0; v < a->n; v++) {
        const cairn_arg *g = &a->args[v];
        if (a->params[v].view && a->params[v].extent_param == k && g->text && g->data) {
            a->args[k].value.u = g->count; /* an extent is a usize */
            return;
        }
    }
    const cairn_param *p = &a->params[k];
    die(a, "see --help", "missing %s (%s): give %s=VALUE", p->name, p->type, p->name);
}

void cairn_args_read(cairn_args *a, int argc, char **argv) {
    const char *slash = argc > 0 && argv[0] ? strrchr(argv[0], '/') : NULL;
    a->prog = slash ? slash + 1 : argc > 0 && argv[0] ? argv[0] : "program";
    a->out_dir = NULL;
    memset(a->args, 0, sizeof *a->args * (size_t)a->n);
    for (int i = 1; i < argc; i++) take_word(a, argc, argv, &i);
    for (int k = 0; k < a->n; k++) {
        const cairn_param *p = &a->params[k];
        char want[96];
        describe_file(arg_type(p->type), want, sizeof want);
        if (!a->args[k].text && p->view)
            die(a, "see --help", "missing %s: %s, %s (give %s=FILE.npy%s)", p->name, p->decl, want,
                p->name, p->view == 2 ? " or zeros" : "");
        if (a->args[k].text && p->view) read_view(a, k);
    }
    for (int k = 0; k < a->n; k++) {
        if (a->params[k].view) continue;
        if (a->args[k].text) parse_scalar(a, k);
        else infer_scalar(a, k);
    }
}

void cairn_args_view(cairn_args *a, int k, uint64_t extent) {
    const cairn_param *p = &a->params[k];
    cairn_arg *g = &a->args[k];
    size_t size = arg_type(p->type)->size;
    if (g->data) {
        if (g->count == extent) return;
        char shape[CAIRN_NPY_MAX_DIMS * 22 + 4];
        cairn_npy_shape_text(g->ndim, g->shape, shape, sizeof shape);
        die(a, NULL, "%s=%s: the file holds %llu elements (shape %s); %s is %s: %llu elements",
            p->name, g->text, (unsigned long long)g->count, shape, p->name, p->decl,
            (unsigned long long)extent);
    }
    if (extent > SIZE_MAX / size)
        die(a, NULL, "%s=zeros: %llu elements do not fit in memory", p->name,
            (unsigned long long)extent);
    g->data = calloc(extent ? (size_t)extent : 1, size);
    if (!g->data)
        die(a, NULL, "%s=zeros: out of memory for %llu elements", p->name,
            (unsigned long long)extent);
    g->count = extent;
    g->ndim = 1;
    g->shape[0] = extent;
}

/* mkdir -p DIR. */
static int make_dirs(const char *dir) {
    char path[4096];
    if (strlen(dir) >= sizeof path) return -1;
    strcpy(path, dir);
    for (char *s = path + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
            *s = '/';
        }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

void cairn_args_finish(cairn_args *a) {
    if (a->out_dir && make_dirs(a->out_dir) != 0)
        die(a, NULL, "--out %s: cannot create it: %s", a->out_dir, strerror(errno));
    for (int k = 0; k < a->n && a->out_dir; k++) {
        const cairn_param *p = &a->params[k];
        if (p->view != 2) continue;
        const ArgType *t = arg_type(p->type);
        char path[4200], err[256];
        snprintf(path, sizeof path, "%s/%s.npy", a->out_dir, p->name);
        cairn_arg *g = &a->args[k];
        if (cairn_npy_write(path, t->descr, g->ndim, g->shape, g->data, t->size, err, sizeof err))
            die(a, NULL, "--out: %s", err);
    }
    for (int k = 0; k < a->n; k++) free(a->args[k].data);
}
