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
#include "driver/driver.h"

#include <errno.h>
#include <limits.h>
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

static int exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0;
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

typedef struct NvccInfo {
    char *path;
    char version[32]; /* e.g. "13.0.48", from `nvcc --version` */
} NvccInfo;

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
 * code calls (LowerOutput.modules, lower/lower.h), and this table says which source each
 * module is and which modules that source calls in turn; those are linked too. Only
 * what is needed is compiled, so e.g. the bracket GEMM costs nothing to a program
 * without one. Every runtime source has a row (runtime_needed refuses to link without
 * one), so a new source cannot be forgotten silently. */
typedef struct RuntimeModule {
    unsigned module;    /* LOWER_MODULE_* */
    const char *source; /* NULL: a header only */
    unsigned calls;     /* the modules its code calls */
} RuntimeModule;

static const RuntimeModule runtime_modules[] = {
    {LOWER_MODULE_TRAP, "cairn_trap.c", 0},
    {LOWER_MODULE_POOL, "cairn_pool.c", 0},
    {LOWER_MODULE_SUM, "cairn_sum.c", LOWER_MODULE_POOL | LOWER_MODULE_TRAP},
    {LOWER_MODULE_FLOAT, "cairn_float.c", 0},
    {LOWER_MODULE_OBSERVE, "cairn_observe.c", LOWER_MODULE_TRAP},
    {LOWER_MODULE_ENCLOSE, "cairn_enclose.c", LOWER_MODULE_POOL},
    {LOWER_MODULE_ENCLOSE, "cairn_enclose_x86.c", 0}, /* its x86-64 kernels */
    {LOWER_MODULE_ENCLOSE, "cairn_enclose_amx.c", 0}, /* and its AMX-INT8 path */
    /* the GPU's residue algorithm on the host: mm_enclose on emulated @device views */
    {LOWER_MODULE_ENCLOSE, "cairn_enclose_residue.c", LOWER_MODULE_POOL},
    {LOWER_MODULE_ENCLOSE_DIGEST, "cairn_enclose_digest.c", 0},
    {LOWER_MODULE_MM_ENCLOSE, "cairn_mm_enclose.c", LOWER_MODULE_ENCLOSE | LOWER_MODULE_TRAP},
    {LOWER_MODULE_MMA, "cairn_mma.c", LOWER_MODULE_TRAP},
    {LOWER_MODULE_MMA_TILED, "cairn_mma_tiled.c",
     LOWER_MODULE_MMA | LOWER_MODULE_POOL | LOWER_MODULE_TRAP},
    /* cairn_device_cuda.h, in every CUDA build's .cu: its launch helpers trap, and
     * cairn_device_observe copies a device view back for cairn_observe. */
    {LOWER_MODULE_DEVICE, NULL, LOWER_MODULE_TRAP | LOWER_MODULE_OBSERVE},
    {LOWER_MODULE_ARGS, "cairn_args.c", LOWER_MODULE_NPY},
    {LOWER_MODULE_NPY, "cairn_npy.c", 0},
    {LOWER_MODULE_LIB, "cairn_lib.c", LOWER_MODULE_TRAP},
    /* cairn_cr.h: std.cr, all static inline (its accurate path too). */
    {LOWER_MODULE_CR, NULL, 0},
    {LOWER_MODULE_DSUM, "cairn_dsum.c", LOWER_MODULE_SUM | LOWER_MODULE_POOL | LOWER_MODULE_TRAP},
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
                            "runtime source %s has no row in driver.c's module table", name);
        needed[k] = is_c_source(name) && (all & runtime_modules[m].module);
    }
    return 0;
}

/* Writes the embedded runtime into `dir` (identical bytes, so racing writers agree). */
static int runtime_write(const char *dir, Err *err) {
    for (size_t k = 0; k < cairn_runtime_file_count; k++) {
        const EmbeddedFile *f = &cairn_runtime_files[k];
        char path[PATH_MAX];
        pathf(path, "%s/%s", dir, f->name);
        if (!exists(path) && fs_write_atomic(path, f->data, f->size, NULL) != 0)
            return err_fail(err, DRIVER_USAGE, "cannot write %s: %s", path, strerror(errno));
    }
    return 0;
}

