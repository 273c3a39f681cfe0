/* reduce_cub.cu: device reductions on one GPU against the memory system and CUB
 * (bench_gpu_reduce.sh builds it; it needs a GPU to run). Times, each the median of R runs
 * after one warm-up, on 2^L terms (default 2^28) already in device memory:
 *
 *   copy     a grid-stride float4 copy kernel: the bandwidth the reductions are held to
 *            (bytes read + written per second);
 *   dsum32   the exact device sum of f32 (runtime/cairn_dred_cuda.h, cairn_dsum_run, the
 *            term functor as the lowering writes it: a checked index, a load), rounded by
 *            the host's exact sum: its bits are checked against cairn_sum_f32 of the same
 *            values on the host;
 *   dsum64   the same for f64 against cairn_sum_f64;
 *   ired32   an integer reduce + of i32 (cairn_dred_run, 128-bit partials, the host's
 *            overflow check), checked against the host's sum;
 *   cub      cub::DeviceReduce::Sum of the same f32, f64 and i32 arrays (i32 into i64):
 *            an unchecked, order-dependent sum, the speed to compare against.
 *
 * Every timed run includes what a program's reduce pays: the launches, the scratch the
 * runtime allocates, and the copy of the result back (CUB: its temporary storage made once,
 * its result copied back). Prints GB/s of terms read, that as a fraction of the copy
 * kernel's bandwidth (the issue's targets: at least 70% for the exact sums, 85% for the
 * integer reduce), and the ratio to CUB; exits 1 if an exact sum's bits differ from the
 * host's or an integer sum is wrong. */
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "cairn_checked.h"
#include "cairn_device_cuda.h"
#include "cairn_dred_cuda.h"
#include "cairn_sum.h"

#define here (cairn_loc{"reduce_cub.cu", __LINE__, 1})

template <typename T>
struct view_term { /* the lowering's term: yield x[i], i checked against the view */
    const T *x;
    uint64_t n;
    __device__ T operator()(uint64_t k) const { return x[cairn_index_u(k, n, here)]; }
};

__global__ void copy4(const float4 *in, float4 *out, uint64_t n4) {
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n4; k += stride)
        out[k] = in[k];
}

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "reduce_cub: %s: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

