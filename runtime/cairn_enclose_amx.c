/* cairn_enclose_amx.c: the bracket GEMM on AMX-INT8 tile units (x86-64 with AMX, e.g.
 * Sapphire Rapids), chosen at run time by cairn_enclose.c where the CPU and the kernel
 * allow it and every row and column scales losslessly into at most 102 bits.
 *
 * It is the GPU's residue algorithm (cairn_enclose_residue.h) on the CPU: after the
 * shared scan and plan, every X and Y is reduced to signed int8 residues modulo the L
 * moduli, each modulus takes one int8 GEMM on the tile units with exact int32 sums, and
 * each output's sum S = sum_t X Y comes back by the Chinese remainder theorem before the
 * shared outward rounding. An exact integer has one value, so the bits are those of
 * every other kernel (tests/runtime/test_enclose_kernels.py holds it to the portable
 * one). Integer instructions only.
 *
 *   residues  X + 2^w (cairn_enclose_avx512.h) in seven 15-bit pieces and a constant 1,
 *             paired into four 16-bit-pair words per element, 16 elements a vector: a
 *             vpmaddwd and three vpdpwssd with the pieces' weights 2^(15 i) mod m (and a
 *             constant that removes 2^w and shifts for the signed range) give a sum
 *             below 2^26, reduced by the reciprocal of cairn_enc_mod (exact there).
 *             Both are stored tile by tile, each tile's 1 KiB contiguous: A's as 16 rows
 *             of 64 k, B's in the tile units' VNNI layout, 16 rows of 4 k for 16
 *             columns (the residues of four rows of B make one 64-byte row);
 *   GEMMs     32 x 32 outputs a task: two 16 x 64 tiles of A, two 16 x 16-by-4 tiles
 *             of B, four int32 accumulator tiles (tdpbssd), k in steps of 64; the sums
 *             (|sum| <= 127^2 2^17 < 2^31) reduced mod m to bytes;
 *   CRT       8 outputs a vector: c_l = r_l (M / m_l)^-1 mod m_l, T = sum c_l M / m_l in
 *             44-bit digits (each product below 2^52: one vpmadd52luq), q from the
 *             40-bit estimate, S = T - q M, then each output rounded. */
#include "cairn_enclose_impl.h"

#ifdef CAIRN_ENC_X86

#include <assert.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cairn_enclose_avx512.h"
#include "cairn_enclose_residue.h"

#define AMX_TARGET                                                                                 \
    __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,avx512cd,avx512ifma,avx512vnni,"     \
                          "amx-tile,amx-int8")))

typedef cairn_enc_job job;

enum {
    BLOCK = 32,       /* outputs per task side: 2 x 2 tiles of 16 */
    KCHUNK = 64,      /* k per tile step (64 int8 a tile row) */
    LANES = 16,       /* 32-bit lanes of a vector */
    DIGIT44 = 44,     /* the CRT's radix: c < 2^8 times a digit stays below IFMA's 2^52 */
    MAX_DIGITS44 = 8, /* T < 48 M < 2^341 */
    PIECES = 7        /* 15-bit pieces of X + 2^w < 2^102 */
};

/* ---- can it run here ---------------------------------------------------------------------- */

/* AMX-TILE and AMX-INT8 (CPUID.(EAX=7,ECX=0):EDX[24,25]), the OS's tile state (XCR0 bits
 * 17 and 18), the vector extensions used around them (AVX-512 BW, DQ, VNNI and IFMA),
 * and the process's permission to
 * use the tile data (Linux arch_prctl ARCH_REQ_XCOMP_PERM, asked once). */
static int amx_probe(void) {
    unsigned eax, ebx, ecx, edx, xlo, xhi;
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512bw") || !__builtin_cpu_supports("avx512dq") ||
        !__builtin_cpu_supports("avx512vnni") || !cairn_enclose_x86_has_ifma())
        return 0;
    __asm__("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(7), "c"(0));
    if (((edx >> 24) & 3) != 3) return 0;
    __asm__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    if (((xlo >> 17) & 3) != 3) return 0;
#ifdef SYS_arch_prctl
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
#else
    return 0;
#endif
}