/* Starts compiling NAME.c into NAME.o.tmp.PID (log NAME.o.log), unless NAME.o exists. */
static pid_t runtime_compile_start(const CcInfo *cc, const StrVec *flags, const char *dir,
                                   const char *name, StrVec *objects) {
    size_t n = strlen(name);
    char object[256], tmp[300], path[PATH_MAX], log[PATH_MAX];
    snprintf(object, sizeof object, "%.*s.o", (int)(n - 2), name);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", object, (long)getpid());
    pathf(path, "%s/%s", dir, object);
    pathf(log, "%s/%s.log", dir, object);
    sv_push(objects, object);
    if (exists(path)) return 0;
    StrVec argv = {0};
    sv_push(&argv, cc->path);
    for (size_t f = 0; f < flags->len; f++) /* the project's own build vets warnings */
        if (strcmp(flags->items[f], "-Werror") != 0) sv_push(&argv, flags->items[f]);
    const char *tail[] = {"-D_GNU_SOURCE", "-I.", "-c", name, "-o", tmp};
    for (size_t t = 0; t < 6; t++) sv_push(&argv, tail[t]);
    pid_t pid = proc_start(argv.items, dir, log);
    sv_free(&argv);
    return pid;
}

/* Compiles the needed runtime sources in `dir` at once (those not compiled before) and
 * lists their objects' paths in *objects. */
static int runtime_compile(const CcInfo *cc, const StrVec *flags, const char *dir,
                           const bool needed[], StrVec *objects, Err *err) {
    StrVec names = {0};
    pid_t pids[64];
    size_t started = 0;
    for (size_t k = 0; k < cairn_runtime_file_count && started < 64; k++)
        if (needed[k] && is_c_source(cairn_runtime_files[k].name))
            pids[started++] =
                runtime_compile_start(cc, flags, dir, cairn_runtime_files[k].name, &names);
    int status = 0;
    for (size_t k = 0; k < started; k++) {
        char path[PATH_MAX], tmp[PATH_MAX], log[PATH_MAX];
        pathf(path, "%s/%s", dir, names.items[k]);
        pathf(tmp, "%s.tmp.%ld", path, (long)getpid());
        pathf(log, "%s.log", path);
        int rc = pids[k] == 0 ? 0 : pids[k] < 0 ? -1 : proc_wait(pids[k]);
        if (rc == 0 && pids[k] > 0 && rename(tmp, path) != 0) rc = -1;
        if (rc != 0 && status == 0) status = driver_compile_failure(names.items[k], log, err);
        sv_push(objects, path);
    }
    sv_free(&names);
    return status;
}

/* The runtime objects this program needs, compiled for this compiler and these flags
 * (cached in rt/KEY/); their paths go to *objects, the folder to rt_dir. */
