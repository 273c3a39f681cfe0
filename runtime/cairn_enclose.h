/* cairn_enclose.h: the exact bracket GEMM, lo <= A*B <= hi computed in integers.
 *
 * Given row-major A (m x k) and B (k x n), cairn_enclose_f64/f32 write row-major lo and
 * hi (m x n) such that, for every output, lo[i][j] <= sum_t A[i][t]*B[t][j] <= hi[i][j]
 * where the sum is evaluated in exact real arithmetic. No floating-point instruction
 * runs: IEEE values are read and written as bit patterns and everything in between is
 * integer arithmetic, so the bits do not depend on the compiler, the thread count
 * (CAIRN_THREADS) or the kernel the CPU can run.
 *
 * How: each row of A and each column of B gets its own power-of-two scale 2^E, and its
 * elements are floored into two's-complement integers of at most 256 bits (the width is
 * one per matrix, bits_a and bits_b). The inner products of those integers are summed
 * exactly in 384-bit arithmetic and each output is rounded outward once: lo is the floor
 * and hi the ceiling of the exact value in the format, overflowing to -inf/+inf where
 * directed rounding goes there (and to -max/+max where it does not); subnormal results
 * are rounded like any other.
 *
 * Tight or wide: when a row's and a column's elements all scale without loss (their
 * span of binades fits the width), that output's bracket is the tightest the format
 * admits: lo == hi when the exact product is representable, adjacent values otherwise,
 * at any k. The width budget is bits_a + bits_b + ceil(log2 k) <= 332 with each width at
 * most 256; operands spanning more binades than that are floored at the bottom and the
 * bracket is widened by a bound of what the flooring can have lost (still a valid
 * bracket, marked in the info). An exact zero product gives lo == hi == +0.
 *
 * Errors (negative return; lo and hi are left untouched, but for a CUDA call failing
 * mid-run): a NaN or infinite operand (never propagated: the info names the operand and
 * its position), k > 2^17, sizes whose products overflow size_t, a NULL pointer with a
 * nonzero size, out of memory; on a GPU, no device or a failed CUDA call.
 * cairn_enclose_strerror gives a one-line message for each code.
 *
 * lo and hi may not overlap each other; they may overlap a and b (the operands are read
 * completely before any output is written). Thread-safe; runs on the runtime's pool.
 *
 * The kernel is chosen at run time by what the CPU has: AMX-INT8 tile units running the
 * GPU's residue algorithm where every row and column scales losslessly into at most 102
 * bits; AVX-512 IFMA (Karatsuba's three 52-bit products a step where both operands take
 * two digits); mulx/adcx/adox carry chains for one-limb operands on other x86-64;
 * portable unsigned __int128 code elsewhere. CAIRN_ENCLOSE_KERNEL=scalar|ifma|ifma52|
 * adx64|amx forces one where the CPU can run it, CAIRN_ENCLOSE_PACK=scalar the portable
 * scan and packing; the bits are the same.
 *
 * On a GPU (cairn_enclose_cuda_bits, below) and on the host (cairn_enclose_residue_bits)
 * the residue algorithm gives the same bits again. */
#ifndef CAIRN_ENCLOSE_H
#define CAIRN_ENCLOSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    CAIRN_ENCLOSE_OK = 0,
    CAIRN_ENCLOSE_ENONFINITE = -1, /* an operand is NaN or infinite */
    CAIRN_ENCLOSE_EKTOOBIG = -2,   /* k > CAIRN_ENCLOSE_MAX_K */
    CAIRN_ENCLOSE_ESIZE = -3,      /* sizes overflow, a NULL operand, a bad width */
    CAIRN_ENCLOSE_ENOMEM = -4,     /* the packed operands could not be allocated */
    CAIRN_ENCLOSE_ENODEV = -5,     /* cairn_enclose_cuda_bits: no CUDA device */
    CAIRN_ENCLOSE_EDEVICE = -6,    /* cairn_enclose_cuda_bits: a CUDA call failed */
    CAIRN_ENCLOSE_EOVERLAP = -7    /* cairn_enclose_strided: lo and hi share memory */
};

#define CAIRN_ENCLOSE_MAX_K       ((size_t)1 << 17)
#define CAIRN_ENCLOSE_MAX_BITS    256 /* two's-complement width of one scaled operand */
#define CAIRN_ENCLOSE_BUDGET_BITS 332 /* bits_a + bits_b + ceil(log2 k) at most */

typedef struct cairn_enclose_info {
    int tight;                    /* 1: every output got the one-step bracket */
    size_t tight_outputs;         /* how many outputs did (rows x columns scaled losslessly) */
    size_t lossy_rows;            /* rows of A floored with loss */
    size_t lossy_cols;            /* columns of B floored with loss */
    int bits_a, bits_b;           /* two's-complement widths used (sign included) */
    int need_bits_a, need_bits_b; /* widths a lossless scaling would need */
    int ceil_log2_k;
    /* Scale exponents: row i of A is multiplied by 2^E_i, column j of B by 2^F_j;
     * the ranges over nonzero rows and columns (0 when there are none). */
    int scale_a_min, scale_a_max, scale_b_min, scale_b_max;
    /* Which code ran: "amx-residue", "ifma51-karatsuba", "ifma52", "adx64" or "scalar"
     * (the CPU kernels), "residue-host" or "cuda-imma8" (the residue algorithm). */
    const char *kernel;
    /* On CAIRN_ENCLOSE_ENONFINITE: 'a' or 'b' and the offending element's position. */
    char bad_operand;
    size_t bad_row, bad_col;
    /* On CAIRN_ENCLOSE_ENODEV and CAIRN_ENCLOSE_EDEVICE: the CUDA runtime's message
     * (static storage); NULL otherwise. */
    const char *detail;
} cairn_enclose_info;

