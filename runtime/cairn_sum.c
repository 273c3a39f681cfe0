/* cairn_sum.c: the exact float sum (see cairn_sum.h, docs/numerics.md).
 *
 * Everything that is not the inline fast path: the fixed-point integer, the slow path of
 * a term, the vectorised block kernel, merging, the one rounding, the pooled and plain
 * array entry points, and the ordered fold. Both formats share one implementation,
 * parameterised by a sum_format; they differ in the integer's width and unit.
 *
 * Strict floating point matters here as in the header: the kernels and the slow path
 * run CAIRN_SUM_TWO_STEP, which is only error-free with every + and - rounded on its
 * own (-ffp-contract=off -fno-fast-math; cairn_sum.h refuses -ffast-math). */
#include "cairn_sum.h"
#include "cairn_pool.h"
#include "cairn_trap.h"

#include <assert.h>
#include <math.h>
#include <string.h>

/* How one format's exact integer looks. */
typedef struct sum_format {
    unsigned limbs;      /* 64-bit limbs of the integer */
    unsigned skip;       /* 2^-1074 steps below the unit: 0 (f64), 1074 - 149 (f32) */
    unsigned mant_bits;  /* stored mantissa bits of the result: 52, 23 */
    unsigned exp_max;    /* biased exponent of infinity: 2047, 255 */
    unsigned sign_shift; /* 63, 31 */
} sum_format;

static const sum_format F64 = {CAIRN_SUM64_LIMBS, 0, 52, 2047, 63};
static const sum_format F32 = {CAIRN_SUM32_LIMBS, 1074 - 149, 23, 255, 31};

#define CHUNK        64    /* terms the kernel checks at once (a multiple of 8) */
#define SERIAL_BELOW 32768 /* cairn_sum_f64/f32: smaller arrays stay on the caller */
#define POOL_GRAIN   8192  /* and larger ones go to the pool in blocks of at least this */
#define POOL_TINY    64    /* cairn_sumNN_pooled: fewer terms run on the caller */

/* The integer holds any total exactly, so acc_add_at's wrap past the top limb is
 * harmless: 2^64 terms below 2^1024 (f64) or 2^128 (f32), in units of 2^-1074 or 2^-149,
 * and a sign bit. */
_Static_assert(CAIRN_SUM64_LIMBS * 64 >= 64 + 1024 + 1074 + 1, "f64 integer too narrow");
_Static_assert(CAIRN_SUM32_LIMBS * 64 >= 64 + 128 + 149 + 1, "f32 integer too narrow");
/* The kernel takes eight terms a step (two vectors of four), the padded tail needs 16 or
 * more, and the flags are the four CAIRN_SUM_F_* bits. */
_Static_assert(CAIRN_SUM_LANES == 8 && CHUNK % 8 == 0 && CHUNK >= 16, "chunk shape");
#define SUM_FLAGS_ALL (CAIRN_SUM_F_NAN | CAIRN_SUM_F_PINF | CAIRN_SUM_F_NINF | CAIRN_SUM_F_ACC)

/* ---- the fixed-point integer: acc = sum of units, two's complement ---------------- */

static void acc_touch(cairn_sum_state *st, uint64_t *acc, const sum_format *f) {
    if (!(st->flags & CAIRN_SUM_F_ACC)) {
        memset(acc, 0, f->limbs * sizeof *acc);
        st->flags |= CAIRN_SUM_F_ACC;
    }
}

/* acc[i..] += part (two limbs) or -= it; carries past the top limb wrap, which is
 * exact because the true total always fits (2^64 terms of at most 2^1024). */