static int runtime_ensure(const CcInfo *cc, const StrVec *flags, const char *digest,
                          unsigned modules, char rt_dir[PATH_MAX], StrVec *objects, Err *err) {
    StrBuf key = {0};
    sb_printf(&key, "cairn-runtime-2\n%s\n%s\n%s\n", cc->path, cc->banner, digest);
    for (size_t k = 0; k < flags->len; k++) sb_printf(&key, "%s\n", flags->items[k]);
    char hex[65], root[PATH_MAX];
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
    if (cache_dir("rt", root, err)) return DRIVER_USAGE;
    pathf(rt_dir, "%s/%.32s", root, hex);
    if (fs_mkdirs(rt_dir, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot create %s: %s", rt_dir, strerror(errno));
    bool needed[256] = {0};
    if (cairn_runtime_file_count > 256)
        return err_fail(err, DRIVER_INTERNAL, "too many runtime files");
    int status = runtime_needed(modules, needed, err);
    if (status == 0) status = runtime_write(rt_dir, err);
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

/* Writes the generated C to c/KEY/STEM.c, a CUDA build's device half to
 * c/KEY/STEM_dev.cu and a library's header to c/KEY/HEADER (and all to --emit-c DIR);
 * c_dir gets c/KEY. */
static int write_c(const BuildOptions *opt, const LowerOutput *lo, const char *stem,
                   const char *header, char c_dir[PATH_MAX], Err *err) {
    char hex[65], root[PATH_MAX], path[PATH_MAX];
    StrBuf all = {0};
    sb_append(&all, lo->c.data ? lo->c.data : "", lo->c.len);
    sb_append(&all, lo->cu.data ? lo->cu.data : "", lo->cu.len);
    if (header) sb_printf(&all, "%s\n%s", header, lo->h.data ? lo->h.data : "");
    sha256_hex(all.data ? all.data : "", all.len, hex);
    sb_free(&all);
    if (cache_dir("c", root, err)) return DRIVER_USAGE;
    pathf(c_dir, "%s/%.32s", root, hex);
    const char *dirs[] = {c_dir, opt->emit_c_dir};
    for (int d = 0; d < 2 && dirs[d]; d++) {
        const char *what = d ? "--emit-c: " : "";
        for (int part = 0; part < 3; part++) {
            const StrBuf *text = part == 2 ? &lo->h : part ? &lo->cu : &lo->c;
            if (part && !text->len) continue;
            if (part == 2) pathf(path, "%s/%s", dirs[d], header);
            else pathf(path, "%s/%s%s", dirs[d], stem, part ? "_dev.cu" : ".c");
            if (fs_mkdirs(dirs[d], NULL) != 0 ||
                fs_write_atomic(path, text->data, text->len, NULL) != 0)
                return err_fail(err, DRIVER_USAGE, "%scannot write %s: %s", what, path,
                                strerror(errno));
        }
    }
    return 0;
}

/* Compiles and links c_dir/STEM.c with the runtime objects into `out` (absolute). */
static int compile_program(const CcInfo *cc, const StrVec *flags, const char *rt_dir,
                           const StrVec *objects, const char *c_dir, const char *stem,
                           const char *out, Err *err) {
    char source[300], include[PATH_MAX], log[PATH_MAX];
    snprintf(source, sizeof source, "%s.c", stem);
    pathf(include, "-I%s", rt_dir);
    pathf(log, "%s/%s.log", c_dir, stem);
    StrVec argv = {0};
    sv_push(&argv, cc->path);
    for (size_t k = 0; k < flags->len; k++) sv_push(&argv, flags->items[k]);
    sv_push(&argv, include);
    sv_push(&argv, source);
    for (size_t k = 0; k < objects->len; k++) sv_push(&argv, objects->items[k]);
    sv_push(&argv, "-o");
    sv_push(&argv, out);
    push_link_args(&argv, false);
    int status = proc_run(argv.items, c_dir, log);
    sv_free(&argv);
    return status == 0 ? 0 : driver_compile_failure("the generated C", log, err);
}

/* A CUDA build: STEM.c with the C compiler, STEM_dev.cu with nvcc, and nvcc links both
 * with the runtime objects into `out`. */
static int compile_cuda(const CcInfo *cc, const NvccInfo *nv, const StrVec *flags,
                        const StrVec *nv_flags, const char *rt_dir, const StrVec *objects,
                        const char *c_dir, const char *stem, const char *out, Err *err) {
    char include[PATH_MAX], log[PATH_MAX], src[300], obj[300], dev_src[300], dev_obj[300];
    pathf(include, "-I%s", rt_dir);
    snprintf(src, sizeof src, "%s.c", stem);
    snprintf(obj, sizeof obj, "%s.o", stem);
    snprintf(dev_src, sizeof dev_src, "%s_dev.cu", stem);
    snprintf(dev_obj, sizeof dev_obj, "%s_dev.o", stem);
    StrVec host = {0}, dev = {0}, link = {0};
    sv_push(&host, cc->path);
    for (size_t k = 0; k < flags->len; k++) sv_push(&host, flags->items[k]);
    const char *host_tail[] = {include, "-c", src, "-o", obj};
    for (size_t k = 0; k < 5; k++) sv_push(&host, host_tail[k]);
    sv_push(&dev, nv->path);
    for (size_t k = 0; k < nv_flags->len; k++) sv_push(&dev, nv_flags->items[k]);
    const char *dev_tail[] = {include, "-c", dev_src, "-o", dev_obj};
    for (size_t k = 0; k < 5; k++) sv_push(&dev, dev_tail[k]);
    sv_push(&link, nv->path);
    sv_push(&link, nv_flags->items[0]); /* -arch=sm_NN */
    sv_push(&link, obj);
    sv_push(&link, dev_obj);
    for (size_t k = 0; k < objects->len; k++) sv_push(&link, objects->items[k]);
    sv_push(&link, "-o");
    sv_push(&link, out);
    push_link_args(&link, true);
    int status = 0;
    pathf(log, "%s/%s.log", c_dir, stem);
    if (proc_run(host.items, c_dir, log) != 0)
        status = driver_compile_failure("the generated C", log, err);
    pathf(log, "%s/%s_dev.log", c_dir, stem);
    if (!status && proc_run(dev.items, c_dir, log) != 0)
        status = driver_compile_failure("the generated CUDA C++ (nvcc)", log, err);
    pathf(log, "%s/%s_link.log", c_dir, stem);
    if (!status && proc_run(link.items, c_dir, log) != 0)
        status = driver_compile_failure("the CUDA link (nvcc)", log, err);
    sv_free(&host);
    sv_free(&dev);
    sv_free(&link);
    return status;
}

/* Checks the output can be written before any work is done; out_abs gets its path. */
static int probe_output(const char *output, char **out_abs, Err *err) {
    *out_abs = fs_absolute(output);
    if (!*out_abs)
        return err_fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    struct stat st;
    if (stat(*out_abs, &st) == 0 && S_ISDIR(st.st_mode))
        return err_fail(err, DRIVER_USAGE, "cannot write %s: it is a folder (give -o a file name)",
                        output);
    char probe[PATH_MAX];
    pathf(probe, "%s.probe.%ld", *out_abs, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f) return err_fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    fclose(f);
    unlink(probe);
    return 0;
}

/* What a receipt describes: the output as named and its file, where the receipt goes
 * (BASE.receipt.json) and, for a library, its files and entries. */
typedef struct ReceiptFiles {
    const char *output, *out_abs, *base_abs;
    const cJSON *library;
} ReceiptFiles;

static int write_receipt(const BuildOptions *opt, const ReceiptFiles *files, const CcInfo *cc,
                         const StrVec *flags, const char *rt_digest, const LowerOutput *lo,
                         const NvccInfo *nv, const StrVec *nv_flags, Err *err) {
    const char *output = files->output;
    char src_sha[65], out_sha[65];
    if (sha256_file_hex(opt->source, src_sha, NULL, NULL) != 0 ||
        sha256_file_hex(files->out_abs, out_sha, NULL, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot read back %s: %s", output, strerror(errno));
    StrVec link = {0};
    push_link_args(&link, false);
    ReceiptInfo info = {opt->source,
                        src_sha,
                        output,
                        out_sha,
                        rt_digest,
                        cc->name,
                        cc->version,
                        flags,
                        &link,
                        opt->sanitize,
                        lo->numerics,
                        opt->target ? opt->target : "host",
                        opt->emulate || (lo->has_device && !nv->path),
                        nv->path ? nv->version : NULL,
                        nv_flags,
                        files->library};
    char *text = receipt_render(&info);
    sv_free(&link);
    char path[PATH_MAX];
    pathf(path, "%s.receipt.json", files->base_abs);
    int ok = fs_write_atomic(path, text, strlen(text), NULL) == 0;
    free(text);
    return ok ? 0
              : err_fail(err, DRIVER_USAGE, "cannot write %s.receipt.json: %s", output,
                         strerror(errno));
}

/* Loads and checks the program once, then lowers the checked program. */
static int lower_source(const BuildOptions *opt, bool cuda, const LibNames *lib, LowerOutput *out,
                        Err *err) {
    Diags d;
    diags_init(&d, NULL);
    LoadStatus load;
    Program *p = cairn_load(opt->source, &d, &load);
    LowerOptions lopt = {.cuda = cuda,
                         .device = opt->target,
                         .lib_prefix = lib ? lib->prefix : NULL,
                         .lib_header = lib ? lib->header : NULL};
    int refused = p ? lower_program(p, &d, &lopt, out) : 1;
    if (refused) diags_print(&d, stderr);
    if (p) ast_program_free(p);
    diags_free(&d);
    return refused ? err_fail(err, DRIVER_REFUSED, "%s was refused", opt->source) : 0;
}

/* Compiles the lowered program (the runtime it needs, the host C, a CUDA build's device
 * half), links it into `out_abs` and writes the receipt. */
static int compile_and_link(const BuildOptions *opt, const char *output, const CcInfo *cc,
                            const LowerOutput *lo, const NvccInfo *nv, const StrVec *flags,
                            const StrVec *nv_flags, const char *out_abs, Err *err) {
    bool cuda = nv->path != NULL;
    char rt_digest[65], rt_dir[PATH_MAX], c_dir[PATH_MAX], stem[256], tmp_out[PATH_MAX];
    runtime_digest(rt_digest);
    source_stem(opt->source, stem);
    StrVec objects = {0};
    int status = runtime_ensure(cc, flags, rt_digest, lo->modules, rt_dir, &objects, err);
    if (status == 0) status = write_c(opt, lo, stem, NULL, c_dir, err);
    pathf(tmp_out, "%s.tmp.%ld", out_abs, (long)getpid());
    if (status == 0 && cuda)
        status = compile_cuda(cc, nv, flags, nv_flags, rt_dir, &objects, c_dir, stem, tmp_out, err);
    else if (status == 0)
        status = compile_program(cc, flags, rt_dir, &objects, c_dir, stem, tmp_out, err);
    sv_free(&objects);
    if (status == 0 && rename(tmp_out, out_abs) != 0)
        status = err_fail(err, DRIVER_USAGE, "cannot write %s: %s", output, strerror(errno));
    ReceiptFiles files = {output, out_abs, out_abs, NULL};
    if (status == 0)
        status = write_receipt(opt, &files, cc, flags, rt_digest, lo, nv, nv_flags, err);
    unlink(tmp_out);
    return status;
}

/* ---- libraries ------------------------------------------------------------------- */

/* {"path": NAME + ext, "sha256": ...} of the file out_abs + ext; NULL when unreadable. */
static cJSON *library_file(const char *name, const char *out_abs, const char *ext) {
    char path[PATH_MAX], hex[65];
    pathf(path, "%s%s", out_abs, ext);
    if (sha256_file_hex(path, hex, NULL, NULL) != 0) return NULL;
    pathf(path, "%s%s", name, ext);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", path);
    cJSON_AddStringToObject(o, "sha256", hex);
    return o;
}

/* The receipt's "library": the prefix, the three files and the entries. */
static cJSON *library_section(const char *output, const char *out_abs, const LibNames *names,
                              const LowerOutput *lo) {
    cJSON *lib = cJSON_CreateObject();
    cJSON_AddStringToObject(lib, "prefix", names->prefix);
    const char *keys[] = {"shared", "static", "header"}, *exts[] = {".so", ".a", ".h"};
    for (int k = 0; k < 3; k++) {
        cJSON *file = library_file(output, out_abs, exts[k]);
        if (!file) {
            cJSON_Delete(lib);
            return NULL;
        }
        cJSON_AddItemToObject(lib, keys[k], file);
    }
    char last[LIBRARY_PREFIX_MAX + 16];
    snprintf(last, sizeof last, "%s_last_error", names->prefix);
    cJSON_AddStringToObject(lib, "last_error", last);
    cJSON_AddItemToObject(lib, "entries", cJSON_Duplicate(lo->library, 1));
    return lib;
}

/* Moves the library's temporary files into place: OUT.so, OUT.a, and OUT.h written. */
static int library_install(const char *output, const char *out_abs, const char *tmp_so,
                           const char *tmp_a, const LowerOutput *lo, Err *err) {
    char path[PATH_MAX];
    pathf(path, "%s.so", out_abs);
    if (rename(tmp_so, path) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot write %s.so: %s", output, strerror(errno));
    pathf(path, "%s.a", out_abs);
    if (rename(tmp_a, path) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot write %s.a: %s", output, strerror(errno));
    pathf(path, "%s.h", out_abs);
    if (fs_write_atomic(path, lo->h.data, lo->h.len, NULL) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot write %s.h: %s", output, strerror(errno));
    return 0;
}

/* cairn build --lib: the runtime with -fPIC -fvisibility=hidden -DCAIRN_LIB=1, the
 * program, then OUT.so, OUT.a, OUT.h and OUT.receipt.json (library.c links). */
static int compile_library(const BuildOptions *opt, const char *output, const CcInfo *cc,
                           const LowerOutput *lo, const StrVec *flags, const char *out_abs,
                           const LibNames *names, Err *err) {
    char rt_digest[65], rt_dir[PATH_MAX], c_dir[PATH_MAX], stem[256], include[PATH_MAX];
    char tmp_so[PATH_MAX], tmp_a[PATH_MAX], shared[PATH_MAX];
    runtime_digest(rt_digest);
    source_stem(opt->source, stem);
    StrVec objects = {0}, link = {0};
    int status = runtime_ensure(cc, flags, rt_digest, lo->modules, rt_dir, &objects, err);
    if (status == 0) status = write_c(opt, lo, stem, names->header, c_dir, err);
    pathf(include, "-I%s", rt_dir);
    pathf(tmp_so, "%s.so.tmp.%ld", out_abs, (long)getpid());
    pathf(tmp_a, "%s.a.tmp.%ld", out_abs, (long)getpid());
    push_link_args(&link, false);
    LibraryLink l = {cc->path, flags, include, &objects, &link, c_dir, stem, out_abs};
    if (status == 0) status = library_link(&l, tmp_so, tmp_a, err);
    if (status == 0) status = library_install(output, out_abs, tmp_so, tmp_a, lo, err);
    cJSON *section = status == 0 ? library_section(output, out_abs, names, lo) : NULL;
    if (status == 0 && !section)
        status = err_fail(err, DRIVER_USAGE, "cannot read back %s: %s", output, strerror(errno));
    pathf(shared, "%s.so", out_abs);
    char shown[PATH_MAX];
    pathf(shown, "%s.so", output);
    ReceiptFiles files = {shown, shared, out_abs, section};
    NvccInfo none = {0};
    if (status == 0)
        status = write_receipt(opt, &files, cc, flags, rt_digest, lo, &none, NULL, err);
    cJSON_Delete(section);
    unlink(tmp_so);
    unlink(tmp_a);
    sv_free(&objects);
    sv_free(&link);
    return status;
}

/* Everything after the options are settled: lower, then compile, link and write the
 * receipt (or, with --emit-only, write the generated files and stop). */
static int build_into(const BuildOptions *opt, const char *output, const CcInfo *cc, Err *err) {
    char *out_abs = NULL;
    int status = probe_output(output, &out_abs, err);
    bool cuda = cuda_build(opt);
    LowerOutput lo = {.numerics = cJSON_CreateObject()};
    NvccInfo nv = {0};
    StrVec flags = {0}, nv_flags = {0};
    LibNames names = {{0}, {0}};
    compile_flags(opt, &flags);
    if (cuda) nvcc_flags(opt, &nv_flags);
    if (status == 0 && opt->lib) {
        status = library_prefix(opt->prefix, output, names.prefix, err);
        const char *base = strrchr(output, '/') ? strrchr(output, '/') + 1 : output;
        snprintf(names.header, sizeof names.header, "%s.h", base);
    }
    if (status == 0 && cuda && !opt->emit_only) status = nvcc_discover(&nv, err);
    if (status == 0) status = lower_source(opt, cuda, opt->lib ? &names : NULL, &lo, err);
    if (status == 0 && opt->emit_only) {
        char c_dir[PATH_MAX], stem[256];
        source_stem(opt->source, stem);
        status = write_c(opt, &lo, stem, opt->lib ? names.header : NULL, c_dir, err);
    } else if (status == 0 && opt->lib) {
        status = compile_library(opt, output, cc, &lo, &flags, out_abs, &names, err);
    } else if (status == 0) {
        status = compile_and_link(opt, output, cc, &lo, &nv, &flags, &nv_flags, out_abs, err);
    }
    sv_free(&flags);
    sv_free(&nv_flags);
    free(nv.path);
    cJSON_Delete(lo.numerics);
    cJSON_Delete(lo.library);
    sb_free(&lo.c);
    sb_free(&lo.cu);
    sb_free(&lo.h);
    free(out_abs);
    return status;
}

static int check_source(const BuildOptions *opt, Err *err) {
    if (!opt->source) return err_fail(err, DRIVER_USAGE, "no source file given (see --help)");
    if (access(opt->source, R_OK) != 0)
        return err_fail(err, DRIVER_USAGE, "cannot read %s: %s", opt->source, strerror(errno));
    if (opt->emit_only && !opt->emit_c_dir)
        return err_fail(err, DRIVER_USAGE,
                        "--emit-only writes the generated code: give --emit-c DIR");
    if (opt->lib && cuda_build(opt))
        return err_fail(err, DRIVER_USAGE,
                        "--lib builds a host library: add --emulate to run %s's device work on "
                        "host threads inside it",
                        opt->target);
    if (opt->prefix && !opt->lib)
        return err_fail(err, DRIVER_USAGE, "--prefix names a library's symbols: add --lib");
    if (cuda_build(opt) && opt->sanitize)
        return err_fail(err, DRIVER_USAGE,
                        "--sanitize checks host builds: add --emulate to run %s's "
                        "device work on host threads under the sanitizer",
                        opt->target);
    return 0;
}

int driver_build(const BuildOptions *opt, Err *err) {
    int status = check_source(opt, err);
    if (status) return status;
    CcInfo cc = {0};
    status = cc_discover(opt->cc, &cc, err);
    char stem[256], output[PATH_MAX];
    source_stem(opt->source, stem);
    pathf(output, "%s%s",
          opt->output ? ""
          : opt->lib  ? "lib"
                      : "",
          opt->output ? opt->output : stem);
    size_t n = strlen(output); /* a library's OUT: libk for libk.so, libk.a and libk.h */
    if (opt->lib && n > 3 && strcmp(output + n - 3, ".so") == 0) output[n - 3] = '\0';
    else if (opt->lib && n > 2 && strcmp(output + n - 2, ".a") == 0) output[n - 2] = '\0';
    if (status == 0) status = build_into(opt, output, &cc, err);
    free(cc.path);
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

int driver_build_cached(const BuildOptions *opt, char **exe, Err *err) {
    int status = check_source(opt, err);
    if (status) return status;
    if (opt->lib)
        return err_fail(err, DRIVER_USAGE,
                        "--lib builds a library, which cairn run cannot run: "
                        "use cairn build --lib");
    CcInfo cc = {0};
    status = cc_discover(opt->cc, &cc, err);
    if (status) return status;
    size_t len;
    char *source = fs_read(opt->source, &len, NULL);
    char self[65], hex[65], root[PATH_MAX], stem[256];
    self_digest(self);
    StrVec flags = {0};
    compile_flags(opt, &flags);
    StrBuf key = {0};
    sb_printf(&key, "cairn-run-2\n%s\n%s\n%s\n%s\n%s\n%d\n", self, opt->source, cc.path, cc.banner,
              opt->target ? opt->target : "host", opt->emulate);
    for (size_t k = 0; k < flags.len; k++) sb_printf(&key, "%s\n", flags.items[k]);
    sb_append(&key, source ? source : "", source ? len : 0);
    sha256_hex(key.data, key.len, hex);
    sb_free(&key);
    sv_free(&flags);
    free(source);
    source_stem(opt->source, stem);
    status = cache_dir("bin", root, err);
    StrBuf path = {0};
    sb_printf(&path, "%s/%.32s", root, hex);
    if (status == 0 && fs_mkdirs(path.data, NULL) != 0)
        status = err_fail(err, DRIVER_USAGE, "cannot create %s: %s", path.data, strerror(errno));
    sb_printf(&path, "/%s", stem);
    if (status == 0 && !exists(path.data)) status = build_into(opt, path.data, &cc, err);
    free(cc.path);
    if (status == 0) *exe = path.data;
    else sb_free(&path);
    return status;
}
