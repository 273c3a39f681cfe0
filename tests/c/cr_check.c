/* cr_check.c: the correctly rounded math of cairn_cr.h against MPFR.
 *
 *   cr_check f32 FUNC FIRST LAST THREADS   every f32 bit pattern FIRST..LAST (hex)
 *   cr_check sample FUNC LOG2N THREADS     a stratified sample: the 32-bit patterns cut
 *                                          into 2^LOG2N equal strata, one random pattern
 *                                          from each
 *   cr_check f64 FUNC COUNT SEED THREADS   COUNT random doubles (spread as make_f64 says)
 *   cr_check file FUNC PATH                the doubles listed in PATH (hex floats, # comments)
 *   cr_check fast FUNC COUNT SEED          the f64 fast path's error (hi + lo) against its
 *                                          bound, on random inputs (no rounding involved;
 *                                          log: both stages, the first against its table
 *                                          entry's bound)
  *   cr_check fbound log|log2 STRIDE        the f32 log's (log2's) fast path in double against
 *                                          its stated bound on every STRIDE-th positive
 *                                          normal f32
 *   cr_check tables                        every table entry and constant of cairn_cr_tables.h
 *   cr_check pairs PATH                    results computed elsewhere, one a line:
 *                                          f32|f64 FUNC INBITS OUTBITS (hex)
 *
 * FUNC: exp exp2 expm1 log log2 log1p tanh sigmoid sin cos (f32), exp log (f64).
 * With CR_CHECK_ARRAY set, f32 and sample check the array form (cairn_cr_array.h, the
 * kernel CAIRN_CR_KERNEL picks) on each block of inputs instead of the scalar function.
 *
 * The reference for an f32 input x: glibc's double function at x (sigmoid: 1 / (1 +
 * exp(-x)) in double) is trusted to within 2^-45 relative, 64 times the 2 ulps glibc
 * documents at most; where every real in that interval rounds to one f32 (checked without
 * double rounding: both ends give the same f32 and neither end is an f32 midpoint), that
 * is the answer. Elsewhere, and on every 2^16-th input besides (checking the filter
 * itself), MPFR decides: its functions are correctly rounded (sigmoid by Ziv's loop on
 * mpfr_can_round). Doubles are checked against MPFR alone. Results are compared as bits:
 * NaN must be the documented 0x7FFFFFFF / 0x7FFFFFFFFFFFFFFF, zeros keep their sign.
 * Prints one summary line: inputs, how many MPFR decided, differences, and how often
 * the runtime's accurate path ran and failed to decide (the last must be 0), and for f64
 * how often the log's first stage left an input to its second. Exits 1 on any
 * difference. */
#define CAIRN_CR_STATS 1
#include "cairn_cr.h"
#include "cairn_cr_array.h"

#include <inttypes.h>
#include <math.h>
#include <mpfr.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct func32 {
    const char *name;
    float (*ours)(float);
    double (*filter)(double);
    int (*exact)(mpfr_t, const mpfr_t, mpfr_rnd_t); /* NULL: sigmoid */
    void (*array)(const float *, float *, size_t);  /* the array form (cairn_cr_array.h) */
} func32;

static double filter_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static const func32 FUNCS32[] = {
    {"exp", cairn_cr_expf, exp, mpfr_exp, cairn_cr_expf_array},
    {"exp2", cairn_cr_exp2f, exp2, mpfr_exp2, cairn_cr_exp2f_array},
    {"expm1", cairn_cr_expm1f, expm1, mpfr_expm1, cairn_cr_expm1f_array},
    {"log", cairn_cr_logf, log, mpfr_log, cairn_cr_logf_array},
    {"log2", cairn_cr_log2f, log2, mpfr_log2, cairn_cr_log2f_array},
    {"log1p", cairn_cr_log1pf, log1p, mpfr_log1p, cairn_cr_log1pf_array},
    {"tanh", cairn_cr_tanhf, tanh, mpfr_tanh, cairn_cr_tanhf_array},
    {"sigmoid", cairn_cr_sigmoidf, filter_sigmoid, 0, cairn_cr_sigmoidf_array},
    {"sin", cairn_cr_sinf, sin, mpfr_sin, cairn_cr_sinf_array},
    {"cos", cairn_cr_cosf, cos, mpfr_cos, cairn_cr_cosf_array},
};

static const func32 *find32(const char *name) {
    for (size_t k = 0; k < sizeof FUNCS32 / sizeof FUNCS32[0]; k++)
        if (strcmp(FUNCS32[k].name, name) == 0) return &FUNCS32[k];
    return NULL;
}

/* Bits of floats, by the runtime's own casts (cairn_float.h). */
#define f2u cairn__f32_bits
#define u2f cairn__f32_from_bits
#define d2u cairn__f64_bits
#define u2d cairn__f64_from_bits

/* ---- references ------------------------------------------------------------------ */

/* MPFR's exponent range (per thread) for binary32 and binary64 results. */
static void set_range32(void) {
    mpfr_set_emin(-148); /* binary32: the least subnormal is 0.1 * 2^-148 */
    mpfr_set_emax(128);
}

static void set_range64(void) {
    mpfr_set_emin(-1073);
    mpfr_set_emax(1024);
}

