/* bench_kernels.c: the timing half of bench_kernels.sh (issue 33). It includes the C that
 * `cairn build --emit-c` wrote for kernels.cairn and holds the same kernels written by
 * hand; one process times both, interleaved, and checks that both give the same bits.
 *
 * Usage (the script passes these): timing LEVELS ONLY ROUNDS MS
 *   LEVELS  "l1 l2 ram" (any of them): working sets of 32 KiB, 1 MiB and 128 MiB (matmul
 *           is capped at n = 640, stencil2 at n = 2900: their sizes are printed)
 *   ONLY    kernel names separated by spaces, or "" for all
 *   ROUNDS  rounds (median taken), MS the milliseconds one measurement should last. */
#define _POSIX_C_SOURCE 200809L
#define main            cairn_generated_main
#include "kernels.c"
#undef main
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define AT CAIRN_AT(1, 1)
static size_t n, m;                   /* the kernel's size (and histogram bins) */
static void *in0, *in1, *outg, *outh; /* inputs; the generated and the hand outputs */
static size_t out_bytes;
static volatile double sink;
static double sink_g, sink_h; /* scalar results, compared like outputs */

/* The thread's CPU time on one thread; wall time when the pool has more (the workers'
 * time is then the point). */
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(cairn_pool_width() > 1 ? CLOCK_MONOTONIC : CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static uint64_t rng = 88172645463325252u;
static uint64_t next(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}
static double unit(void) { return (double)(next() >> 11) * 0x1p-53 * 2.0 - 1.0; }

/* ---- inputs ---- */
static void fill_f64(double *p, size_t k) {
    for (size_t i = 0; i < k; i++) p[i] = unit();
}
static void fill_f32(float *p, size_t k, double scale) {
    for (size_t i = 0; i < k; i++) p[i] = (float)(unit() * scale);
}
static void *alloc(size_t bytes) {
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) exit(3);
    return p;
}
static void outputs(size_t bytes) { out_bytes = bytes, outg = alloc(bytes), outh = alloc(bytes); }
static void init_sq64(void) { /* two n*n f64 inputs, an n*n output */
    in0 = alloc(n * n * 8), in1 = alloc(n * n * 8), outputs(n * n * 8);
    fill_f64(in0, n * n), fill_f64(in1, n * n);
}
static void init_v64(void) {
    in0 = alloc(n * 8), in1 = alloc(n * 8), outputs(n * 8), fill_f64(in0, n), fill_f64(in1, n);
}
static void init_v32(void) { in0 = alloc(n * 4), outputs(n * 4), fill_f32(in0, n, 4.0); }
static void init_mv(void) {
    in0 = alloc(n * n * 8), in1 = alloc(n * 8), outputs(n * 8), fill_f64(in0, n * n),
    fill_f64(in1, n);
}
static void init_i64(void) {
    int64_t *x = in0 = alloc(n * 8);
    outputs(n * 8);
    for (size_t i = 0; i < n; i++) x[i] = (int64_t)(next() % 2001) - 1000;
}
static void init_histo(void) {
    uint32_t *x = in0 = alloc(n * 4);
    m = 1024, outputs(m * 4);
    for (size_t i = 0; i < n; i++) x[i] = (uint32_t)(next() % m);
}
static void init_quant(void) { in0 = alloc(n * 4), outputs(n), fill_f32(in0, n, 100.0); }
static void init_conv(void) { in0 = alloc(n * 4), outputs(n * 2), fill_f32(in0, n, 70000.0); }

/* ---- the kernels by hand ---- */
static void h_matmul(void) {
    const double *a = in0, *b = in1;
    double *c = outh;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0.0;
            for (size_t k = 0; k < n; k++) s = s + a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}
