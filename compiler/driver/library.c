/* library.c: `cairn build --lib`: the program and its runtime as a shared library and a
 * static archive (see driver_internal.h).
 *
 * Everything is compiled with -fPIC -fvisibility=hidden -DCAIRN_LIB=1 (the driver's
 * flags), so the only symbols a library exports are the entries the lowering marks
 * visible (PREFIX_fn, PREFIX_last_error). The shared library is linked from the program's
 * object and the runtime objects with the project's link libraries. The static archive
 * holds one object: the same objects linked together with `cc -r`, then every hidden
 * symbol made local (`objcopy --localize-hidden`), so two CAIRN archives, each with its
 * own runtime, link into one program without a clash. A CUDA library (--target sm_NN)
 * adds the device half, STEM_dev.cu compiled by nvcc with -Xcompiler -fPIC,
 * -fvisibility=hidden, and nvcc links the shared object. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/proc.h"
#include "driver/driver_internal.h"

int library_prefix(const char *requested, const char *base, char out[LIBRARY_PREFIX_MAX],
                   Err *err) {
    if (requested) {
        size_t n = strlen(requested);
        bool ok = n > 0 && n < LIBRARY_PREFIX_MAX && !(requested[0] >= '0' && requested[0] <= '9');
        for (size_t k = 0; ok && k < n; k++)
            ok = (requested[k] >= 'a' && requested[k] <= 'z') ||
                 (requested[k] >= 'A' && requested[k] <= 'Z') ||
                 (requested[k] >= '0' && requested[k] <= '9') || requested[k] == '_';
        if (!ok)
            return err_fail(err, DRIVER_USAGE,
                            "--prefix takes a C name (letters, digits, _; not starting with a "
                            "digit; under %d characters), not '%s'",
                            LIBRARY_PREFIX_MAX, requested);
        snprintf(out, LIBRARY_PREFIX_MAX, "%s", requested);
        return 0;
    }
    const char *name = strrchr(base, '/') ? strrchr(base, '/') + 1 : base;
    if (strncmp(name, "lib", 3) == 0 && name[3]) name += 3;
    size_t k = 0;
    if (*name >= '0' && *name <= '9') out[k++] = '_';
    for (; *name && k + 1 < LIBRARY_PREFIX_MAX; name++) {
        char c = *name;
        bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[k++] = word ? c : '_';
    }
    out[k] = '\0';
    if (k == 0) snprintf(out, LIBRARY_PREFIX_MAX, "cairn");
    return 0;
}

/* Runs argv in dir with its log; the log's path names a failure. */
static int step(char **argv, const char *dir, const char *log, const char *what, Err *err) {
    if (proc_run(argv, dir, log) == 0) return 0;
    return driver_compile_failure(what, log, err);
}

/* `cc -r` of the objects (a CUDA library's device object among them), hidden symbols
 * localized, into an archive at `archive`. */
static int static_archive(const LibraryLink *l, const char *object, const char *dev_object,
                          const char *archive, Err *err) {
    char joined[PATH_MAX], log[PATH_MAX];
    snprintf(joined, sizeof joined, "%s/%s_lib.o", l->dir, l->stem);
    snprintf(log, sizeof log, "%s/%s_archive.log", l->dir, l->stem);
    StrVec argv = {0};
    const char *head[] = {l->cc, "-r", "-nostdlib", "-o", joined, object};
    for (size_t k = 0; k < 6; k++) sv_push(&argv, head[k]);
    if (dev_object) sv_push(&argv, dev_object);
    for (size_t k = 0; k < l->objects->len; k++) sv_push(&argv, l->objects->items[k]);
    int status = step(argv.items, l->dir, log, "the library's objects (cc -r)", err);
    sv_free(&argv);
    char *objcopy = status == 0 ? fs_which("objcopy") : NULL, *ar = objcopy ? fs_which("ar") : NULL;
    if (status == 0 && (!objcopy || !ar))
        status = err_fail(err, DRIVER_NO_TOOL,
                          "%s not found: a static archive needs GNU binutils (install binutils)",
                          objcopy ? "ar" : "objcopy");
    char *localize[] = {objcopy, "--localize-hidden", joined, NULL};
    if (status == 0) status = step(localize, l->dir, log, "objcopy --localize-hidden", err);
    unlink(archive);
    char *pack[] = {ar, "rcs", (char *)archive, joined, NULL};
    if (status == 0) status = step(pack, l->dir, log, "the static archive (ar)", err);
    free(objcopy);
    free(ar);
    unlink(joined);
    return status;
}

