#!/bin/sh
# bench_mma.sh: mma_unordered's emulated device tiling against the host's reference loop
# (make bench), on a 512 x 512 x 512 f16 multiply, at one thread and at the pool's full
# width. Emulation is for bits, not speed: the ratio says what an emulated run costs.
set -e
if [ "$1" = "--help" ] || [ "$1" = "-h" ]; then
  echo "usage: bench_mma.sh [N]   (CAIRN_TBIN: where bench_mma is)"
  exit 0
fi
TBIN=${CAIRN_TBIN:-build/obj/tbin}
[ -x "$TBIN/bench_mma" ] || { echo "bench_mma.sh: $TBIN/bench_mma not built: run make first" >&2; exit 1; }
CAIRN_THREADS=1 "$TBIN/bench_mma" "${1:-512}"
CAIRN_THREADS= "$TBIN/bench_mma" "${1:-512}"