static void h_stencil2(void) {
    const double *a = in0;
    double *o = outh;
    for (size_t i = 1; i < n - 1; i++)
        for (size_t j = 1; j < n - 1; j++)
            o[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] +
                                   a[i * n + j + 1]) -
                           a[i * n + j];
}
static void h_prefix(void) {
    const int64_t *x = in0;
    int64_t *o = outh, s = 0;
    for (size_t i = 0; i < n; i++) s += x[i], o[i] = s;
}
static void h_histo(void) {
    const uint32_t *x = in0;
    uint32_t *h = outh;
    for (size_t i = 0; i < n; i++) h[x[i]] = h[x[i]] + 1;
}
static void h_matvec(void) {
    const double *a = in0, *x = in1;
    double *y = outh;
    for (size_t i = 0; i < n; i++) {
        double s = -0.0;
        for (size_t k = 0; k < n; k++) s = s + a[i * n + k] * x[k];
        y[i] = s;
    }
}
static int8_t q_i8(float x, float s) { /* the f64 quotient, rounded to nearest-even */
    double q = (double)x / (double)s;
    double r = copysign((fabs(q) + 0x1p52) - 0x1p52, q); /* here |q| < 2^9 (s = 0.75) */
    int64_t v = (int64_t)r;
    return (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
}
static void h_quant_i8(void) {
    const float *x = in0;
    int8_t *q = outh;
    for (size_t i = 0; i < n; i++) q[i] = q_i8(x[i], 0.75f);
}
static void h_quant_e4m3(void) {
    const float *x = in0;
    cairn_f8e4m3 *q = outh;
    for (size_t i = 0; i < n; i++) { /* saturate at 448, then round the f64 quotient */
        double v = (double)x[i] / 0.75;
        v = v > 448.0 ? 448.0 : v < -448.0 ? -448.0 : v;
        q[i] = cairn_f64_to_f8e4m3(v, CAIRN_NOLOC);
    }
}
static void h_stencil1(void) {
    const double *a = in0;
    double *o = outh;
    for (size_t i = 1; i < n - 1; i++) o[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1];
}
static void h_saxpy(void) {
    const float *x = in0;
    float *y = outh;
    for (size_t i = 0; i < n; i++) y[i] = 0.001f * x[i] + y[i];
}
static void h_dot(void) {
    const double *x = in0, *y = in1;
    double s = -0.0;
    for (size_t i = 0; i < n; i++) s = s + x[i] * y[i];
    sink = sink_h = s;
}
struct dctx {
    const double *x, *y;
};
static void dblock(void *c, size_t b, size_t e, cairn_sum64 *acc) {
    const struct dctx *k = c;
    for (size_t i = b; i < e; i++) cairn_sum64_add(acc, k->x[i] * k->y[i]);
}
static void h_dot_exact(void) {
    struct dctx c = {in0, in1};
    sink = sink_h = cairn_sum64_pooled(n, 0, dblock, &c);
}
static void h_max(void) {
    const double *x = in0;
    double s = -INFINITY;
    for (size_t i = 0; i < n; i++) s = cairn_max_f64(s, x[i]);
    sink = sink_h = s;
}
static void h_softmax(void) {
    const float *x = in0;
    float *y = outh, mx = -INFINITY, s = -0.0f;
    for (size_t i = 0; i < n; i++) mx = cairn_max_f32(mx, x[i]);
    for (size_t i = 0; i < n; i++) y[i] = cairn_cr_expf(x[i] - mx);
    for (size_t i = 0; i < n; i++) s = s + y[i];
    for (size_t i = 0; i < n; i++) y[i] = y[i] / s;
}
static void h_layernorm(void) {
    const float *x = in0;
    float *y = outh, s = -0.0f, v = -0.0f;
    for (size_t i = 0; i < n; i++) s = s + x[i];
    float mu = s / (float)n;
    for (size_t i = 0; i < n; i++) v = v + (x[i] - mu) * (x[i] - mu);
    float r = 1.0f / sqrtf(v / (float)n + 0x1.4f8b58p-17f);
    for (size_t i = 0; i < n; i++) y[i] = (x[i] - mu) * r;
}
static void h_to_f16(void) {
    const float *x = in0;
    cairn_f16 *y = outh;
    for (size_t i = 0; i < n; i++) y[i] = cairn_f32_to_f16(x[i]);
}
static void h_to_bf16(void) {
    const float *x = in0;
    cairn_bf16 *y = outh;
    for (size_t i = 0; i < n; i++) y[i] = cairn_f32_to_bf16(x[i]);
}

/* ---- the generated kernels ---- */
static void g_matmul(void) { cairn_fn_matmul(n, in0, n * n, in1, n * n, outg, n * n, AT); }
static void g_stencil2(void) { cairn_fn_stencil2(n, in0, n * n, outg, n * n, AT); }
static void g_prefix(void) { cairn_fn_prefix(n, in0, n, outg, n, AT); }
static void g_histo(void) { cairn_fn_histo(n, m, in0, n, outg, m, AT); }
static void g_matvec(void) { cairn_fn_matvec(n, in0, n * n, in1, n, outg, n, AT); }
static void g_quant_i8(void) { cairn_fn_quant_i8(n, in0, n, 0.75f, outg, n, AT); }
static void g_quant_e4m3(void) { cairn_fn_quant_e4m3(n, in0, n, 0.75f, outg, n, AT); }
static void g_stencil1(void) { cairn_fn_stencil1(n, in0, n, outg, n, AT); }
static void g_saxpy(void) { cairn_fn_saxpy(n, 0.001f, in0, n, outg, n, AT); }
static void g_lanes(void) { cairn_fn_lanes(n, 0.001f, in0, n, outg, n, AT); }
static void g_dot(void) { sink = sink_g = cairn_fn_dot(n, in0, n, in1, n, AT); }
static void g_dot_exact(void) { sink = sink_g = cairn_fn_dot_exact(n, in0, n, in1, n, AT); }
static void g_max_par(void) { sink = sink_g = cairn_fn_max_par(n, in0, n, AT); }
static void g_max_for(void) { sink = sink_g = cairn_fn_max_for(n, in0, n, AT); }
static void g_softmax(void) { cairn_fn_softmax(n, in0, n, outg, n, AT); }
static void g_layernorm(void) { cairn_fn_layernorm(n, in0, n, outg, n, AT); }
static void g_to_f16(void) { cairn_fn_to_f16(n, in0, n, outg, n, AT); }
static void g_to_bf16(void) { cairn_fn_to_bf16(n, in0, n, outg, n, AT); }

typedef struct Kernel {
    const char *name;
    void (*gen)(void), (*hand)(void), (*init)(void);
    double bytes_per; /* working set per n (per n * n when square) */
    int square;       /* n is a side: the working set is bytes_per * n * n */
    size_t cap;       /* the largest n (0: none) */
} Kernel;

static const Kernel kernels[] = {
    {"matmul", g_matmul, h_matmul, init_sq64, 24, 1, 640},
    {"stencil2", g_stencil2, h_stencil2, init_sq64, 16, 1, 2900},
    {"prefix", g_prefix, h_prefix, init_i64, 16, 0, 0},
    {"histo", g_histo, h_histo, init_histo, 4, 0, 0},
    {"matvec", g_matvec, h_matvec, init_mv, 8, 1, 0},
    {"quant_i8", g_quant_i8, h_quant_i8, init_quant, 5, 0, 0},
    {"quant_e4m3", g_quant_e4m3, h_quant_e4m3, init_quant, 5, 0, 0},
    {"stencil1", g_stencil1, h_stencil1, init_v64, 16, 0, 0},
    {"saxpy", g_saxpy, h_saxpy, init_v32, 8, 0, 0},
    {"lanes", g_lanes, h_saxpy, init_v32, 8, 0, 0},
    {"dot", g_dot, h_dot, init_v64, 16, 0, 0},
    {"dot_exact", g_dot_exact, h_dot_exact, init_v64, 16, 0, 0},
    {"max_par", g_max_par, h_max, init_v64, 8, 0, 0},
    {"max_for", g_max_for, h_max, init_v64, 8, 0, 0},
    {"softmax", g_softmax, h_softmax, init_v32, 8, 0, 0},
    {"layernorm", g_layernorm, h_layernorm, init_v32, 8, 0, 0},
    {"to_f16", g_to_f16, h_to_f16, init_conv, 6, 0, 0},
    {"to_bf16", g_to_bf16, h_to_bf16, init_conv, 6, 0, 0},
};

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int k) {
    qsort(v, (size_t)k, sizeof *v, cmp_d);
    return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}
