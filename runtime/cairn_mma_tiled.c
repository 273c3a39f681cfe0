/* cairn_mma_tiled.c: mma_unordered on @device views when device work is emulated: the
 * device tiling of cairn_mma_device_cuda.h run on the host pool, block by block and warp by
 * warp (cairn_mma.h has the tiling).
 *
 * Every thread of a warp would hold each fragment whole and add in increasing k; the
 * threads' copies are equal, so the emulation keeps one per warp. A fragment adds only
 * the products of k the matrix has (the device adds the zero padding of a partial tile
 * too, which the contract's bound allows; skipping it keeps -0.0 outputs bit for bit).
 * Each output thus receives its old value, then its products in increasing k, each sum
 * rounded in f32: the reference loop's bits, whatever CAIRN_THREADS is. The stages hold
 * the operands widened to f32, exactly the values the device's f16/bf16 stages hold
 * (fp8 widens to f16 exactly there). */
#include <stdlib.h>

#include "cairn_mma.h"
#include "cairn_pool.h"

enum {
    TILE = CAIRN_MMA_TILE,
    KSTEP = CAIRN_MMA_KSTEP,
    LDA = CAIRN_MMA_LDA,
    LDB = CAIRN_MMA_LDB,
    FRAG = 16
};

/* One block's state: each warp's 2 x 2 accumulators and the two stages. */
typedef struct tile_state {
    float acc[CAIRN_MMA_WARPS][2][2][FRAG * FRAG];
    float a[2][TILE * LDA];
    float b[2][KSTEP * LDB];
} tile_state;

typedef struct tiled_job {
    uint64_t m, n, k, tiles_n;
    float *c;
    const void *a, *b;
    float (*widen)(const void *base, uint64_t index);
} tiled_job;

/* acc (16 x 16) += a (16 x kk, stride lda) * b (kk x 16, stride ldb), in increasing k. */
static void fragment_mma(float *acc, const float *a, const float *b, uint64_t kk) {
    for (int r = 0; r < FRAG; r++)
        for (int col = 0; col < FRAG; col++) {
            float s = acc[r * FRAG + col];
            for (uint64_t q = 0; q < kk; q++) s = s + a[r * LDA + q] * b[q * LDB + col];
            acc[r * FRAG + col] = s;
        }
}

/* Stage the 64 x 32 piece of a and the 32 x 64 piece of b at k0, zero outside the matrix. */
static void fill_stage(const tiled_job *j, tile_state *st, int s, uint64_t i0, uint64_t j0,
                       uint64_t k0) {
    for (uint64_t r = 0; r < TILE; r++)
        for (uint64_t q = 0; q < KSTEP; q++)
            st->a[s][r * LDA + q] =
                i0 + r < j->m && k0 + q < j->k ? j->widen(j->a, (i0 + r) * j->k + k0 + q) : 0.0f;
    for (uint64_t q = 0; q < KSTEP; q++)
        for (uint64_t col = 0; col < TILE; col++)
            st->b[s][q * LDB + col] = k0 + q < j->k && j0 + col < j->n
                                          ? j->widen(j->b, (k0 + q) * j->n + j0 + col)
                                          : 0.0f;
}

/* Moves the block's accumulators from c (load) or back into c (store), inside the matrix. */
static void move_acc(const tiled_job *j, tile_state *st, uint64_t i0, uint64_t j0, int store) {
    for (int w = 0; w < CAIRN_MMA_WARPS; w++)
        for (int fi = 0; fi < 2; fi++)
            for (int fj = 0; fj < 2; fj++)
                for (int r = 0; r < FRAG; r++)
                    for (int col = 0; col < FRAG; col++) {
                        uint64_t i = i0 + (uint64_t)(32 * (w / 2) + 16 * fi + r);
                        uint64_t jj = j0 + (uint64_t)(32 * (w % 2) + 16 * fj + col);
                        float *cell = &st->acc[w][fi][fj][r * FRAG + col];
                        if (i >= j->m || jj >= j->n) *cell = 0.0f;
                        else if (store) j->c[i * j->n + jj] = *cell;
                        else *cell = j->c[i * j->n + jj];
                    }
}

static void run_tile(const tiled_job *j, tile_state *st, uint64_t tile) {
    uint64_t i0 = tile / j->tiles_n * TILE, j0 = tile % j->tiles_n * TILE;
    move_acc(j, st, i0, j0, 0);
    for (uint64_t k0 = 0, step = 0; k0 < j->k; k0 += KSTEP, step++) {
        int s = (int)(step % 2);
        fill_stage(j, st, s, i0, j0, k0);
        for (uint64_t kf = 0; kf < KSTEP && k0 + kf < j->k; kf += FRAG) {
            uint64_t kk = j->k - (k0 + kf) < FRAG ? j->k - (k0 + kf) : FRAG;
            for (int w = 0; w < CAIRN_MMA_WARPS; w++)
                for (int fi = 0; fi < 2; fi++)
                    for (int fj = 0; fj < 2; fj++)
                        fragment_mma(st->acc[w][fi][fj],
                                     &st->a[s][(32 * (w / 2) + 16 * fi) * LDA + kf],
                                     &st->b[s][kf * LDB + 32 * (w % 2) + 16 * fj], kk);
        }
    }
    move_acc(j, st, i0, j0, 1);
}

static void run_tiles(void *ctx, size_t begin, size_t end, unsigned worker) {
    (void)worker;
    tile_state *st = malloc(sizeof *st);
    if (!st) cairn_trap("mma_unordered: out of memory for a tile");
    for (size_t t = begin; t < end; t++) run_tile(ctx, st, t);
    free(st);
}

#define CAIRN_MMA_TILED(T)                                                                         \
    static float widen_##T(const void *base, uint64_t index) {                                     \
        return cairn_##T##_to_f32(((const cairn_##T *)base)[index]);                               \
    }                                                                                              \
    void cairn_mma_tiled_##T(uint64_t m, uint64_t n, uint64_t k, float *c, uint64_t c_n,           \
                             const cairn_##T *a, uint64_t a_n, const cairn_##T *b, uint64_t b_n,   \
                             cairn_loc at) {                                                       \
        cairn_mma_check_extents("mma_unordered", m, n, k, c_n, a_n, b_n, at);                      \
        uint64_t tiles_m = (m + TILE - 1) / TILE, tiles_n = (n + TILE - 1) / TILE;                 \
        tiled_job job = {m, n, k, tiles_n, c, a, b, widen_##T};                                    \
        if (tiles_m && tiles_n) cairn_pool_run((size_t)(tiles_m * tiles_n), 1, run_tiles, &job);   \
    }
CAIRN_MMA_TILED(f16)
CAIRN_MMA_TILED(bf16)
CAIRN_MMA_TILED(f8e4m3)
CAIRN_MMA_TILED(f8e5m2)
