/* cairn_enclose_impl.h: internal to the bracket GEMM's sources (not for users): the
 * argument checks, the plan and the info every backend shares (defined in
 * cairn_enclose.c), and the CPU job that cairn_enclose.c and the x86 kernels of
 * cairn_enclose_x86.c and cairn_enclose_amx.c work on.
 *
 * The plan is one function of the spans, so every backend (the CPU kernels, the
 * residue algorithm on the host or on a GPU) scales every row and column alike and
 * computes the same exact integers. */
#ifndef CAIRN_ENCLOSE_IMPL_H
#define CAIRN_ENCLOSE_IMPL_H

#include <string.h>

#include "cairn_enclose_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shared by every backend ------------------------------------------------------- */

/* The plan: X[i][t] = floor(a[i][t] 2^row_scale[i]) lies in [-2^wa, 2^wa), Y[t][j] =
 * floor(b[t][j] 2^col_scale[j]) in [-2^wb, 2^wb); lossy rows and columns dropped bits. */
typedef struct cairn_enc_plan {
    cairn_enc_format f;
    size_t m, n, k;
    int wa, wb, lg;
    int *row_scale, *col_scale;           /* m and n entries, the caller's storage */
    unsigned char *row_lossy, *col_lossy; /* likewise */
    size_t lossy_rows, lossy_cols;
} cairn_enc_plan;

/* Argument checks of cairn_enclose.h: CAIRN_ENCLOSE_OK or the error code. */
int cairn_enclose_check_args(size_t m, size_t n, size_t k, const void *a, const void *b,
                             const void *lo, const void *hi);

/* Zeroes the info (info may not be NULL) and names the kernel. */
void cairn_enclose_info_reset(cairn_enclose_info *info, const char *kernel);

/* Fills P (f, m, n, k and the four arrays set by the caller) from the spans of every
 * row of A and column of B, and the widths and scales in the info. No span is bad. */
void cairn_enclose_plan_make(cairn_enc_plan *P, const cairn_enc_span *row_span,
                             const cairn_enc_span *col_span, cairn_enclose_info *info);

/* After a successful run: how many outputs are tight. */
void cairn_enclose_info_done(const cairn_enc_plan *P, cairn_enclose_info *info);

/* The first non-finite element of a rows x cols host matrix, row-major: 1 and its
 * position, or 0. */
int cairn_enclose_find_nonfinite(const void *base, size_t rows, size_t cols, cairn_enc_format f,
                                 size_t *row, size_t *col);

/* Loads element idx of a host array of the format's width. */
static inline uint64_t cairn_enc_load(const void *base, size_t idx, int size) {
    const unsigned char *p = (const unsigned char *)base + idx * (size_t)size;
    if (size == 8) {
        uint64_t u;
        memcpy(&u, p, 8);
        return u;
    }
    uint32_t u;
    memcpy(&u, p, 4);
    return u;
}

static inline void cairn_enc_store(void *base, size_t idx, uint64_t bits, int size) {
    unsigned char *p = (unsigned char *)base + idx * (size_t)size;
    if (size == 8) {
        memcpy(p, &bits, 8);
    } else {
        uint32_t u = (uint32_t)bits;
        memcpy(p, &u, 4);
    }
}

/* ---- the CPU job (cairn_enclose.c, cairn_enclose_x86.c, cairn_enclose_amx.c) --------- */

enum {
    CAIRN_ENC_TILE_COLS = 8,  /* one 512-bit vector of 64-bit lanes */
    CAIRN_ENC_MAX_ROWS = 4,   /* rows per tile */
    CAIRN_ENC_MAX_DIGITS = 5, /* ceil(256 / 52) */
    CAIRN_ENC_MAX_POS = 2 * CAIRN_ENC_MAX_DIGITS
};

/* Kernel families: how elements are cut into digits and how the products are summed. */
typedef enum {
    CAIRN_ENC_SCALAR, /* 52-bit digits, unsigned __int128 sums per position (portable) */
    CAIRN_ENC_IFMA,   /* 52-bit digits, AVX-512 IFMA lanes per position */
    CAIRN_ENC_KARA,   /* 51-bit digits d0, d1 and d0 + d1: three IFMA products a step */
    CAIRN_ENC_ADX     /* 64-bit limbs, mulx with adcx/adox carry chains */
} cairn_enc_family;