static double time_reps(void (*f)(void), long reps) {
    double t0 = now_ns();
    for (long r = 0; r < reps; r++) f();
    return (now_ns() - t0) / (double)reps;
}

/* One kernel at one working set: calibrate, time ROUNDS interleaved rounds, check bits. */
static void bench_one(const Kernel *k, double bytes, int rounds, double ms) {
    n = k->square ? (size_t)sqrt(bytes / k->bytes_per) : (size_t)(bytes / k->bytes_per);
    if (k->cap && n > k->cap) n = k->cap;
    k->init();
    /* the bits first, on the same fresh outputs */
    k->gen(), k->hand();
    int same = memcmp(outg, outh, out_bytes) == 0 && memcmp(&sink_g, &sink_h, sizeof sink_g) == 0;
    long reps = 1;
    while (time_reps(k->hand, reps) * (double)reps < ms * 1e6 && reps < (1L << 30)) reps *= 2;
    double tg[64], th[64], ratio[64];
    for (int r = 0; r < rounds; r++) {
        tg[r] = time_reps(k->gen, reps), th[r] = time_reps(k->hand, reps);
        ratio[r] = tg[r] / th[r];
    }
    double wset = k->square ? k->bytes_per * (double)n * (double)n : k->bytes_per * (double)n;
    printf("%-11s %9zu %9.0f KiB %12.1f %12.1f %7.2fx%s\n", k->name, n, wset / 1024,
           median(tg, rounds), median(th, rounds), median(ratio, rounds),
           same ? "" : "  DIFFERENT BITS");
    fflush(stdout);
    free(in0), free(in1), free(outg), free(outh);
    in0 = in1 = NULL;
    sink_g = sink_h = 0;
}

static int chosen(const char *only, const char *name) {
    if (!*only) return 1;
    size_t len = strlen(name);
    for (const char *p = only; (p = strstr(p, name)); p += len)
        if ((p == only || p[-1] == ' ') && (p[len] == ' ' || !p[len])) return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *levels = argc > 1 ? argv[1] : "l1 l2 ram", *only = argc > 2 ? argv[2] : "";
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    double ms = argc > 4 ? atof(argv[4]) : 4;
    rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
    static const struct {
        const char *name;
        double bytes;
    } sizes[] = {{"l1", 32 * 1024.0}, {"l2", 1024 * 1024.0}, {"ram", 128 * 1024 * 1024.0}};
    printf("kernel              n   working set      cairn_ns       c_ns   cairn/C\n");
    for (int s = 0; s < 3; s++) {
        if (!chosen(levels, sizes[s].name)) continue;
        printf("-- %s\n", sizes[s].name);
        for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
            if (chosen(only, kernels[i].name)) bench_one(&kernels[i], sizes[s].bytes, rounds, ms);
    }
    return 0;
}
