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
 * Files are written under a private name (NAME.tmp.PID) and renamed into place, so
 * concurrent builds never see half a file; an executable or runtime object is used only
 * when it hashes to the digest sealed beside it (NAME.sha256), else built again, and the
 * temporaries of builds that were killed are removed when the folder is next used. */
#include "driver/driver.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/proc.h"
#include "lib/sha256.h"
#include "base/base.h"
#include "check/check.h"
#include "lower/lower.h"
#include "driver/driver_internal.h"
#include "driver/receipt.h"

/* The C compiler as found on this machine. */
typedef struct CcInfo {
    char *path;
    char name[16];    /* "gcc" or "clang" */
    char version[64]; /* e.g. "12.2.0" */
    char banner[256]; /* first line of --version, part of the cache keys */
} CcInfo;

/* nvcc as found on this machine (a CUDA build). */
typedef struct NvccInfo {
    char *path;       /* NULL: not a CUDA build, or --emit-only (nvcc never runs) */
    char version[32]; /* e.g. "13.0.48", from `nvcc --version` */
} NvccInfo;

/* One build, from its options to its receipt: what every step reads, set up once
 * (build_open, build_into) and released by build_close. The source is read once, here:
 * the bytes that are parsed are the bytes the cache key and the receipt hash. */
typedef struct Build {
    const BuildOptions *opt;
    CcInfo cc;
    NvccInfo nv;
    StrVec flags;    /* what the program and its runtime are compiled with */
    StrVec nv_flags; /* what nvcc compiles the device half with (a CUDA build) */
    char *source;    /* the source's bytes */
    size_t source_len;
    char source_sha256[65];
    char stem[256];        /* the source's file name without folders or .cairn */
    const char *output;    /* OUT as the user named it */
    char *out_abs;         /* its absolute path */
    LibNames names;        /* --lib: the symbols' prefix and the header's file name */
    LowerOutput lo;        /* the lowered program */
    char rt_digest[65];    /* SHA-256 of the runtime carried inside this binary */
    char rt_dir[PATH_MAX]; /* rt/KEY: the runtime and its objects */
    char c_dir[PATH_MAX];  /* c/KEY: the generated code */
    StrVec objects;        /* the runtime objects the program links */
} Build;

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
    *canonical = thread                 ? "thread"
                 : address && undefined ? "address,undefined"
                 : address              ? "address"
                 : undefined            ? "undefined"
                                        : NULL;
    return *canonical ? 0 : -1;
}

/* host, or sm_ and two or three digits with an optional letter (sm_90a). */
static bool valid_target(const char *t) {
    if (strcmp(t, "host") == 0) return true;
    if (strncmp(t, "sm_", 3) != 0) return false;
    size_t digits = strspn(t + 3, "0123456789");
    const char *rest = t + 3 + digits;
    return digits >= 2 && digits <= 3 && (!*rest || (rest[0] >= 'a' && rest[0] <= 'z' && !rest[1]));
}

static int take_value(int argc, char **argv, int *i, const char **value, Err *err) {
    *value = NULL;
    if (*i + 1 >= argc) return err_set(err, "%s needs a value", argv[*i]);
    *value = argv[++*i];
    return 1;
}

int driver_parse_flag(BuildOptions *opt, int argc, char **argv, int *i, Err *err) {
    const char *a = argv[*i];
    if (strcmp(a, "-o") == 0) return take_value(argc, argv, i, &opt->output, err);
    if (strcmp(a, "--cc") == 0) return take_value(argc, argv, i, &opt->cc, err);
    if (strcmp(a, "--emit-c") == 0) return take_value(argc, argv, i, &opt->emit_c_dir, err);
    if (strcmp(a, "--sanitize") == 0) {
        const char *value;
        if (take_value(argc, argv, i, &value, err) < 0) return -1;
        if (canonical_sanitize(value, &opt->sanitize) != 0)
            return err_set(err, "--sanitize takes address,undefined or thread, not '%s'", value);
        return 1;
    }
    if (a[0] == '-' && a[1] == 'O') {
        if (a[2] < '0' || a[2] > '3' || a[3])
            return err_set(err, "unknown optimization flag '%s' (use -O0, -O1, -O2 or -O3)", a);
        opt->opt_level = a[2] - '0';
        opt->opt_set = 1;
        return 1;
    }
    if (strcmp(a, "--no-elide") == 0 || strcmp(a, "--explain-guards") == 0) {
        *(strcmp(a, "--no-elide") == 0 ? &opt->no_elide : &opt->explain_guards) = 1;
        return 1;
    }
    if (strcmp(a, "--emulate") == 0 || strcmp(a, "--emit-only") == 0 || strcmp(a, "--lib") == 0) {
        *(strcmp(a, "--emulate") == 0 ? &opt->emulate
          : strcmp(a, "--lib") == 0   ? &opt->lib
                                      : &opt->emit_only) = 1;
        return 1;
    }
    if (strcmp(a, "--prefix") == 0) return take_value(argc, argv, i, &opt->prefix, err);
    if (strcmp(a, "--target") == 0) {
        const char *value;
        if (take_value(argc, argv, i, &value, err) < 0) return -1;
        if (!valid_target(value))
            return err_set(err,
                           "--target takes host or a CUDA architecture sm_NN (sm_80, sm_89, "
                           "sm_90, sm_120), not '%s'",
                           value);
        opt->target = value;
        return 1;
    }
    return 0;
}

/* A CUDA build: a GPU target, not emulated. */
static bool cuda_build(const BuildOptions *opt) {
    return opt->target && strcmp(opt->target, "host") != 0 && !opt->emulate;
}

