/* driver.c: `cairn build` / `cairn run` mechanics (see driver.h).
 *
 * Cache layout, under $CAIRN_CACHE, else $XDG_CACHE_HOME/cairn, else ~/.cache/cairn:
 *   rt/KEY/    the embedded runtime written out, and each source a program needs
 *              compiled to NAME.o on first need, KEY = SHA-256 of the compiler, its
 *              version, the flags and every runtime byte
 *   c/KEY/     generated C, KEY = SHA-256 of the C text (the compiler runs in that
 *              folder on a relative name, so the output holds no cache path)
 *   bin/KEY/   `cairn run` executables and receipts, KEY = SHA-256 of this cairn
 *              binary, the source path and bytes, the compiler and the flags
 * Files are written under a private name and renamed into place, so concurrent builds
 * never see half a file. */
#include "driver.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver_fs.h"
#include "lower_c.h"
#include "receipt.h"

/* The C compiler as found on this machine. */
typedef struct cc_info {
    char *path;
    char name[16];     /* "gcc" or "clang" */
    char version[64];  /* e.g. "12.2.0" */
    char banner[256];  /* first line of --version, part of the cache keys */
} cc_info;

static int fail(driver_error *err, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(driver_error *err, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return status;
}

/* snprintf into a PATH_MAX buffer; an over-long path is cut (and then fails to open). */
static int pathf(char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int pathf(char *out, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, PATH_MAX, fmt, ap);
    va_end(ap);
    return n;
}

/* ---- flags ---------------------------------------------------------------------- */

/* Accepts address, undefined and thread, comma separated; thread goes alone. Writes the
 * canonical spelling ("address,undefined", "address", "undefined", "thread"). */
static int canonical_sanitize(const char *text, const char **canonical) {
    int address = 0, undefined = 0, thread = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, ",");
        if (n == 7 && strncmp(p, "address", 7) == 0) address = 1;
        else if (n == 9 && strncmp(p, "undefined", 9) == 0) undefined = 1;
        else if (n == 6 && strncmp(p, "thread", 6) == 0) thread = 1;
        else return -1;
        p += n + (p[n] == ',');
    }
    if (thread && (address || undefined)) return -1;
    *canonical = thread ? "thread" : address && undefined ? "address,undefined"
               : address ? "address" : undefined ? "undefined" : NULL;
    return *canonical ? 0 : -1;
}

static int take_value(int argc, char **argv, int *i, const char **value, driver_error *err) {
    if (*i + 1 >= argc) return fail(err, -1, "%s needs a value", argv[*i]), -1;
    *value = argv[++*i];
    return 1;
}

int driver_parse_flag(build_options *opt, int argc, char **argv, int *i, driver_error *err) {
    const char *a = argv[*i];
    if (strcmp(a, "-o") == 0) return take_value(argc, argv, i, &opt->output, err);
    if (strcmp(a, "--cc") == 0) return take_value(argc, argv, i, &opt->cc, err);
    if (strcmp(a, "--emit-c") == 0) return take_value(argc, argv, i, &opt->emit_c_dir, err);
    if (strcmp(a, "--sanitize") == 0) {
        const char *value;
        if (take_value(argc, argv, i, &value, err) < 0) return -1;
        if (canonical_sanitize(value, &opt->sanitize) != 0)
            return fail(err, -1, "--sanitize takes address,undefined or thread, not '%s'",
                        value), -1;
        return 1;
    }
    if (a[0] == '-' && a[1] == 'O') {
        if (a[2] < '0' || a[2] > '3' || a[3])
            return fail(err, -1, "unknown optimization flag '%s' (use -O0, -O1, -O2 or -O3)", a), -1;
        opt->opt_level = a[2] - '0';
        opt->opt_set = 1;
        return 1;
    }
    if (strcmp(a, "--emulate") == 0)
        return fail(err, -1, "--emulate: this cairn lowers host programs only, which need no "
                    "emulation"), -1;
    if (strcmp(a, "--target") == 0) {
        const char *value;
        if (take_value(argc, argv, i, &value, err) < 0) return -1;
        if (strcmp(value, "host") != 0)
            return fail(err, -1, "--target %s: this cairn builds for the host only", value), -1;
        return 1;
    }
    return 0;
}