int cairn_enclose_amx_usable(void) {
    static atomic_int state; /* 0 unknown, 1 no, 2 yes */
    int s = atomic_load(&state);
    if (!s) atomic_store(&state, s = amx_probe() ? 2 : 1);
    return s == 2;
}

/* ---- the call's constants ----------------------------------------------------------------- */

typedef struct {
    cairn_enc_job J; /* first: the range functions receive &A->J */
    cairn_enc_crt crt;
    int L, D;          /* moduli; 44-bit digits of T */
    size_t mp, np, kp; /* m, n to whole blocks, k to whole tile steps */
    int8_t *ra, *rb;   /* residues, tile by tile (a_tile and b_tile) */
    uint8_t *rc;       /* each sum mod m_l: [l][m][n], and 8 spare bytes */
    /* For A (0) and B (1), per modulus, the weights of the pair words: (2^(30 j) mod m) |
     * (2^(30 j + 15) mod m) << 16, and in the last pair's free half the constant that
     * takes the bias 2^w off and shifts the residue for its signed range (below). */
    int32_t pair[2][CAIRN_ENC_MODULI][4];
    int32_t half[CAIRN_ENC_MODULI]; /* m - 1 - m / 2: the residues below 0 */
    uint64_t w44[CAIRN_ENC_MODULI][MAX_DIGITS44], m44[MAX_DIGITS44];
} amx_job;

/* The 44-bit digits of a 12-limb number. */
static void digits44(const uint32_t *limbs, uint64_t *out, int count) {
    for (int d = 0; d < count; d++) {
        int at = d * DIGIT44;
        uint64_t v = 0;
        for (int bit = 0; bit < DIGIT44; bit += 32 - (at + bit) % 32) {
            int pos = at + bit, limb = pos / 32, off = pos % 32;
            if (limb < CAIRN_ENC_LIMBS) v |= (uint64_t)(limbs[limb] >> off) << bit;
        }
        out[d] = v & ((UINT64_C(1) << DIGIT44) - 1);
    }
}

static uint32_t pow2_mod(int e, uint32_t m) {
    uint32_t r = 1 % m;
    while (e-- > 0) r = r * 2 % m;
    return r;
}

/* Fills the constants from the plan: the CRT, the pieces' weights, the biases. */
static int amx_constants(amx_job *A, const cairn_enclose_info *info) {
    if (cairn_enclose_crt_make(info->bits_a + info->bits_b + info->ceil_log2_k, &A->crt)) return -1;
    A->L = A->crt.L;
    A->D = (A->crt.limbs * 32 + DIGIT44 - 1) / DIGIT44;
    assert(A->D <= 6); /* need <= 102 + 102 + 17: M < 2^229, T < 2^235, 8 limbs */
    for (int l = 0; l < A->L; l++) {
        uint32_t m = A->crt.m[l], h = m - 1 - m / 2;
        A->half[l] = (int32_t)h;
        for (int op = 0; op < 2; op++) {
            uint32_t bias = pow2_mod(op ? A->J.P.wb : A->J.P.wa, m);
            for (int j = 0; j < 4; j++) {
                uint32_t high = j < 3 ? pow2_mod(30 * j + 15, m) : (m - bias + h) % m;
                A->pair[op][l][j] = (int32_t)(pow2_mod(30 * j, m) | high << 16);
            }
        }
        digits44(A->crt.W[l], A->w44[l], MAX_DIGITS44);
    }
    digits44(A->crt.M, A->m44, MAX_DIGITS44);
    return 0;
}

/* ---- residues ------------------------------------------------------------------------------ */

enum { TILE_BYTES = 1024 };

/* The tile of A's residues mod m_l holding rows i..i+15 (i % 16 == 0), k chunk kc. */
static inline int8_t *a_tile(const amx_job *A, int l, size_t i, size_t kc) {
    size_t tiles = (A->mp / 16) * (A->kp / KCHUNK);
    return A->ra + (((size_t)l * tiles + i / 16 * (A->kp / KCHUNK) + kc) * TILE_BYTES);
}

/* The tile of B's residues holding columns j..j+15 (j % 16 == 0), k chunk kc. */
static inline int8_t *b_tile(const amx_job *A, int l, size_t j, size_t kc) {
    size_t tiles = (A->np / 16) * (A->kp / KCHUNK);
    return A->rb + (((size_t)l * tiles + j / 16 * (A->kp / KCHUNK) + kc) * TILE_BYTES);
}