/* While the kernels run, each output of a tile has npos unsigned sums, one per digit
 * position (value sum_p pos[p] 2^(radix p); Karatsuba's middle position excepted, see
 * cairn_enclose.c); a kernel call gets the tile's first, output r * 8 + lane at
 * acc + (r * 8 + lane) * npos. rows * npos is at most CAIRN_ENC_TILE_POS. */
enum { CAIRN_ENC_TILE_POS = 24 };

typedef struct cairn_enc_job cairn_enc_job;
typedef void cairn_enc_kernel_fn(const cairn_enc_job *J, size_t i0, size_t jb, size_t k0, size_t k1,
                                 cairn_enc_u128 *acc);

struct cairn_enc_job {
    cairn_enc_plan P;
    const void *a, *b;
    void *lo, *hi;
    cairn_enc_family family;
    int radix;     /* digit bits: 52, 51 or 64 */
    int da, db;    /* digits per element of A and of B */
    int sa, sb;    /* words stored per element (Karatsuba adds the digit sum) */
    int rows;      /* R, rows per tile */
    int nw;        /* words the exact sum S needs with its sign (2 to 6) */
    size_t kblock; /* K steps between folds of the kernel's lanes */
    size_t mpad, nblocks;
    cairn_enc_kernel_fn *kernel;
    int vector_pack; /* scan and pack with AVX-512 (cairn_enclose_x86.c) */
    cairn_enc_span *row_span, *col_span;
    cairn_enc_wide *row_pos, *row_neg, *col_pos, *col_neg; /* sums of the positive/negative X */
    cairn_enc_wide *row_corr, *col_corr;                   /* minus what the bias added */
    int signed_sums_a, signed_sums_b;                      /* row_pos... needed (lossy opposite) */
    uint64_t *packed; /* one block from the scratch cache: ap then bp */
    uint64_t *ap;     /* [mpad][k][sa] */
    uint64_t *bp;     /* [nblocks][k][sb][8] */
};

/* A block of at least `words` 64-bit words from the cache that keeps the last call's
 * (fresh pages cost more than their use), and its return; 8-byte aligned. */
uint64_t *cairn_enclose_scratch_get(size_t words);
void cairn_enclose_scratch_put(uint64_t *words);

/* A parallel loop over [0, count) on the runtime pool (serially in the checker): fn
 * gets the job and a range. */
typedef void cairn_enc_range_fn(const cairn_enc_job *J, size_t begin, size_t end);
void cairn_enclose_each(const cairn_enc_job *J, size_t count, cairn_enc_range_fn *fn);

/* cairn_enclose_x86.c (x86-64 with GCC or Clang, not CAIRN_ENCLOSE_NO_SIMD). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(CAIRN_ENCLOSE_NO_SIMD)
#define CAIRN_ENC_X86 1
/* The IFMA kernel for da x db digits (52-bit), or Karatsuba's (da = db = 2, 51-bit). */
cairn_enc_kernel_fn *cairn_enclose_x86_ifma(int da, int db, int karatsuba);
/* The mulx/adcx/adox kernel for la x lb 64-bit limbs (there is one for 1 x 1), or NULL. */
cairn_enc_kernel_fn *cairn_enclose_x86_adx(int la, int lb);
int cairn_enclose_x86_has_ifma(void); /* AVX-512F, IFMA, CD: the vector kernels can run */
int cairn_enclose_x86_has_adx(void);  /* BMI2 and ADX */
/* The vector scan and packing take columns CAIRN_ENC_COL_GROUP blocks of 8 at a time. */
enum { CAIRN_ENC_COL_GROUP = 4 };
/* AVX-512 scan of rows [begin, end) of A and column groups [begin, end) of B. */
void cairn_enclose_x86_scan_rows(const cairn_enc_job *J, size_t begin, size_t end);
void cairn_enclose_x86_scan_cols(const cairn_enc_job *J, size_t begin, size_t end);
/* AVX-512 packing for Karatsuba's layout (no signed sums wanted). */
void cairn_enclose_x86_pack_rows(const cairn_enc_job *J, size_t begin, size_t end);
void cairn_enclose_x86_pack_cols(const cairn_enc_job *J, size_t begin, size_t end);
/* cairn_enclose_amx.c: whether AMX-INT8 can run here (asked once), and the rest of a call
 * after the scan and the plan (lossless lines of at most 102 bits, J->nw set). */
int cairn_enclose_amx_usable(void);
int cairn_enclose_amx_run(const cairn_enc_job *J, cairn_enclose_info *info);
#endif

#ifdef __cplusplus
}
#endif

#endif
