/* verify_z3.c: fills the table of libz3's functions (verify_z3.h) on first use, with
 * dlopen of the libz3 the build was linked against (VERIFY_Z3_SONAME, from the
 * Makefile) and then the usual names. */
#define VERIFY_Z3_LOADER
#include "verify/verify_z3.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifndef VERIFY_Z3_SONAME
#define VERIFY_Z3_SONAME "libz3.so.4"
#endif

VerifyZ3 verify_z3;

bool verify_z3_load(char *why, size_t size) {
    static int loaded; /* 1 loaded, -1 failed (why is not kept: ask again) */
    if (loaded == 1) return true;
    const char *names[] = {VERIFY_Z3_SONAME, "libz3.so.4", "libz3.so"};
    void *lib = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && !lib; k++)
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, size, "cannot load libz3 (%s): install it (scripts/deps.sh)", dlerror());
        return false;
    }
    void *fn;
#define VERIFY_Z3_FN(f)                                                                            \
    if (!(fn = dlsym(lib, #f))) {                                                                  \
        snprintf(why, size, "the libz3 found has no %s (cairn needs Z3 4.8 or later)", #f);        \
        return false;                                                                              \
    }                                                                                              \
    memcpy(&verify_z3.f, &fn, sizeof fn);
#include "verify/verify_z3_fns.def"
#undef VERIFY_Z3_FN
    loaded = 1;
    return true;
}
