#!/bin/sh
# bench_enclose.sh: `make bench` entry for the exact bracket GEMM. Runs the C benchmark
# (tests/bench/bench_enclose.c, built into $CAIRN_TBIN) at 256x1024x256 f64: its rate as a
# ratio against OpenBLAS dgemm and a naive triple loop on the same cores in the same run,
# and its bracket width against an interval GEMM that rounds outward at every step.
# CAIRN_THREADS sets the pool width (OpenBLAS is given the same).
set -eu
TBIN=${CAIRN_TBIN:-build/obj/tbin}
if [ "${1:-}" = "--help" ]; then
    echo "usage: tests/bench/bench_enclose.sh [M N K [REPS]]  (default 256 256 1024 10)"
    exit 0
fi
if [ ! -x "$TBIN/bench_enclose" ]; then
    echo "bench_enclose.sh: error: $TBIN/bench_enclose is not built (run make)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    set -- 256 256 1024 10
fi
exec "$TBIN/bench_enclose" "$@"
