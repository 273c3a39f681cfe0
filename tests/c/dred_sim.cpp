/* dred_sim.cpp: the GPU kernels of device reductions and scans (runtime/cairn_dred_kernels.h)
 * run on the host, for tests/device/test_dred_sim.py, where no GPU is lent.
 *
 * The kernels are compiled as they are, with stand-ins for what CUDA gives them: each
 * block's threads are std::threads (blocks one after another, so a kernel's __shared__
 * variables, made static here, belong to the block that runs), __syncthreads is a
 * barrier of the block's threads, a shuffle is a barrier of the warp's 32 threads around
 * an exchange buffer, and atomics are __atomic builtins. So the kernels' real orders of
 * combination, slices and carries run; only the memory model is the host's.
 *
 *   dred_sim  < cases
 * Each line: "sum f32|f64 BLOCKS THREADS N SEED KIND" (the exact device sum of N terms
 * made from SEED, KIND wide|special|cancel: printed with cairn_sum_fNN's bits), or
 * "red OP TYPE BLOCKS N SEED" / "scan OP TYPE BLOCKS N SEED" (an integer reduction or
 * scan over N terms: the device's answer and a plain index-order fold's, which must be
 * equal; OP fmin or fmax with TYPE f32 or f64, a float min or max, bit for bit; a scan
 * whose fold in index order would trap says "expect-trap", and the device must then
 * trap). Output: one line a case, "ok" or what differs. */
#include <barrier>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

/* ---- the stand-ins ---------------------------------------------------------------- */

#define __global__
#define __device__
#define __shared__   static
#define __noinline__ __attribute__((noinline))

struct sim_dim {
    unsigned x, y, z;
};
static thread_local sim_dim threadIdx, blockIdx;
static sim_dim blockDim, gridDim;

static std::barrier<> *sim_block_barrier;
static std::vector<std::unique_ptr<std::barrier<>>> sim_warp_barriers;
static unsigned char sim_exchange[1024][64]; /* a thread's shuffled bytes */

static void __syncthreads() { sim_block_barrier->arrive_and_wait(); }

template <typename T>
static T cairn_shfl_idx(T v, unsigned src) {
    static_assert(sizeof(T) <= 64, "a shuffled value fits the exchange slot");
    unsigned me = threadIdx.x, warp = me / 32;
    std::memcpy(sim_exchange[me], &v, sizeof v);
    sim_warp_barriers[warp]->arrive_and_wait();
    std::memcpy(&v, sim_exchange[warp * 32 + src % 32], sizeof v);
    sim_warp_barriers[warp]->arrive_and_wait();
    return v;
}

static unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static unsigned atomicOr(unsigned *p, unsigned v) {
    return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}

#include "cairn_dred_kernels.h"

/* kernel<<<blocks, threads>>>(...): each block's threads at once, blocks in turn. */
template <typename F>
static void sim_launch(unsigned blocks, unsigned threads, F kernel) {
    blockDim = {threads, 1, 1};
    gridDim = {blocks, 1, 1};
    for (unsigned b = 0; b < blocks; b++) {
        std::barrier<> block(threads);
        sim_block_barrier = &block;
        sim_warp_barriers.clear();
        for (unsigned w = 0; w < threads / 32; w++)
            sim_warp_barriers.emplace_back(new std::barrier<>(32));
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; t++)
            pool.emplace_back([=] {
                threadIdx = {t, 0, 0};
                blockIdx = {b, 0, 0};
                kernel();
            });
        for (auto &th : pool) th.join();
    }
}

/* ---- terms ------------------------------------------------------------------------ */

