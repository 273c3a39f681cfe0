/* cr_vec_check.c: the array forms of the correctly rounded math (cairn_cr_array.h)
 * against the scalar functions of cairn_cr.h, bit for bit (the scalar functions are
 * checked against MPFR by cr_check.c; the array forms on a sample by cr_check too).
 *
 *   cr_vec_check sample FUNC LOG2N THREADS     the 32-bit patterns cut into 2^LOG2N strata,
 *                                              one random pattern from each
 *   cr_vec_check range FUNC FIRST LAST THREADS every pattern FIRST..LAST (hex)
 *   cr_vec_check kernel                        prints the kernel the array forms run
 *
 * FUNC: exp exp2 expm1 log log2 log1p tanh sigmoid sin cos. The kernel is the CPU's best
 * or CAIRN_CR_KERNEL's; CR_VEC_FORCE=HEXMASK sends the lanes of that mask to the scalar
 * fallback in every vector (cairn__cr_array_force). The inputs go through the array form
 * in blocks of 4096: most whole, every 8th in place (out = in), every 8th in pieces of 1
 * to 37 elements at odd offsets (the scalar tails). Prints one summary line: inputs,
 * differences, lanes sent to the fallback; exits 1 on any difference. */
#include "cairn_cr.h"
#include "cairn_cr_array.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct vfunc {
    const char *name;
    float (*scalar)(float);
    void (*array)(const float *, float *, size_t);
} vfunc;

static const vfunc FUNCS[] = {
    {"exp", cairn_cr_expf, cairn_cr_expf_array},
    {"exp2", cairn_cr_exp2f, cairn_cr_exp2f_array},
    {"expm1", cairn_cr_expm1f, cairn_cr_expm1f_array},
    {"log", cairn_cr_logf, cairn_cr_logf_array},
    {"log2", cairn_cr_log2f, cairn_cr_log2f_array},
    {"log1p", cairn_cr_log1pf, cairn_cr_log1pf_array},
    {"tanh", cairn_cr_tanhf, cairn_cr_tanhf_array},
    {"sigmoid", cairn_cr_sigmoidf, cairn_cr_sigmoidf_array},
    {"sin", cairn_cr_sinf, cairn_cr_sinf_array},
    {"cos", cairn_cr_cosf, cairn_cr_cosf_array},
};

enum { BLOCK = 4096 };

typedef struct job {
    const vfunc *f;
    uint64_t first, count;
    int log2n, threads;
    _Atomic uint64_t next, checked, differ, fallbacks;
} job;

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Input number i of the job: stratum i's pattern, or first + i. */
static uint32_t input(const job *jb, uint64_t i) {
    if (!jb->log2n) return (uint32_t)(jb->first + i);
    uint64_t s = i * 0x9E3779B97F4A7C15ull + (uint64_t)jb->log2n;
    uint64_t low = jb->log2n < 32 ? splitmix(&s) & ((1ull << (32 - jb->log2n)) - 1) : 0;
    return (uint32_t)((i << (32 - jb->log2n)) | low);
}

/* The array form over in[0, n) into out, as block number b says (see the top). */
static void apply(const vfunc *f, uint64_t b, float *in, float *out, size_t n) {
    if (b % 8 == 0) {
        memcpy(out, in, n * sizeof *in);
        f->array(out, out, n);
    } else if (b % 8 == 1) {
        for (size_t i = 0, len = 1; i < n; i += len, len = len % 37 + 1) {
            size_t k = len < n - i ? len : n - i;
            f->array(in + i, out + i, k);
        }
    } else {
        f->array(in, out, n);
    }
}

static void *worker(void *arg) {
    job *jb = arg;
    static _Thread_local float in[BLOCK], out[BLOCK];
    uint64_t done = 0, bad = 0, before = cairn__cr_array_fallbacks();
    for (;;) {
        uint64_t b = atomic_fetch_add(&jb->next, 1), lo = b * BLOCK;
        if (lo >= jb->count) break;
        size_t n = (size_t)(jb->count - lo < BLOCK ? jb->count - lo : BLOCK);
        for (size_t i = 0; i < n; i++) in[i] = cairn__f32_from_bits(input(jb, lo + i));
        apply(jb->f, b, in, out, n);
        for (size_t i = 0; i < n; i++) {
            uint32_t got = cairn__f32_bits(out[i]), want = cairn__f32_bits(jb->f->scalar(in[i]));
            if (got != want && atomic_fetch_add(&jb->differ, 1) < 20)
                fprintf(stderr, "%s(%a = 0x%08x): array 0x%08x, scalar 0x%08x\n", jb->f->name,
                        in[i], cairn__f32_bits(in[i]), got, want);
            bad += got != want;
        }
        done += n;
    }
    (void)bad;
    atomic_fetch_add(&jb->checked, done);
    atomic_fetch_add(&jb->fallbacks, cairn__cr_array_fallbacks() - before);
    return NULL;
}

static int run(job *jb, const char *what) {
    pthread_t t[64];
    int n = jb->threads < 1 ? 1 : jb->threads > 64 ? 64 : jb->threads;
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, worker, jb);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    printf("%s %s kernel %s force 0x%x: %" PRIu64 " inputs, %" PRIu64 " differ; fallback %" PRIu64
           " lanes\n",
           what, jb->f->name, cairn_cr_array_kernel(), cairn__cr_array_force, (uint64_t)jb->checked,
           (uint64_t)jb->differ, (uint64_t)jb->fallbacks);
    return jb->differ ? 1 : 0;
}

static int usage(void) {
    fprintf(stderr, "usage: cr_vec_check sample FUNC LOG2N THREADS | range FUNC FIRST LAST "
                    "THREADS | kernel\n");
    return 2;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "kernel") == 0) return puts(cairn_cr_array_kernel()) < 0;
    if (argc < 5) return usage();
    static job jb;
    for (size_t k = 0; k < sizeof FUNCS / sizeof FUNCS[0]; k++)
        if (strcmp(FUNCS[k].name, argv[2]) == 0) jb.f = &FUNCS[k];
    if (!jb.f) return usage();
    const char *force = getenv("CR_VEC_FORCE");
    if (force) cairn__cr_array_force = (unsigned)strtoul(force, NULL, 16);
    if (strcmp(argv[1], "sample") == 0 && argc == 5) {
        jb.log2n = atoi(argv[3]);
        jb.threads = atoi(argv[4]);
        if (jb.log2n < 1 || jb.log2n > 32) return usage();
        jb.count = 1ull << jb.log2n;
        return run(&jb, "sample");
    }
    if (strcmp(argv[1], "range") == 0 && argc == 6) {
        jb.first = strtoull(argv[3], NULL, 16);
        uint64_t last = strtoull(argv[4], NULL, 16);
        jb.threads = atoi(argv[5]);
        if (last < jb.first || last > 0xFFFFFFFFull) return usage();
        jb.count = last - jb.first + 1;
        return run(&jb, "range");
    }
    return usage();
}