/* 1 / (1 + e^-x) rounded to nearest-even at y's precision, binary32 range; Ziv's loop. */
static void mpfr_sigmoid(mpfr_t y, const mpfr_t x) {
    if (mpfr_nan_p(x) || mpfr_zero_p(x) || mpfr_inf_p(x)) { /* NaN, 1/2, 0 or 1 exactly */
        if (mpfr_nan_p(x)) mpfr_set_nan(y);
        else if (mpfr_zero_p(x)) mpfr_set_d(y, 0.5, MPFR_RNDN);
        else mpfr_set_ui(y, mpfr_sgn(x) > 0, MPFR_RNDN);
        return;
    }
    if (mpfr_cmpabs_ui(x, 128) > 0) { /* within e^-128 < 2^-184 of 1 (x > 0) or of 0 */
        mpfr_set_ui(y, mpfr_sgn(x) > 0, MPFR_RNDN);
        return;
    }
    for (mpfr_prec_t w = 128;; w *= 2) {
        mpfr_t t;
        mpfr_init2(t, w);
        mpfr_set_emin(mpfr_get_emin_min()); /* no overflow while approximating */
        mpfr_set_emax(mpfr_get_emax_max());
        mpfr_neg(t, x, MPFR_RNDN);
        mpfr_exp(t, t, MPFR_RNDN);
        mpfr_add_ui(t, t, 1, MPFR_RNDN);
        mpfr_ui_div(t, 1, t, MPFR_RNDN);
        /* three roundings of at most half an ulp each, and the error they carry: below
         * 4 ulps of w bits, so w - 3 bits are right */
        int ok = mpfr_can_round(t, w - 3, MPFR_RNDN, MPFR_RNDZ, mpfr_get_prec(y) + 1);
        set_range32();
        if (ok) {
            int inex = mpfr_set(y, t, MPFR_RNDN);
            inex = mpfr_check_range(y, inex, MPFR_RNDN);
            mpfr_subnormalize(y, inex, MPFR_RNDN);
        }
        mpfr_clear(t);
        if (ok) return;
    }
}

/* The correctly rounded f32 result of f at x, by MPFR. */
static float mpfr_ref32(const func32 *f, float x) {
    set_range32();
    mpfr_t mx, my;
    mpfr_init2(mx, 24);
    mpfr_init2(my, 24);
    mpfr_set_flt(mx, x, MPFR_RNDN);
    if (f->exact) {
        int inex = f->exact(my, mx, MPFR_RNDN);
        inex = mpfr_check_range(my, inex, MPFR_RNDN);
        mpfr_subnormalize(my, inex, MPFR_RNDN);
    } else {
        mpfr_sigmoid(my, mx);
    }
    float out = mpfr_nan_p(my) ? u2f(CAIRN_CR_NAN32) : mpfr_get_flt(my, MPFR_RNDN);
    mpfr_clear(mx);
    mpfr_clear(my);
    return out;
}

/* 1 when a double lies exactly halfway between two floats. */
static int is_f32_midpoint(double a) {
    float f = (float)a;
    if ((double)f == a || isinf(f)) return 0;
    float g = nextafterf(f, a > (double)f ? INFINITY : -INFINITY);
    return a - (double)f == (double)g - a;
}

/* The filter: the f32 every real within 2^-45 of glibc's double value rounds to, or
 * 0 (undecided) in *ok. */
static float filter_ref32(const func32 *f, float x, int *ok) {
    double y = f->filter((double)x);
    *ok = 1;
    if (isnan(y)) return u2f(CAIRN_CR_NAN32); /* outside the domain */
    if (isinf(y) || y == 0) return (float)y;  /* beyond f32's range either way, signed */
    *ok = 0;
    double e = fabs(y) * 0x1p-45, lo = y - e, hi = y + e;
    if ((float)lo != (float)hi || is_f32_midpoint(lo) || is_f32_midpoint(hi)) return 0.0f;
    *ok = 1;
    return (float)lo;
}

/* ---- sweeps ---------------------------------------------------------------------- */

typedef struct job {
    const func32 *f;
    uint64_t first, last, stride; /* f32 patterns first, first+stride, ... <= last */
    int log2n, threads;           /* sample mode when log2n > 0 */
    int array;                    /* check the array form (CR_CHECK_ARRAY set) */
    _Atomic uint64_t next, checked, asked, differ, slow, undecided;
} job;

enum { BLOCK = 1 << 16 };

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Checks one f32 input, got the result under test; returns 1 when MPFR was asked. */
static int check_one32(job *jb, uint32_t u, float got) {
    float x = u2f(u), want;
    int ok, asked = 0;
    want = filter_ref32(jb->f, x, &ok);
    if (!ok || (u & 0xFFFF) == 0x1234) {
        float m = mpfr_ref32(jb->f, x);
        if (ok && f2u(m) != f2u(want)) {
            fprintf(stderr, "cr_check: the filter was wrong for %s(%a)\n", jb->f->name, x);
            exit(2);
        }
        want = m;
        asked = 1;
    }
    if (f2u(got) != f2u(want) && atomic_fetch_add(&jb->differ, 1) < 20)
        fprintf(stderr, "%s(%a = 0x%08x): got %a (0x%08x), want %a (0x%08x)\n", jb->f->name, x, u,
                got, f2u(got), want, f2u(want));
    return asked;
}

