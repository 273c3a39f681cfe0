/* mma_cublas.cu: mma_unordered's device tiling against cuBLAS on one GPU (bench_mma_cublas.sh
 * builds and runs it; it needs a GPU). One N x N x N f16 multiply (default 4096) with f32
 * accumulation, both timed in the same run: cairn_mma_device_f16 (runtime/
 * cairn_mma_device_cuda.h: 64 x 64 tiles, four warps of 2 x 2 WMMA fragments, two padded
 * stages) and cublasGemmEx (CUDA_R_16F in, CUBLAS_COMPUTE_32F). Then 512 sampled outputs
 * of each are held to the contract's bound, (k + 1) * 2^-22 * sum |a b| (c starts at 0),
 * against the exact sum, computed on the host in integers: an f16 is an integer times
 * 2^-24, so each product is an integer times 2^-48 and the sum fits __int128. Prints
 * TFLOP/s, the ratio to cuBLAS, and the worst sampled error over the bound; exits 1 if any
 * sample breaks the bound. */
#include <cublas_v2.h>
#include <inttypes.h>
#include <math.h>

#include "cairn_device_cuda.h"
#include "cairn_mma_device_cuda.h"

static double seconds(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms / 1e3;
}

/* f16 bits -> (integer, scaled by 2^24). Every finite f16 is an integer multiple of 2^-24. */
static int64_t f16_scaled(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    int64_t mag = e == 0 ? m : (int64_t)(1024 + m) << (e - 1);
    return (h & 0x8000) ? -mag : mag;
}

/* Worst |got - exact| / bound over the samples (> 1 breaks the contract). */
static double worst_over_bound(const float *got, const uint16_t *a, const uint16_t *b, uint64_t n,
                               int samples) {
    double worst = 0;
    uint64_t seed = 12345;
    for (int s = 0; s < samples; s++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t i = (seed >> 33) % n, j = (seed >> 13) % n;
        __int128 exact = 0, size = 0;
        for (uint64_t p = 0; p < n; p++) {
            __int128 prod = (__int128)f16_scaled(a[i * n + p]) * f16_scaled(b[p * n + j]);
            exact += prod;
            size += prod < 0 ? -prod : prod;
        }
        long double scale = ldexpl(1.0L, -48);
        long double err = fabsl((long double)got[i * n + j] - (long double)exact * scale);
        long double bound = (long double)(n + 1) * ldexpl(1.0L, -22) * (long double)size * scale;
        double ratio = bound > 0 ? (double)(err / bound) : (err > 0 ? INFINITY : 0);
        if (ratio > worst) worst = ratio;
    }
    return worst;
}

int main(int argc, char **argv) {
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 4096;
    if (n == 0 || n > 16384) {
        fprintf(stderr, "mma_cublas: N is 1..16384\n");
        return 2;
    }
    cairn_device_start();
    uint16_t *a = (uint16_t *)malloc(n * n * 2), *b = (uint16_t *)malloc(n * n * 2);
    float *got = (float *)malloc(n * n * 4);
    if (!a || !b || !got) return 2;
    for (uint64_t i = 0; i < n * n; i++) {
        a[i] = cairn_f32_to_f16((float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f);
        b[i] = cairn_f32_to_f16((float)((i * 40503u + 7) % 2001) / 1000.0f - 1.0f);
    }
    uint16_t *da, *db;
    float *dc;
    cudaMalloc(&da, n * n * 2);
    cudaMalloc(&db, n * n * 2);
    cudaMalloc(&dc, n * n * 4);
    cudaMemcpy(da, a, n * n * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, n * n * 2, cudaMemcpyHostToDevice);
    cudaEvent_t e0, e1, e2, e3;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    cudaEventCreate(&e2);
    cudaEventCreate(&e3);
    double flops = 2.0 * (double)n * (double)n * (double)n;

    cudaMemset(dc, 0, n * n * 4);
    cairn_mma_device_f16(n, n, n, dc, n * n, da, n * n, db, n * n, CAIRN_NOLOC); /* warm up */
    cudaMemset(dc, 0, n * n * 4);
    cudaEventRecord(e0);
    cairn_mma_device_f16(n, n, n, dc, n * n, da, n * n, db, n * n, CAIRN_NOLOC);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaMemcpy(got, dc, n * n * 4, cudaMemcpyDeviceToHost);
    double cairn_worst = worst_over_bound(got, a, b, n, 512);

    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "mma_cublas: no cuBLAS\n");
        return 2;
    }
    const float one = 1.0f, zero = 0.0f;
    /* Row-major C = A B is column-major C^T = B^T A^T: pass b first. */
    cublasStatus_t st =
        cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, db, CUDA_R_16F,
                     (int)n, da, CUDA_R_16F, (int)n, &zero, dc, CUDA_R_32F, (int)n,
                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); /* warm up */
    cudaEventRecord(e2);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)n, (int)n, &one, db, CUDA_R_16F,
                          (int)n, da, CUDA_R_16F, (int)n, &zero, dc, CUDA_R_32F, (int)n,
                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) { /* its output would be stale memory, not cuBLAS's */
        fprintf(stderr, "mma_cublas: cublasGemmEx failed: %s\n", cublasGetStatusString(st));
        return 2;
    }
    cudaEventRecord(e3);
    cudaEventSynchronize(e3);
    cudaMemcpy(got, dc, n * n * 4, cudaMemcpyDeviceToHost);
    double cublas_worst = worst_over_bound(got, a, b, n, 512);

    double tc = seconds(e0, e1), tb = seconds(e2, e3);
    printf("mma %" PRIu64
           "^3 f16 -> f32: cairn %.3f ms (%.1f TFLOP/s), cuBLAS %.3f ms (%.1f TFLOP/s), "
           "cairn/cuBLAS %.1f%%\n",
           n, tc * 1e3, flops / tc / 1e12, tb * 1e3, flops / tb / 1e12, 100 * tb / tc);
    printf("worst sampled error / bound: cairn %.3g, cuBLAS %.3g (<= 1 keeps the contract)\n",
           cairn_worst, cublas_worst);
    cublasDestroy(h);
    return cairn_worst <= 1 ? 0 : 1;
}
