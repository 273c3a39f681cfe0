/* cairn_dred_cuda.h: device reductions and scans on the GPU (docs/devices.md, "Device
 * reductions"), included by a CUDA build's .cu when the program has one. nvcc only.
 *
 * Every one runs where its terms are: the lanes evaluate the yields, a tree in each block
 * combines them (warp shuffles, then shared memory), one value per block goes to device
 * memory, and a second pass (one block) combines those; only the result crosses to the
 * host, which keeps the host's rules for it (the one rounding of the exact sum, the
 * overflow check of an integer total).
 *
 *  - The exact float sum (cairn_dsum_run): runtime/cairn_dsum.h's algorithm, its block
 *    integer in shared memory with 64-bit atomics, its records summed by one block, the
 *    total rounded by the host's exact sum (cairn_dsum*_round): the host's bits.
 *  - An integer reduction (cairn_dred_run) by an operator policy below: + keeps 128-bit
 *    partials (exact: the host checks the total once); min, max, &, |, ^ their own type;
 *    * the index-order summaries of runtime/cairn_reduce.h, which do not commute, so its
 *    blocks and threads take contiguous runs of indices and every combination keeps the
 *    left one on the left (the others take a warp's consecutive indices at a time).
 *  - A float min or max (cairn_dred_run, cairn_red_fmin/fmax): the host's order-free
 *    cairn_min_f32 ... in the same tree, so the index-order fold's bits.
 *  - An integer scan (cairn_dscan_run): a block reduction of contiguous chunks whose
 *    yields are kept in device memory, the blocks' exclusive prefixes by one thread, then
 *    each block scans its chunk again from its prefix, checking every prefix (each one is
 *    an output).
 * The launch's shape is the GPU's (8 blocks of 256 threads a multiprocessor), and a
 * term functor (the lowering's: its yield, its captures) gives term k. */
#ifndef CAIRN_DRED_CUDA_H
#define CAIRN_DRED_CUDA_H

#include "cairn_device_cuda.h"
#include "cairn_dred_kernels.h"
#include "cairn_dsum.h"
#include "cairn_reduce.h"

#define CAIRN_DRED_THREADS 256

/* Blocks for n terms on the current GPU (cudaGetDevice: the one the launch runs on, not
 * always device 0): as cairn_dsum_blocks, 8 a multiprocessor. */
CAIRN__HOST uint64_t cairn_dred_blocks(uint64_t n) {
    int sms = 0, device = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms < 1)
        sms = 1;
    return cairn_dsum_blocks(n, CAIRN_DRED_THREADS, (unsigned)sms);
}

/* n elements of `size` bytes of device memory for a reduction's own use. */
CAIRN__HOST void *cairn_dred_scratch(uint64_t n, size_t size, cairn_loc at) {
    return cairn_device_zeroed(n ? n : 1, size, CAIRN_PLACE_DEVICE, at);
}

/* ---- launchers: each pass, then the one result back ---- */

/* The exact sum of n terms into *all (the caller rounds it): both passes, then the one
 * record back to the host (the copy waits; a lane's trap is reported first). */
template <int DIGITS, unsigned SKIP, typename Term>
CAIRN__HOST void cairn_dsum_run(Term term, uint64_t n, cairn_loc at, cairn_dsum_record *all) {
    cairn_device_start();
    uint64_t nb = cairn_dred_blocks(n);
    cairn_dsum_record *recs =
        (cairn_dsum_record *)cairn_dred_scratch(nb + 1, sizeof(cairn_dsum_record), at);
    cairn_dsum_kernel<DIGITS, SKIP><<<(unsigned)nb, CAIRN_DRED_THREADS>>>(term, n, recs);
    cairn_device_launched(at, 0);
    cairn_dsum_merge_kernel<DIGITS><<<1, 128>>>(recs, nb, recs + nb);
    cairn_device_launched(at, 0);
    cudaError_t e = cudaMemcpy(all, recs + nb, sizeof *all, cudaMemcpyDeviceToHost);
    cairn__device_report(e, at);
    cairn_device_free(recs, CAIRN_PLACE_DEVICE);
}

/* The reduction of n terms (n > 0) into *out, on the host: both passes, then the one
 * partial back (the host applies the language's rule to it: the overflow check of a +
 * total, the verdict of a product's summary). */
template <typename Op, typename T, typename Term>
CAIRN__HOST void cairn_dred_run(Term term, uint64_t n, cairn_loc at, typename Op::Acc *out) {
    typedef typename Op::Acc Acc;
    cairn_device_start();
    uint64_t nb = cairn_dred_blocks(n);
    Acc *parts = (Acc *)cairn_dred_scratch(nb + 1, sizeof(Acc), at);
    cairn_dred_kernel<Op, T><<<(unsigned)nb, CAIRN_DRED_THREADS>>>(term, n, parts);
    cairn_device_launched(at, 0);
    cairn_dred_finish<Op><<<1, CAIRN_DRED_THREADS>>>(parts, nb, parts + nb);
    cairn_device_launched(at, 0);
    cudaError_t e = cudaMemcpy(out, parts + nb, sizeof *out, cudaMemcpyDeviceToHost);
    cairn__device_report(e, at);
    cairn_device_free(parts, CAIRN_PLACE_DEVICE);
}

/* The scan of n terms (n > 0) into the device array out of n elements: three passes. */
template <typename Op, typename T, typename Term>
CAIRN__HOST void cairn_dscan_run(Term term, uint64_t n, T *out, cairn_loc at) {
    typedef typename Op::Acc Acc;
    cairn_device_start();
    uint64_t nb = cairn_dred_blocks(n);
    Acc *parts = (Acc *)cairn_dred_scratch(nb, sizeof(Acc), at);
    T *y = (T *)cairn_dred_scratch(n, sizeof(T), at);
    cairn_dscan_totals<Op, T><<<(unsigned)nb, CAIRN_DRED_THREADS>>>(term, n, y, parts);
    cairn_device_launched(at, 0);
    cairn_dscan_offsets<Op><<<1, 1>>>(parts, nb);
    cairn_device_launched(at, 0);
    cairn_dscan_write<Op, T><<<(unsigned)nb, CAIRN_DRED_THREADS>>>(y, n, parts, out, at);
    cairn_device_launched(at, 0);
    cairn_device_free(y, CAIRN_PLACE_DEVICE);
    cairn_device_free(parts, CAIRN_PLACE_DEVICE);
}

#endif