/* x mod m in 16 32-bit lanes, x < 2^26 (cairn_enc_mod: x R 2^-34, R = floor(2^34 / m) + 1). */
INLINE AMX_TARGET __m512i mod16(__m512i x, __m512i m, __m512i recip) {
    __m512i even = _mm512_srli_epi64(_mm512_mul_epu32(x, recip), 34);
    __m512i odd = _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(x, 32), recip), 34);
    __m512i q = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
    return _mm512_sub_epi32(x, _mm512_mullo_epi32(q, m));
}

/* The four pair words of eight elements' X + 2^w (xlo, xhi), as 8 32-bit lanes each. */
INLINE AMX_TARGET void pair_words8(__m512i xlo, __m512i xhi, __m256i pw[4]) {
    const __m512i m15 = _mm512_set1_epi64(0x7fff);
    __m512i p[PIECES + 1];
    for (int i = 0; i < 4; i++) p[i] = _mm512_and_si512(_mm512_srli_epi64(xlo, 15 * i), m15);
    p[4] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(xlo, 60), _mm512_slli_epi64(xhi, 4)),
                            m15);
    p[5] = _mm512_and_si512(_mm512_srli_epi64(xhi, 11), m15);
    p[6] = _mm512_and_si512(_mm512_srli_epi64(xhi, 26), m15); /* X + 2^w < 2^102: the rest */
    p[7] = _mm512_set1_epi64(1); /* times the constant in the last pair's weights */
    for (int j = 0; j < 4; j++)
        pw[j] =
            _mm512_cvtepi64_epi32(_mm512_or_si512(p[2 * j], _mm512_slli_epi64(p[2 * j + 1], 16)));
}

/* Pair words of 16 elements of a line segment: bits from load8 twice, each lane's scale. */
INLINE AMX_TARGET void pair_words16(const __m512i bits[2], const __m512i scale[2], int w, vfmt F,
                                    __m512i pw[4]) {
    __m256i half[2][4];
    for (int h = 0; h < 2; h++) {
        __m512i xlo, xhi;
        vbiased(bits[h], scale[h], w, F, &xlo, &xhi);
        pair_words8(xlo, xhi, half[h]);
    }
    for (int j = 0; j < 4; j++)
        pw[j] = _mm512_inserti64x4(_mm512_castsi256_si512(half[0][j]), half[1][j], 1);
}

/* The signed residues of 16 elements' X = X + 2^w - 2^w mod m_l, in [-127, 127] as the
 * shared core maps them (r > m / 2 becomes r - m): with h = m - 1 - m / 2, that is
 * ((X + h) mod m) - h, and the last pair word's constant 1 times (h - 2^w) mod m adds
 * both to the dot product (which stays below 2^26). */
INLINE AMX_TARGET __m512i residues16(const amx_job *A, const __m512i pw[4], int l, int op) {
    const int32_t *pair = A->pair[op][l];
    __m512i t = _mm512_madd_epi16(pw[0], _mm512_set1_epi32(pair[0]));
    for (int j = 1; j < 4; j++) t = _mm512_dpwssd_epi32(t, pw[j], _mm512_set1_epi32(pair[j]));
    __m512i r = mod16(t, _mm512_set1_epi32((int)A->crt.m[l]),
                      _mm512_set1_epi64((long long)A->crt.recip[l]));
    return _mm512_sub_epi32(r, _mm512_set1_epi32(A->half[l]));
}

/* Rows [begin, end) of A (padding rows to mp: zeros), each a row of its tiles: 64 k at a
 * time, so that each modulus's 64 bytes go out as one streaming store of a whole line
 * (the residues are read back by the GEMMs, after they have left the cache anyway). */
