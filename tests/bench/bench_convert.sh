#!/bin/sh
# bench_convert.sh: bulk f32 -> f16 / bf16 conversion rate of the runtime against the
# F16C instruction and a branchy scalar loop, as ratios measured in this one run
# (tests/bench/bench_convert.c). `make bench` runs it with CAIRN_TBIN set.
# Usage: bench_convert.sh [ELEMENTS...]   (default: 16384 and 16777216 elements)
set -eu
case "${1:-}" in -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
tbin=${CAIRN_TBIN:-$(dirname "$0")/../../build/obj/tbin}
if [ ! -x "$tbin/bench_convert" ]; then
    echo "bench_convert.sh: $tbin/bench_convert not built (run make, or set CAIRN_TBIN)" >&2
    exit 2
fi
exec "$tbin/bench_convert" "$@"