static void *worker32(void *arg) {
    job *jb = arg;
    uint64_t count = jb->log2n ? (1ull << jb->log2n) : (jb->last - jb->first) / jb->stride + 1;
    uint64_t asked = 0, done = 0;
    static _Thread_local float ins[BLOCK], outs[BLOCK];
    cairn__cr_stats[0] = cairn__cr_stats[1] = 0;
    for (;;) {
        uint64_t b = atomic_fetch_add(&jb->next, BLOCK);
        if (b >= count) break;
        uint64_t end = b + BLOCK < count ? b + BLOCK : count;
        for (uint64_t i = b; i < end; i++) {
            uint32_t u;
            if (jb->log2n) { /* stratum i: its top log2n bits, the rest random */
                uint64_t s = i * 0x9E3779B97F4A7C15ull + (uint64_t)jb->log2n;
                uint64_t low = jb->log2n < 32 ? splitmix(&s) & ((1ull << (32 - jb->log2n)) - 1) : 0;
                u = (uint32_t)((i << (32 - jb->log2n)) | low);
            } else {
                u = (uint32_t)(jb->first + i * jb->stride);
            }
            ins[i - b] = u2f(u);
        }
        /* the array form on the whole block (CR_CHECK_ARRAY), or the scalar function */
        if (jb->array) jb->f->array(ins, outs, (size_t)(end - b));
        for (uint64_t i = b; i < end; i++) {
            float x = ins[i - b];
            asked += (uint64_t)check_one32(jb, f2u(x), jb->array ? outs[i - b] : jb->f->ours(x));
            done++;
        }
    }
    mpfr_free_cache(); /* this thread's constants (LeakSanitizer) */
    atomic_fetch_add(&jb->checked, done);
    atomic_fetch_add(&jb->asked, asked);
    atomic_fetch_add(&jb->slow, cairn__cr_stats[0]);
    atomic_fetch_add(&jb->undecided, cairn__cr_stats[1]);
    return NULL;
}

static int run_jobs(job *jb, void *(*fn)(void *), const char *what) {
    pthread_t t[64];
    int n = jb->threads < 1 ? 1 : jb->threads > 64 ? 64 : jb->threads;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, fn, jb);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("%s %s: %" PRIu64 " inputs, %" PRIu64 " decided by MPFR, %" PRIu64
           " differ; accurate path %" PRIu64 " times, %" PRIu64
           " undecided; %.2f s on %d threads\n",
           what, jb->f->name, (uint64_t)jb->checked, (uint64_t)jb->asked, (uint64_t)jb->differ,
           (uint64_t)jb->slow, (uint64_t)jb->undecided, secs, n);
    return jb->differ || jb->undecided ? 1 : 0;
}

/* ---- f64 ------------------------------------------------------------------------- */

typedef struct func64 {
    const char *name;
    double (*ours)(double);
    int (*exact)(mpfr_t, const mpfr_t, mpfr_rnd_t);
} func64;

static const func64 FUNCS64[] = {{"exp", cairn_cr_exp, mpfr_exp}, {"log", cairn_cr_log, mpfr_log}};

static const func64 *find64(const char *name) {
    for (size_t k = 0; k < sizeof FUNCS64 / sizeof FUNCS64[0]; k++)
        if (strcmp(FUNCS64[k].name, name) == 0) return &FUNCS64[k];
    return NULL;
}

static double mpfr_ref64(const func64 *f, double x) {
    set_range64();
    mpfr_t mx, my;
    mpfr_init2(mx, 53);
    mpfr_init2(my, 53);
    mpfr_set_d(mx, x, MPFR_RNDN);
    int inex = f->exact(my, mx, MPFR_RNDN);
    inex = mpfr_check_range(my, inex, MPFR_RNDN);
    mpfr_subnormalize(my, inex, MPFR_RNDN);
    double out = mpfr_nan_p(my) ? u2d(CAIRN_CR_NAN64) : mpfr_get_d(my, MPFR_RNDN);
    mpfr_clear(mx);
    mpfr_clear(my);
    return out;
}

/* A random double for f: exp: half uniform over [-746, 710], a quarter with a random
 * exponent in [2^-60, 2^10) and random bits, the rest any bit pattern; log: half any
 * positive pattern (subnormals too), a quarter uniform in [1/2, 2], a quarter 1 +- a
 * random multiple of 2^-52 below 2^-k, k random. */
static double make_f64(const func64 *f, uint64_t *s) {
    uint64_t r = splitmix(s), pick = r >> 62;
    double unit = (double)(splitmix(s) >> 11) * 0x1p-53;
    if (f->ours == cairn_cr_exp) {
        if (pick < 2) return -746.0 + 1456.0 * unit;
        if (pick == 2)
            return u2d(((r & 1) << 63) | ((uint64_t)(1023 - 60 + (int)((r >> 1) % 70)) << 52) |
                       (splitmix(s) >> 12));
        return u2d(splitmix(s));
    }
    if (pick < 2) return u2d(splitmix(s) >> 1);
    if (pick == 2) return 0.5 + 1.5 * unit;
    double d = (double)(splitmix(s) >> (12 + r % 52)) * 0x1p-52;
    return r & 1 ? 1.0 + d : 1.0 - d / 2;
}

typedef struct job64 {
    const func64 *f;
    uint64_t count, seed;
    int threads;
    _Atomic uint64_t next, checked, differ, slow, undecided, second;
} job64;

static void check_one64(job64 *jb, double x) {
    double got = jb->f->ours(x), want = mpfr_ref64(jb->f, x);
    if (d2u(got) != d2u(want) && atomic_fetch_add(&jb->differ, 1) < 20)
        fprintf(stderr, "%s(%a): got %a, want %a\n", jb->f->name, x, got, want);
}

