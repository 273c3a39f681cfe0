#!/bin/sh
# bench_cr.sh: ns per call of the correctly rounded math (runtime/cairn_cr.h) against
# glibc's expf, logf, tanhf, ..., exp and log, as ratios measured in this one run
# (tests/bench/bench_cr.c). `make bench` runs it with CAIRN_TBIN set.
# Usage: bench_cr.sh [N [REPS]]   (default: 65536 inputs per function, best of 15 rounds)
set -eu
case "${1:-}" in -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
tbin=${CAIRN_TBIN:-$(dirname "$0")/../../build/obj/tbin}
if [ ! -x "$tbin/bench_cr" ]; then
    echo "bench_cr.sh: $tbin/bench_cr not built (run make, or set CAIRN_TBIN)" >&2
    exit 2
fi
exec "$tbin/bench_cr" "$@"