template <typename F>
static double median_seconds(int runs, F f) {
    f(); /* warm-up */
    std::vector<double> t;
    for (int r = 0; r < runs; r++) {
        auto a = std::chrono::steady_clock::now();
        f();
        auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <typename T>
static T *to_device(const std::vector<T> &h) {
    T *d = nullptr;
    check(cudaMalloc(&d, h.size() * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    return d;
}

template <typename In, typename Out>
static double cub_sum(const In *d, uint64_t n, int runs, Out *result) {
    Out *out = nullptr;
    void *tmp = nullptr;
    size_t bytes = 0;
    check(cudaMalloc(&out, sizeof(Out)), "cudaMalloc");
    check(cub::DeviceReduce::Sum(tmp, bytes, d, out, (int64_t)n), "cub (size)");
    check(cudaMalloc(&tmp, bytes), "cudaMalloc");
    double s = median_seconds(runs, [&] {
        check(cub::DeviceReduce::Sum(tmp, bytes, d, out, (int64_t)n), "cub");
        check(cudaMemcpy(result, out, sizeof(Out), cudaMemcpyDeviceToHost), "cudaMemcpy");
    });
    cudaFree(tmp);
    cudaFree(out);
    return s;
}

static double copy_gbs; /* the copy kernel's bytes read + written per second, in GB/s */

/* One figure: time, GB/s of terms read, that as a fraction of the copy kernel's bandwidth
 * (with the issue's target), and the time against CUB's. */
static void line(const char *what, uint64_t bytes, double s, double cub_s, int target) {
    double gbs = (double)bytes / s / 1e9;
    printf("%-34s %9.3f ms %8.1f GB/s", what, s * 1e3, gbs);
    if (target) printf(" = %5.1f%% of copy (target >= %d%%)", 100 * gbs / copy_gbs, target);
    if (cub_s > 0) printf("   cub %8.3f ms: %.2fx cub's time", cub_s * 1e3, s / cub_s);
    printf("\n");
}

/* The exact device sum of the n terms at d (h on the host), timed against CUB's sum; 1
 * if its bits differ from the host's exact sum. */
template <typename T, int DIGITS, unsigned SKIP>
static int exact_sum(const char *type, const T *d, const std::vector<T> &h, int runs,
                     T (*round)(const cairn_dsum_record *), T (*host)(const T *, size_t)) {
    uint64_t n = h.size();
    T got = 0, cub = 0;
    double t = median_seconds(runs, [&] {
        cairn_dsum_record all;
        cairn_dsum_run<DIGITS, SKIP>(view_term<T>{d, n}, n, here, &all);
        got = round(&all);
    });
    double c = cub_sum(d, n, runs, &cub);
    char what[64];
    snprintf(what, sizeof what, "exact device sum %s", type);
    line(what, n * sizeof(T), t, c, 70);
    T want = host(h.data(), n);
    if (memcmp(&got, &want, sizeof got) != 0) {
        printf("  %s exact sum %a, host's exact sum %a: DIFFERENT BITS\n", type, (double)got,
               (double)want);
        return 1;
    }
    printf("  %s exact sum %a = the host's exact sum (cub's: %a)\n", type, (double)got,
           (double)cub);
    return 0;
}

int main(int argc, char **argv) {
    int log2n = argc > 1 ? atoi(argv[1]) : 28, runs = argc > 2 ? atoi(argv[2]) : 9;
    if (log2n < 10 || log2n > 30 || runs < 1) {
        fprintf(stderr, "usage: reduce_cub [LOG2_TERMS 10..30] [RUNS]\n");
        return 2;
    }
    uint64_t n = (uint64_t)1 << log2n;
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    printf("reduce_cub: %s (sm_%d%d, %d SMs), 2^%d terms, median of %d runs\n", prop.name,
           prop.major, prop.minor, prop.multiProcessorCount, log2n, runs);

    /* Terms over a wide range of magnitudes (the exact sum's slow path runs now and then),
     * signs mixed so the sums cancel. */
    std::vector<float> h32(n);
    std::vector<double> h64(n);
    std::vector<int32_t> hi(n);
    uint64_t s = 88172645463325252ull;
    for (uint64_t k = 0; k < n; k++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        double m = (double)(s >> 11) * 0x1p-53 - 0.5;
        int e = (int)((s >> 3) % 40) - 20;
        h32[k] = (float)ldexp(m, e);
        h64[k] = ldexp(m, e * 8) + (double)h32[k];
        hi[k] = (int32_t)(s >> 32);
    }
    float *d32 = to_device(h32);
    double *d64 = to_device(h64);
    int32_t *di = to_device(hi);
    int bad = 0;

    /* copy: bytes read and written */
    float *dst = nullptr;
    check(cudaMalloc(&dst, n * sizeof(float)), "cudaMalloc");
    double copy_s = median_seconds(runs, [&] {
        copy4<<<prop.multiProcessorCount * 8, 256>>>((const float4 *)d32, (float4 *)dst, n / 4);
        check(cudaDeviceSynchronize(), "copy kernel");
    });
    copy_gbs = 2.0 * n * sizeof(float) / copy_s / 1e9;
    line("copy kernel (f32, read + write)", 2 * n * sizeof(float), copy_s, 0, 0);
    cudaFree(dst);

    /* the exact sums, and their bits against the host's exact sum */
    bad |= exact_sum<float, CAIRN_DSUM32_DIGITS, 925>("f32", d32, h32, runs, cairn_dsum32_round,
                                                      cairn_sum_f32);
    bad |= exact_sum<double, CAIRN_DSUM64_DIGITS, 0>("f64", d64, h64, runs, cairn_dsum64_round,
                                                     cairn_sum_f64);

    /* integer reduce + over i32: 128-bit partials, the result checked on the host */
    __int128 acc = 0;
    long long cubi = 0;
    double ti = median_seconds(runs, [&] {
        acc = 0;
        cairn_dred_run<cairn_red_add<int32_t>, int32_t>(view_term<int32_t>{di, n}, n, here, &acc);
    });
    double ci = cub_sum(di, n, runs, &cubi);
    line("integer reduce + i32", n * sizeof(int32_t), ti, ci, 85);
    long long want = 0;
    for (uint64_t k = 0; k < n; k++) want += hi[k];
    if (acc != (__int128)want || cubi != want) {
        printf("  i32 sum %lld (cub %lld), host %lld: WRONG\n", (long long)acc, cubi, want);
        bad = 1;
    } else {
        printf("  i32 sum %lld = the host's\n", want);
    }
    cudaFree(d32);
    cudaFree(d64);
    cudaFree(di);
    return bad;
}
