/* enclose_cuda_bench.cu: the bracket GEMM's CUDA backend against cuBLAS DGEMM and against
 * the CPU backend, at 256x1024x256 and 4096^3 f64 (bench_enclose_cuda.sh builds and runs
 * it; it needs a GPU). Per shape, in one run: the best of REPS calls of
 * cairn_enclose_cuda_bits (synchronous, operands already on the device), of
 * cublasDgemm on the same device arrays, and of cairn_enclose_f64 on the host's pool
 * (one call at 4096^3); then the device's lo and hi are copied back and compared with
 * the host's bit for bit, and both SHA-256 digests printed. Exits 1 if any bit differs
 * or a call fails, 3 without a GPU.
 *
 *   enclose_cuda_bench [REPS] [--small]    default 5 reps; --small: 256x1024x256 only */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cairn_enclose.h"
#include "cairn_pool.h"
#include "bench_normal.h"

static double now(void) { return bench_now(); }

static int fail(const char *what, const char *detail) {
    fprintf(stderr, "enclose_cuda_bench: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

static void hex(const unsigned char d[32], char out[65]) {
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

typedef struct {
    size_t m, n, k;
    double *a, *b, *lo, *hi, *glo, *ghi; /* host */
    double *da, *db, *dlo, *dhi, *dc;    /* device */
    double t_cuda, t_cublas, t_cpu;
} shape;

static int device_arrays(shape *s) {
    size_t out = s->m * s->n * 8;
    if (cudaMalloc(&s->da, s->m * s->k * 8) || cudaMalloc(&s->db, s->k * s->n * 8) ||
        cudaMalloc(&s->dlo, out) || cudaMalloc(&s->dhi, out) || cudaMalloc(&s->dc, out))
        return fail("cudaMalloc", cudaGetErrorString(cudaGetLastError()));
    if (cudaMemcpy(s->da, s->a, s->m * s->k * 8, cudaMemcpyHostToDevice) ||
        cudaMemcpy(s->db, s->b, s->k * s->n * 8, cudaMemcpyHostToDevice))
        return fail("cudaMemcpy", cudaGetErrorString(cudaGetLastError()));
    return 0;
}

/* The CUDA backend, best of reps (the first call, warming up, not counted). */
static int time_cuda(shape *s, int reps) {
    cairn_enclose_info info;
    s->t_cuda = 1e30;
    for (int r = -1; r < reps; r++) {
        double t0 = now();
        int rc = cairn_enclose_cuda_bits(64, s->m, s->n, s->k, s->da, s->db, s->dlo, s->dhi, &info);
        double t = now() - t0;
        if (rc) return fail(cairn_enclose_strerror(rc), info.detail);
        if (r >= 0 && t < s->t_cuda) s->t_cuda = t;
    }
    printf("  cuda backend: bits %d+%d, tight %d, kernel %s\n", info.bits_a, info.bits_b,
           info.tight, info.kernel);
    return 0;
}

/* cuBLAS DGEMM on the same row-major arrays: C^T = B^T A^T in its column-major terms. */
static int time_cublas(shape *s, int reps) {
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return fail("cublasCreate", NULL);
    const double one = 1.0, zero = 0.0;
    s->t_cublas = 1e30;
    for (int r = -1; r < reps; r++) {
        double t0 = now();
        cublasStatus_t st =
            cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)s->n, (int)s->m, (int)s->k, &one, s->db,
                        (int)s->n, s->da, (int)s->k, &zero, s->dc, (int)s->n);
        cudaDeviceSynchronize();
        double t = now() - t0;
        if (st != CUBLAS_STATUS_SUCCESS) return fail("cublasDgemm", NULL);
        if (r >= 0 && t < s->t_cublas) s->t_cublas = t;
    }
    cublasDestroy(h);
    return 0;
}

static int time_cpu(shape *s, int reps) {
    s->t_cpu = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        int rc = cairn_enclose_f64(s->m, s->n, s->k, s->a, s->b, s->lo, s->hi, NULL);
        double t = now() - t0;
        if (rc) return fail(cairn_enclose_strerror(rc), NULL);
        if (t < s->t_cpu) s->t_cpu = t;
    }
    return 0;
}

