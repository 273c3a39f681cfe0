/* driver_internal.h: what driver.c and library.c share inside driver/. */
#ifndef CAIRN_DRIVER_INTERNAL_H
#define CAIRN_DRIVER_INTERNAL_H

#include "base/base.h"
#include "driver/driver.h"
#include "lib/err.h"

/* Shows a failed compile's log (it is our bug, not the user's) and says where it is. */
int driver_compile_failure(const char *what, const char *log, Err *err);

/* ---- cairn build --lib (library.c) ---- */

#define LIBRARY_PREFIX_MAX 48

/* The prefix of a library's symbols: `requested` (--prefix) when given, which must be a C
 * name; else the file name of `base` without a leading "lib", each character that is not
 * a letter or digit made '_' ("libk" -> "k", "my-lib" -> "my_lib"). */
int library_prefix(const char *requested, const char *base, char out[LIBRARY_PREFIX_MAX], Err *err);

/* A library's names: its symbols' prefix and its header's file name (OUT's, plus .h). */
typedef struct LibNames {
    char prefix[LIBRARY_PREFIX_MAX];
    char header[300];
} LibNames;

/* What a library is linked from. */
typedef struct LibraryLink {
    const char *cc;        /* the C compiler's path */
    const StrVec *flags;   /* what everything was compiled with (-fPIC ... -DCAIRN_LIB=1) */
    const char *include;   /* -I of the runtime's folder */
    const StrVec *objects; /* the runtime objects the program needs */
    const StrVec *link;    /* the link libraries (-lm -pthread ...) */
    const char *dir;       /* the folder of STEM.c and the header it includes */
    const char *stem;
    const char *out;        /* the library's path without .so or .a: its soname's base */
    const char *nvcc;       /* a CUDA library: nvcc's path (NULL: a host library) */
    const StrVec *nv_flags; /* what STEM_dev.cu is compiled with (-arch=sm_NN first) */
    const StrVec *nv_link;  /* the link libraries spelled for nvcc's link */
} LibraryLink;

/* Compiles STEM.c (and a CUDA library's STEM_dev.cu) and links the shared library at
 * `shared` and the static archive at `archive` (temporary names the caller renames into
 * place). A CUDA library's shared object is linked by nvcc, with the CUDA runtime inside
 * it (nvcc's default, cudart_static); its archive needs -lcudart from the caller. */
int library_link(const LibraryLink *l, const char *shared, const char *archive, Err *err);

#endif
