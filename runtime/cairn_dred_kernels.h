/* cairn_dred_kernels.h: the kernels and device functions of device reductions and scans
 * (docs/devices.md, "Device reductions"; cairn_dred_cuda.h launches them and says how
 * they work). Device code only, no launch: a CUDA build's .cu includes it through
 * cairn_dred_cuda.h, and tests/c/dred_sim.cpp compiles it for the host with a few
 * stand-ins (threads, barriers, shuffles and atomics of std::thread) to run the very code
 * where no GPU is lent. The includer provides __global__, __device__, __shared__,
 * __noinline__, threadIdx, blockIdx, blockDim, gridDim, __syncthreads, atomicAdd and
 * atomicOr, and cairn_shfl_idx. */
#ifndef CAIRN_DRED_KERNELS_H
#define CAIRN_DRED_KERNELS_H

#include <stdint.h>
#include <string.h>
#include <type_traits>

#include "cairn_checked.h"
#include "cairn_dsum.h"
#include "cairn_reduce.h"
#include "cairn_trap.h"

/* ---- the exact float sum ------------------------------------------------------------- */

/* Finite x's pieces into the block's counters with shared-memory atomics (two's
 * complement adds of 64-bit words: the counters' sum does not depend on the order). */
template <int DIGITS, unsigned SKIP>
__device__ inline void cairn_dsum_add_shared(long long *dig, double x) {
    unsigned k;
    int64_t p[3];
    if (!cairn_dsum_pieces(x, SKIP, &k, p)) return;
    for (int j = 0; j < 3 && k + (unsigned)j < (unsigned)DIGITS; j++)
        if (p[j]) atomicAdd((unsigned long long *)&dig[k + j], (unsigned long long)p[j]);
}

/* The slow path of a term (cairn_dsum_take's, atomically): out of line, it is rare. */
template <int DIGITS, unsigned SKIP>
__device__ __noinline__ void cairn_dsum_slow(cairn_dsum_thread *s, long long *dig, double x) {
    CAIRN_SUM_TWO_STEP(double, s->hi, s->lo, x, a, b, e);
    s->flags |= CAIRN_DSUM_F_NONNEG;
    if (x != x) {
        s->flags |= CAIRN_DSUM_F_NAN;
    } else if (x - x != 0) {
        s->flags |= x > 0 ? CAIRN_DSUM_F_PINF : CAIRN_DSUM_F_NINF;
    } else {
        double add = x;
        if (a - a == 0 && b - b == 0 && e - e == 0) {
            s->hi = a;
            s->lo = b;
            add = e;
        }
        cairn_dsum_add_shared<DIGITS, SKIP>(dig, add);
    }
}

/* Pass 1: block b's threads take terms g, g + G, ... (g its thread's global index, G the
 * grid's threads) into their expansions, then into the block's counters; the block's
 * record (normalised) to recs[b]. */
template <int DIGITS, unsigned SKIP, typename Term>
__global__ void cairn_dsum_kernel(Term term, uint64_t n, cairn_dsum_record *recs) {
    __shared__ long long dig[DIGITS];
    __shared__ unsigned flags;
    __shared__ unsigned long long count;
    for (int k = threadIdx.x; k < DIGITS; k += blockDim.x) dig[k] = 0;
    if (threadIdx.x == 0) flags = 0, count = 0;
    __syncthreads();
    cairn_dsum_thread s;
    cairn_dsum_thread_init(&s);
    uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n; k += stride) {
        double x = (double)term(k);
        s.count++;
        CAIRN_SUM_TWO_STEP(double, s.hi, s.lo, x, a, b, e);
        if (e == 0) {
            s.hi = a;
            s.lo = b;
        } else {
            cairn_dsum_slow<DIGITS, SKIP>(&s, dig, x);
        }
    }
    uint64_t hibits;
    memcpy(&hibits, &s.hi, sizeof hibits);
    atomicOr(&flags, s.flags | (hibits != 1ull << 63 ? CAIRN_DSUM_F_NONNEG : 0u));
    atomicAdd(&count, (unsigned long long)s.count);
    cairn_dsum_add_shared<DIGITS, SKIP>(dig, s.hi);
    cairn_dsum_add_shared<DIGITS, SKIP>(dig, s.lo);
    __syncthreads();
    if (threadIdx.x == 0) {
        cairn_dsum_record *r = &recs[blockIdx.x];
        for (int k = 0; k < DIGITS; k++) r->dig[k] = dig[k];
        cairn_dsum_normalise(r->dig, DIGITS);
        r->flags = flags;
        r->count = count;
    }
}

