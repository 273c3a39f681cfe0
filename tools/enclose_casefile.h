/* enclose_casefile.h: the text format of bracket GEMM cases, shared by the standalone
 * checker (tools/enclose_check.c) and the test harness (tests/c/enclose_run.c).
 *
 *   # a comment runs to the end of the line
 *   case NAME f64|f32 M N K
 *   a  HEX ... (M*K bit patterns, row-major, e.g. 3ff0000000000000 for 1.0)
 *   b  HEX ... (K*N bit patterns, row-major)
 *
 * Tokens are separated by any whitespace; NAME has no spaces; sizes are decimal. The
 * reader uses integers only, so it builds where no floating-point type may appear. */
#ifndef ENCLOSE_CASEFILE_H
#define ENCLOSE_CASEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" { /* the CUDA checker (enclose_check_cuda.cu) is C++ */
#endif

typedef struct enclose_case {
    char name[64];
    int width; /* 64 or 32 */
    size_t m, n, k;
    void *a, *b; /* bit patterns: uint64_t or uint32_t per element */
} enclose_case;

/* Reads the next case: 1 when one was read, 0 at the end of the file, -1 on a format
 * error (message in err, with the line number). */
int enclose_case_read(FILE *fp, enclose_case *c, char *err, size_t errlen);

void enclose_case_free(enclose_case *c);

/* Writes count elements of width/8 bytes each as little-endian bytes. */
int enclose_write_le(FILE *fp, const void *bits, size_t count, int width);

#ifdef __cplusplus
}
#endif

#endif