static uint64_t sim_rng(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

template <typename T>
struct sim_term {
    const T *x;
    T operator()(uint64_t k) const { return x[k]; }
};

/* ---- the exact sum ---------------------------------------------------------------- */

template <typename F, int DIGITS, unsigned SKIP>
static F sim_dsum(const std::vector<F> &x, unsigned blocks, unsigned threads) {
    std::vector<cairn_dsum_record> recs(blocks + 1);
    sim_term<F> term{x.data()};
    uint64_t n = x.size();
    cairn_dsum_record *r = recs.data();
    sim_launch(blocks, threads, [=] { cairn_dsum_kernel<DIGITS, SKIP>(term, n, r); });
    sim_launch(1, 128, [=] { cairn_dsum_merge_kernel<DIGITS>(r, blocks, r + blocks); });
    if (DIGITS == CAIRN_DSUM64_DIGITS) return (F)cairn_dsum64_round(&recs[blocks]);
    return (F)cairn_dsum32_round(&recs[blocks]);
}

template <typename F, typename B>
static std::vector<F> sim_terms(uint64_t n, uint64_t seed, const std::string &kind) {
    std::vector<F> x(n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t s = seed ^ (kind == "cancel" ? k / 2 : k) * 0x2545f4914f6cdd1dull;
        uint64_t r = sim_rng(&s), r2 = sim_rng(&s);
        B bits;
        if (sizeof(F) == 8)
            bits = (B)((r >> 12) | (uint64_t)((r2 % 2000) + 1) << 52 | (r2 >> 63) << 63);
        else bits = (B)((r >> 41) | (uint64_t)((r2 % 240) + 1) << 23 | (r2 >> 63) << 31);
        if (kind == "cancel" && k % 2) bits ^= (B)1 << (8 * sizeof(B) - 1);
        if (kind == "special" && r2 % 97 == 0) /* subnormals, -0.0, infinities, a NaN */
            bits = (B)(r2 % 4 == 0   ? (B)1 << (8 * sizeof(B) - 1)
                       : r2 % 4 == 1 ? r % 1000
                       : r2 % 4 == 2 ? (sizeof(F) == 8 ? 0x7ff0000000000000ull : 0x7f800000u)
                                     : (sizeof(F) == 8 ? 0x7ff8000000000123ull : 0x7fc00123u));
        std::memcpy(&x[k], &bits, sizeof bits);
    }
    return x;
}

static void sim_sum_case(const char *fmt, unsigned blocks, unsigned threads, uint64_t n,
                         uint64_t seed, const std::string &kind) {
    uint64_t want, got;
    if (!strcmp(fmt, "f64")) {
        auto x = sim_terms<double, uint64_t>(n, seed, kind);
        double h = cairn_sum_f64(x.data(), n),
               d = sim_dsum<double, CAIRN_DSUM64_DIGITS, 0>(x, blocks, threads);
        std::memcpy(&want, &h, 8), std::memcpy(&got, &d, 8);
    } else {
        auto x = sim_terms<float, uint32_t>(n, seed, kind);
        float h = cairn_sum_f32(x.data(), n),
              d = sim_dsum<float, CAIRN_DSUM32_DIGITS, 925>(x, blocks, threads);
        uint32_t a, b;
        std::memcpy(&a, &h, 4), std::memcpy(&b, &d, 4);
        want = a, got = b;
    }
    if (want == got) std::printf("ok\n");
    else
        std::printf("sum %s %s: device %" PRIx64 ", host %" PRIx64 "\n", fmt, kind.c_str(), got,
                    want);
}

/* ---- integer reductions and scans --------------------------------------------------- */

template <typename Op>
static bool sim_same(const typename Op::Acc &a, const typename Op::Acc &b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}
template <>
bool sim_same<cairn_red_mul<int32_t>>(const cairn_prod &a, const cairn_prod &b) {
    return a.mag == b.mag && a.neg == b.neg && a.zero == b.zero && a.neg1_tail == b.neg1_tail;
}
template <>
bool sim_same<cairn_red_mul<uint8_t>>(const cairn_prod &a, const cairn_prod &b) {
    return a.mag == b.mag && a.neg == b.neg && a.zero == b.zero && a.neg1_tail == b.neg1_tail;
}

/* Factors and terms: * gets 1, -1, 2 and rare zeros and big ones (summaries that trap
 * and that do not); the rest spread values of the type. */
template <typename T>
static std::vector<T> sim_ints(uint64_t n, uint64_t seed, bool product) {
    std::vector<T> x(n);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t s = seed ^ k * 0x2545f4914f6cdd1dull, r = sim_rng(&s);
        if (product) {
            int pick = (int)(r % 1000);
            x[k] = pick < 3                     ? (T)0
                   : pick < 6                   ? (T)(r >> 20)
                   : pick < 400 && (T)-1 < (T)0 ? (T)-1
                   : pick < 420                 ? (T)2
                                                : (T)1;
        } else {
            x[k] = (T)(r >> 7);
        }
    }
    return x;
}

template <typename Op, typename T>
static void sim_red_case(const char *name, unsigned blocks, uint64_t n, uint64_t seed) {
    typedef typename Op::Acc Acc;
    auto x = sim_ints<T>(n, seed, !strcmp(name, "mul"));
    std::vector<Acc> parts(blocks + 1);
    sim_term<T> term{x.data()};
    Acc *p = parts.data();
    sim_launch(blocks, 256, [=] { cairn_dred_kernel<Op, T>(term, n, p); });
    sim_launch(1, 256, [=] { cairn_dred_finish<Op>(p, blocks, p + blocks); });
    Acc fold = Op::identity();
    for (uint64_t k = 0; k < n; k++) fold = Op::take(fold, x[k]);
    std::printf(sim_same<Op>(parts[blocks], fold) ? "ok\n" : "red %s: the device's differs\n",
                name);
}