#ifndef CAIRN_ENCLOSE_BITS_ONLY /* the standalone checker names no floating type */
/* Brackets A*B in binary64. info may be NULL. Returns 0 or a CAIRN_ENCLOSE_E* code. */
int cairn_enclose_f64(size_t m, size_t n, size_t k, const double *a, const double *b, double *lo,
                      double *hi, cairn_enclose_info *info);

/* The same in binary32: operands, lo and hi are floats. */
int cairn_enclose_f32(size_t m, size_t n, size_t k, const float *a, const float *b, float *lo,
                      float *hi, cairn_enclose_info *info);
#endif

/* Strided host arrays, for callers whose matrices have any layout (numpy arrays through
 * ctypes pass their data pointer and strides as they are). width is 64 (binary64) or 32
 * (binary32). Element (i, t) of A is read at (char *)a + i * a_rs + t * a_cs, element
 * (t, j) of B at b + t * b_rs + j * b_cs, and output (i, j) is written at lo + i * lo_rs
 * + j * lo_cs and hi + i * hi_rs + j * hi_cs: strides in BYTES, of any sign, any
 * alignment; an operand's may be 0 (a broadcast row or column). Returns 0 or a code
 * of cairn_enclose_bits, and CAIRN_ENCLOSE_EOVERLAP when two outputs would share bytes
 * (an output stride below the element size where its extent is above 1, strides that
 * make lo or hi cover an element twice, or lo's and hi's byte ranges intersecting);
 * outputs may overlap the operands. The bits are cairn_enclose_bits's; info as there.
 * Contiguous row-major arrays are used in place, others through contiguous copies. */
int cairn_enclose_strided(int width, size_t m, size_t n, size_t k, const void *a, ptrdiff_t a_rs,
                          ptrdiff_t a_cs, const void *b, ptrdiff_t b_rs, ptrdiff_t b_cs, void *lo,
                          ptrdiff_t lo_rs, ptrdiff_t lo_cs, void *hi, ptrdiff_t hi_rs,
                          ptrdiff_t hi_cs, cairn_enclose_info *info);

/* The same on raw bit patterns: width 64 (binary64 in uint64_t) or 32 (binary32 in
 * uint32_t). For callers that hold bits, not floats (the standalone checker). */
int cairn_enclose_bits(int width, size_t m, size_t n, size_t k, const void *a, const void *b,
                       void *lo, void *hi, cairn_enclose_info *info);

/* The GPU's algorithm, run on the host: each element reduced to int8 residues modulo up
 * to 48 small moduli, one exact int8 GEMM per modulus, the exact sum recovered by the
 * Chinese remainder theorem (cairn_enclose_residue.h). The same contract, refusals,
 * info and bits as cairn_enclose_bits (info->kernel is "residue-host"); what a CAIRN
 * program built with --emulate runs for mm_enclose on @device views. Much slower than
 * the CPU kernels: it exists to show the device algorithm's bits on any machine. */
int cairn_enclose_residue_bits(int width, size_t m, size_t n, size_t k, const void *a,
                               const void *b, void *lo, void *hi, cairn_enclose_info *info);

/* The residue algorithm on a CUDA GPU: a, b, lo and hi are device pointers (cudaMalloc
 * or managed memory), row-major and contiguous. int8 tensor-core GEMMs, no
 * floating-point instruction. Same contract, refusals, info and bits as
 * cairn_enclose_bits (info->kernel is "cuda-imma8"), plus CAIRN_ENCLOSE_ENODEV and
 * CAIRN_ENCLOSE_EDEVICE with the CUDA runtime's message in info->detail (no device is
 * reported for any call whose arguments pass, empty ones included). Synchronous
 * (returns when lo and hi are written); runs on the current device and the default
 * stream. Defined by cairn_enclose_cuda.h: compile runtime/cairn_enclose_cuda.cu with
 * nvcc and link it with the runtime's C sources. */
int cairn_enclose_cuda_bits(int width, size_t m, size_t n, size_t k, const void *a, const void *b,
                            void *lo, void *hi, cairn_enclose_info *info);

/* A one-line message for a return code of the functions above. */
const char *cairn_enclose_strerror(int code);

/* Digests, in cairn_enclose_digest.c (callers link -lcrypto; the rest does not need
 * it): SHA-256 over the raw little-endian bits of lo (count elements of elem_size
 * bytes, 4 or 8) followed by hi. A case set is digested as the concatenation of its
 * results in order, with begin/add/end. Each returns 0, or -1 when libcrypto fails
 * (end and the one-shot form free the state either way). */
typedef struct cairn_enclose_hasher cairn_enclose_hasher;
cairn_enclose_hasher *cairn_enclose_digest_begin(void);
int cairn_enclose_digest_add(cairn_enclose_hasher *h, const void *lo, const void *hi, size_t count,
                             size_t elem_size);
int cairn_enclose_digest_end(cairn_enclose_hasher *h, unsigned char out[32]);
int cairn_enclose_digest(const void *lo, const void *hi, size_t count, size_t elem_size,
                         unsigned char out[32]);

#ifdef __cplusplus
}
#endif

#endif