/* CC FLAGS -I... -c STEM.c -o STEM.o for the generated C, or NVCC NV_FLAGS ... STEM_dev.cu
 * -o STEM_dev.o for a CUDA library's device half (DEV); OBJECT gets the object's name,
 * and the step's log names a failure. */
static int compile_one(const LibraryLink *l, bool dev, char object[300], Err *err) {
    char source[300], log[PATH_MAX];
    const char *tool = dev ? l->nvcc : l->cc;
    const StrVec *flags = dev ? l->nv_flags : l->flags;
    const char *what = dev ? "the generated CUDA C++ (nvcc)" : "the generated C";
    snprintf(source, sizeof source, "%s%s", l->stem, dev ? "_dev.cu" : ".c");
    snprintf(object, 300, "%s%s.o", l->stem, dev ? "_dev" : "");
    snprintf(log, sizeof log, "%s/%s%s.log", l->dir, l->stem, dev ? "_dev" : "");
    StrVec argv = {0};
    sv_push(&argv, tool);
    for (size_t k = 0; k < flags->len; k++) sv_push(&argv, flags->items[k]);
    const char *tail[] = {l->include, "-c", source, "-o", object};
    for (size_t k = 0; k < 5; k++) sv_push(&argv, tail[k]);
    int status = step(argv.items, l->dir, log, what, err);
    sv_free(&argv);
    return status;
}

/* The shared library's link: the C compiler's, or nvcc's for a CUDA library. */
static int link_shared(const LibraryLink *l, const char *shared, const char *object,
                       const char *dev_object, Err *err) {
    char log[PATH_MAX], soname[300];
    const char *base = strrchr(l->out, '/') ? strrchr(l->out, '/') + 1 : l->out;
    snprintf(soname, sizeof soname, "-Wl,-soname,%s.so", base);
    StrVec so = {0};
    if (dev_object) {
        sv_push(&so, l->nvcc);
        sv_push(&so, l->nv_flags->items[0]); /* -arch=sm_NN */
        sv_push(&so, "-shared");
        sv_push(&so, "-Xlinker");
        sv_push(&so, soname + 4); /* -soname,NAME.so */
    } else {
        sv_push(&so, l->cc);
        for (size_t k = 0; k < l->flags->len; k++) sv_push(&so, l->flags->items[k]);
        sv_push(&so, "-shared");
        sv_push(&so, soname);
    }
    const char *files[] = {"-o", shared, object};
    for (size_t k = 0; k < 3; k++) sv_push(&so, files[k]);
    if (dev_object) sv_push(&so, dev_object);
    for (size_t k = 0; k < l->objects->len; k++) sv_push(&so, l->objects->items[k]);
    const StrVec *libs = dev_object ? l->nv_link : l->link;
    for (size_t k = 0; k < libs->len; k++) sv_push(&so, libs->items[k]);
    snprintf(log, sizeof log, "%s/%s_shared.log", l->dir, l->stem);
    int status = step(so.items, l->dir, log, "the shared library's link", err);
    sv_free(&so);
    return status;
}

int library_link(const LibraryLink *l, const char *shared, const char *archive, Err *err) {
    char object[300], dev_object[300];
    int status = compile_one(l, false, object, err);
    if (status == 0 && l->nvcc) status = compile_one(l, true, dev_object, err);
    const char *dev = l->nvcc ? dev_object : NULL;
    if (status == 0) status = link_shared(l, shared, object, dev, err);
    if (status == 0) status = static_archive(l, object, dev, archive, err);
    return status;
}