static void *worker64(void *arg) {
    job64 *jb = arg;
    uint64_t done = 0;
    cairn__cr_stats[0] = cairn__cr_stats[1] = cairn__cr_stats[2] = 0;
    for (;;) {
        uint64_t b = atomic_fetch_add(&jb->next, 4096);
        if (b >= jb->count) break;
        for (uint64_t i = b; i < b + 4096 && i < jb->count; i++, done++) {
            uint64_t s = jb->seed * 0x9E3779B97F4A7C15ull ^ i;
            check_one64(jb, make_f64(jb->f, &s));
        }
    }
    mpfr_free_cache();
    atomic_fetch_add(&jb->checked, done);
    atomic_fetch_add(&jb->slow, cairn__cr_stats[0]);
    atomic_fetch_add(&jb->undecided, cairn__cr_stats[1]);
    atomic_fetch_add(&jb->second, cairn__cr_stats[2]);
    return NULL;
}

/* How many bits after the rounding bit of f(x) repeat it-or-its-opposite: the number of
 * equal bits after the round bit (hard cases for nearest have 1 then many 0s or 0 then
 * many 1s). */
static int hardness(const func64 *f, double x) {
    mpfr_t mx, my, fr;
    mpfr_inits2(400, mx, my, fr, (mpfr_ptr)0);
    mpfr_set_d(mx, x, MPFR_RNDN);
    f->exact(my, mx, MPFR_RNDN);
    int n = 0;
    if (mpfr_regular_p(my)) {
        mpfr_mul_2si(my, my, 53 - mpfr_get_exp(my), MPFR_RNDN); /* ulp = 1 */
        mpfr_frac(fr, my, MPFR_RNDN);
        mpfr_abs(fr, fr, MPFR_RNDN);
        mpfr_sub_d(fr, fr, 0.5, MPFR_RNDN); /* distance to the midpoint, in ulps */
        if (!mpfr_zero_p(fr)) n = -(int)mpfr_get_exp(fr) - 1;
    }
    mpfr_clears(mx, my, fr, (mpfr_ptr)0);
    return n;
}

static int check_file(const func64 *f, const char *path) {
    FILE *in = fopen(path, "r");
    if (!in) {
        perror(path);
        return 2;
    }
    char line[256];
    unsigned long n = 0, bad = 0;
    int hardest = 0;
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        double x = strtod(line, NULL), got = f->ours(x), want = mpfr_ref64(f, x);
        int h = hardness(f, x);
        hardest = h > hardest ? h : hardest;
        if (d2u(got) != d2u(want) && ++bad <= 20)
            fprintf(stderr, "%s(%a): got %a, want %a\n", f->name, x, got, want);
        n++;
    }
    fclose(in);
    printf("file %s %s: %lu inputs, %lu differ; accurate path %llu times, %llu undecided; "
           "second stage %llu times; the hardest has %d equal bits after the round bit\n",
           f->name, path, n, bad, cairn__cr_stats[0], cairn__cr_stats[1], cairn__cr_stats[2],
           hardest);
    return bad || cairn__cr_stats[1] ? 1 : 0;
}

/* ---- the fast paths' error bounds (f64) ------------------------------------------ */

/* Relative error of hi + lo (times 2^k) against MPFR at 300 bits, as log2. */
static double rel_err_log2(double hi, double lo, int k, const func64 *f, double x) {
    mpfr_t mx, ex, ap;
    mpfr_inits2(300, mx, ex, ap, (mpfr_ptr)0);
    mpfr_set_d(mx, x, MPFR_RNDN);
    f->exact(ex, mx, MPFR_RNDN);
    mpfr_set_d(ap, hi, MPFR_RNDN);
    mpfr_add_d(ap, ap, lo, MPFR_RNDN);
    mpfr_mul_2si(ap, ap, k, MPFR_RNDN);
    mpfr_sub(ap, ap, ex, MPFR_RNDN);
    mpfr_div(ap, ap, ex, MPFR_RNDN);
    double r = mpfr_zero_p(ap) ? -400.0 : log2(fabs(mpfr_get_d(ap, MPFR_RNDN)));
    mpfr_clears(mx, ex, ap, (mpfr_ptr)0);
    return r;
}

/* The log's first stage (cairn__cr_log_fast) at x: its error against MPFR over the
 * bound its table entry states, as log2 (must be below 0), and its relative error. */
static double log_first_ratio(double x, double *rel) {
    double lo, eps, hi = cairn__cr_log_fast(d2u(x), &lo, &eps);
    *rel = rel_err_log2(hi, lo, 0, &FUNCS64[1], x);
    return *rel - log2(eps);
}

/* Inputs for the log's first stage beyond make_f64's: the ends of every table entry's range
 * (a few units either side of each boundary pattern, any exponent), which hold its largest
 * |u|, and around 1 and 2. */
static double log_edge_input(uint64_t *s) {
    uint64_t r = splitmix(s), i = r % (CAIRN__CR_LOG64_N + 1), d = (r >> 20) % 64;
    uint64_t b = CAIRN__CR_LOG64_OFF + (i << 43) + d - 32;
    int k = (r >> 30) & 1 ? 0 : (int)((r >> 32) % 2000) - 1000;
    return u2d(b + ((uint64_t)(int64_t)k << 52));
}