static AMX_TARGET void pack_a(const job *J, size_t begin, size_t end) {
    const amx_job *A = (const amx_job *)J;
    vfmt F = vfmt_of(J->P.f);
    size_t k = J->P.k;
    for (size_t i = begin; i < end; i++) {
        __m512i scale[2] = {_mm512_set1_epi64(i < J->P.m ? J->P.row_scale[i] : 0),
                            _mm512_set1_epi64(i < J->P.m ? J->P.row_scale[i] : 0)};
        for (size_t t0 = 0; t0 < A->kp; t0 += KCHUNK) {
            __m512i pw[4][4];
            __mmask16 valid[4];
            for (int q = 0; q < 4; q++) {
                size_t t = t0 + (size_t)(q * LANES);
                int count = i >= J->P.m || t >= k ? 0 : k - t < LANES ? (int)(k - t) : LANES;
                int c0 = count < 8 ? count : 8, c1 = count > 8 ? count - 8 : 0;
                __m512i bits[2] = {load8(J->a, i * k + t, J->P.f.size, c0),
                                   load8(J->a, i * k + t + 8, J->P.f.size, c1)};
                pair_words16(bits, scale, J->P.wa, F, pw[q]);
                valid[q] = (__mmask16)((1u << count) - 1);
            }
            for (int l = 0; l < A->L; l++) {
                __m128i part[4];
                for (int q = 0; q < 4; q++)
                    part[q] = _mm512_cvtepi32_epi8(
                        _mm512_maskz_mov_epi32(valid[q], residues16(A, pw[q], l, 0)));
                __m512i line = _mm512_inserti32x4(_mm512_castsi128_si512(part[0]), part[1], 1);
                line = _mm512_inserti32x4(_mm512_inserti32x4(line, part[2], 2), part[3], 3);
                _mm512_stream_si512((void *)(a_tile(A, l, i, t0 / KCHUNK) + (i % 16) * KCHUNK),
                                    line);
            }
        }
    }
    _mm_sfence();
}

/* Groups [begin, end) of four rows of B (padding to kp: zeros), 16 columns a vector: the
 * residues of rows 4g .. 4g + 3 in one 32-bit word per column, row g % 16 of a tile. */
static AMX_TARGET void pack_b(const job *J, size_t begin, size_t end) {
    const amx_job *A = (const amx_job *)J;
    vfmt F = vfmt_of(J->P.f);
    size_t k = J->P.k, n = J->P.n;
    for (size_t g = begin; g < end; g++)
        for (size_t j = 0; j < A->np; j += LANES) {
            int count = j >= n ? 0 : n - j < LANES ? (int)(n - j) : LANES;
            int c0 = count < 8 ? count : 8, c1 = count > 8 ? count - 8 : 0;
            __mmask8 v0 = (__mmask8)((1u << c0) - 1), v1 = (__mmask8)((1u << c1) - 1);
            __m512i scale[2] = {
                _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(v0, J->P.col_scale + j)),
                _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(v1, J->P.col_scale + j + 8))};
            __m512i pw[4][4];
            for (int r = 0; r < 4; r++) {
                size_t t = 4 * g + (size_t)r;
                int live = t < k;
                __m512i bits[2] = {load8(J->b, t * n + j, J->P.f.size, live ? c0 : 0),
                                   load8(J->b, t * n + j + 8, J->P.f.size, live ? c1 : 0)};
                pair_words16(bits, scale, J->P.wb, F, pw[r]);
            }
            __mmask16 valid = (__mmask16)((1u << count) - 1);
            for (int l = 0; l < A->L; l++) {
                __m512i word = _mm512_setzero_si512();
                for (int r = 0; r < 4; r++) {
                    __mmask16 live = 4 * g + (size_t)r < k ? valid : 0;
                    __m512i res = _mm512_maskz_mov_epi32(live, residues16(A, pw[r], l, 1));
                    res = _mm512_and_si512(res, _mm512_set1_epi32(0xff));
                    word = _mm512_or_si512(word, _mm512_slli_epi32(res, 8 * r));
                }
                _mm512_stream_si512((void *)(b_tile(A, l, j, g / 16) + (g % 16) * 64), word);
            }
        }
    _mm_sfence();
}

/* Both in one parallel region: indices [0, mp) are rows of A, the rest groups of B. */
static void pack_both(const job *J, size_t begin, size_t end) {
    size_t rows = ((const amx_job *)J)->mp;
    if (begin < rows) pack_a(J, begin, end < rows ? end : rows);
    if (end > rows) pack_b(J, (begin > rows ? begin : rows) - rows, end - rows);
}