template <typename Op, typename T>
static void sim_scan_case(const char *name, unsigned blocks, uint64_t n, uint64_t seed) {
    typedef typename Op::Acc Acc;
    auto x = sim_ints<T>(n, seed, !strcmp(name, "mul"));
    if (!strcmp(name, "add")) /* prefixes that stay in range: small terms */
        for (auto &v : x) v = (T)(v % 1000);
    /* where a prefix of the fold in index order leaves the type, the device must trap too
     * (this process then aborts after saying so) */
    Acc check = Op::identity();
    bool traps = false;
    for (uint64_t k = 0; k < n && !traps; k++) {
        check = Op::take(check, x[k]);
        if constexpr (std::is_same<Acc, cairn_prod>::value)
            traps = cairn_prod_traps(&check, 8 * (int)sizeof(T), (T)-1 < (T)0);
        else if constexpr (!std::is_same<Acc, T>::value) traps = (Acc)(T)check != check;
    }
    if (traps) {
        std::printf("expect-trap\n");
        std::fflush(stdout);
    }
    std::vector<Acc> parts(blocks);
    std::vector<T> y(n), out(n);
    sim_term<T> term{x.data()};
    Acc *p = parts.data();
    T *yp = y.data(), *op = out.data();
    cairn_loc at = {"dred_sim", 1, 1};
    sim_launch(blocks, 256, [=] { cairn_dscan_totals<Op, T>(term, n, yp, p); });
    sim_launch(1, 1, [=] { cairn_dscan_offsets<Op>(p, blocks); });
    sim_launch(blocks, 256, [=] { cairn_dscan_write<Op, T>(yp, n, p, op, at); });
    if (traps) {
        std::printf("no trap\n");
        return;
    }
    Acc fold = Op::identity();
    for (uint64_t k = 0; k < n; k++) {
        fold = Op::take(fold, x[k]);
        if (out[k] != cairn_dscan_value<T>(fold, at)) {
            std::printf("scan %s: element %" PRIu64 " differs\n", name, k);
            return;
        }
    }
    std::printf("ok\n");
}

/* Float min and max: terms of every kind (finite of both signs, subnormals, +-0.0, +-inf,
 * and in one seed of three a NaN with a payload), the tree's bits against the fold's. */
template <typename F, typename B>
static std::vector<F> sim_floats(uint64_t n, uint64_t seed) {
    std::vector<F> x(n);
    const int top = 8 * (int)sizeof(B) - 1;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t s = seed ^ k * 0x2545f4914f6cdd1dull, r = sim_rng(&s);
        B bits = (B)(r >> (64 - 8 * sizeof(B)));
        switch (r % 64) {
        case 0: bits = 0; break;                /* +0.0 */
        case 1: bits = (B)((B)1 << top); break; /* -0.0 */
        case 2: bits = (B)(r % 5 + 1); break;   /* subnormal */
        case 3: bits = (B)(sizeof(B) == 8 ? 0x7ff0000000000000ull : 0x7f800000u); break;
        case 4: bits = (B)(sizeof(B) == 8 ? 0xfff0000000000000ull : 0xff800000u); break;
        default: /* finite: no NaN but where asked */
            if (sizeof(B) == 8)
                bits = (B)((bits & ~(0x7ffull << 52)) | (uint64_t)(r % 2046 + 1) << 52);
            else bits = (B)((bits & ~(0xffu << 23)) | (uint32_t)(r % 254 + 1) << 23);
        }
        if (seed % 3 == 0 && k == n / 2) /* one NaN with a payload, mid-range */
            bits = (B)(sizeof(B) == 8 ? 0xfff8000000000123ull : 0xffc00123u);
        std::memcpy(&x[k], &bits, sizeof bits);
    }
    return x;
}

template <typename Op, typename F, typename B>
static void sim_float_case(const char *name, unsigned blocks, uint64_t n, uint64_t seed) {
    auto x = sim_floats<F, B>(n, seed);
    std::vector<F> parts(blocks + 1);
    sim_term<F> term{x.data()};
    F *p = parts.data();
    sim_launch(blocks, 256, [=] { cairn_dred_kernel<Op, F>(term, n, p); });
    sim_launch(1, 256, [=] { cairn_dred_finish<Op>(p, blocks, p + blocks); });
    F fold = Op::identity();
    for (uint64_t k = 0; k < n; k++) fold = Op::take(fold, x[k]);
    B want, got;
    std::memcpy(&want, &fold, sizeof want), std::memcpy(&got, &parts[blocks], sizeof got);
    if (want == got) std::printf("ok\n");
    else
        std::printf("red %s: device %" PRIx64 ", fold %" PRIx64 "\n", name, (uint64_t)got,
                    (uint64_t)want);
}