static int check_fast(const func64 *f, uint64_t count, uint64_t seed) {
    double worst = -400.0, worst_x = 0, bound = f->ours == cairn_cr_exp ? -68.0 : -67.0;
    double first = -400.0, first_rel = -400.0, first_x = 0;
    uint64_t n = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t s = seed * 0x9E3779B97F4A7C15ull ^ i;
        double x = make_f64(f, &s), lo, hi;
        int k = 0;
        if (f->ours == cairn_cr_exp) {
            if (!(fabs(x) <= 707.0) || fabs(x) < 0x1p-54) continue;
            hi = cairn__cr_exp_dd(x, &k, &lo);
        } else {
            if (!(x > 0) || isinf(x) || x == 1.0) continue;
            hi = cairn__cr_log_dd(x, &lo); /* the second stage */
            double rel, y = i % 2 ? log_edge_input(&s) : x;
            if (y >= 0x1p-1022 && y != 1.0) { /* the first stage: positive normal inputs */
                double ratio = log_first_ratio(y, &rel);
                if (ratio > first) first = ratio, first_x = y;
                first_rel = rel > first_rel ? rel : first_rel;
            }
        }
        double e = rel_err_log2(hi, lo, k, f, x);
        if (e > worst) worst = e, worst_x = x;
        n++;
    }
    printf("fast %s: %" PRIu64 " inputs, largest relative error 2^%.2f at %a (bound 2^%.0f)\n",
           f->name, n, worst, worst_x, bound);
    if (f->ours == cairn_cr_exp) return worst > bound;
    printf("first stage: largest relative error 2^%.2f; largest error over its entry's bound "
           "2^%.2f at %a\n",
           first_rel, first, first_x);
    return worst > bound || first >= 0;
}

static int usage(void);

/* The f32 log's and log2's fast path (cairn__cr_logf_d, a double) over every positive
 * normal f32 x = FIRST, FIRST + STRIDE, ...: its largest relative error against glibc's
 * double log and log2 (within 0.52 and 0.55 units of their last place, 2^-52.9 relative:
 * glibc's documented bounds), which must stay below the 2^-47 the code states plus
 * 2^-50 for the reference. */
static int check_fbound32(const char *name, uint32_t stride) {
    int want_log2 = strcmp(name, "log2") == 0;
    if (!want_log2 && strcmp(name, "log") != 0) return usage();
    double worst = 0;
    uint32_t worst_b = 0;
    uint64_t n = 0;
    for (uint64_t b = 0x00800000u; b < 0x7F800000u; b += stride, n++) {
        double y = cairn__cr_logf_d((uint32_t)b, 0, want_log2), x = (double)u2f((uint32_t)b);
        double ref = want_log2 ? log2(x) : log(x);
        double rel = ref == 0 ? fabs(y) : fabs((y - ref) / ref);
        if (rel > worst) worst = rel, worst_b = (uint32_t)b;
    }
    printf("fbound %s: %" PRIu64 " inputs, largest relative error 2^%.2f at %a (stated 2^-47)\n",
           name, n, worst ? log2(worst) : -400.0, (double)u2f(worst_b));
    return !(worst < 0x1p-47 + 0x1p-50);
}

/* ---- the tables ------------------------------------------------------------------ */

static int fails;

static void expect(int ok, const char *what, int i) {
    if (!ok && ++fails <= 20) fprintf(stderr, "tables: %s wrong (entry %d)\n", what, i);
}

/* |a + b - v| <= 2^bound |v| with v from MPFR (400 bits). */
static int close_to(double a, double b, const mpfr_t v, int bound) {
    mpfr_t t;
    mpfr_init2(t, 400);
    mpfr_set_d(t, a, MPFR_RNDN);
    mpfr_add_d(t, t, b, MPFR_RNDN);
    mpfr_sub(t, t, v, MPFR_RNDN);
    int ok = mpfr_zero_p(t) || mpfr_get_exp(t) - mpfr_get_exp(v) < bound;
    mpfr_clear(t);
    return ok;
}

/* d is v rounded to nearest double. */
static int is_rn(double d, const mpfr_t v) { return d == mpfr_get_d(v, MPFR_RNDN); }

static int sig_bits(double d) { /* significant bits of a normal double */
    uint64_t m = d2u(d) & 0xFFFFFFFFFFFFFull;
    return m ? 53 - __builtin_ctzll(m) : 1;
}

/* The 192-bit truncated mantissa of a positive v against a crm constant. */
static int crm_matches(cairn__crm c, const mpfr_t v) {
    mpfr_t t;
    mpz_t z, w;
    mpfr_init2(t, 400);
    mpz_inits(z, w, (mpz_ptr)0);
    mpfr_mul_2si(t, v, 192 - mpfr_get_exp(v), MPFR_RNDN);
    mpfr_get_z(z, t, MPFR_RNDD);
    for (int i = 0; i < 3; i++) {
        mpz_mul_2exp(w, w, 64);
        mpz_add_ui(w, w, c.m[i]);
    }
    int ok = mpz_cmp(z, w) == 0 && c.e == mpfr_get_exp(v) && !c.neg;
    mpfr_clear(t);
    mpz_clears(z, w, (mpz_ptr)0);
    return ok;
}

static void check_exp_log_tables(mpfr_t ln2, mpfr_t v) {
    for (int j = 0; j < 512; j++) {
        mpfr_set_si(v, j, MPFR_RNDN);
        mpfr_div_ui(v, v, 512, MPFR_RNDN);
        mpfr_exp2(v, v, MPFR_RNDN);
        double hi = cairn__cr_exp_tab[j][0], lo = cairn__cr_exp_tab[j][1];
        expect(sig_bits(hi) <= 26 && close_to(hi, lo, v, -78), "2^(j/512)", j);
    }
    for (int i = 0; i < 256; i++) {
        double r = cairn__cr_log_tab[i][0], m0 = 1 + i / 256.0, m1 = 1 + (i + 1) / 256.0;
        expect(r * 512 == floor(r * 512) && fabs(m0 * r - 1) < 0x1p-8 && fabs(m1 * r - 1) <= 0x1p-8,
               "log table r", i);
        double umax = fmax(fabs(m0 * r - 1), fabs(m1 * r - 1)), l = cairn__cr_log_tab[i][1];
        /* the f64 log adds u to L with a fast two-sum: L = 0 (entries 0, 255) or |L| > |u| */
        expect(i == 0 || i == 255 ? l == 0 : fabs(l) > 1.9 * umax, "log table |L| > |u|", i);
        mpfr_set_d(v, r, MPFR_RNDN);
        mpfr_log(v, v, MPFR_RNDN);
        mpfr_neg(v, v, MPFR_RNDN);
        if (i >= CAIRN__CR_LOG_SPLIT) mpfr_sub(v, v, ln2, MPFR_RNDN);
        double a = cairn__cr_log_tab[i][1], b = cairn__cr_log_tab[i][2];
        int zero = mpfr_zero_p(v) || mpfr_get_exp(v) < -600; /* log(1), log(1/2) + ln2 */
        expect(zero ? a == 0 && b == 0 : close_to(a, b, v, -100), "log table L", i);
    }
}

