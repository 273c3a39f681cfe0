/* cairn_enclose_cuda.cu: the bracket GEMM's CUDA backend as its own translation unit,
 * for C callers of cairn_enclose_cuda_bits (cairn_enclose.h): compile it with nvcc
 * (-arch=sm_80 or later, --fmad=false) and link it with runtime/cairn_enclose*.c and
 * cairn_pool.c. A CAIRN program built for a GPU includes cairn_enclose_cuda.h in its
 * own .cu instead. */
#include "cairn_enclose_cuda.h"
