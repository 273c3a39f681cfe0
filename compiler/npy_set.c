/* npy_set.c: a NumPy .npy file read as an observation set of one array, so that `cairn
 * show` and `cairn diff` take numpy's files beside raw folders and observation files
 * (npy_set.h). The header is runtime/cairn_npy.h's parser; this maps its dtype to an
 * observation type and refuses, with a code `cairn explain` knows, what CAIRN would read
 * differently from numpy: a big-endian dtype (E-NPY-ENDIAN) and Fortran order
 * (E-NPY-ORDER). */
#include "npy_set.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cairn_npy.h"

/* numpy's little-endian dtype strings and the observation type each one reads as. */
static const struct {
    char kind;
    size_t size;
    ObsType type;
} npy_types[] = {{'f', 2, OBS_F16}, {'f', 4, OBS_F32}, {'f', 8, OBS_F64}, {'i', 1, OBS_I8},
                 {'i', 2, OBS_I16}, {'i', 4, OBS_I32}, {'i', 8, OBS_I64}, {'u', 1, OBS_U8},
                 {'u', 2, OBS_U16}, {'u', 4, OBS_U32}, {'u', 8, OBS_U64}, {'b', 1, OBS_BOOL}};

int npy_set_is_npy(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    unsigned char magic[6] = {0};
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return n == sizeof magic && memcmp(magic, "\x93NUMPY", 6) == 0;
}

/* The observation type of DESCR ("<f4", "|u1"), or -1 with E set (the code first). */
static int npy_type(const char *path, const char *descr, ObsType *out, Err *e) {
    char order = descr[0], kind = descr[0] ? descr[1] : 0;
    char *end = NULL;
    long size = kind ? strtol(descr + 2, &end, 10) : 0;
    int ok = kind && end && *end == '\0' && end != descr + 2;
    if (ok && order == '>' && size > 1)
        return err_set(e,
                       "error[E-NPY-ENDIAN]: %s holds big-endian %c%ld ('%s'); CAIRN reads "
                       "little-endian (numpy.save(path, a.astype(a.dtype.newbyteorder('<'))))",
                       path, kind, size, descr);
    for (size_t k = 0; ok && (order == '<' || order == '|' || order == '=') &&
                       k < sizeof npy_types / sizeof *npy_types;
         k++)
        if (npy_types[k].kind == kind && (long)npy_types[k].size == size) {
            *out = npy_types[k].type;
            return 0;
        }
    return err_set(e,
                   "%s holds dtype '%s', which CAIRN does not read (float16/32/64, "
                   "int8..int64, uint8..uint64 and bool, little-endian)",
                   path, descr);
}

/* The file's stem: "y" of "out/y.npy". */
static char *stem(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".npy") == 0) n -= 4;
    return strndup(base, n);
}

/* SET = the one array of PATH: R's type, count and bytes (taken) under the file's stem. */
static int add_array(const char *path, ObsRecord r, ObsSet *set, Err *e) {
    void *data = r.bytes;
    ObsType type = r.type;
    r.name = stem(path);
    set->items = malloc(sizeof *set->items);
    if (!r.name || !set->items) {
        free(r.name), free(data), free(set->items);
        set->items = NULL;
        return err_set(e, "out of memory");
    }
    sha256_hex(data, r.count * obs_type_size(type), r.sha256);
    set->items[0] = r;
    set->len = set->cap = 1;
    return 0;
}

int npy_set_read(const char *path, ObsSet *set, Err *e) {
    memset(set, 0, sizeof *set);
    char err[256];
    cairn_npy info;
    void *data = NULL;
    if (cairn_npy_read(path, 1, &info, &data, err, sizeof err) == -1)
        return err_set(e, "%s: %s", path, err);
    free(data); /* read again below with the element size its dtype says */
    ObsType type = OBS_F64;
    if (npy_type(path, info.descr, &type, e) != 0) return -1;
    if (info.fortran_order && info.ndim > 1)
        return err_set(e,
                       "error[E-NPY-ORDER]: %s is in Fortran order; CAIRN reads C order "
                       "(numpy.save(path, numpy.ascontiguousarray(a)))",
                       path);
    data = NULL;
    if (cairn_npy_read(path, obs_type_size(type), &info, &data, err, sizeof err) != 0)
        return err_set(e, "%s: %s", path, err);
    return add_array(path, (ObsRecord){.type = type, .count = (size_t)info.count, .bytes = data},
                     set, e);
}

int npy_set_read_any(const char *path, ObsSet *set, Err *e) {
    return npy_set_is_npy(path) ? npy_set_read(path, set, e) : obs_set_read(path, set, e);
}

void npy_set_report(const char *cmd, const Err *e) {
    if (strncmp(e->msg, "error[", 6) == 0) fprintf(stderr, "%s: %s\n", cmd, e->msg);
    else fprintf(stderr, "%s: error: %s\n", cmd, e->msg);
}