/* -log(invc) into v, from MPFR. */
static void minus_log(mpfr_t v, double invc) {
    mpfr_set_d(v, invc, MPFR_RNDN);
    mpfr_log(v, v, MPFR_RNDN);
    mpfr_neg(v, v, MPFR_RNDN);
}

/* The first-stage log tables: entry i stands for the bit patterns OFF + [i, i + 1) 2^sh,
 * whose values run from z0 to z1 (exclusive). z0 and z1 have few significant bits (11 for
 * f64, 10 for f32), so z0 invc and z1 invc below are exact. */
static void log_range(uint64_t off, int i, int sh, int f32, double *z0, double *z1) {
    uint64_t p0 = off + ((uint64_t)i << sh), p1 = p0 + (1ull << sh);
    *z0 = f32 ? (double)u2f((uint32_t)p0) : u2d(p0);
    *z1 = f32 ? (double)u2f((uint32_t)p1) : u2d(p1);
}

static void check_logf_table(mpfr_t v) {
    for (int i = 0; i < CAIRN__CR_LOGF_N; i++) {
        double z0, z1, invc = cairn__cr_logf_tab[2 * i], logc = cairn__cr_logf_tab[2 * i + 1];
        log_range(CAIRN__CR_LOGF_OFF, i, 15, 1, &z0, &z1);
        /* r = z invc - 1 exact for every f32 z: invc has at most 29 bits; |r| <= 2^-9 */
        double u = fmax(fabs(z0 * invc - 1), fabs(z1 * invc - 1));
        expect(sig_bits(invc) <= 29 && u <= 0x1p-9, "logf table invc", i);
        expect(i == CAIRN__CR_LOGF_ONE ? z0 < 1 && 1 < z1 && invc == 1 : z0 >= 1 || z1 <= 1,
               "logf table: the entry of 1", i);
        minus_log(v, invc);
        expect(invc == 1 ? logc == 0 : is_rn(logc, v), "logf table log c", i);
    }
}

static void check_log64_table(mpfr_t v) {
    for (int i = 0; i < CAIRN__CR_LOG64_N; i++) {
        const double *e = cairn__cr_log64_tab + 4 * i;
        double z0, z1;
        log_range(CAIRN__CR_LOG64_OFF, i, 43, 0, &z0, &z1);
        /* invc: 11 bits at most, on the grid 2^-10; u = z invc - 1 lies on the grid of z
         * (2^-52, or 2^-53 below 1) times invc's and needs at most 53 bits of it */
        int one = i == CAIRN__CR_LOG64_ONE, g = 10;
        while (g > 0 && e[0] * (1 << (g - 1)) == floor(e[0] * (1 << (g - 1)))) g--;
        double u = fmax(fabs(z0 * e[0] - 1), fabs(z1 * e[0] - 1)), unit = 0x1p-52 / (1 << g);
        if (z0 < 1) unit /= 2;
        expect(sig_bits(e[0]) <= 11 && e[0] * 1024 == floor(e[0] * 1024) && u < 0x1p-9 &&
                   u < 0x1p53 * unit,
               "log64 table invc", i);
        expect(one ? z0 < 1 && 1 < z1 && e[0] == 1 : z0 >= 1 || z1 <= 1,
               "log64 table: the entry of 1", i);
        /* log c = chi + clo, chi on the grid 2^-42; |chi| >= |u| (the fast two-sum) */
        expect(e[1] * 0x1p42 == floor(e[1] * 0x1p42) && (one || fabs(e[1]) >= u), "log64 chi", i);
        minus_log(v, e[0]);
        /* clo below 2^-43, rounded: within 2^-97, and |log c| >= 2^-10.01 */
        expect(one ? e[1] == 0 && e[2] == 0 : close_to(e[1], e[2], v, -86), "log64 log c", i);
        expect(e[3] > 0 && e[3] < 0x1p-61, "log64 bound", i);
    }
}

static void check_2_pi(mpfr_t v) {
    mpz_t z;
    mpz_init(z);
    mpfr_const_pi(v, MPFR_RNDN);
    mpfr_ui_div(v, 2, v, MPFR_RNDN);
    mpfr_mul_2si(v, v, 640, MPFR_RNDN);
    mpfr_get_z(z, v, MPFR_RNDD);
    for (int w = 9; w >= 0; w--) {
        uint64_t word = 0;
        for (int b = 0; b < 64; b++)
            word |= (uint64_t)mpz_tstbit(z, (mp_bitcnt_t)(64 * (9 - w) + b)) << b;
        expect(word == cairn__cr_2_pi[w], "2/pi bits", w);
    }
    mpz_clear(z);
}