static void acc_add_at(uint64_t *acc, unsigned n, unsigned i, const uint64_t part[2], int sub) {
    assert(i < n);
    uint64_t carry = 0;
    for (unsigned j = 0; i + j < n && (j < 2 || carry); j++) {
        uint64_t p = j < 2 ? part[j] : 0, a = acc[i + j], r;
        uint64_t c1, c2;
        if (sub) {
            c1 = __builtin_sub_overflow(a, p, &r);
            c2 = __builtin_sub_overflow(r, carry, &r);
        } else {
            c1 = __builtin_add_overflow(a, p, &r);
            c2 = __builtin_add_overflow(r, carry, &r);
        }
        acc[i + j] = r;
        carry = c1 | c2;
    }
}

/* acc += x exactly, for a finite double that is a whole number of units (every term,
 * leftover and expansion part of an f32 sum is a multiple of 2^-149). */
static void acc_add(cairn_sum_state *st, uint64_t *acc, const sum_format *f, double x) {
    assert(isfinite(x)); /* infinities and NaNs are flags, never integer */
    unsigned pos;        /* of mant's lowest bit, in 2^-1074 steps */
    uint64_t mant = cairn_sum_unpack(x, &pos);
    if (mant == 0) return;
    if (pos < f->skip) { /* drop low zero bits down to the unit */
        unsigned drop = f->skip - pos;
        if (drop >= 64 || (mant & ((1ull << drop) - 1)))
            cairn_trap("exact sum: a value below the accumulator's unit (internal error)");
        mant >>= drop;
        pos = 0;
    } else {
        pos -= f->skip;
    }
    unsigned limb = pos / 64, off = pos % 64;
    unsigned __int128 wide = (unsigned __int128)mant << off;
    uint64_t part[2] = {(uint64_t)wide, (uint64_t)(wide >> 64)};
    if (limb >= f->limbs || (limb + 1 == f->limbs && part[1]))
        cairn_trap("exact sum: a value above the accumulator's range (internal error)");
    acc_touch(st, acc, f);
    acc_add_at(acc, f->limbs, limb, part, x < 0); /* x is finite and not zero */
}

static void acc_add_acc(uint64_t *acc, const uint64_t *src, unsigned n) {
    uint64_t carry = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t r;
        uint64_t c1 = __builtin_add_overflow(acc[i], src[i], &r);
        uint64_t c2 = __builtin_add_overflow(r, carry, &r);
        acc[i] = r;
        carry = c1 | c2;
    }
}

/* `width` (<= 64) bits of a starting at bit pos. */
static uint64_t bits_at(const uint64_t *a, unsigned n, unsigned pos, unsigned width) {
    unsigned limb = pos / 64, off = pos % 64;
    assert(width >= 1 && width <= 64 && limb < n);
    uint64_t v = a[limb] >> off;
    if (off && limb + 1 < n) v |= a[limb + 1] << (64 - off);
    return width == 64 ? v : v & ((1ull << width) - 1);
}

static int any_bit_below(const uint64_t *a, unsigned pos) {
    for (unsigned i = 0; i < pos / 64; i++)
        if (a[i]) return 1;
    return pos % 64 && (a[pos / 64] & ((1ull << (pos % 64)) - 1));
}

/* The one rounding: the integer (destroyed) to the format's bits, nearest, ties to even,
 * straight from the integer. Returns 0 with *zero set when the integer is 0. */
static uint64_t acc_round(uint64_t *acc, const sum_format *f, int *zero) {
    unsigned n = f->limbs;
    uint64_t neg = acc[n - 1] >> 63;
    if (neg) { /* magnitude: -acc = ~acc + 1 */
        uint64_t one[2] = {1, 0};
        for (unsigned i = 0; i < n; i++) acc[i] = ~acc[i];
        acc_add_at(acc, n, 0, one, 0);
    }
    unsigned top = n;
    while (top > 0 && acc[top - 1] == 0) top--;
    *zero = top == 0;
    if (*zero) return 0;
    unsigned msb = (top - 1) * 64 + 63 - (unsigned)__builtin_clzll(acc[top - 1]);
    uint64_t out;
    if (msb <= f->mant_bits) {
        out = acc[0]; /* below 2^(p) units: subnormal or least binade, exact,
                                       and its encoding is the integer itself */
    } else {
        unsigned shift = msb - f->mant_bits;
        assert(shift >= 1); /* the rounding bit below the kept ones exists */
        uint64_t mant = bits_at(acc, n, shift, f->mant_bits + 1);
        int half = (int)bits_at(acc, n, shift - 1, 1);
        if (half && (any_bit_below(acc, shift - 1) || (mant & 1))) mant++;
        if (mant >> (f->mant_bits + 1)) { /* rounded up to the next binade */
            mant >>= 1;
            shift++;
        }
        if (shift + 1 >= f->exp_max) /* past largest finite + half an ulp */
            out = (uint64_t)f->exp_max << f->mant_bits;
        else /* biased exponent shift + 1, implicit bit */
            out = ((uint64_t)shift << f->mant_bits) + mant;
    }
    return out | neg << f->sign_shift;
}