/* ---- the GEMMs, the CRT, the rounding ------------------------------------------------------- */

/* Tile configuration: tiles 0-3 the int32 sums (16 x 16), 4-5 A (16 x 64 int8), 6-7 B
 * (16 rows of 16 columns x 4 int8). Palette 1, 64 bytes a row each. */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} __attribute__((packed)) tile_config;

static AMX_TARGET void configure_tiles(void) {
    tile_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
}

/* sum_t ra[l][i][t] rb[l][t][j] for the 32 x 32 outputs at (i0, j0), into sums. */
INLINE AMX_TARGET void block_gemm(const amx_job *A, int l, size_t i0, size_t j0, int32_t *sums) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (size_t kc = 0; kc < A->kp / KCHUNK; kc++) {
        _tile_loadd(4, a_tile(A, l, i0, kc), KCHUNK);
        _tile_loadd(5, a_tile(A, l, i0 + 16, kc), KCHUNK);
        _tile_loadd(6, b_tile(A, l, j0, kc), 64);
        _tile_loadd(7, b_tile(A, l, j0 + 16, kc), 64);
        _tile_dpbssd(0, 4, 6);
        _tile_dpbssd(1, 4, 7);
        _tile_dpbssd(2, 5, 6);
        _tile_dpbssd(3, 5, 7);
    }
    _tile_stored(0, sums, BLOCK * 4);
    _tile_stored(1, sums + 16, BLOCK * 4);
    _tile_stored(2, sums + 16 * BLOCK, BLOCK * 4);
    _tile_stored(3, sums + 16 * BLOCK + 16, BLOCK * 4);
}

/* The sums mod m_l as bytes in [0, m) (cairn_enc_reduce_sum, 16 lanes). */
INLINE AMX_TARGET void reduce_block(const amx_job *A, int l, const int32_t *sums, uint8_t *out) {
    __m512i m = _mm512_set1_epi32((int)A->crt.m[l]),
            recip = _mm512_set1_epi64((long long)A->crt.recip[l]);
    __m512i c16 = _mm512_set1_epi32((int)A->crt.pow16[l][1]);
    for (int x = 0; x < BLOCK * BLOCK; x += LANES) {
        __m512i s = _mm512_loadu_si512((const void *)(sums + x));
        __m512i mag = _mm512_abs_epi32(s); /* |s| < 2^31 */
        __m512i t = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_srli_epi32(mag, 16), c16),
                                     _mm512_and_si512(mag, _mm512_set1_epi32(0xffff)));
        __m512i r = mod16(t, m, recip);
        __mmask16 flip =
            _mm512_cmplt_epi32_mask(s, _mm512_setzero_si512()) & _mm512_test_epi32_mask(r, r);
        r = _mm512_mask_sub_epi32(r, flip, m, r);
        _mm_storeu_si128((__m128i *)(out + x), _mm512_cvtepi32_epi8(r));
    }
}

/* S of 8 outputs (res[l * stride + 0 .. 7], each r_l in [0, m_l)) as 44-bit digits with
 * the sign's carry: S = sum_d s[d] 2^(44 d) + carry 2^(44 D). Lanes past the row's end
 * read what follows it (another row's residues, or the array's 8 spare bytes). */
INLINE AMX_TARGET void crt8(const amx_job *A, const uint8_t *res, size_t stride,
                            __m512i s[MAX_DIGITS44], __m512i *carry, const int D) {
    __m512i q = _mm512_setzero_si512();
    for (int d = 0; d < D; d++) s[d] = _mm512_setzero_si512();
    for (int l = 0; l < A->L; l++) {
        __m512i r =
            _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(res + (size_t)l * stride)));
        __m512i x = _mm512_mul_epu32(r, _mm512_set1_epi64(A->crt.inv[l])); /* below 2^16 */
        __m512i qx = _mm512_srli_epi64(
            _mm512_mul_epu32(x, _mm512_set1_epi64((long long)A->crt.recip[l])), 34);
        __m512i c = _mm512_sub_epi64(x, _mm512_mul_epu32(qx, _mm512_set1_epi64(A->crt.m[l])));
        q = _mm512_madd52lo_epu64(q, c, _mm512_set1_epi64((long long)A->crt.frac[l]));
