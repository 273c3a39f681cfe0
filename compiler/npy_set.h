/* npy_set.h: a NumPy .npy file as an observation set of one array, named by the file's
 * stem (y of y.npy), for `cairn show` and `cairn diff`. Versions 1.0, 2.0 and 3.0; dtypes
 * float16/32/64, int8..int64, uint8..uint64 and bool, little-endian (or one byte), in C
 * order (or of one dimension). A big-endian file is refused with E-NPY-ENDIAN and one in
 * Fortran order with E-NPY-ORDER (`cairn explain` has both). */
#ifndef CAIRN_NPY_SET_H
#define CAIRN_NPY_SET_H

#include "lib/obs_set.h"

/* Whether PATH begins with numpy's magic "\x93NUMPY". */
int npy_set_is_npy(const char *path);
/* Reads the .npy file PATH into SET (zeroed first). 0, or -1 with E set and SET empty. */
int npy_set_read(const char *path, ObsSet *set, Err *e);
/* A .npy file (by its magic) with npy_set_read, anything else with obs_set_read. */
int npy_set_read_any(const char *path, ObsSet *set, Err *e);
/* Prints E for command CMD: "CMD: error[E-NPY-...]: ..." or "CMD: error: ...". */
void npy_set_report(const char *cmd, const Err *e);

#endif