/* ---- expansions ----------------------------------------------------------------- */

/* Expansion k += x (finite) exactly: the leftover of the second step goes to the
 * integer; if a sum would overflow, the expansion is left alone and x itself goes to
 * the integer. */
static void expansion_add(cairn_sum_state *st, uint64_t *acc, const sum_format *f, unsigned k,
                          double x) {
    assert(k < CAIRN_SUM_LANES && isfinite(x));
    CAIRN_SUM_TWO_STEP(double, st->hi[k], st->lo[k], x, a, b, e2);
    if (isfinite(a) && isfinite(b) && isfinite(e2)) {
        st->hi[k] = a;
        st->lo[k] = b;
        if (e2 != 0) acc_add(st, acc, f, e2);
    } else {
        acc_add(st, acc, f, x);
    }
}

/* A term the fast path refused: specials become flags, the rest is added exactly. */
static void term_slow(cairn_sum_state *st, uint64_t *acc, const sum_format *f, unsigned k,
                      double x) {
    assert(k < CAIRN_SUM_LANES);
    if (isnan(x)) st->flags |= CAIRN_SUM_F_NAN;
    else if (isinf(x)) st->flags |= x > 0 ? CAIRN_SUM_F_PINF : CAIRN_SUM_F_NINF;
    else expansion_add(st, acc, f, k, x);
}

void cairn_sum64_add_slow(cairn_sum64 *s, unsigned k, double x) {
    term_slow(&s->st, s->acc, &F64, k, x);
}
void cairn_sum32_add_slow(cairn_sum32 *s, unsigned k, double x) {
    term_slow(&s->st, s->acc, &F32, k, x);
}

static void state_init(cairn_sum_state *st) {
    for (int k = 0; k < CAIRN_SUM_LANES; k++) {
        st->hi[k] = -0.0; /* see cairn_sum_state: tracks "every term -0.0" */
        st->lo[k] = 0.0;
    }
    st->count = 0;
    st->flags = 0; /* the integer stays unwritten until first used */
}

void cairn_sum64_init(cairn_sum64 *s) { state_init(&s->st); }
void cairn_sum32_init(cairn_sum32 *s) { state_init(&s->st); }

/* Expansion (hi, lo) joins expansion k: hi as a term (so the -0.0 tracking carries
 * over), lo as a plain value. An expansion no term reached (-0.0, +0.0) is skipped:
 * joining it would change nothing. */
static void expansion_join(cairn_sum_state *st, uint64_t *acc, const sum_format *f, unsigned k,
                           double hi, double lo) {
    uint64_t hibits;
    memcpy(&hibits, &hi, sizeof hibits);
    if (hibits == 1ull << 63 && lo == 0) return;
    expansion_add(st, acc, f, k, hi);
    if (lo != 0) expansion_add(st, acc, f, k, lo);
}

/* count += more, or a trap: the integer is only wide enough for 2^64 terms (see
 * acc_add_at), so past 2^64 - 1 a merge would wrap the count (and later the integer) and
 * round to a wrong finite number. Only merges and huge blocks get there: single adds
 * would need 2^64 calls. */