/* Pass 2, one block: the records' digits summed column by column, then normalised. */
template <int DIGITS>
__global__ void cairn_dsum_merge_kernel(const cairn_dsum_record *recs, uint64_t nb,
                                        cairn_dsum_record *out) {
    __shared__ cairn_dsum_record all;
    for (int k = threadIdx.x; k < DIGITS; k += blockDim.x) {
        long long sum = 0;
        for (uint64_t b = 0; b < nb; b++) sum += recs[b].dig[k];
        all.dig[k] = sum;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        all.flags = 0;
        all.count = 0;
        for (uint64_t b = 0; b < nb; b++) all.flags |= recs[b].flags, all.count += recs[b].count;
        cairn_dsum_normalise(all.dig, DIGITS);
        *out = all;
    }
}

/* ---- reductions: the operators -------------------------------------------------------- */

/* A policy: Acc (the kept partial), identity(), take(acc, term), join(left, right) (left's
 * indices all come before right's), and whether it commutes (then a thread's indices may
 * be strided). */
template <typename T>
struct cairn_red_add {
    typedef typename std::conditional<((T)-1 < (T)0), __int128, unsigned __int128>::type Acc;
    static const bool commutes = true;
    __device__ static Acc identity() { return 0; }
    __device__ static Acc take(Acc a, T v) { return a + (Acc)v; }
    __device__ static Acc join(Acc a, Acc b) { return a + b; }
};
template <typename T>
struct cairn_red_min {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() {
        return (T)-1 < (T)0 ? (T)(~((unsigned long long)(T)1 << (8 * sizeof(T) - 1))) : (T) ~(T)0;
    }
    __device__ static Acc take(Acc a, T v) { return v < a ? v : a; }
    __device__ static Acc join(Acc a, Acc b) { return b < a ? b : a; }
};
template <typename T>
struct cairn_red_max {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() {
        return (T)-1 < (T)0 ? (T)((unsigned long long)(T)1 << (8 * sizeof(T) - 1)) : (T)0;
    }
    __device__ static Acc take(Acc a, T v) { return a < v ? v : a; }
    __device__ static Acc join(Acc a, Acc b) { return a < b ? b : a; }
};
template <typename T>
struct cairn_red_and {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() { return (T) ~(T)0; }
    __device__ static Acc take(Acc a, T v) { return (T)(a & v); }
    __device__ static Acc join(Acc a, Acc b) { return (T)(a & b); }
};
template <typename T>
struct cairn_red_or {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() { return (T)0; }
    __device__ static Acc take(Acc a, T v) { return (T)(a | v); }
    __device__ static Acc join(Acc a, Acc b) { return (T)(a | b); }
};
template <typename T>
struct cairn_red_xor {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() { return (T)0; }
    __device__ static Acc take(Acc a, T v) { return (T)(a ^ v); }
    __device__ static Acc join(Acc a, Acc b) { return (T)(a ^ b); }
};
template <typename T>
struct cairn_red_mul {
    typedef cairn_prod Acc;
    static const bool commutes = false;
    __device__ static Acc identity() { return cairn_prod_one(); }
    __device__ static Acc take(Acc a, T v) {
        if ((T)-1 < (T)0) cairn_prod_take_i(&a, (int64_t)v);
        else cairn_prod_take_u(&a, (uint64_t)v);
        return a;
    }
    __device__ static Acc join(Acc a, Acc b) { return cairn_prod_join(a, b); }
};

/* Float min and max (T float or double): the host's cairn_min_f32 ... (cairn_checked.h),
 * whose answer does not depend on the order of its arguments (a NaN anywhere gives the
 * quiet NaN, min prefers -0.0 and max +0.0), so any tree gives the index-order fold's
 * bits; the identity is the infinity every finite value and NaN replaces. */