/* The exact flags a program (and its runtime) is compiled with. */
static void compile_flags(const build_options *opt, strvec *flags) {
    char olevel[8];
    snprintf(olevel, sizeof olevel, "-O%d", opt->opt_set ? opt->opt_level : 2);
    const char *base[] = {"-std=c11", olevel, "-Wall", "-Wextra", "-Werror",
                          "-ffp-contract=off", "-fno-fast-math"};
    for (size_t k = 0; k < sizeof base / sizeof *base; k++) sv_push(flags, base[k]);
    if (!opt->sanitize) return;
    if (strcmp(opt->sanitize, "thread") == 0) {
        sv_push(flags, "-fsanitize=thread");
        return;
    }
    char san[64];
    snprintf(san, sizeof san, "-fsanitize=%s", opt->sanitize);
    sv_push(flags, san);
    sv_push(flags, "-fno-sanitize-recover=all");
    sv_push(flags, "-fno-omit-frame-pointer");
}

static const char *const link_libs[] = {"-lm", "-pthread", "-lcrypto", "-lcjson"};

/* ---- the cache ------------------------------------------------------------------ */

static int cache_dir(const char *sub, char out[PATH_MAX], driver_error *err) {
    const char *root = getenv("CAIRN_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (root && *root) n = pathf(out, "%s/%s", root, sub);
    else if (xdg && *xdg) n = pathf(out, "%s/cairn/%s", xdg, sub);
    else if (home && *home) n = pathf(out, "%s/.cache/cairn/%s", home, sub);
    else n = pathf(out, "/tmp/cairn-cache-%ld/%s", (long)getuid(), sub);
    if (n >= PATH_MAX || fs_mkdirs(out) != 0)
        return fail(err, DRIVER_USAGE, "cannot create the build cache %s: %s (set CAIRN_CACHE "
                    "to a writable folder)", out, strerror(errno));
    return 0;
}

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the C compiler ------------------------------------------------------------- */

static int cc_discover(const char *requested, cc_info *cc, driver_error *err) {
    const char *candidates[] = {"gcc", "clang", "cc"};
    if (requested) cc->path = fs_which(requested);
    for (size_t k = 0; !requested && !cc->path && k < 3; k++) cc->path = fs_which(candidates[k]);
    if (!cc->path)
        return requested ? fail(err, DRIVER_USAGE, "C compiler '%s' not found on PATH "
                                "(install it, or pass --cc gcc or --cc clang)", requested)
                         : fail(err, DRIVER_USAGE, "no C compiler found on PATH (install gcc "
                                "or clang, or pass --cc PATH)");
    char dir[PATH_MAX], log[PATH_MAX];
    if (cache_dir("tmp", dir, err)) return DRIVER_USAGE;
    pathf(log, "%s/cc-version.%ld", dir, (long)getpid());
    char *argv[] = {cc->path, "--version", NULL};
    int status = proc_run(argv, NULL, log);
    char *text = fs_read(log, NULL);
    unlink(log);
    if (status != 0 || !text) {
        free(text);
        return fail(err, DRIVER_USAGE, "'%s --version' failed: is it a C compiler?", cc->path);
    }
    snprintf(cc->banner, sizeof cc->banner, "%.*s", (int)strcspn(text, "\n"), text);
    snprintf(cc->name, sizeof cc->name, "%s", strstr(cc->banner, "clang") ? "clang" : "gcc");
    const char *v = cc->banner;
    while (*v && !(v[0] >= '0' && v[0] <= '9' && strchr(v, '.') && (v == cc->banner || v[-1] == ' ' || v[-1] == '(')))
        v++;
    snprintf(cc->version, sizeof cc->version, "%.*s", (int)strspn(v, "0123456789."), v);
    free(text);
    return 0;
}

/* Shows a failed compile's log (it is our bug, not the user's) and says where it is. */
static int compile_failure(const char *what, const char *log, driver_error *err) {
    char *text = fs_read(log, NULL);
    if (text) fputs(text, stderr);
    free(text);
    return fail(err, DRIVER_INTERNAL, "the C compiler rejected %s (a bug in cairn; log: %s)",
                what, log);
}

/* ---- the runtime ---------------------------------------------------------------- */

static void runtime_digest(char hex[65]) {
    strbuf all = {0};
    for (size_t k = 0; k < cairn_runtime_file_count; k++) {
        const cairn_embedded_file *f = &cairn_runtime_files[k];
        sb_printf(&all, "%s\n%zu\n", f->name, f->size);
        sb_append(&all, (const char *)f->data, f->size);
    }
    sha256_hex(all.data ? all.data : "", all.len, hex);
    sb_free(&all);
}

/* Which runtime sources a program needs. Source cairn_X.c is needed when the program's
 * C, or a source already needed, names an identifier starting with cairn_X (its
 * module's prefix: this also catches the inline functions of cairn_X.h, which call
 * into cairn_X.c), or one that cairn_X.c defines (any cairn_ identifier on a line at
 * column 0 that is not static, followed by `(` or `,`: macro-made definitions
 * included). cairn_trap.c is
 * always needed. Only what is needed is compiled, so e.g. the bracket GEMM costs
 * nothing to a program without one. */
static bool is_ident(char c) { return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'); }

/* Does `text` hold `name` as a word (whole == true) or as the start of a word? */
static bool mentions(const char *text, const char *name, size_t len, bool whole) {
    for (const char *p = strstr(text, name); p; p = strstr(p + 1, name))
        if ((p == text || !is_ident(p[-1])) && (!whole || !is_ident(p[len]))) return true;
    return false;
}

/* Does `text` name something that `src` (a runtime source called `file`) defines? */
static bool names_from(const char *file, const char *src, const char *text) {
    char stem[128];
    snprintf(stem, sizeof stem, "%.*s", (int)strcspn(file, "."), file);
    if (mentions(text, stem, strlen(stem), false)) return true;
    for (const char *line = src; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (!is_ident(*line) || strncmp(line, "static", 6) == 0 || strncmp(line, "typedef", 7) == 0)
            continue;
        const char *end = strchr(line, '\n');
        for (const char *p = strstr(line, "cairn_"); p && (!end || p < end); p = strstr(p + 1, "cairn_")) {
            size_t n = 0;
            while (is_ident(p[n])) n++;
            if ((p > line && is_ident(p[-1])) || (p[n] != '(' && p[n] != ',')) continue;
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(n < 127 ? n : 127), p);
            if (mentions(text, name, strlen(name), true)) return true;
        }
    }
    return false;
}

static bool is_c_source(const char *name) {
    size_t n = strlen(name);
    return n > 2 && strcmp(name + n - 2, ".c") == 0;
}

static void runtime_needed(const char *program_c, bool needed[]) {
    for (size_t k = 0; k < cairn_runtime_file_count; k++)
        needed[k] = strcmp(cairn_runtime_files[k].name, "cairn_trap.c") == 0;
    for (bool grew = true; grew;) {
        grew = false;
        for (size_t k = 0; k < cairn_runtime_file_count; k++) {
            const char *src = (const char *)cairn_runtime_files[k].data;
            if (needed[k] || !is_c_source(cairn_runtime_files[k].name)) continue;
            const char *file = cairn_runtime_files[k].name;
            bool hit = names_from(file, src, program_c);
            for (size_t j = 0; !hit && j < cairn_runtime_file_count; j++)
                hit = needed[j] && names_from(file, src, (const char *)cairn_runtime_files[j].data);
            grew |= needed[k] = hit;
        }
    }
}

/* Writes the embedded runtime into `dir` (identical bytes, so racing writers agree). */
static int runtime_write(const char *dir, driver_error *err) {
    for (size_t k = 0; k < cairn_runtime_file_count; k++) {
        const cairn_embedded_file *f = &cairn_runtime_files[k];
        char path[PATH_MAX];
        pathf(path, "%s/%s", dir, f->name);
        if (!exists(path) && fs_write_atomic(path, f->data, f->size) != 0)
            return fail(err, DRIVER_USAGE, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Starts compiling NAME.c into NAME.o.tmp.PID (log NAME.o.log), unless NAME.o exists. */
static pid_t runtime_compile_start(const cc_info *cc, const strvec *flags, const char *dir,
                                   const char *name, strvec *objects) {
    size_t n = strlen(name);
    char object[256], tmp[300], path[PATH_MAX], log[PATH_MAX];
    snprintf(object, sizeof object, "%.*s.o", (int)(n - 2), name);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", object, (long)getpid());
    pathf(path, "%s/%s", dir, object);
    pathf(log, "%s/%s.log", dir, object);
    sv_push(objects, object);
    if (exists(path)) return 0;
    strvec argv = {0};
    sv_push(&argv, cc->path);
    for (size_t f = 0; f < flags->len; f++)  /* the project's own build vets warnings */
        if (strcmp(flags->items[f], "-Werror") != 0) sv_push(&argv, flags->items[f]);
    const char *tail[] = {"-D_GNU_SOURCE", "-I.", "-c", name, "-o", tmp};
    for (size_t t = 0; t < 6; t++) sv_push(&argv, tail[t]);
    pid_t pid = proc_start(argv.items, dir, log);
    sv_free(&argv);
    return pid;
}

/* Compiles the needed runtime sources in `dir` at once (those not compiled before) and
 * lists their objects' paths in *objects. */
static int runtime_compile(const cc_info *cc, const strvec *flags, const char *dir,
                           const bool needed[], strvec *objects, driver_error *err) {
    strvec names = {0};
    pid_t pids[64];
    size_t started = 0;
    for (size_t k = 0; k < cairn_runtime_file_count && started < 64; k++)
        if (needed[k] && is_c_source(cairn_runtime_files[k].name))
            pids[started++] = runtime_compile_start(cc, flags, dir, cairn_runtime_files[k].name, &names);
    int status = 0;
    for (size_t k = 0; k < started; k++) {
        char path[PATH_MAX], tmp[PATH_MAX], log[PATH_MAX];
        pathf(path, "%s/%s", dir, names.items[k]);
        pathf(tmp, "%s.tmp.%ld", path, (long)getpid());
        pathf(log, "%s.log", path);
        int rc = pids[k] == 0 ? 0 : pids[k] < 0 ? -1 : proc_wait(pids[k]);
        if (rc == 0 && pids[k] > 0 && rename(tmp, path) != 0) rc = -1;
        if (rc != 0 && status == 0) status = compile_failure(names.items[k], log, err);
        sv_push(objects, path);
    }
    sv_free(&names);
    return status;
}

/* The runtime objects this program needs, compiled for this compiler and these flags
 * (cached in rt/KEY/); their paths go to *objects, the folder to rt_dir. */
static int runtime_ensure(const cc_info *cc, const strvec *flags, const char *digest,
                          const char *program_c, char rt_dir[PATH_MAX], strvec *objects,
                          driver_error *err) {
    strbuf key = {0};
    sb_printf(&key, "cairn-runtime-2\n%s\n%s\n%s\n", cc->path, cc->banner, digest);
    for (size_t k = 0; k < flags->len; k++) sb_printf(&key, "%s\n", flags->items[k]);
    char hex[65], root[PATH_MAX];
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
    if (cache_dir("rt", root, err)) return DRIVER_USAGE;
    pathf(rt_dir, "%s/%.32s", root, hex);
    if (fs_mkdirs(rt_dir) != 0)
        return fail(err, DRIVER_USAGE, "cannot create %s: %s", rt_dir, strerror(errno));
    bool needed[256] = {0};
    if (cairn_runtime_file_count > 256) return fail(err, DRIVER_INTERNAL, "too many runtime files");
    runtime_needed(program_c, needed);
    int status = runtime_write(rt_dir, err);
    if (status == 0) status = runtime_compile(cc, flags, rt_dir, needed, objects, err);
    return status;
}

/* ---- the program ---------------------------------------------------------------- */

/* The file name without folders and without the .cairn suffix. */
static void source_stem(const char *source, char stem[256]) {
    const char *base = strrchr(source, '/');
    base = base ? base + 1 : source;
    size_t n = strlen(base);
    if (n > 6 && strcmp(base + n - 6, ".cairn") == 0) n -= 6;
    snprintf(stem, 256, "%.*s", (int)n, base);
}

/* Writes the generated C to c/KEY/STEM.c (and --emit-c DIR/STEM.c); c_dir gets c/KEY. */
static int write_c(const build_options *opt, const strbuf *c_text, const char *stem,
                   char c_dir[PATH_MAX], driver_error *err) {
    char hex[65], root[PATH_MAX], path[PATH_MAX];
    sha256_hex(c_text->data, c_text->len, hex);
    if (cache_dir("c", root, err)) return DRIVER_USAGE;
    pathf(c_dir, "%s/%.32s", root, hex);
    pathf(path, "%s/%s.c", c_dir, stem);
    if (fs_mkdirs(c_dir) != 0 || fs_write_atomic(path, c_text->data, c_text->len) != 0)
        return fail(err, DRIVER_USAGE, "cannot write %s: %s", path, strerror(errno));
    if (!opt->emit_c_dir) return 0;
    pathf(path, "%s/%s.c", opt->emit_c_dir, stem);
    if (fs_mkdirs(opt->emit_c_dir) != 0 || fs_write_atomic(path, c_text->data, c_text->len) != 0)
        return fail(err, DRIVER_USAGE, "--emit-c: cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* Compiles and links c_dir/STEM.c with the runtime objects into `out` (absolute). */
static int compile_program(const cc_info *cc, const strvec *flags, const char *rt_dir,
                           const strvec *objects, const char *c_dir, const char *stem,
                           const char *out, driver_error *err) {
    char source[300], include[PATH_MAX], log[PATH_MAX];
    snprintf(source, sizeof source, "%s.c", stem);
    pathf(include, "-I%s", rt_dir);
    pathf(log, "%s/%s.log", c_dir, stem);
    strvec argv = {0};
    sv_push(&argv, cc->path);
    for (size_t k = 0; k < flags->len; k++) sv_push(&argv, flags->items[k]);
    sv_push(&argv, include);
    sv_push(&argv, source);
    for (size_t k = 0; k < objects->len; k++) sv_push(&argv, objects->items[k]);
    sv_push(&argv, "-o");
    sv_push(&argv, out);
    for (size_t k = 0; k < sizeof link_libs / sizeof *link_libs; k++) sv_push(&argv, link_libs[k]);
    int status = proc_run(argv.items, c_dir, log);
    sv_free(&argv);
    return status == 0 ? 0 : compile_failure("the generated C", log, err);
}

/* Checks the output can be written before any work is done; out_abs gets its path. */
static int probe_output(const char *output, char **out_abs, driver_error *err) {
    *out_abs = fs_absolute(output);
    if (!*out_abs)
        return fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    struct stat st;
    if (stat(*out_abs, &st) == 0 && S_ISDIR(st.st_mode))
        return fail(err, DRIVER_USAGE, "cannot write %s: it is a folder (give -o a file name)", output);
    char probe[PATH_MAX];
    pathf(probe, "%s.probe.%ld", *out_abs, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f) return fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    fclose(f);
    unlink(probe);
    return 0;
}

static int write_receipt(const build_options *opt, const char *output, const cc_info *cc,
                         const strvec *flags, const char *rt_digest, const cJSON *numerics,
                         const char *out_abs, driver_error *err) {
    char src_sha[65], out_sha[65];
    if (sha256_file(opt->source, src_sha) != 0 || sha256_file(out_abs, out_sha) != 0)
        return fail(err, DRIVER_USAGE, "cannot read back %s: %s", output, strerror(errno));
    strvec link = {0};
    for (size_t k = 0; k < sizeof link_libs / sizeof *link_libs; k++) sv_push(&link, link_libs[k]);
    receipt_info info = {opt->source, src_sha, output, out_sha, rt_digest, cc->name,
                         cc->version, flags, &link, opt->sanitize, numerics};
    char *text = receipt_render(&info);
    sv_free(&link);
    char path[PATH_MAX];
    pathf(path, "%s.receipt.json", out_abs);
    int ok = fs_write_atomic(path, text, strlen(text)) == 0;
    free(text);
    return ok ? 0 : fail(err, DRIVER_USAGE, "cannot write %s.receipt.json: %s", output,
                         strerror(errno));
}

/* Everything after the options are settled: lower, compile, link, receipt. */
static int build_into(const build_options *opt, const char *output, const cc_info *cc,
                      driver_error *err) {
    char *out_abs = NULL;
    int status = probe_output(output, &out_abs, err);
    strbuf c_text = {0};
    cJSON *numerics = cJSON_CreateObject();
    strvec flags = {0};
    compile_flags(opt, &flags);
    if (status == 0) {
        status = lower_file(opt->source, &c_text, numerics);
        if (status != 0) fail(err, DRIVER_REFUSED, "%s was refused", opt->source);
    }
    char rt_digest[65], rt_dir[PATH_MAX], c_dir[PATH_MAX], stem[256], tmp_out[PATH_MAX];
    runtime_digest(rt_digest);
    source_stem(opt->source, stem);
    strvec objects = {0};
    if (status == 0)
        status = runtime_ensure(cc, &flags, rt_digest, c_text.data, rt_dir, &objects, err);
    if (status == 0) status = write_c(opt, &c_text, stem, c_dir, err);
    pathf(tmp_out, "%s.tmp.%ld", out_abs ? out_abs : "", (long)getpid());
    if (status == 0)
        status = compile_program(cc, &flags, rt_dir, &objects, c_dir, stem, tmp_out, err);
    sv_free(&objects);
    if (status == 0 && rename(tmp_out, out_abs) != 0)
        status = fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    if (status == 0)
        status = write_receipt(opt, output, cc, &flags, rt_digest, numerics, out_abs, err);
    unlink(tmp_out);
    sv_free(&flags);
    cJSON_Delete(numerics);
    sb_free(&c_text);
    free(out_abs);
    return status;
}

static int check_source(const build_options *opt, driver_error *err) {
    if (!opt->source) return fail(err, DRIVER_USAGE, "no source file given (see --help)");
    if (access(opt->source, R_OK) != 0)
        return fail(err, DRIVER_USAGE, "cannot read %s: %s", opt->source, strerror(errno));
    return 0;
}

int driver_build(const build_options *opt, driver_error *err) {
    int status = check_source(opt, err);
    if (status) return status;
    cc_info cc = {0};
    status = cc_discover(opt->cc, &cc, err);
    char stem[256];
    source_stem(opt->source, stem);
    if (status == 0) status = build_into(opt, opt->output ? opt->output : stem, &cc, err);
    free(cc.path);
    return status;
}

/* SHA-256 of this very binary, so a rebuilt cairn never reuses an old cache entry. */
static void self_digest(char hex[65]) {
    if (sha256_file("/proc/self/exe", hex) != 0)
        sha256_hex(CAIRN_VERSION, strlen(CAIRN_VERSION), hex);
}

int driver_build_cached(const build_options *opt, char **exe, driver_error *err) {
    int status = check_source(opt, err);
    if (status) return status;
    cc_info cc = {0};
    status = cc_discover(opt->cc, &cc, err);
    if (status) return status;
    size_t len;
    char *source = fs_read(opt->source, &len);
    char self[65], hex[65], root[PATH_MAX], stem[256];
    self_digest(self);
    strvec flags = {0};
    compile_flags(opt, &flags);
    strbuf key = {0};
    sb_printf(&key, "cairn-run-1\n%s\n%s\n%s\n%s\n", self, opt->source, cc.path, cc.banner);
    for (size_t k = 0; k < flags.len; k++) sb_printf(&key, "%s\n", flags.items[k]);
    sb_append(&key, source ? source : "", source ? len : 0);
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
    sv_free(&flags);
    free(source);
    source_stem(opt->source, stem);
    status = cache_dir("bin", root, err);
    strbuf path = {0};
    sb_printf(&path, "%s/%.32s", root, hex);
    if (status == 0 && fs_mkdirs(path.data) != 0)
        status = fail(err, DRIVER_USAGE, "cannot create %s: %s", path.data, strerror(errno));
    sb_printf(&path, "/%s", stem);
    if (status == 0 && !exists(path.data)) status = build_into(opt, path.data, &cc, err);
    free(cc.path);
    if (status == 0) *exe = path.data;
    else sb_free(&path);
    return status;
}