static void sim_fminmax(const char *op, const char *type, unsigned blocks, uint64_t n,
                        uint64_t seed) {
    bool f64 = !strcmp(type, "f64");
    if (!strcmp(op, "fmin") && f64)
        sim_float_case<cairn_red_fmin<double>, double, uint64_t>(op, blocks, n, seed);
    else if (!strcmp(op, "fmin"))
        sim_float_case<cairn_red_fmin<float>, float, uint32_t>(op, blocks, n, seed);
    else if (f64) sim_float_case<cairn_red_fmax<double>, double, uint64_t>(op, blocks, n, seed);
    else sim_float_case<cairn_red_fmax<float>, float, uint32_t>(op, blocks, n, seed);
}

/* "red"/"scan" OP TYPE: the policies the lowering uses, for the types the test names. */
#define SIM_TYPES(X, OP, POLICY)                                                                   \
    if (!strcmp(type, "i8")) X<POLICY<int8_t>, int8_t>(OP, blocks, n, seed);                       \
    else if (!strcmp(type, "u8")) X<POLICY<uint8_t>, uint8_t>(OP, blocks, n, seed);                \
    else if (!strcmp(type, "i32")) X<POLICY<int32_t>, int32_t>(OP, blocks, n, seed);               \
    else if (!strcmp(type, "u64")) X<POLICY<uint64_t>, uint64_t>(OP, blocks, n, seed);             \
    else if (!strcmp(type, "i64")) X<POLICY<int64_t>, int64_t>(OP, blocks, n, seed);

template <bool SCAN>
static void sim_int_case(const char *op, const char *type, unsigned blocks, uint64_t n,
                         uint64_t seed) {
#define SIM_CASE(X)                                                                                \
    if (!strcmp(op, "add")) {                                                                      \
        SIM_TYPES(X, op, cairn_red_add)                                                            \
    } else if (!strcmp(op, "min")) {                                                               \
        SIM_TYPES(X, op, cairn_red_min)                                                            \
    } else if (!strcmp(op, "max")) {                                                               \
        SIM_TYPES(X, op, cairn_red_max)                                                            \
    } else if (!strcmp(op, "and")) {                                                               \
        SIM_TYPES(X, op, cairn_red_and)                                                            \
    } else if (!strcmp(op, "or")) {                                                                \
        SIM_TYPES(X, op, cairn_red_or)                                                             \
    } else if (!strcmp(op, "xor")) {                                                               \
        SIM_TYPES(X, op, cairn_red_xor)                                                            \
    } else if (!strcmp(op, "mul") && !strcmp(type, "i32"))                                         \
        X<cairn_red_mul<int32_t>, int32_t>(op, blocks, n, seed);                                   \
    else if (!strcmp(op, "mul") && !strcmp(type, "u8"))                                            \
        X<cairn_red_mul<uint8_t>, uint8_t>(op, blocks, n, seed);
    if (SCAN) {
        SIM_CASE(sim_scan_case)
    } else {
        SIM_CASE(sim_red_case)
    }
#undef SIM_CASE
}

int main() {
    char line[256];
    while (std::fgets(line, sizeof line, stdin)) {
        char what[8], a[8], b[16];
        unsigned blocks, threads;
        unsigned long long n, seed;
        if (std::sscanf(line, "sum %7s %u %u %llu %llu %15s", a, &blocks, &threads, &n, &seed, b) ==
            6)
            sim_sum_case(a, blocks, threads, n, seed, b);
        else if (std::sscanf(line, "%7s %7s %15s %u %llu %llu", what, a, b, &blocks, &n, &seed) ==
                     6 &&
                 (!strcmp(what, "red") || !strcmp(what, "scan"))) {
            if (!strcmp(what, "red") && a[0] == 'f') sim_fminmax(a, b, blocks, n, seed);
            else if (!strcmp(what, "red")) sim_int_case<false>(a, b, blocks, n, seed);
            else sim_int_case<true>(a, b, blocks, n, seed);
        } else {
            std::printf("bad case: %s", line);
        }
        std::fflush(stdout);
    }
    return 0;
}