static int check_tables(void) {
    mpfr_t ln2, v, pi;
    mpfr_inits2(700, ln2, v, pi, (mpfr_ptr)0);
    mpfr_const_log2(ln2, MPFR_RNDN);
    mpfr_const_pi(pi, MPFR_RNDN);
    check_exp_log_tables(ln2, v);
    check_logf_table(v);
    check_log64_table(v);
    check_2_pi(v);
    mpfr_div_ui(v, ln2, 512, MPFR_RNDN);
    expect(sig_bits(CAIRN__CR_LN2N_1) <= 34 && close_to(CAIRN__CR_LN2N_1, CAIRN__CR_LN2N_2, v, -88),
           "ln2/512 split", 0);
    expect(sig_bits(CAIRN__CR_LN2_HI) <= 42 &&
               close_to(CAIRN__CR_LN2_HI, CAIRN__CR_LN2_LO, ln2, -100),
           "ln2 split", 0);
    expect(is_rn(CAIRN__CR_LN2, ln2), "LN2", 0);
    mpfr_div_ui(v, ln2, 512, MPFR_RNDN);
    expect(is_rn(CAIRN__CR_LN2N, v), "ln2/512", 0);
    mpfr_ui_div(v, 512, ln2, MPFR_RNDN);
    expect(is_rn(CAIRN__CR_INVLN2N, v), "512/ln2", 0);
    mpfr_ui_div(v, 1, ln2, MPFR_RNDN);
    expect(is_rn(CAIRN__CR_INVLN2, v) && crm_matches((cairn__crm)CAIRN__CR_MP_INVLN2, v), "1/ln2",
           0);
    expect(crm_matches((cairn__crm)CAIRN__CR_MP_LN2, ln2), "MP ln2", 0);
    mpfr_div_2ui(v, pi, 1, MPFR_RNDN);
    expect(is_rn(CAIRN__CR_PI_2, v) && crm_matches((cairn__crm)CAIRN__CR_MP_PI_2, v), "pi/2", 0);
    const double e2[] = {CAIRN__CR_EXP2_C1, CAIRN__CR_EXP2_C2, CAIRN__CR_EXP2_C3, CAIRN__CR_EXP2_C4,
                         CAIRN__CR_EXP2_C5};
    mpfr_set_ui(v, 1, MPFR_RNDN);
    for (int n = 1; n <= 5; n++) {
        mpfr_mul(v, v, ln2, MPFR_RNDN);
        mpfr_div_ui(v, v, (unsigned long)n, MPFR_RNDN);
        expect(is_rn(e2[n - 1], v), "ln2^n/n!", n);
    }
    const double sn[] = {CAIRN__CR_SIN1, CAIRN__CR_SIN2, CAIRN__CR_SIN3, CAIRN__CR_SIN4,
                         CAIRN__CR_SIN5, CAIRN__CR_SIN6, CAIRN__CR_SIN7};
    const double cs[] = {CAIRN__CR_COS1, CAIRN__CR_COS2, CAIRN__CR_COS3, CAIRN__CR_COS4,
                         CAIRN__CR_COS5, CAIRN__CR_COS6, CAIRN__CR_COS7, CAIRN__CR_COS8};
    for (int n = 2; n <= 16; n++) { /* (-1)^k / n!, n = 2k + 1 (sin) or 2k (cos) */
        mpfr_fac_ui(v, (unsigned long)n, MPFR_RNDN);
        mpfr_ui_div(v, 1, v, MPFR_RNDN);
        if ((n / 2) % 2) mpfr_neg(v, v, MPFR_RNDN);
        expect(is_rn(n % 2 ? sn[n / 2 - 1] : cs[n / 2 - 1], v), "sin/cos coefficient", n);
    }
    const double inv[] = {CAIRN__CR_INV3, CAIRN__CR_INV5,  CAIRN__CR_INV6,  CAIRN__CR_INV7,
                          CAIRN__CR_INV9, CAIRN__CR_INVF3, CAIRN__CR_INVF4, CAIRN__CR_INVF5};
    const unsigned long den[] = {3, 5, 6, 7, 9, 6, 24, 120};
    for (int n = 0; n < 8; n++) {
        mpfr_set_ui(v, 1, MPFR_RNDN);
        mpfr_div_ui(v, v, den[n], MPFR_RNDN);
        expect(is_rn(inv[n], v), "1/n", n);
    }
    mpfr_clears(ln2, v, pi, (mpfr_ptr)0);
    printf("tables: %d wrong\n", fails);
    return fails != 0;
}

/* ---- results made elsewhere (a CAIRN program's observations) ---------------------- */

/* Lines "f32 FUNC INBITS OUTBITS" or "f64 FUNC INBITS OUTBITS" (hex): each result held
 * to MPFR's. */
static int check_pairs(const char *path) {
    FILE *in = fopen(path, "r");
    if (!in) {
        perror(path);
        return 2;
    }
    char type[8], name[16];
    unsigned long long a, b, n = 0, bad = 0;
    while (fscanf(in, "%7s %15s %llx %llx", type, name, &a, &b) == 4) {
        uint64_t want;
        if (strcmp(type, "f32") == 0 && find32(name)) {
            want = f2u(mpfr_ref32(find32(name), u2f((uint32_t)a)));
        } else if (strcmp(type, "f64") == 0 && find64(name)) {
            want = d2u(mpfr_ref64(find64(name), u2d(a)));
        } else {
            fprintf(stderr, "pairs: unknown function %s %s\n", type, name);
            fclose(in);
            return 2;
        }
        if (want != b && ++bad <= 20)
            fprintf(stderr, "%s %s(0x%llx): got 0x%llx, want 0x%llx\n", type, name, a, b,
                    (unsigned long long)want);
        n++;
    }
    fclose(in);
    printf("pairs %s: %llu results, %llu differ from MPFR\n", path, n, bad);
    return bad || !n ? 1 : 0;
}