static void count_terms(cairn_sum_state *st, uint64_t more) {
    if (__builtin_add_overflow(st->count, more, &st->count))
        cairn_trap("exact sum: more than 2^64 - 1 terms in one sum, past the range its "
                   "accumulator is exact for (split the sum)");
}

/* dst += src, expansion by expansion, integer by integer. */
static void merge_into(cairn_sum_state *dst, uint64_t *dacc, const cairn_sum_state *src,
                       const uint64_t *sacc, const sum_format *f) {
    assert((dst->flags & ~SUM_FLAGS_ALL) == 0 && (src->flags & ~SUM_FLAGS_ALL) == 0);
    if (src->count == 0) return;
    count_terms(dst, src->count);
    for (unsigned k = 0; k < CAIRN_SUM_LANES; k++)
        expansion_join(dst, dacc, f, k, src->hi[k], src->lo[k]);
    if (src->flags & CAIRN_SUM_F_ACC) {
        acc_touch(dst, dacc, f);
        acc_add_acc(dacc, sacc, f->limbs);
    }
    dst->flags |= src->flags & (CAIRN_SUM_F_NAN | CAIRN_SUM_F_PINF | CAIRN_SUM_F_NINF);
}

void cairn_sum64_merge(cairn_sum64 *d, const cairn_sum64 *s) {
    merge_into(&d->st, d->acc, &s->st, s->acc, &F64);
}
void cairn_sum32_merge(cairn_sum32 *d, const cairn_sum32 *s) {
    merge_into(&d->st, d->acc, &s->st, s->acc, &F32);
}

/* ---- rounding ------------------------------------------------------------------- */

typedef struct sum_scratch {
    cairn_sum_state st;
    uint64_t acc[CAIRN_SUM64_LIMBS];
} sum_scratch;

/* The signed zero an exactly-zero total gives: -0.0 when there were terms and every
 * one was -0.0 (expansion 0, all lanes folded in, is then still -0.0), else +0.0. */
static uint64_t zero_bits(double hi, uint64_t count, const sum_format *f) {
    uint64_t hibits;
    memcpy(&hibits, &hi, sizeof hibits);
    return count > 0 && hibits == 1ull << 63 ? 1ull << f->sign_shift : 0;
}

/* When the whole total is hi + lo (no integer): its bits, or 0 where the integer must
 * decide (cairn_sum__pair64/32, the header's, say how). */
static int round_pair(double hi, double lo, uint64_t count, const sum_format *f, uint64_t *out) {
    if (f == &F64) {
        double d;
        cairn_sum__pair64(hi, lo, count > 0, &d);
        memcpy(out, &d, sizeof d);
        return 1;
    }
    float single;
    uint32_t b32;
    if (!cairn_sum__pair32(hi, lo, count > 0, &single)) return 0;
    memcpy(&b32, &single, sizeof b32);
    *out = b32;
    return 1;
}

static int lanes_beyond_first_unused(const cairn_sum_state *st) {
    for (unsigned k = 1; k < CAIRN_SUM_LANES; k++) {
        uint64_t hibits;
        memcpy(&hibits, &st->hi[k], sizeof hibits);
        if (hibits != 1ull << 63 || st->lo[k] != 0) return 0;
    }
    return 1;
}

