/* cairn_mm_enclose.h: the language's builtin mm_enclose(m, n, k, lo, hi, a, b), the
 * exact bracket GEMM of cairn_enclose.h behind the checks a CAIRN call promises.
 *
 * Generated code passes each view as its pointer and element count, and the call's
 * location. The extents are checked once, before any work: a holds at least m*k
 * elements, b at least k*n, lo and hi at least m*n each (a longer view is fine: the
 * first elements are used, row-major). A view that is too short, a NaN or infinite
 * operand (named with its row and column), k > 2^17 or an allocation failure traps at
 * the call with the runtime's message; lo and hi are then left as they were. The result
 * is info.tight: true when every output got the one-step bracket (lo == hi where the
 * exact product is representable, adjacent values otherwise).
 *
 * On @device views the same call runs the GPU's residue algorithm (cairn_enclose.h): on
 * the GPU in a CUDA build, on the host where device work is emulated; the bits are the
 * host's either way, and a CUDA failure traps with the CUDA runtime's message. */
#ifndef CAIRN_MM_ENCLOSE_H
#define CAIRN_MM_ENCLOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cairn_enclose.h"
#include "cairn_trap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend a call runs: cairn_enclose_bits (host views), cairn_enclose_residue_bits
 * (@device views emulated on the host) or cairn_enclose_cuda_bits (@device views on a
 * GPU). */
typedef int cairn_mm_enclose_backend(int width, size_t m, size_t n, size_t k, const void *a,
                                     const void *b, void *lo, void *hi, cairn_enclose_info *info);

/* The checks, the run and the traps of every entry below, for width 64 or 32. */
bool cairn_mm_enclose_with(cairn_mm_enclose_backend *run, int width, uint64_t m, uint64_t n,
                           uint64_t k, void *lo, uint64_t lo_n, void *hi, uint64_t hi_n,
                           const void *a, uint64_t a_n, const void *b, uint64_t b_n, cairn_loc at);

/* Host views: the CPU backend. */
bool cairn_mm_enclose_f64(uint64_t m, uint64_t n, uint64_t k, double *lo, uint64_t lo_n, double *hi,
                          uint64_t hi_n, const double *a, uint64_t a_n, const double *b,
                          uint64_t b_n, cairn_loc at);

bool cairn_mm_enclose_f32(uint64_t m, uint64_t n, uint64_t k, float *lo, uint64_t lo_n, float *hi,
                          uint64_t hi_n, const float *a, uint64_t a_n, const float *b, uint64_t b_n,
                          cairn_loc at);

/* @device views in a program whose device work is emulated (--emulate, or the host
 * target): the GPU's residue algorithm on the host, the device's bits. */
bool cairn_mm_enclose_emulated_f64(uint64_t m, uint64_t n, uint64_t k, double *lo, uint64_t lo_n,
                                   double *hi, uint64_t hi_n, const double *a, uint64_t a_n,
                                   const double *b, uint64_t b_n, cairn_loc at);

bool cairn_mm_enclose_emulated_f32(uint64_t m, uint64_t n, uint64_t k, float *lo, uint64_t lo_n,
                                   float *hi, uint64_t hi_n, const float *a, uint64_t a_n,
                                   const float *b, uint64_t b_n, cairn_loc at);

/* @device views in a CUDA build: defined by cairn_enclose_cuda.h in the program's .cu. */
bool cairn_mm_enclose_device_f64(uint64_t m, uint64_t n, uint64_t k, double *lo, uint64_t lo_n,
                                 double *hi, uint64_t hi_n, const double *a, uint64_t a_n,
                                 const double *b, uint64_t b_n, cairn_loc at);

bool cairn_mm_enclose_device_f32(uint64_t m, uint64_t n, uint64_t k, float *lo, uint64_t lo_n,
                                 float *hi, uint64_t hi_n, const float *a, uint64_t a_n,
                                 const float *b, uint64_t b_n, cairn_loc at);

#ifdef __cplusplus
}
#endif

#endif
