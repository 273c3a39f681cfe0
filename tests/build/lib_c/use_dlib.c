/* use_dlib.c: calls the device library built from dlib.cairn (tests/build/test_device_library.py)
 * through its device entries and its _host entries, and prints every input and output's
 * bits, so the test holds them to an exact model and an emulated build to a CUDA one.
 * Device memory comes from cudaMalloc when built with -DUSE_CUDA (then the entries get
 * device pointers), else the host heap (an emulated library takes host memory). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdlib.h"
#ifdef USE_CUDA
#include <cuda_runtime.h>
#endif

enum { N = 37 };

static void *dev_alloc(size_t bytes, int managed) {
    void *p = NULL;
#ifdef USE_CUDA
    if ((managed ? cudaMallocManaged(&p, bytes, cudaMemAttachGlobal) : cudaMalloc(&p, bytes)) !=
        cudaSuccess)
        return NULL;
#else
    (void)managed;
    p = malloc(bytes);
#endif
    return p;
}

static void to_dev(void *d, const void *h, size_t bytes) {
#ifdef USE_CUDA
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
#else
    memcpy(d, h, bytes);
#endif
}

static void from_dev(void *h, const void *d, size_t bytes) {
#ifdef USE_CUDA
    cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
#else
    memcpy(h, d, bytes);
#endif
}

static uint32_t bits32(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t bits64(double f) {
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static void print32(const char *name, const float *v, int n) {
    printf("%s", name);
    for (int i = 0; i < n; i++) printf(" %08" PRIx32, bits32(v[i]));
    printf("\n");
}

/* A failed call: its status and last error on one line. */
static void failed(const char *what, int status) {
    const dlib_error *e = dlib_last_error();
    printf("%s status=%d message=%s at=%s:%d:%d\n", what, status, e->message,
           e->file ? e->file : "-", e->line, e->col);
}

int main(void) {
    float x[N], y[N], y2[N], u[N];
    double p[N], q[N];
    int32_t k[N];
    for (int i = 0; i < N; i++) {
        x[i] = (float)(i + 1) / 3.0f - 5.0f;
        y[i] = y2[i] = 1.0f / (float)(i + 7);
        u[i] = (float)i * 0.1f;
        p[i] = 1.0 / (i + 1.0) * (i % 2 ? -1e16 : 1.0);
        q[i] = (double)(i % 5) + 0.1;
        k[i] = i * 11;
    }
    print32("x", x, N);
    print32("y", y, N);
    print32("u", u, N);
    float a = 2.5f / 7.0f;
    printf("a %08" PRIx32 "\n", bits32(a));
    int s = dlib_saxpy_host(N, a, x, N, y2, N);
    if (s) failed("saxpy_host", s);
    else print32("saxpy_host", y2, N);
    if (s) return 0; /* no device: the line above says why */
    float *dx = dev_alloc(sizeof x, 0), *dy = dev_alloc(sizeof y, 0);
    to_dev(dx, x, sizeof x);
    to_dev(dy, y, sizeof y);
    s = dlib_saxpy(N, a, dx, N, dy, N);
    from_dev(y, dy, sizeof y);
    if (s) failed("saxpy", s);
    else print32("saxpy", y, N);
    double *dp = dev_alloc(sizeof p, 0), *dq = dev_alloc(sizeof q, 0), r = 0, rh = 0;
    to_dev(dp, p, sizeof p);
    to_dev(dq, q, sizeof q);
    s = dlib_dot(N, dp, N, dq, N, &r);
    int sh = dlib_dot_host(N, p, N, q, N, &rh);
    printf("p");
    for (int i = 0; i < N; i++) printf(" %016" PRIx64, bits64(p[i]));
    printf("\nq");
    for (int i = 0; i < N; i++) printf(" %016" PRIx64, bits64(q[i]));
    printf("\ndot %d %016" PRIx64 " %d %016" PRIx64 "\n", s, bits64(r), sh, bits64(rh));
    int32_t *dk = dev_alloc(sizeof k, 0), *dout = dev_alloc(sizeof(int32_t), 0), out = -1;
    to_dev(dk, k, sizeof k);
    s = dlib_pick(N, dk, N, 5, dout, 1);
    from_dev(&out, dout, sizeof out);
    printf("pick %d %d\n", s, (int)out);
    failed("null", dlib_saxpy(N, a, NULL, N, dy, N));
    float *mu = dev_alloc(sizeof u, 1);
    memcpy(mu, u, sizeof u); /* managed (or host) memory: the host writes it directly */
    s = dlib_bump(N, mu, N);
    if (s) failed("bump", s);
    else print32("bump", mu, N);
    /* last: on a GPU a lane's trap ends the CUDA context, so later calls would fail */
    failed("pick_out", dlib_pick(N, dk, N, N + 3, dout, 1));
    return 0;
}