/* The result's bits: specials by the spec's table, else the exact total rounded once. */
static uint64_t round_bits(const cairn_sum_state *st, const uint64_t *acc, const sum_format *f) {
    uint64_t sign = 1ull << f->sign_shift, inf = (uint64_t)f->exp_max << f->mant_bits, out;
    uint32_t fl = st->flags;
    assert((fl & ~SUM_FLAGS_ALL) == 0);
    if ((fl & CAIRN_SUM_F_NAN) || ((fl & CAIRN_SUM_F_PINF) && (fl & CAIRN_SUM_F_NINF)))
        return inf | 1ull << (f->mant_bits - 1); /* the canonical quiet NaN */
    if (fl & (CAIRN_SUM_F_PINF | CAIRN_SUM_F_NINF)) return fl & CAIRN_SUM_F_NINF ? sign | inf : inf;
    if (!(fl & CAIRN_SUM_F_ACC) && lanes_beyond_first_unused(st) &&
        round_pair(st->hi[0], st->lo[0], st->count, f, &out))
        return out; /* a short sum: nothing to fold */

    sum_scratch t; /* fold the expansions into expansion 0 */
    t.st = *st;
    t.st.flags = 0;
    for (unsigned step = CAIRN_SUM_LANES / 2; step; step /= 2)
        for (unsigned k = 0; k < step; k++)
            expansion_join(&t.st, t.acc, f, k, t.st.hi[k + step], t.st.lo[k + step]);
    if (fl & CAIRN_SUM_F_ACC) {
        acc_touch(&t.st, t.acc, f);
        acc_add_acc(t.acc, acc, f->limbs);
    }
    double hi = t.st.hi[0], lo = t.st.lo[0];
    if (!(t.st.flags & CAIRN_SUM_F_ACC) && round_pair(hi, lo, st->count, f, &out)) return out;
    acc_add(&t.st, t.acc, f, hi); /* else: round from the integer */
    acc_add(&t.st, t.acc, f, lo);
    int is_zero;
    out = acc_round(t.acc, f, &is_zero);
    return is_zero ? zero_bits(hi, st->count, f) : out;
}

