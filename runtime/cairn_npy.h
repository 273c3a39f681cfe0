/* cairn_npy.h: NumPy's .npy files, read and written without NumPy.
 *
 * The format (numpy.lib.format, NEP 1): the magic "\x93NUMPY", a major and a minor
 * version byte (1.0, 2.0 or 3.0), the header's length (a little-endian u16 in 1.0, u32 in
 * 2.0 and 3.0), the header: a Python dict literal with exactly the keys 'descr' (the
 * dtype, e.g. '<f4'), 'fortran_order' (True or False) and 'shape' (a tuple of whole
 * numbers), padded with spaces and ended by '\n'; then the elements, count = the product
 * of the shape, each of the dtype's size. 3.0 differs from 2.0 only in allowing UTF-8 in
 * the header, which a dtype CAIRN reads never holds.
 *
 * Nothing here trusts the file: every length is checked against the bytes there are, a
 * shape whose product overflows is refused, and each failure is a message in the
 * caller's buffer (tests/fuzz/fuzz_npy.c runs the parser on arbitrary bytes). */
#ifndef CAIRN_NPY_H
#define CAIRN_NPY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN_NPY_MAX_DIMS   32
#define CAIRN_NPY_MAX_HEADER (1u << 20) /* larger headers are refused, not read */

typedef struct cairn_npy {
    int major, minor;  /* the version: 1.0, 2.0 or 3.0 */
    char descr[32];    /* the dtype's string, e.g. "<f4" (a structured dtype is refused) */
    int fortran_order; /* 1 when the file says True */
    int ndim;          /* 0 for a scalar array */
    uint64_t shape[CAIRN_NPY_MAX_DIMS];
    uint64_t count;     /* the product of the shape (1 for ndim 0) */
    size_t data_offset; /* where the elements start */
} cairn_npy;

/* Parses the preamble and header at the start of `bytes` (len of them, the whole file or
 * at least its header). 0 and *out filled, or -1 with a message in err. */
int cairn_npy_parse(const unsigned char *bytes, size_t len, cairn_npy *out, char *err,
                    size_t errlen);

/* Reads the file at path: *info its header, *data (malloc'd, free() it; never NULL on
 * success) its count elements of `item` bytes, which must be exactly what follows the
 * header: a shorter file is truncated, a longer one holds more than its header says.
 * 0; -1 with a message in err; or -2 with the message when the header was read (*info
 * holds it) but the data's length is not count * item (a caller that expected another
 * dtype may say so instead). `item` is the caller's, for the dtype it accepts. */
int cairn_npy_read(const char *path, size_t item, cairn_npy *info, void **data, char *err,
                   size_t errlen);

/* Writes count = product(shape) elements of `item` bytes at data as a version 1.0 file
 * (the header padded so the data starts on a 64-byte boundary, as NumPy writes it),
 * through a temporary file renamed over path. 0, or -1 with a message in err. */
int cairn_npy_write(const char *path, const char *descr, int ndim, const uint64_t *shape,
                    const void *data, size_t item, char *err, size_t errlen);

/* The shape as Python writes it: "()", "(5,)", "(2, 3)". */
void cairn_npy_shape_text(int ndim, const uint64_t *shape, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