/* ---- main ------------------------------------------------------------------------ */

static int usage(void) {
    fprintf(stderr, "usage: cr_check f32 FUNC FIRST LAST THREADS | sample FUNC LOG2N THREADS |\n"
                    "       f64 FUNC COUNT SEED THREADS | file FUNC PATH | fast FUNC COUNT SEED |\n"
                    "       fbound log|log2 STRIDE | tables | pairs PATH\n");
    return 2;
}

/* Zeros, infinities, NaNs (quiet, signalling, with payloads), the ends of the subnormal
 * and normal ranges, 1, and every threshold the runtime tests, each with its four
 * nearest neighbours and both signs: checked against MPFR alone. */
static uint64_t check_specials32(const func32 *f) {
    static const uint32_t base[] = {
        0x00000000u, 0x00000001u, 0x007FFFFFu, 0x00800000u, 0x3F800000u, 0x7F7FFFFFu,
        0x7F800000u, 0x7F800001u, 0x7FC00000u, 0x7FFFFFFFu, 0x7FA00000u, 0x42B20000u,
        0x42D00000u, 0x42D20000u, 0x43000000u, 0x43160000u, 0x41A00000u, 0x4111999Au,
        0x41F00000u, 0x3F490FDAu, 0x31000000u, 0x42B17218u, 0x42CFF1B5u, 0x3F3504F3u,
        0x3F7F0000u, 0x3F808000u, 0x4B000000u, 0x5A800000u, 0x4C000000u, 0x33800000u};
    uint64_t bad = 0;
    for (size_t k = 0; k < sizeof base / sizeof base[0]; k++) {
        for (int d = -2; d <= 2; d++) {
            for (uint32_t sign = 0; sign <= 1; sign++) {
                uint32_t u = ((base[k] + (uint32_t)d) & 0x7FFFFFFFu) | sign << 31;
                float x = u2f(u), got = f->ours(x), want = mpfr_ref32(f, x);
                if (f2u(got) != f2u(want) && ++bad <= 20)
                    fprintf(stderr, "%s(%a = 0x%08x): got 0x%08x, want 0x%08x\n", f->name, x, u,
                            f2u(got), f2u(want));
            }
        }
    }
    return bad;
}

static int main32(int argc, char **argv) {
    static job jb;
    jb.f = find32(argv[2]);
    if (!jb.f) return usage();
    set_range32();
    jb.stride = 1;
    jb.array = getenv("CR_CHECK_ARRAY") != NULL;
    jb.differ = check_specials32(jb.f);
    if (strcmp(argv[1], "f32") == 0) {
        if (argc != 6) return usage();
        jb.first = strtoull(argv[3], NULL, 16);
        jb.last = strtoull(argv[4], NULL, 16);
        jb.threads = atoi(argv[5]);
        if (jb.last < jb.first || jb.last > 0xFFFFFFFFull) return usage();
        return run_jobs(&jb, worker32, "f32");
    }
    if (argc != 5) return usage();
    jb.log2n = atoi(argv[3]);
    jb.threads = atoi(argv[4]);
    if (jb.log2n < 1 || jb.log2n > 32) return usage();
    return run_jobs(&jb, worker32, "sample");
}

static int main64(int argc, char **argv) {
    const func64 *f = find64(argv[2]);
    if (!f) return usage();
    set_range64();
    if (strcmp(argv[1], "file") == 0) return argc == 4 ? check_file(f, argv[3]) : usage();
    if (strcmp(argv[1], "fast") == 0)
        return argc == 5 ? check_fast(f, strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10))
                         : usage();
    if (argc != 6) return usage();
    static job64 jb;
    jb.f = f;
    jb.count = strtoull(argv[3], NULL, 10);
    jb.seed = strtoull(argv[4], NULL, 10);
    jb.threads = atoi(argv[5]);
    int n = jb.threads < 1 ? 1 : jb.threads > 64 ? 64 : jb.threads;
    pthread_t t[64];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker64, &jb);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("f64 %s: %" PRIu64 " inputs, all decided by MPFR, %" PRIu64
           " differ; accurate path %" PRIu64 " times, %" PRIu64 " undecided; second stage %" PRIu64
           " times; %.2f s on %d threads\n",
           f->name, (uint64_t)jb.checked, (uint64_t)jb.differ, (uint64_t)jb.slow,
           (uint64_t)jb.undecided, (uint64_t)jb.second, secs, n);
    return jb.differ || jb.undecided ? 1 : 0;
}

static int dispatch(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "tables") == 0) return check_tables();
    if (argc == 4 && strcmp(argv[1], "fbound") == 0)
        return check_fbound32(argv[2], (uint32_t)strtoul(argv[3], NULL, 10));
    if (argc == 3 && strcmp(argv[1], "pairs") == 0) return check_pairs(argv[2]);
    if (argc < 3) return usage();
    if (strcmp(argv[1], "f32") == 0 || strcmp(argv[1], "sample") == 0) return main32(argc, argv);
    if (strcmp(argv[1], "f64") == 0 || strcmp(argv[1], "file") == 0 || strcmp(argv[1], "fast") == 0)
        return main64(argc, argv);
    return usage();
}

int main(int argc, char **argv) {
    int rc = dispatch(argc, argv);
    mpfr_free_cache();
    return rc;
}