__device__ inline float cairn__red_fmin(float a, float b) { return cairn_min_f32(a, b); }
__device__ inline double cairn__red_fmin(double a, double b) { return cairn_min_f64(a, b); }
__device__ inline float cairn__red_fmax(float a, float b) { return cairn_max_f32(a, b); }
__device__ inline double cairn__red_fmax(double a, double b) { return cairn_max_f64(a, b); }
template <typename T>
struct cairn_red_fmin {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() { return (T)INFINITY; }
    __device__ static Acc take(Acc a, T v) { return cairn__red_fmin(a, v); }
    __device__ static Acc join(Acc a, Acc b) { return cairn__red_fmin(a, b); }
};
template <typename T>
struct cairn_red_fmax {
    typedef T Acc;
    static const bool commutes = true;
    __device__ static Acc identity() { return (T)-INFINITY; }
    __device__ static Acc take(Acc a, T v) { return cairn__red_fmax(a, v); }
    __device__ static Acc join(Acc a, Acc b) { return cairn__red_fmax(a, b); }
};

/* ---- reductions: the tree ------------------------------------------------------------- */

/* The block's threads' partials combined in thread order: each warp by shuffles (lane l
 * joins lane l + o's partial on its right, o = 1, 2, ..., 16), then the warps' totals in
 * warp order by warp 0. The block's total is thread 0's. */
template <typename Op>
__device__ inline typename Op::Acc cairn_dred_block(typename Op::Acc v) {
    __shared__ typename Op::Acc warps[32];
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    for (unsigned o = 1; o < 32; o <<= 1) {
        typename Op::Acc other = cairn_shfl_idx(v, (lane + o) & 31u);
        if ((lane & (2 * o - 1)) == 0) v = Op::join(v, other);
    }
    if (lane == 0) warps[warp] = v;
    __syncthreads();
    if (warp == 0) {
        unsigned nw = (blockDim.x + 31) / 32;
        v = lane < nw ? warps[lane] : Op::identity();
        for (unsigned o = 1; o < 32; o <<= 1) {
            typename Op::Acc other = cairn_shfl_idx(v, (lane + o) & 31u);
            if ((lane & (2 * o - 1)) == 0) v = Op::join(v, other);
        }
    }
    return v;
}

/* The contiguous indices [*lo, *hi) of part `i` of `parts` over [begin, end). */
__device__ inline void cairn_dred_slice(uint64_t begin, uint64_t end, uint64_t i, uint64_t parts,
                                        uint64_t *lo, uint64_t *hi) {
    uint64_t len = end - begin, each = len / parts + (len % parts != 0);
    *lo = begin + (i * each < len ? i * each : len);
    *hi = begin + ((i + 1) * each < len ? (i + 1) * each : len);
}

/* Pass 1: block b takes its contiguous slice of the n terms (its threads a warp's
 * consecutive indices at a time when the operator commutes, contiguous runs otherwise);
 * its total to parts[b]. */
template <typename Op, typename T, typename Term>
__global__ void cairn_dred_kernel(Term term, uint64_t n, typename Op::Acc *parts) {
    uint64_t lo, hi;
    cairn_dred_slice(0, n, blockIdx.x, gridDim.x, &lo, &hi);
    typename Op::Acc acc = Op::identity();
    if (Op::commutes) {
        for (uint64_t k = lo + threadIdx.x; k < hi; k += blockDim.x) acc = Op::take(acc, term(k));
    } else {
        uint64_t a, b;
        cairn_dred_slice(lo, hi, threadIdx.x, blockDim.x, &a, &b);
        for (uint64_t k = a; k < b; k++) acc = Op::take(acc, term(k));
    }
    acc = cairn_dred_block<Op>(acc);
    if (threadIdx.x == 0) parts[blockIdx.x] = acc;
}

/* Pass 2, one block: the blocks' totals in block order. */
template <typename Op>
__global__ void cairn_dred_finish(const typename Op::Acc *parts, uint64_t nb,
                                  typename Op::Acc *out) {
    uint64_t a, b;
    cairn_dred_slice(0, nb, threadIdx.x, blockDim.x, &a, &b);
    typename Op::Acc acc = Op::identity();
    for (uint64_t k = a; k < b; k++) acc = Op::join(acc, parts[k]);
    acc = cairn_dred_block<Op>(acc);
    if (threadIdx.x == 0) *out = acc;
}

/* ---- integer scans -------------------------------------------------------------------- */