#pragma GCC unroll 8
        for (int d = 0; d < D; d++)
            s[d] = _mm512_madd52lo_epu64(s[d], c, _mm512_set1_epi64((long long)A->w44[l][d]));
    }
    q = _mm512_srli_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(INT64_C(1) << 39)), 40);
    __m512i c = _mm512_setzero_si512(), mask = _mm512_set1_epi64((INT64_C(1) << DIGIT44) - 1);
#pragma GCC unroll 8
    for (int d = 0; d < D; d++) { /* T - q M, carried into signed 44-bit digits */
        __m512i qm = _mm512_madd52lo_epu64(_mm512_setzero_si512(), q,
                                           _mm512_set1_epi64((long long)A->m44[d]));
        __m512i v = _mm512_add_epi64(_mm512_sub_epi64(s[d], qm), c);
        c = _mm512_srai_epi64(v, DIGIT44);
        s[d] = _mm512_and_si512(v, mask);
    }
    *carry = c;
}

/* S of 8 outputs from its digits into nw words (two's complement) a lane: each word the
 * digits that overlap it, shifted into place, and the sign's ones above the digits. */
INLINE AMX_TARGET void words8(const __m512i s[MAX_DIGITS44], __m512i carry, __m512i *w, const int D,
                              const int nw) {
#pragma GCC unroll 4
    for (int i = 0; i < nw; i++) {
        __m512i v = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int d = 0; d < D; d++) {
            int at = DIGIT44 * d - 64 * i; /* digit d's first bit, in word i */
            if (at >= 64 || at <= -DIGIT44) continue;
            v = _mm512_or_si512(v, at >= 0 ? _mm512_slli_epi64(s[d], (unsigned)at)
                                           : _mm512_srli_epi64(s[d], (unsigned)-at));
        }
        int fill = DIGIT44 * D - 64 * i; /* the sign's first bit, in word i */
        if (fill < 64) {
            uint64_t ones = fill <= 0 ? ~UINT64_C(0) : ~UINT64_C(0) << fill;
            v = _mm512_or_si512(v, _mm512_and_si512(carry, _mm512_set1_epi64((long long)ones)));
        }
        w[i] = v;
    }
}

/* Rounds and stores the 8 outputs of row i from column j (count of them inside). */
INLINE AMX_TARGET void finish8(const amx_job *A, const __m512i s[MAX_DIGITS44], __m512i carry,
                               size_t i, size_t j, int count, const int D, const int nw) {
    const job *J = &A->J;
    __m512i wv[4];
    uint64_t w[4][8];
    words8(s, carry, wv, D, nw);
    for (int k = 0; k < nw; k++) _mm512_storeu_si512((void *)w[k], wv[k]);
    for (int lane = 0; lane < count; lane++) {
        uint64_t v[4];
        for (int k = 0; k < nw; k++) v[k] = w[k][lane];
        int e = J->P.row_scale[i] + J->P.col_scale[j + (size_t)lane];
        cairn_enc_bracket_bits out = cairn_enc_round_words(v, nw, e, J->P.f);
        cairn_enc_store(J->lo, i * J->P.n + j + (size_t)lane, out.down, J->P.f.size);
        cairn_enc_store(J->hi, i * J->P.n + j + (size_t)lane, out.up, J->P.f.size);
    }
}

/* GEMM tasks [begin, end): modulus l, a block of 32 rows, every column block. A task's
 * rows of A stay in L1 across the column blocks, and consecutive tasks keep to one
 * modulus, whose residues of B stay in L2. */
static AMX_TARGET void gemm_tasks(const job *J, size_t begin, size_t end) {
    const amx_job *A = (const amx_job *)J;
    size_t row_blocks = A->mp / BLOCK, m = J->P.m, n = J->P.n;
    int32_t sums[BLOCK * BLOCK] __attribute__((aligned(64)));
    uint8_t res[BLOCK * BLOCK];
    configure_tiles();
    for (size_t task = begin; task < end; task++) {
        int l = (int)(task / row_blocks);
        size_t i0 = task % row_blocks * BLOCK;
        for (size_t j0 = 0; j0 < A->np; j0 += BLOCK) {
            block_gemm(A, l, i0, j0, sums);
            reduce_block(A, l, sums, res);
            uint8_t *rc = A->rc + (size_t)l * m * n;
            size_t cols = n - j0 < BLOCK ? n - j0 : BLOCK;
            __mmask32 keep = cols == BLOCK ? ~(__mmask32)0 : ((__mmask32)1 << cols) - 1;
            for (size_t r = 0; r < BLOCK && i0 + r < m; r++)
                _mm256_mask_storeu_epi8(rc + (i0 + r) * n + j0, keep,
                                        _mm256_loadu_si256((const __m256i *)(res + r * BLOCK)));
        }
    }
    _tile_release();
}