/* The exact flags a program (and its runtime) is compiled with. */
static void compile_flags(const BuildOptions *opt, StrVec *flags) {
    char olevel[8];
    snprintf(olevel, sizeof olevel, "-O%d", opt->opt_set ? opt->opt_level : 2);
    const char *base[] = {"-std=c11",          olevel,          "-Wall", "-Wextra", "-Werror",
                          "-ffp-contract=off", "-fno-fast-math"};
    for (size_t k = 0; k < sizeof base / sizeof *base; k++) sv_push(flags, base[k]);
    if (cuda_build(opt))
        sv_push(flags, "-DCAIRN_CUDA=1"); /* cairn_device.h: device memory by cudart */
    if (opt->lib) { /* a library: position-independent, exporting only its entries */
        sv_push(flags, "-fPIC");
        sv_push(flags, "-fvisibility=hidden");
        sv_push(flags, "-DCAIRN_LIB=1"); /* traps return to the entry (cairn_lib.h) */
    }
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

/* What every program links, host or CUDA build, in this order: the one list the host
 * link, the nvcc link and the receipt all take. A compiler-driver option (-pthread) is
 * not a library: nvcc's link passes it to the host compiler behind -Xcompiler. */
typedef struct LinkArg {
    const char *arg;
    bool driver_option;
} LinkArg;
static const LinkArg link_args[] = {
    {"-lm", false}, {"-pthread", true}, {"-lcrypto", false}, {"-lcjson", false}};

/* Appends the link libraries to argv, spelled for nvcc's link when for_nvcc. */
static void push_link_args(StrVec *argv, bool for_nvcc) {
    for (size_t k = 0; k < sizeof link_args / sizeof *link_args; k++) {
        if (for_nvcc && link_args[k].driver_option) sv_push(argv, "-Xcompiler");
        sv_push(argv, link_args[k].arg);
    }
}

/* ---- the cache ------------------------------------------------------------------ */

static int cache_dir(const char *sub, char out[PATH_MAX], Err *err) {
    const char *root = getenv("CAIRN_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (root && *root) n = pathf(out, "%s/%s", root, sub);
    else if (xdg && *xdg) n = pathf(out, "%s/cairn/%s", xdg, sub);
    else if (home && *home) n = pathf(out, "%s/.cache/cairn/%s", home, sub);
    else n = pathf(out, "/tmp/cairn-cache-%ld/%s", (long)getuid(), sub);
    if (n >= PATH_MAX || fs_mkdirs(out, NULL) != 0)
        return err_fail(err, DRIVER_USAGE,
                        "cannot create the build cache %s: %s (set CAIRN_CACHE "
                        "to a writable folder)",
                        out, strerror(errno));
    return 0;
}

/* A line derived from FILE that changes only when FILE does (the digest of this binary,
 * a compiler's --version banner), remembered in the cache under FILE's identity: device,
 * inode, size and modification time to the nanosecond, so a rebuilt or reinstalled
 * FILE is looked at afresh (issue 33: a cached `cairn run` spent most of its time
 * hashing cairn itself and running gcc --version). memo_path gives the memo's file;
 * -1 when FILE cannot be examined or the cache cannot be created (then nothing is
 * remembered and the caller computes the line every time). */
static int memo_path(const char *kind, const char *file, char out[PATH_MAX]) {
    struct stat st;
    char root[PATH_MAX], hex[65];
    Err ignored = {0};
    if (stat(file, &st) != 0 || cache_dir("memo", root, &ignored) != 0) return -1;
    StrBuf key = {0};
    sb_printf(&key, "cairn-memo-1\n%s\n%s\n%ju %ju %jd %jd.%09ld\n", kind, file,
              (uintmax_t)st.st_dev, (uintmax_t)st.st_ino, (intmax_t)st.st_size,
              (intmax_t)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
    return pathf(out, "%s/%.32s", root, hex) < PATH_MAX ? 0 : -1;
}

/* The remembered line (at most size - 1 bytes, no newline) into out: 1, else 0. */
static int memo_get(const char *path, char *out, size_t size) {
    size_t len = 0;
    char *text = fs_read(path, &len, NULL);
    int ok = text && len > 0 && len < size && !memchr(text, '\n', len);
    if (ok) memcpy(out, text, len), out[len] = '\0';
    free(text);
    return ok;
}

static void memo_put(const char *path, const char *line) {
    Err ignored = {0};
    (void)fs_write_atomic(path, line, strlen(line), &ignored);
}

/* ---- cached outputs: sealed with their digest ------------------------------------ */

/* A cached output (an executable in bin/KEY/, a runtime object in rt/KEY/) is used only
 * when its bytes hash to the digest in PATH.sha256, written after it was renamed into
 * place: a truncated or damaged one (a kill, a full disk, a flipped bit) broke every
 * later `cairn run` until the cache was deleted (SIGSEGV, or "the C compiler rejected the
 * generated C"); now it is built again and renamed over. */
static int cache_output_ok(const char *path) {
    char seal[PATH_MAX], want[80] = "", got[65];
    pathf(seal, "%s.sha256", path);
    FILE *f = fopen(seal, "r");
    int read = f && fgets(want, sizeof want, f) != NULL;
    if (f) fclose(f);
    want[strcspn(want, "\n")] = '\0';
    return read && sha256_is_hex(want) && sha256_file_hex(path, got, NULL, NULL) == 0 &&
           strcmp(got, want) == 0;
}

/* Writes PATH.sha256 for the output just renamed into PATH (cache_output_ok). */
static void cache_output_seal(const char *path) {
    char seal[PATH_MAX], hex[65];
    pathf(seal, "%s.sha256", path);
    if (sha256_file_hex(path, hex, NULL, NULL) != 0) return;
    hex[64] = '\n';
    fs_write_atomic(seal, hex, 65, NULL); /* not written: the output is built again */
}

/* Removes what killed builds left in the cache folder DIR: temporaries NAME.tmp.PID[.N]
 * whose process PID is gone (a live build's are its own). */
static void cache_sweep(const char *dir) {
    DIR *d = opendir(dir);
    struct dirent *ent;
    while (d && (ent = readdir(d)) != NULL) {
        const char *at = strstr(ent->d_name, ".tmp.");
        char *end = NULL;
        long pid = at ? strtol(at + 5, &end, 10) : 0;
        if (pid <= 0 || end == at + 5 || (*end && *end != '.')) continue;
        if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) unlinkat(dirfd(d), ent->d_name, 0);
    }
    if (d) closedir(d);
}

/* What `TOOL --version` prints; NULL when it fails. */
static char *version_text(const char *tool) {
    char *argv[] = {(char *)tool, "--version", NULL};
    char *text = NULL;
    if (proc_output(argv, &text, NULL) == 0) return text;
    free(text);
    return NULL;
}

/* ---- the C compiler ------------------------------------------------------------- */

static int cc_discover(const char *requested, CcInfo *cc, Err *err) {
    const char *candidates[] = {"gcc", "clang", "cc"};
    if (requested) cc->path = fs_which(requested);
    for (size_t k = 0; !requested && !cc->path && k < 3; k++) cc->path = fs_which(candidates[k]);
    if (!cc->path)
        return requested ? err_fail(err, DRIVER_NO_TOOL,
                                    "C compiler '%s' not found on PATH "
                                    "(install it, or pass --cc gcc or --cc clang)",
                                    requested)
                         : err_fail(err, DRIVER_NO_TOOL,
                                    "no C compiler found on PATH (install gcc "
                                    "or clang, or pass --cc PATH)");
    char memo[PATH_MAX];
    int memo_ok = memo_path("cc-banner", cc->path, memo) == 0;
    if (!memo_ok || !memo_get(memo, cc->banner, sizeof cc->banner)) {
        char *text = version_text(cc->path);
        if (!text)
            return err_fail(err, DRIVER_USAGE, "'%s --version' failed: is it a C compiler?",
                            cc->path);
        snprintf(cc->banner, sizeof cc->banner, "%.*s", (int)strcspn(text, "\n"), text);
        free(text);
        if (memo_ok && cc->banner[0]) memo_put(memo, cc->banner);
    }
    snprintf(cc->name, sizeof cc->name, "%s", strstr(cc->banner, "clang") ? "clang" : "gcc");
    const char *v = cc->banner;
    while (*v && !(v[0] >= '0' && v[0] <= '9' && strchr(v, '.') &&
                   (v == cc->banner || v[-1] == ' ' || v[-1] == '(')))
        v++;
    snprintf(cc->version, sizeof cc->version, "%.*s", (int)strspn(v, "0123456789."), v);
    return 0;
}

int driver_compile_failure(const char *what, const char *log, Err *err) {
    char *text = fs_read(log, NULL, NULL);
    if (text) fputs(text, stderr);
    free(text);
    return err_fail(err, DRIVER_INTERNAL, "the C compiler rejected %s (a bug in cairn; log: %s)",
                    what, log);
}

/* ---- nvcc (CUDA builds) ---------------------------------------------------------- */

/* $CAIRN_NVCC when set (tests point it at a missing file), else nvcc on PATH, in
 * $CUDA_HOME/bin, or in /usr/local/cuda/bin. */
static int nvcc_discover(NvccInfo *nv, Err *err) {
    const char *forced = getenv("CAIRN_NVCC"), *home = getenv("CUDA_HOME");
    char path[PATH_MAX];
    if (forced && *forced) {
        nv->path = access(forced, X_OK) == 0 ? fs_absolute(forced) : NULL;
    } else {
        nv->path = fs_which("nvcc");
        if (!nv->path && home && *home && pathf(path, "%s/bin/nvcc", home) > 0 &&
            access(path, X_OK) == 0)
            nv->path = strdup(path);
        if (!nv->path && access("/usr/local/cuda/bin/nvcc", X_OK) == 0)
            nv->path = strdup("/usr/local/cuda/bin/nvcc");
    }
    if (!nv->path)
        return err_fail(
            err, DRIVER_NO_TOOL,
            "nvcc not found (install the CUDA toolkit, put nvcc on PATH "
            "or set CUDA_HOME; --emulate runs the device work on host threads instead)");
    char *text = version_text(nv->path);
    const char *v = text ? strstr(text, ", V") : NULL;
    if (!v) {
        free(text);
        return err_fail(err, DRIVER_USAGE, "'%s --version' failed: is it nvcc?", nv->path);
    }
    snprintf(nv->version, sizeof nv->version, "%.*s", (int)strspn(v + 3, "0123456789."), v + 3);
    free(text);
    return 0;
}

/* What nvcc compiles the device half with (docs/devices.md): no contraction into fused
 * multiply-adds, IEEE division and square root, subnormals kept; the host side of the
 * .cu with the project's strict flags; every warning an error. */
static void nvcc_flags(const BuildOptions *opt, StrVec *flags) {
    char arch[32], olevel[8];
    snprintf(arch, sizeof arch, "-arch=%s", opt->target);
    snprintf(olevel, sizeof olevel, "-O%d", opt->opt_set ? opt->opt_level : 2);
    const char *base[] = {arch,
                          "-std=c++17",
                          olevel,
                          "--fmad=false",
                          "-prec-div=true",
                          "-prec-sqrt=true",
                          "-ftz=false",
                          "-Werror",
                          "all-warnings",
                          "-Xcompiler",
                          "-Wall,-Wextra,-ffp-contract=off,-fno-fast-math",
                          "-DCAIRN_CUDA=1"};
    for (size_t k = 0; k < sizeof base / sizeof *base; k++) sv_push(flags, base[k]);
    if (!opt->lib) return;
    const char *lib[] = {"-Xcompiler", "-fPIC,-fvisibility=hidden", "-DCAIRN_LIB=1"};
    for (size_t k = 0; k < sizeof lib / sizeof *lib; k++) sv_push(flags, lib[k]);
}

/* ---- the runtime ---------------------------------------------------------------- */

static void runtime_digest(char hex[65]) {
    StrBuf all = {0};
    for (size_t k = 0; k < cairn_runtime_file_count; k++) {
        const EmbeddedFile *f = &cairn_runtime_files[k];
        sb_printf(&all, "%s\n%zu\n", f->name, f->size);
        sb_append(&all, (const char *)f->data, f->size);
    }
    sha256_hex(all.data ? all.data : "", all.len, hex);
    sb_free(&all);
}

/* Which runtime sources a program needs: the lowering records the runtime modules its
 * code calls (LowerOutput.modules, lower/lower.h), and the MODULE rows of
 * syntax/ops.def say which sources each module is and which modules those call in turn;
 * those are linked too. Only what is needed is compiled, so e.g. the bracket GEMM costs
 * nothing to a program without one. Every runtime source has a row (runtime_needed
 * refuses to link without one), so a new source cannot be forgotten silently. */
typedef struct RuntimeModule {
    unsigned module;    /* LOWER_MODULE_* */
    const char *source; /* NULL: a header only */
    unsigned calls;     /* the modules its code calls */
} RuntimeModule;

static const RuntimeModule runtime_modules[] = {
#define MODULE(id, source, calls)      {LOWER_MODULE_##id, source, calls},
#define MODULE_FILE(id, source, calls) {LOWER_MODULE_##id, source, calls},
#include "syntax/ops.def"
};
enum { RUNTIME_MODULE_COUNT = sizeof runtime_modules / sizeof runtime_modules[0] };

static bool is_c_source(const char *name) {
    size_t n = strlen(name);
    return n > 2 && strcmp(name + n - 2, ".c") == 0;
}

/* The modules MODULES call, directly or through each other, with MODULES themselves. */
static unsigned runtime_closure(unsigned modules) {
    for (unsigned before = 0; before != modules;) {
        before = modules;
        for (size_t m = 0; m < RUNTIME_MODULE_COUNT; m++)
            if (modules & runtime_modules[m].module) modules |= runtime_modules[m].calls;
    }
    return modules;
}

/* needed[k]: embedded file k is a source the program's MODULES need. */
static int runtime_needed(unsigned modules, bool needed[], Err *err) {
    unsigned all = runtime_closure(modules);
    for (size_t k = 0; k < cairn_runtime_file_count; k++) {
        const char *name = cairn_runtime_files[k].name;
        size_t m = 0;
        while (m < RUNTIME_MODULE_COUNT &&
               !(runtime_modules[m].source && strcmp(runtime_modules[m].source, name) == 0))
            m++;
        if (is_c_source(name) && m == RUNTIME_MODULE_COUNT)
            return err_fail(err, DRIVER_INTERNAL,
                            "runtime source %s has no MODULE row in syntax/ops.def", name);
        needed[k] = is_c_source(name) && (all & runtime_modules[m].module);
    }
    return 0;
}

/* 1 when PATH holds exactly the LEN bytes of DATA. */
static int holds_bytes(const char *path, const void *data, size_t len) {
    size_t got = 0;
    char *text = fs_read(path, &got, NULL);
    int same = text && got == len && memcmp(text, data, len) == 0;
    free(text);
    return same;
}

/* Writes the embedded runtime into `dir` (identical bytes, so racing writers agree); a
 * file there that is not those bytes (truncated, damaged) is written again. */
static int runtime_write(const char *dir, Err *err) {
    for (size_t k = 0; k < cairn_runtime_file_count; k++) {
        const EmbeddedFile *f = &cairn_runtime_files[k];
        char path[PATH_MAX];
        pathf(path, "%s/%s", dir, f->name);
        if (!holds_bytes(path, f->data, f->size) &&
            fs_write_atomic(path, f->data, f->size, NULL) != 0)
            return err_fail(err, DRIVER_USAGE, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Starts compiling NAME.c into NAME.o.tmp.PID (log NAME.o.log) in b->rt_dir, unless
 * NAME.o exists; the object's name goes to *names. */
static pid_t runtime_compile_start(const Build *b, const char *name, StrVec *names) {
    size_t n = strlen(name);
    char object[256], tmp[300], path[PATH_MAX], log[PATH_MAX];
    snprintf(object, sizeof object, "%.*s.o", (int)(n - 2), name);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", object, (long)getpid());
    pathf(path, "%s/%s", b->rt_dir, object);
    pathf(log, "%s/%s.log", b->rt_dir, object);
    sv_push(names, object);
    if (cache_output_ok(path)) return 0;
    StrVec argv = {0};
    sv_push(&argv, b->cc.path);
    for (size_t f = 0; f < b->flags.len; f++) /* the project's own build vets warnings */
        if (strcmp(b->flags.items[f], "-Werror") != 0) sv_push(&argv, b->flags.items[f]);
    const char *tail[] = {"-D_GNU_SOURCE", "-I.", "-c", name, "-o", tmp};
    for (size_t t = 0; t < 6; t++) sv_push(&argv, tail[t]);
    pid_t pid = proc_start(argv.items, b->rt_dir, log);
    sv_free(&argv);
    return pid;
}

/* Compiles the needed runtime sources in b->rt_dir at once (those not compiled before)
 * and lists their objects' paths in b->objects. */
static int runtime_compile(Build *b, const bool needed[], Err *err) {
    StrVec names = {0};
    pid_t pids[64];
    size_t started = 0;
    for (size_t k = 0; k < cairn_runtime_file_count && started < 64; k++)
        if (needed[k] && is_c_source(cairn_runtime_files[k].name))
            pids[started++] = runtime_compile_start(b, cairn_runtime_files[k].name, &names);
    assert(names.len == started);
    int status = 0;
    for (size_t k = 0; k < started; k++) {
        char path[PATH_MAX], tmp[PATH_MAX], log[PATH_MAX];
        pathf(path, "%s/%s", b->rt_dir, names.items[k]);
        pathf(tmp, "%s.tmp.%ld", path, (long)getpid());
        pathf(log, "%s.log", path);
        int rc = pids[k] == 0 ? 0 : pids[k] < 0 ? -1 : proc_wait(pids[k]);
        if (rc == 0 && pids[k] > 0 && rename(tmp, path) != 0) rc = -1;
        if (rc == 0 && pids[k] > 0) cache_output_seal(path);
        if (rc != 0 && status == 0) status = driver_compile_failure(names.items[k], log, err);
        sv_push(&b->objects, path);
    }
    sv_free(&names);
    return status;
}

/* The runtime objects this program needs (b->lo.modules), compiled for this compiler
 * and these flags (cached in rt/KEY/, which becomes b->rt_dir); their paths go to
 * b->objects. */
static int runtime_ensure(Build *b, Err *err) {
    StrBuf key = {0};
    sb_printf(&key, "cairn-runtime-2\n%s\n%s\n%s\n", b->cc.path, b->cc.banner, b->rt_digest);
    for (size_t k = 0; k < b->flags.len; k++) sb_printf(&key, "%s\n", b->flags.items[k]);
    char hex[65], root[PATH_MAX];
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
    if (cache_dir("rt", root, err)) return DRIVER_USAGE;
    pathf(b->rt_dir, "%s/%.32s", root, hex);
    if (fs_mkdirs(b->rt_dir, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot create %s: %s", b->rt_dir, strerror(errno));
    cache_sweep(b->rt_dir);
    bool needed[256] = {0};
    if (cairn_runtime_file_count > 256)
        return err_fail(err, DRIVER_INTERNAL, "too many runtime files");
    int status = runtime_needed(b->lo.modules, needed, err);
    if (status == 0) status = runtime_write(b->rt_dir, err);
    if (status == 0) status = runtime_compile(b, needed, err);
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

/* A library's header file name, or NULL when the build is not a library. */
static const char *build_header(const Build *b) { return b->opt->lib ? b->names.header : NULL; }

/* Writes the generated C to c/KEY/STEM.c, a CUDA build's device half to
 * c/KEY/STEM_dev.cu and a library's header to c/KEY/HEADER (and all to --emit-c DIR);
 * b->c_dir gets c/KEY. */
static int write_c(Build *b, Err *err) {
    const LowerOutput *lo = &b->lo;
    const char *header = build_header(b);
    char hex[65], root[PATH_MAX], path[PATH_MAX];
    StrBuf all = {0};
    sb_append(&all, lo->c.data ? lo->c.data : "", lo->c.len);
    sb_append(&all, lo->cu.data ? lo->cu.data : "", lo->cu.len);
    if (header) sb_printf(&all, "%s\n%s", header, lo->h.data ? lo->h.data : "");
    sha256_hex(all.data ? all.data : "", all.len, hex);
    sb_free(&all);
    if (cache_dir("c", root, err)) return DRIVER_USAGE;
    pathf(b->c_dir, "%s/%.32s", root, hex);
    cache_sweep(b->c_dir);
    const char *dirs[] = {b->c_dir, b->opt->emit_c_dir};
    for (int d = 0; d < 2 && dirs[d]; d++) {
        const char *what = d ? "--emit-c: " : "";
        for (int part = 0; part < 3; part++) {
            const StrBuf *text = part == 2 ? &lo->h : part ? &lo->cu : &lo->c;
            if (part && !text->len) continue;
            assert(part != 2 || header); /* only a library has a header */
            if (part == 2) pathf(path, "%s/%s", dirs[d], header);
            else pathf(path, "%s/%s%s", dirs[d], b->stem, part ? "_dev.cu" : ".c");
            if (fs_mkdirs(dirs[d], NULL) != 0 ||
                fs_write_atomic(path, text->data, text->len, NULL) != 0)
                return err_fail(err, DRIVER_USAGE, "%scannot write %s: %s", what, path,
                                strerror(errno));
        }
    }
    return 0;
}

/* Appends the runtime's -I, then SOURCE, OBJECT (-c SOURCE -o OBJECT when OBJECT is
 * given; else SOURCE alone, the link that follows naming its own output). */
static void push_compile(const Build *b, StrVec *argv, const char *source, const char *object) {
    char include[PATH_MAX];
    pathf(include, "-I%s", b->rt_dir);
    sv_push(argv, include);
    if (object) sv_push(argv, "-c");
    sv_push(argv, source);
    if (object) {
        sv_push(argv, "-o");
        sv_push(argv, object);
    }
}

/* Runs argv in b->c_dir with its log at c_dir/STEM + LOG; a failure names WHAT. */
static int run_step(const Build *b, const StrVec *argv, const char *log_suffix, const char *what,
                    Err *err) {
    char log[PATH_MAX];
    pathf(log, "%s/%s%s.log", b->c_dir, b->stem, log_suffix);
    return proc_run(argv->items, b->c_dir, log) == 0 ? 0 : driver_compile_failure(what, log, err);
}

/* Compiles and links c_dir/STEM.c with the runtime objects into `out` (absolute). */
static int compile_program(const Build *b, const char *out, Err *err) {
    char source[300];
    snprintf(source, sizeof source, "%s.c", b->stem);
    StrVec argv = {0};
    sv_push(&argv, b->cc.path);
    for (size_t k = 0; k < b->flags.len; k++) sv_push(&argv, b->flags.items[k]);
    push_compile(b, &argv, source, NULL);
    for (size_t k = 0; k < b->objects.len; k++) sv_push(&argv, b->objects.items[k]);
    sv_push(&argv, "-o");
    sv_push(&argv, out);
    push_link_args(&argv, false);
    int status = run_step(b, &argv, "", "the generated C", err);
    sv_free(&argv);
    return status;
}

/* A CUDA build: STEM.c with the C compiler, STEM_dev.cu with nvcc, and nvcc links both
 * with the runtime objects into `out`. */
static int compile_cuda(const Build *b, const char *out, Err *err) {
    assert(b->nv.path && b->nv_flags.len > 0);
    char src[300], obj[300], dev_src[300], dev_obj[300];
    snprintf(src, sizeof src, "%s.c", b->stem);
    snprintf(obj, sizeof obj, "%s.o", b->stem);
    snprintf(dev_src, sizeof dev_src, "%s_dev.cu", b->stem);
    snprintf(dev_obj, sizeof dev_obj, "%s_dev.o", b->stem);
    StrVec host = {0}, dev = {0}, link = {0};
    sv_push(&host, b->cc.path);
    for (size_t k = 0; k < b->flags.len; k++) sv_push(&host, b->flags.items[k]);
    push_compile(b, &host, src, obj);
    sv_push(&dev, b->nv.path);
    for (size_t k = 0; k < b->nv_flags.len; k++) sv_push(&dev, b->nv_flags.items[k]);
    push_compile(b, &dev, dev_src, dev_obj);
    sv_push(&link, b->nv.path);
    sv_push(&link, b->nv_flags.items[0]); /* -arch=sm_NN */
    sv_push(&link, obj);
    sv_push(&link, dev_obj);
    for (size_t k = 0; k < b->objects.len; k++) sv_push(&link, b->objects.items[k]);
    sv_push(&link, "-o");
    sv_push(&link, out);
    push_link_args(&link, true);
    int status = run_step(b, &host, "", "the generated C", err);
    if (!status) status = run_step(b, &dev, "_dev", "the generated CUDA C++ (nvcc)", err);
    if (!status) status = run_step(b, &link, "_link", "the CUDA link (nvcc)", err);
    sv_free(&host);
    sv_free(&dev);
    sv_free(&link);
    return status;
}

/* Checks the output can be written before any work is done; b->out_abs gets its path. */
static int probe_output(Build *b, Err *err) {
    const char *output = b->output;
    b->out_abs = fs_absolute(output);
    if (!b->out_abs)
        return err_fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    struct stat st;
    if (stat(b->out_abs, &st) == 0 && S_ISDIR(st.st_mode))
        return err_fail(err, DRIVER_USAGE, "cannot write %s: it is a folder (give -o a file name)",
                        output);
    char probe[PATH_MAX];
    pathf(probe, "%s.probe.%ld", b->out_abs, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f) return err_fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    fclose(f);
    unlink(probe);
    return 0;
}

/* What a receipt describes: the output as named and the file it hashes (an executable,
 * or a library's OUT.so) and, for a library, its files and entries. The receipt goes to
 * b->out_abs + ".receipt.json". */
typedef struct ReceiptFiles {
    const char *shown, *path;
    const cJSON *library;
} ReceiptFiles;

/* Writes OUT.receipt.json: the source's digest is that of the bytes parsed (b->source),
 * never a later read of the file. */
static int write_receipt(const Build *b, const ReceiptFiles *files, Err *err) {
    const BuildOptions *opt = b->opt;
    char out_sha[65];
    if (sha256_file_hex(files->path, out_sha, NULL, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot read back %s: %s", files->shown,
                        strerror(errno));
    StrVec link = {0};
    push_link_args(&link, false);
    ReceiptInfo info = {
        .source_path = opt->source,
        .source_sha256 = b->source_sha256,
        .output_path = files->shown,
        .output_sha256 = out_sha,
        .runtime_sha256 = b->rt_digest,
        .cc_name = b->cc.name,
        .cc_version = b->cc.version,
        .flags = &b->flags,
        .link = &link,
        .sanitize = opt->sanitize,
        .numerics = b->lo.numerics,
        .guards = b->lo.guards,
        .target = opt->target ? opt->target : "host",
        .emulate = opt->emulate || (b->lo.has_device && !b->nv.path),
        .nvcc_version = b->nv.path ? b->nv.version : NULL,
        .nvcc_flags = &b->nv_flags,
        .library = files->library,
    };
    char *text = receipt_render(&info);
    sv_free(&link);
    char path[PATH_MAX];
    pathf(path, "%s.receipt.json", b->out_abs);
    int ok = fs_write_atomic(path, text, strlen(text), NULL) == 0;
    free(text);
    return ok ? 0
              : err_fail(err, DRIVER_USAGE, "cannot write %s.receipt.json: %s", b->output,
                         strerror(errno));
}

/* Checks the program once, from the bytes read (b->source), then lowers it into b->lo. */
static int lower_source(Build *b, Err *err) {
    const BuildOptions *opt = b->opt;
    Diags d;
    diags_init(&d, NULL);
    Program *p = cairn_load_text(opt->source, b->source, b->source_len, &d);
    LowerOptions lopt = {.cuda = cuda_build(opt),
                         .device = opt->target,
                         .lib_prefix = opt->lib ? b->names.prefix : NULL,
                         .lib_header = build_header(b),
                         .no_elide = opt->no_elide};
    int refused = p ? lower_program(p, &d, &lopt, &b->lo) : 1;
    if (refused) diags_print(&d, stderr);
    if (!refused && opt->explain_guards) receipt_print_guards(stdout, opt->source, b->lo.guards);
    if (p) ast_program_free(p);
    diags_free(&d);
    return refused ? err_fail(err, DRIVER_REFUSED, "%s was refused", opt->source) : 0;
}

/* Compiles the lowered program (the runtime it needs, the host C, a CUDA build's device
 * half), links it into b->out_abs and writes the receipt. */
static int compile_and_link(Build *b, Err *err) {
    char tmp_out[PATH_MAX];
    int status = runtime_ensure(b, err);
    if (status == 0) status = write_c(b, err);
    pathf(tmp_out, "%s.tmp.%ld", b->out_abs, (long)getpid());
    if (status == 0 && b->nv.path) status = compile_cuda(b, tmp_out, err);
    else if (status == 0) status = compile_program(b, tmp_out, err);
    if (status == 0 && rename(tmp_out, b->out_abs) != 0)
        status = err_fail(err, DRIVER_USAGE, "cannot write %s: %s", b->output, strerror(errno));
    ReceiptFiles files = {b->output, b->out_abs, NULL};
    if (status == 0) status = write_receipt(b, &files, err);
    unlink(tmp_out);
    return status;
}

/* ---- libraries ------------------------------------------------------------------- */

/* {"path": OUT + ext, "sha256": ...} of the file out_abs + ext; NULL when unreadable. */
static cJSON *library_file(const Build *b, const char *ext) {
    char path[PATH_MAX], hex[65];
    pathf(path, "%s%s", b->out_abs, ext);
    if (sha256_file_hex(path, hex, NULL, NULL) != 0) return NULL;
    pathf(path, "%s%s", b->output, ext);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "sha256", hex);
    return o;
}

/* The receipt's "library": the prefix, the three files and the entries. */
static cJSON *library_section(const Build *b) {
    cJSON *lib = cJSON_CreateObject();
    cJSON_AddStringToObject(lib, "prefix", b->names.prefix);
    const char *keys[] = {"shared", "static", "header"}, *exts[] = {".so", ".a", ".h"};
    for (int k = 0; k < 3; k++) {
        cJSON *file = library_file(b, exts[k]);
        if (!file) {
            cJSON_Delete(lib);
            return NULL;
        }
        cJSON_AddItemToObject(lib, keys[k], file);
    }
    char last[LIBRARY_PREFIX_MAX + 16];
    snprintf(last, sizeof last, "%s_last_error", b->names.prefix);
    cJSON_AddStringToObject(lib, "last_error", last);
    cJSON_AddItemToObject(lib, "entries", cJSON_Duplicate(b->lo.library, 1));
    return lib;
}

/* Moves the library's temporary files into place: OUT.so, OUT.a, and OUT.h written. */
static int library_install(const Build *b, const char *tmp_so, const char *tmp_a, Err *err) {
    char path[PATH_MAX];
    pathf(path, "%s.so", b->out_abs);
    if (rename(tmp_so, path) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot write %s.so: %s", b->output, strerror(errno));
    pathf(path, "%s.a", b->out_abs);
    if (rename(tmp_a, path) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot write %s.a: %s", b->output, strerror(errno));
    pathf(path, "%s.h", b->out_abs);
    if (fs_write_atomic(path, b->lo.h.data, b->lo.h.len, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot write %s.h: %s", b->output, strerror(errno));
    return 0;
}

/* cairn build --lib: the runtime with -fPIC -fvisibility=hidden -DCAIRN_LIB=1, the
 * program, then OUT.so, OUT.a, OUT.h and OUT.receipt.json (library.c links). */
static int compile_library(Build *b, Err *err) {
    char include[PATH_MAX], tmp_so[PATH_MAX], tmp_a[PATH_MAX], shared[PATH_MAX];
    StrVec link = {0}, nv_link = {0};
    int status = runtime_ensure(b, err);
    if (status == 0) status = write_c(b, err);
    pathf(include, "-I%s", b->rt_dir);
    pathf(tmp_so, "%s.so.tmp.%ld", b->out_abs, (long)getpid());
    pathf(tmp_a, "%s.a.tmp.%ld", b->out_abs, (long)getpid());
    push_link_args(&link, false);
    push_link_args(&nv_link, true);
    LibraryLink l = {b->cc.path, &b->flags,  include,    &b->objects,  &link,   b->c_dir,
                     b->stem,    b->out_abs, b->nv.path, &b->nv_flags, &nv_link};
    if (status == 0) status = library_link(&l, tmp_so, tmp_a, err);
    if (status == 0) status = library_install(b, tmp_so, tmp_a, err);
    cJSON *section = status == 0 ? library_section(b) : NULL;
    if (status == 0 && !section)
        status = err_fail(err, DRIVER_USAGE, "cannot read back %s: %s", b->output, strerror(errno));
    char shown[PATH_MAX];
    pathf(shared, "%s.so", b->out_abs);
    pathf(shown, "%s.so", b->output);
    ReceiptFiles files = {shown, shared, section};
    if (status == 0) status = write_receipt(b, &files, err);
    cJSON_Delete(section);
    unlink(tmp_so);
    unlink(tmp_a);
    sv_free(&link);
    sv_free(&nv_link);
    return status;
}

/* ---- a build from start to end ---------------------------------------------------- */

static int check_source(const BuildOptions *opt, Err *err) {
    if (!opt->source) return err_fail(err, DRIVER_USAGE, "no source file given (see --help)");
    if (access(opt->source, R_OK) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot read %s: %s", opt->source, strerror(errno));
    if (opt->emit_only && !opt->emit_c_dir)
        return err_fail(err, DRIVER_USAGE,
                        "--emit-only writes the generated code: give --emit-c DIR");
    if (opt->prefix && !opt->lib)
        return err_fail(err, DRIVER_USAGE, "--prefix names a library's symbols: add --lib");
    if (cuda_build(opt) && opt->sanitize)
        return err_fail(err, DRIVER_USAGE,
                        "--sanitize checks host builds: add --emulate to run %s's "
                        "device work on host threads under the sanitizer",
                        opt->target);
    return 0;
}

/* Settles what every build needs before the output is known: the options checked, the
 * C compiler found, the flags, and the source read (once) with its digest. */
static int build_open(Build *b, const BuildOptions *opt, Err *err) {
    *b = (Build){.opt = opt, .lo = {.numerics = cJSON_CreateObject()}};
    int status = check_source(opt, err);
    if (status == 0) status = cc_discover(opt->cc, &b->cc, err);
    if (status) return status;
    b->source = fs_read(opt->source, &b->source_len, NULL);
    if (!b->source)
        return err_fail(err, DRIVER_USAGE, "cannot read %s: %s", opt->source, strerror(errno));
    sha256_hex(b->source, b->source_len, b->source_sha256);
    source_stem(opt->source, b->stem);
    compile_flags(opt, &b->flags);
    if (cuda_build(opt)) nvcc_flags(opt, &b->nv_flags);
    runtime_digest(b->rt_digest);
    return 0;
}

static void build_close(Build *b) {
    free(b->cc.path);
    free(b->nv.path);
    sv_free(&b->flags);
    sv_free(&b->nv_flags);
    sv_free(&b->objects);
    free(b->source);
    free(b->out_abs);
    cJSON_Delete(b->lo.numerics);
    cJSON_Delete(b->lo.library);
    cJSON_Delete(b->lo.guards);
    sb_free(&b->lo.c);
    sb_free(&b->lo.cu);
    sb_free(&b->lo.h);
}

/* Everything after the options are settled: lower, then compile, link and write the
 * receipt (or, with --emit-only, write the generated files and stop) into OUTPUT. */
static int build_into(Build *b, const char *output, Err *err) {
    const BuildOptions *opt = b->opt;
    assert(b->source && b->cc.path && !b->out_abs);
    b->output = output;
    int status = probe_output(b, err);
    if (status == 0 && opt->lib) {
        status = library_prefix(opt->prefix, output, b->names.prefix, err);
        const char *base = strrchr(output, '/') ? strrchr(output, '/') + 1 : output;
        snprintf(b->names.header, sizeof b->names.header, "%s.h", base);
    }
    if (status == 0 && cuda_build(opt) && !opt->emit_only) status = nvcc_discover(&b->nv, err);
    if (status == 0) status = lower_source(b, err);
    if (status == 0 && opt->emit_only) status = write_c(b, err);
    else if (status == 0 && opt->lib) status = compile_library(b, err);
    else if (status == 0) status = compile_and_link(b, err);
    return status;
}

int driver_build(const BuildOptions *opt, Err *err) {
    Build b;
    int status = build_open(&b, opt, err);
    char output[PATH_MAX];
    pathf(output, "%s%s",
          opt->output ? ""
          : opt->lib  ? "lib"
                      : "",
          opt->output ? opt->output : b.stem);
    size_t n = strlen(output); /* a library's OUT: libk for libk.so, libk.a and its header */
    if (opt->lib && n > 3 && strcmp(output + n - 3, ".so") == 0) output[n - 3] = '\0';
    else if (opt->lib && n > 2 && strcmp(output + n - 2, ".a") == 0) output[n - 2] = '\0';
    if (status == 0) status = build_into(&b, output, err);
    build_close(&b);
    return status;
}

/* SHA-256 of this very binary, so a rebuilt cairn never reuses an old cache entry. */
static void self_digest(char hex[65]) {
    char memo[PATH_MAX];
    int memo_ok = memo_path("self-sha256", "/proc/self/exe", memo) == 0;
    if (memo_ok && memo_get(memo, hex, 65) && strlen(hex) == 64) return;
    if (sha256_file_hex("/proc/self/exe", hex, NULL, NULL) != 0) {
        sha256_hex(CAIRN_VERSION, strlen(CAIRN_VERSION), hex);
        return;
    }
    if (memo_ok) memo_put(memo, hex);
}

/* bin/KEY's KEY: this binary, the source's path and bytes, the compiler and flags. */
static void cached_key(const Build *b, char hex[65]) {
    const BuildOptions *opt = b->opt;
    char self[65];
    self_digest(self);
    StrBuf key = {0};
    sb_printf(&key, "cairn-run-2\n%s\n%s\n%s\n%s\n%s\n%d\n%d\n", self, opt->source, b->cc.path,
              b->cc.banner, opt->target ? opt->target : "host", opt->emulate, opt->no_elide);
    for (size_t k = 0; k < b->flags.len; k++) sb_printf(&key, "%s\n", b->flags.items[k]);
    sb_append(&key, b->source, b->source_len);
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
}

int driver_build_cached(const BuildOptions *opt, char **exe, Err *err) {
    int status = check_source(opt, err);
    if (status) return status;
    if (opt->lib)
        return err_fail(err, DRIVER_USAGE,
                        "--lib builds a library, which cairn run cannot run: "
                        "use cairn build --lib");
    Build b;
    status = build_open(&b, opt, err);
    char hex[65] = "", root[PATH_MAX] = "";
    if (status == 0) cached_key(&b, hex);
    if (status == 0) status = cache_dir("bin", root, err);
    StrBuf path = {0};
    sb_printf(&path, "%s/%.32s", root, hex);
    if (status == 0 && fs_mkdirs(path.data, NULL) != 0)
        status = err_fail(err, DRIVER_USAGE, "cannot create %s: %s", path.data, strerror(errno));
    if (status == 0) cache_sweep(path.data);
    sb_printf(&path, "/%s", b.stem);
    if (status == 0 && !cache_output_ok(path.data)) {
        status = build_into(&b, path.data, err);
        if (status == 0) cache_output_seal(path.data);
    }
    build_close(&b);
    if (status == 0) *exe = path.data;
    else sb_free(&path);
    return status;
}