/* A prefix as an output: checked (an overflow traps at `at`, as the fold in index order
 * does at that element) and narrowed to T. */
template <typename T>
__device__ inline T cairn_dscan_value(__int128 a, cairn_loc at) {
    if ((__int128)(T)a != a) cairn_trap_at("integer overflow", at);
    return (T)a;
}
template <typename T>
__device__ inline T cairn_dscan_value(unsigned __int128 a, cairn_loc at) {
    if ((unsigned __int128)(T)a != a) cairn_trap_at("integer overflow", at);
    return (T)a;
}
template <typename T>
__device__ inline T cairn_dscan_value(cairn_prod a, cairn_loc at) {
    if ((T)-1 < (T)0) return (T)cairn_prod_value_i(&a, 8 * (int)sizeof(T), at);
    return (T)cairn_prod_value_u(&a, 8 * (int)sizeof(T), at);
}
template <typename T>
__device__ inline T cairn_dscan_value(T a, cairn_loc at) {
    (void)at;
    return a;
}

/* Pass 1: each block's thread takes a contiguous run of its block's contiguous chunk,
 * evaluating the yields into y; the block's total to parts[b]. */
template <typename Op, typename T, typename Term>
__global__ void cairn_dscan_totals(Term term, uint64_t n, T *y, typename Op::Acc *parts) {
    uint64_t lo, hi, a, b;
    cairn_dred_slice(0, n, blockIdx.x, gridDim.x, &lo, &hi);
    cairn_dred_slice(lo, hi, threadIdx.x, blockDim.x, &a, &b);
    typename Op::Acc acc = Op::identity();
    for (uint64_t k = a; k < b; k++) {
        T v = term(k);
        y[k] = v;
        acc = Op::take(acc, v);
    }
    acc = cairn_dred_block<Op>(acc);
    if (threadIdx.x == 0) parts[blockIdx.x] = acc;
}

/* Pass 2, one thread: each block's exclusive prefix, in block order, in place. */
template <typename Op>
__global__ void cairn_dscan_offsets(typename Op::Acc *parts, uint64_t nb) {
    typename Op::Acc acc = Op::identity();
    for (uint64_t b = 0; b < nb; b++) {
        typename Op::Acc mine = parts[b];
        parts[b] = acc;
        acc = Op::join(acc, mine);
    }
}

/* Pass 3: each thread's exclusive prefix within its block (its threads' totals again,
 * from y, scanned in thread order: each warp by shuffles, then the warps'), then its run's
 * prefixes, each checked, into out. */
template <typename Op, typename T>
__global__ void cairn_dscan_write(const T *y, uint64_t n, const typename Op::Acc *offsets, T *out,
                                  cairn_loc at) {
    typedef typename Op::Acc Acc;
    __shared__ Acc warps[32];
    uint64_t lo, hi, a, b;
    cairn_dred_slice(0, n, blockIdx.x, gridDim.x, &lo, &hi);
    cairn_dred_slice(lo, hi, threadIdx.x, blockDim.x, &a, &b);
    Acc mine = Op::identity();
    for (uint64_t k = a; k < b; k++) mine = Op::take(mine, y[k]);
    unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    Acc incl = mine; /* inclusive prefix of the warp's lanes, in lane order */
    for (unsigned o = 1; o < 32; o <<= 1) {
        Acc other = cairn_shfl_idx(incl, (lane - o) & 31u);
        if (lane >= o) incl = Op::join(other, incl);
    }
    if (lane == 31) warps[warp] = incl;
    __syncthreads();
    if (threadIdx.x == 0) { /* the warps' exclusive prefixes, in place */
        Acc acc = Op::identity();
        for (unsigned w = 0; w < (blockDim.x + 31) / 32; w++) {
            Acc t = warps[w];
            warps[w] = acc;
            acc = Op::join(acc, t);
        }
    }
    __syncthreads();
    Acc before = cairn_shfl_idx(incl, (lane - 1) & 31u);
    Acc acc = Op::join(offsets[blockIdx.x], warps[warp]);
    if (lane) acc = Op::join(acc, before);
    for (uint64_t k = a; k < b; k++) {
        acc = Op::take(acc, y[k]);
        out[k] = cairn_dscan_value<T>(acc, at);
    }
}

#endif