double cairn_sum64_round(const cairn_sum64 *s) {
    uint64_t bits = round_bits(&s->st, s->acc, &F64);
    double out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

float cairn_sum32_round(const cairn_sum32 *s) {
    uint32_t bits = (uint32_t)round_bits(&s->st, s->acc, &F32);
    float out;
    memcpy(&out, &bits, sizeof out);
    return out;
}

/* ---- blocks: the vectorised kernel ---------------------------------------------- */

/* Four expansions per vector, eight per accumulator: term i of a block goes to
 * expansion i % 8. GCC and clang lower these vectors to SSE2 pairs, or to AVX2 in the
 * clone below when the CPU has it; either way each operation is one rounded IEEE
 * operation per lane, so the clone changes speed, never bits. */
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

#define KERNEL_STEP(H, L, X, BAD)                                                                  \
    do {                                                                                           \
        CAIRN_SUM_TWO_STEP(v4d, H, L, X, a_, b_, e2_);                                             \
        H = a_;                                                                                    \
        L = b_;                                                                                    \
        BAD |= e2_ != zero;                                                                        \
    } while (0)

/* Add whole chunks of CHUNK terms while every step is clean; at the first chunk with a
 * leftover, infinity, NaN or overflow, restore the state from before that chunk and
 * return how many chunks went in (the caller redoes that chunk term by term). */
#define DEFINE_KERNEL(NAME, T, LOAD, ATTR)                                                         \
    ATTR static size_t NAME(double *hi, double *lo, const T *x, size_t nchunks) {                  \
        v4d h0, h1, l0, l1, zero = {0, 0, 0, 0};                                                   \
        memcpy(&h0, hi, 32), memcpy(&h1, hi + 4, 32);                                              \
        memcpy(&l0, lo, 32), memcpy(&l1, lo + 4, 32);                                              \
        size_t c = 0;                                                                              \
        for (; c < nchunks; c++) {                                                                 \
            v4d s0 = h0, s1 = h1, t0 = l0, t1 = l1;                                                \
            v4i bad = {0, 0, 0, 0};                                                                \
            const T *p = x + c * CHUNK;                                                            \
            for (int j = 0; j < CHUNK; j += 8) {                                                   \
                v4d x0, x1;                                                                        \
                LOAD(x0, p + j);                                                                   \
                LOAD(x1, p + j + 4);                                                               \
                KERNEL_STEP(h0, l0, x0, bad);                                                      \
                KERNEL_STEP(h1, l1, x1, bad);                                                      \
            }                                                                                      \
            if (bad[0] | bad[1] | bad[2] | bad[3]) {                                               \
                h0 = s0, h1 = s1, l0 = t0, l1 = t1;                                                \
                break;                                                                             \
            }                                                                                      \
        }                                                                                          \
        memcpy(hi, &h0, 32), memcpy(hi + 4, &h1, 32);                                              \
        memcpy(lo, &l0, 32), memcpy(lo + 4, &l1, 32);                                              \
        return c;                                                                                  \
    }

#define LOAD_F64(V, P) memcpy(&(V), (P), sizeof(V))
#define LOAD_F32(V, P)                                                                             \
    do {                                                                                           \
        v4f narrow_;                                                                               \
        memcpy(&narrow_, (P), sizeof narrow_);                                                     \
        V = __builtin_convertvector(narrow_, v4d); /* exact widening */                            \
    } while (0)

DEFINE_KERNEL(kernel_f64, double, LOAD_F64, )
DEFINE_KERNEL(kernel_f32, float, LOAD_F32, )

#if defined(__x86_64__) && !defined(CAIRN_SUM_NO_AVX2)
#include <immintrin.h>
#define AVX2 __attribute__((target("avx2")))
/* One vcvtps2pd ymm: GCC lowers the generic conversion as two xmm halves. */
#define LOAD_F32_AVX2(V, P) V = (v4d)_mm256_cvtps_pd(_mm_loadu_ps(P))
DEFINE_KERNEL(kernel_f64_avx2, double, LOAD_F64, AVX2)
DEFINE_KERNEL(kernel_f32_avx2, float, LOAD_F32_AVX2, AVX2)
static int have_avx2(void) { return __builtin_cpu_supports("avx2"); }
#else
#define kernel_f64_avx2 kernel_f64
#define kernel_f32_avx2 kernel_f32
static int have_avx2(void) { return 0; }
#endif

int cairn_sum_use_avx2(void) {
    static int known = -1; /* a benign race: every thread stores the same value */
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (v < 0) {
        v = have_avx2();
        __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    }
    return v;
}

static size_t chunks_f64(double *h, double *l, const double *x, size_t n) {
    return have_avx2() ? kernel_f64_avx2(h, l, x, n) : kernel_f64(h, l, x, n);
}
static size_t chunks_f32(double *h, double *l, const float *x, size_t n) {
    return have_avx2() ? kernel_f32_avx2(h, l, x, n) : kernel_f32(h, l, x, n);
}

/* One term the scalar way, into expansion k. */
static inline void term_add(cairn_sum_state *st, uint64_t *acc, const sum_format *f, unsigned k,
                            double x) {
    if (cairn_sum__step(st, k, x)) term_slow(st, acc, f, k, x);
}

/* Terms x[0..n) into the expansion (*hi, *lo) kept in registers, up to the first term
 * whose step is not clean; returns how many went in. Through memory, each term would
 * wait on the store of the one before. */
#define DEFINE_RUN(NAME, T)                                                                        \
    static inline __attribute__((always_inline)) size_t NAME(double *hi, double *lo, const T *x,   \
                                                             size_t n) {                           \
        double h = *hi, l = *lo;                                                                   \
        size_t i = 0;                                                                              \
        for (; i < n; i++) {                                                                       \
            CAIRN_SUM_TWO_STEP(double, h, l, (double)x[i], a, b, e2);                              \
            if (__builtin_expect(e2 != 0, 0)) break;                                               \
            h = a, l = b;                                                                          \
        }                                                                                          \
        *hi = h, *lo = l;                                                                          \
        return i;                                                                                  \
    }

DEFINE_RUN(run_f64, double)
DEFINE_RUN(run_f32, float)

/* A short block or tail into expansion 0 (so that round has little to fold). */
#define DEFINE_SHORT(NAME, T, RUN, FMT)                                                            \
    static void NAME(cairn_sum_state *st, uint64_t *acc, const T *x, size_t n) {                   \
        for (size_t i = RUN(&st->hi[0], &st->lo[0], x, n); i < n;                                  \
             i += 1 + RUN(&st->hi[0], &st->lo[0], x + i + 1, n - i - 1))                           \
            term_slow(st, acc, FMT, 0, (double)x[i]);                                              \
    }

DEFINE_SHORT(short_f64, double, run_f64, &F64)
DEFINE_SHORT(short_f32, float, run_f32, &F32)

/* A block: whole chunks through the kernel (a refused chunk term by term); a tail of
 * 16 or more as one more chunk padded with -0.0, which changes no expansion (x + -0.0
 * is x, -0.0 included, with no leftover); a shorter tail, or a tiny block, into
 * expansion 0 (so that round has little to fold). */
#define DEFINE_ADD_BLOCK(NAME, SUMT, T, CHUNKS, SHORT, FMT)                                        \
    void NAME(SUMT *s, const T *x, size_t n) {                                                     \
        size_t full = n / CHUNK * CHUNK, i = 0;                                                    \
        while (i < full) {                                                                         \
            i += CHUNKS(s->st.hi, s->st.lo, x + i, (full - i) / CHUNK) * CHUNK;                    \
            assert(i <= full && i % CHUNK == 0); /* whole chunks, term i in expansion i % 8 */     \
            for (size_t end = i < full ? i + CHUNK : i; i < end; i++)                              \
                term_add(&s->st, s->acc, FMT, (unsigned)(i % CAIRN_SUM_LANES), x[i]);              \
        }                                                                                          \
        assert(i == full && n - i < CHUNK); /* the tail fits one padded chunk */                   \
        if (n - i >= 16) {                                                                         \
            T pad[CHUNK];                                                                          \
            for (size_t j = 0; j < CHUNK; j++) pad[j] = i + j < n ? x[i + j] : (T)-0.0;            \
            if (CHUNKS(s->st.hi, s->st.lo, pad, 1) == 1) i = n;                                    \
        }                                                                                          \
        SHORT(&s->st, s->acc, x + i, n - i);                                                       \
        count_terms(&s->st, n);                                                                    \
    }

DEFINE_ADD_BLOCK(cairn_sum64_add_block, cairn_sum64, double, chunks_f64, short_f64, &F64)
DEFINE_ADD_BLOCK(cairn_sum32_add_block, cairn_sum32, float, chunks_f32, short_f32, &F32)

/* ---- on the pool ---------------------------------------------------------------- */

/* One accumulator per pool worker on the caller's stack; blocks add into their
 * worker's; the used ones are merged in worker order and the total rounded once. */
#define DEFINE_POOLED(NAME, SUMT, RT, BLOCKT, PREFIX)                                              \
    typedef struct NAME##_job {                                                                    \
        BLOCKT block;                                                                              \
        void *ctx;                                                                                 \
        SUMT *accs;                                                                                \
    } NAME##_job;                                                                                  \
    static void NAME##_task(void *ctx, size_t begin, size_t end, unsigned worker) {                \
        NAME##_job *job = ctx;                                                                     \
        job->block(job->ctx, begin, end, &job->accs[worker]);                                      \
    }                                                                                              \
    RT NAME(size_t n, size_t grain, BLOCKT block, void *ctx) {                                     \
        if (n < POOL_TINY) { /* not worth a region: one block, right here */                       \
            SUMT one;                                                                              \
            PREFIX##_init(&one);                                                                   \
            block(ctx, 0, n, &one);                                                                \
            return PREFIX##_round(&one);                                                           \
        }                                                                                          \
        SUMT accs[CAIRN_POOL_MAX_WIDTH];                                                           \
        unsigned width = cairn_pool_width();                                                       \
        assert(width >= 1 && width <= CAIRN_POOL_MAX_WIDTH); /* accs[] holds one per worker */     \
        for (unsigned w = 0; w < width; w++) PREFIX##_init(&accs[w]);                              \
        NAME##_job job = {block, ctx, accs};                                                       \
        cairn_pool_run(n, grain, NAME##_task, &job);                                               \
        for (unsigned w = 1; w < width; w++) PREFIX##_merge(&accs[0], &accs[w]);                   \
        return PREFIX##_round(&accs[0]);                                                           \
    }

DEFINE_POOLED(cairn_sum64_pooled, cairn_sum64, double, cairn_sum64_block_fn, cairn_sum64)
DEFINE_POOLED(cairn_sum32_pooled, cairn_sum32, float, cairn_sum32_block_fn, cairn_sum32)

/* Plain arrays: small ones on the calling thread, larger ones in pool blocks. */
typedef struct array_ctx {
    const void *x;
} array_ctx;

static void block_f64(void *ctx, size_t b, size_t e, cairn_sum64 *acc) {
    cairn_sum64_add_block(acc, (const double *)((array_ctx *)ctx)->x + b, e - b);
}
static void block_f32(void *ctx, size_t b, size_t e, cairn_sum32 *acc) {
    cairn_sum32_add_block(acc, (const float *)((array_ctx *)ctx)->x + b, e - b);
}

static size_t array_grain(size_t n) {
    size_t g = n / (4 * (size_t)cairn_pool_width());
    return g < POOL_GRAIN ? POOL_GRAIN : g;
}

/* A tiny array: the header's tiny path over its elements. */
static inline __attribute__((always_inline)) double elem_f64(void *x, size_t k) {
    return ((const double *)x)[k];
}
static inline __attribute__((always_inline)) float elem_f32(void *x, size_t k) {
    return ((const float *)x)[k];
}
CAIRN_SUM__TINY(tiny_f64, elem_f64)
CAIRN_SUM__TINY(tiny_f32, elem_f32)
CAIRN_SUM__TINY32(quick_f32, elem_f32)
static inline int quick_f64(void *x, size_t n, double *out) { /* no quicker exact fold */
    (void)x, (void)n, (void)out;
    return 0;
}

/* A tiny array: for f32 first its exact double fold, then the joined expansion, rounded
 * straight when every step was clean (no state, no folding); else the general way. */
#define DEFINE_ARRAY_SUM(NAME, SUMT, T, P, W, QUICK, TINYSUM, BLOCK)                               \
    T NAME(const T *x, size_t n) {                                                                 \
        array_ctx ctx = {x};                                                                       \
        double hi, lo;                                                                             \
        T out;                                                                                     \
        if (n - 1 < CAIRN_SUM_TINY - 1 &&                                                          \
            (QUICK((void *)x, n, &out) ||                                                          \
             (TINYSUM((void *)x, n, &hi, &lo) && cairn_sum__pair##W(hi, lo, 1, &out))))            \
            return out;                                                                            \
        if (n < SERIAL_BELOW) {                                                                    \
            SUMT s;                                                                                \
            P##_init(&s);                                                                          \
            P##_add_block(&s, x, n);                                                               \
            return P##_round(&s);                                                                  \
        }                                                                                          \
        return P##_pooled(n, array_grain(n), BLOCK, &ctx);                                         \
    }

DEFINE_ARRAY_SUM(cairn_sum_f64, cairn_sum64, double, cairn_sum64, 64, quick_f64, tiny_f64,
                 block_f64)
DEFINE_ARRAY_SUM(cairn_sum_f32, cairn_sum32, float, cairn_sum32, 32, quick_f32, tiny_f32, block_f32)

/* ---- the ordered fold of `reduce + for` ----------------------------------------- */

double cairn_fold_f64(const double *x, size_t n) {
    if (n == 0) return 0.0;
    double s = x[0];
    for (size_t i = 1; i < n; i++) s += x[i]; /* each partial sum rounded, in written order */
    return s;
}

float cairn_fold_f32(const float *x, size_t n) {
    if (n == 0) return 0.0f;
    float s = x[0];
    for (size_t i = 1; i < n; i++) s += x[i];
    return s;
}
