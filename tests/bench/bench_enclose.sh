#!/bin/sh
# bench_enclose.sh: `make bench` entry for the exact bracket GEMM on the CPU. Runs the C
# benchmark (tests/bench/bench_enclose.c, built into $CAIRN_TBIN) at 256x1024x256 f64:
# its time as a ratio against the best OpenBLAS dgemm kernel and a naive triple loop, all
# interleaved on the same cores in one process, and its bracket width against an interval
# GEMM that rounds outward at every step. The best dgemm kernel: each OPENBLAS_CORETYPE of
# CORETYPES (default SkylakeX Cooperlake SapphireRapids Haswell) timed alone first, in
# this command only; the fastest is the one the comparison runs with. CAIRN_THREADS sets
# the pool width (OpenBLAS is given the same). The target is enclose <= 6x dgemm.
set -eu
TBIN=${CAIRN_TBIN:-build/obj/tbin}
if [ "${1:-}" = "--help" ]; then
    echo "usage: tests/bench/bench_enclose.sh [M N K [REPS]]  (default 256 256 1024 20)"
    echo "  CORETYPES=\"SkylakeX Haswell\" limits the OpenBLAS kernels tried"
    exit 0
fi
if [ ! -x "$TBIN/bench_enclose" ]; then
    echo "bench_enclose.sh: error: $TBIN/bench_enclose is not built (run make)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    set -- 256 256 1024 20
fi
best="" best_ms=""
for core in ${CORETYPES:-SkylakeX Cooperlake SapphireRapids Haswell}; do
    ms=$(OPENBLAS_CORETYPE=$core "$TBIN/bench_enclose" --dgemm "$@" 2>/dev/null |
         awk '/^dgemm_ms/ {print $2}') || ms=""
    if [ -z "$ms" ]; then
        echo "  OPENBLAS_CORETYPE=$core: does not run here"
        continue
    fi
    echo "  OPENBLAS_CORETYPE=$core: dgemm best $ms ms"
    if [ -z "$best" ] || awk -v a="$ms" -v b="$best_ms" 'BEGIN {exit !(a < b)}'; then
        best=$core best_ms=$ms
    fi
done
if [ -z "$best" ]; then
    exec "$TBIN/bench_enclose" "$@"
fi
OPENBLAS_CORETYPE=$best exec "$TBIN/bench_enclose" "$@"
