/* cairn_cr_array.h: the correctly rounded f32 math of cairn_cr.h over arrays, in vector
 * registers where the CPU has them (host only; device code keeps the scalar functions).
 *
 *   cairn_cr_expf_array(in, out, n)    out[i] = cairn_cr_expf(in[i]), i < n
 *   ... exp2f expm1f logf log2f log1pf tanhf sigmoidf sinf cosf likewise.
 *
 * The result bits are the scalar function's for every input: each kernel evaluates the
 * scalar fast path's formula, operation for operation in IEEE double (no fused
 * multiply-add, the same tables), applies the same rounding test to every lane, and
 * sends each lane whose test fails (or whose input the scalar function sends to its
 * edge path) through the scalar function itself. in and out may be the same array;
 * otherwise they must not overlap.
 *
 * The kernel is chosen once per process by the CPU: avx512 (8 doubles a vector:
 * AVX-512 F, DQ, VL), avx2 (4), or scalar (the scalar functions in a loop).
 * CAIRN_CR_KERNEL=scalar|avx2|avx512 forces one; a kernel the CPU cannot run falls back
 * to the best it can. cairn_cr_array_kernel() names the kernel that runs. */
#ifndef CAIRN_CR_ARRAY_H
#define CAIRN_CR_ARRAY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void cairn_cr_expf_array(const float *in, float *out, size_t n);
void cairn_cr_exp2f_array(const float *in, float *out, size_t n);
void cairn_cr_expm1f_array(const float *in, float *out, size_t n);
void cairn_cr_logf_array(const float *in, float *out, size_t n);
void cairn_cr_log2f_array(const float *in, float *out, size_t n);
void cairn_cr_log1pf_array(const float *in, float *out, size_t n);
void cairn_cr_tanhf_array(const float *in, float *out, size_t n);
void cairn_cr_sigmoidf_array(const float *in, float *out, size_t n);
void cairn_cr_sinf_array(const float *in, float *out, size_t n);
void cairn_cr_cosf_array(const float *in, float *out, size_t n);

/* "avx512", "avx2" or "scalar": the kernel the array forms run in this process. */
const char *cairn_cr_array_kernel(void);

/* Tests only (tests/c/cr_vec_check.c): lanes whose bit is set in this mask take the
 * scalar fallback in every vector, whatever their rounding test says; and the number of
 * lanes the calling thread sent to the fallback so far. */
extern unsigned cairn__cr_array_force;
unsigned long long cairn__cr_array_fallbacks(void);

#ifdef __cplusplus
}
#endif

#endif