/* CRT tasks [begin, end): rows of the outputs, 8 at a time; the digits D and the words
 * nw constants. */
INLINE AMX_TARGET void crt_rows_d(const job *J, size_t begin, size_t end, const int D,
                                  const int nw) {
    const amx_job *A = (const amx_job *)J;
    size_t n = J->P.n;
    for (size_t i = begin; i < end; i++)
        for (size_t j = 0; j < n; j += 8) {
            __m512i s[MAX_DIGITS44], carry;
            crt8(A, A->rc + i * n + j, J->P.m * n, s, &carry, D);
            finish8(A, s, carry, i, j, n - j < 8 ? (int)(n - j) : 8, D, nw);
        }
}

/* T < 2^(44 D) with D <= 6 (fewer digits are padded with zeros), S fits nw <= 4 words:
 * lines of at most 102 bits. */
#define CRT_CASE(DIG)                                                                              \
    if (A->D <= (DIG)) {                                                                           \
        if (J->nw == 1) crt_rows_d(J, begin, end, DIG, 1);                                         \
        else if (J->nw == 2) crt_rows_d(J, begin, end, DIG, 2);                                    \
        else if (J->nw == 3) crt_rows_d(J, begin, end, DIG, 3);                                    \
        else crt_rows_d(J, begin, end, DIG, 4);                                                    \
        return;                                                                                    \
    }

static AMX_TARGET void crt_rows(const job *J, size_t begin, size_t end) {
    const amx_job *A = (const amx_job *)J;
    assert(A->D <= 6 && J->nw <= 4);
    CRT_CASE(3)
    CRT_CASE(4)
    CRT_CASE(5)
    CRT_CASE(6)
}

static size_t round_up(size_t x, size_t to) { return (x + to - 1) / to * to; }

int cairn_enclose_amx_run(const cairn_enc_job *J, cairn_enclose_info *info) {
    amx_job *A = calloc(1, sizeof *A); /* the CRT tables are 17 KiB: not on the stack */
    if (!A) return CAIRN_ENCLOSE_ENOMEM;
    A->J = *J;
    int rc = CAIRN_ENCLOSE_OK;
    if (amx_constants(A, info)) rc = CAIRN_ENCLOSE_ESIZE; /* unreachable: widths <= 102 */
    A->mp = round_up(J->P.m, BLOCK), A->np = round_up(J->P.n, BLOCK),
    A->kp = round_up(J->P.k, KCHUNK);
    size_t a_bytes = (size_t)A->L * A->mp * A->kp, b_bytes = (size_t)A->L * A->kp * A->np;
    size_t c_bytes = (size_t)A->L * J->P.m * J->P.n + 8;
    uint64_t *block =
        rc ? NULL : cairn_enclose_scratch_get((a_bytes + b_bytes + c_bytes + 64) / 8 + 1);
    if (!rc && !block) rc = CAIRN_ENCLOSE_ENOMEM;
    if (!rc) { /* tiles on 64-byte lines, for the streaming stores */
        A->ra = (int8_t *)(((uintptr_t)block + 63) & ~(uintptr_t)63);
        A->rb = A->ra + a_bytes;
        A->rc = (uint8_t *)A->rb + b_bytes;
        memset(A->rc + c_bytes - 8, 0, 8);
        cairn_enclose_each(&A->J, A->mp + A->kp / 4, pack_both);
        cairn_enclose_each(&A->J, (size_t)A->L * (A->mp / BLOCK), gemm_tasks);
        cairn_enclose_each(&A->J, J->P.m, crt_rows);
    }
    cairn_enclose_scratch_put(block);
    free(A);
    return rc;
}

#endif