/* The device's bits against the host's; 0 when equal. */
static int compare_bits(shape *s) {
    size_t count = s->m * s->n;
    if (cudaMemcpy(s->glo, s->dlo, count * 8, cudaMemcpyDeviceToHost) ||
        cudaMemcpy(s->ghi, s->dhi, count * 8, cudaMemcpyDeviceToHost))
        return fail("cudaMemcpy back", cudaGetErrorString(cudaGetLastError()));
    unsigned char dg[32], dh[32];
    char xg[65], xh[65];
    if (cairn_enclose_digest(s->glo, s->ghi, count, 8, dg) ||
        cairn_enclose_digest(s->lo, s->hi, count, 8, dh))
        return fail("sha256", NULL);
    hex(dg, xg), hex(dh, xh);
    size_t differ = 0;
    for (size_t i = 0; i < count; i++)
        differ += memcmp(&s->glo[i], &s->lo[i], 8) != 0 || memcmp(&s->ghi[i], &s->hi[i], 8) != 0;
    printf("  sha256 device %s\n  sha256 host   %s\n  outputs whose bits differ: %zu of %zu\n", xg,
           xh, differ, count);
    return differ != 0;
}

static int run_shape(size_t m, size_t n, size_t k, int reps) {
    shape s;
    memset(&s, 0, sizeof s);
    s.m = m, s.n = n, s.k = k;
    s.a = (double *)malloc(m * k * 8), s.b = (double *)malloc(k * n * 8);
    s.lo = (double *)malloc(m * n * 8), s.hi = (double *)malloc(m * n * 8);
    s.glo = (double *)malloc(m * n * 8), s.ghi = (double *)malloc(m * n * 8);
    if (!s.a || !s.b || !s.lo || !s.hi || !s.glo || !s.ghi) return fail("out of memory", NULL);
    bench_fill_normal(s.a, m * k);
    bench_fill_normal(s.b, k * n);
    printf("%zux%zux%zu f64:\n", m, k, n);
    int rc = device_arrays(&s);
    if (!rc) rc = time_cuda(&s, reps);
    if (!rc) rc = time_cublas(&s, reps);
    if (!rc) rc = time_cpu(&s, m * n * k > ((size_t)1 << 30) ? 1 : reps);
    if (!rc) {
        printf("  cuda backend  %10.3f ms\n  cublas dgemm  %10.3f ms   cuda/cublas %.2fx\n"
               "  cpu backend   %10.3f ms   cpu/cuda %.1fx  (%u host threads)\n",
               s.t_cuda * 1e3, s.t_cublas * 1e3, s.t_cuda / s.t_cublas, s.t_cpu * 1e3,
               s.t_cpu / s.t_cuda, cairn_pool_width());
        rc = compare_bits(&s);
    }
    cudaFree(s.da), cudaFree(s.db), cudaFree(s.dlo), cudaFree(s.dhi), cudaFree(s.dc);
    free(s.a), free(s.b), free(s.lo), free(s.hi), free(s.glo), free(s.ghi);
    return rc;
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 5, small = argc > 2 && !strcmp(argv[2], "--small");
    if (reps < 1) {
        fprintf(stderr, "usage: enclose_cuda_bench [REPS] [--small]\n");
        return 2;
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        fprintf(stderr, "enclose_cuda_bench: no CUDA device\n");
        return 3;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    printf("bracket GEMM on %s (sm_%d%d) against cuBLAS DGEMM and the CPU backend\n", prop.name,
           prop.major, prop.minor);
    int rc = run_shape(256, 256, 1024, reps);
    if (!small) rc |= run_shape(4096, 4096, 4096, reps);
    return rc;
}
