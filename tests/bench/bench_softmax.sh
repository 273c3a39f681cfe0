#!/bin/sh
# bench_softmax.sh: a softmax over 2^LOG2N f32 written in CAIRN (a host parallel region:
# reduce max, std.cr.exp in the lanes, the exact sum, the division) against numpy's
# exp(x - max) / sum in float32, in one run (make bench; issues 26 and 34); and the same
# softmax in C on CAIRN's runtime (tests/bench/bench_softmax_rt.c), std.cr's scalar
# function against its array form (cairn_cr_expf_array), with the same bits.
#
# The CAIRN program runs the softmax R times; two builds, R = 1 and R = 1 + K, time the
# whole process (best of 3 each), and their difference over K is one softmax without
# the process start and the input setup. numpy is timed with timeit (best of 5), with
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset. Ratios at CAIRN_THREADS=1 and 2. The
# machine may be shared: run it quiet.
# Usage: bench_softmax.sh [LOG2N...]   (default 12 16 20)
set -eu
case "${1:-}" in -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -gt 0 ] || set -- 12 16 20
TBIN=${CAIRN_TBIN:-$(dirname "$0")/../../build/obj/tbin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for LOG2N in "$@"; do
K=$(( (1 << 22) >> LOG2N )); [ "$K" -ge 10 ] || K=10
BIN=${CAIRN_BIN:-$(dirname "$0")/../../bin}
write() { # write R FILE
  cat > "$2" <<CAIRN
const N:usize = $((1 << LOG2N));
const R:usize = $1;
fn softmax(x:ro<f32>[N], e:rw<f32>[N], y:rw<f32>[N]) {
  let m = reduce max parallel i in N yield x[i];
  parallel i in N { e[i] = std.cr.exp(x[i] - m); }
  let s = reduce + parallel i in N yield e[i];
  parallel i in N { y[i] = e[i] / s; }
}
fn main() -> i32 {
  buffer x:f32[N] = zeroed;
  buffer e:f32[N] = zeroed;
  buffer y:f32[N] = zeroed;
  let mut r:u64 = 12345;
  for i in 0..N {
    r = r * 48271 % 2147483647;
    x[i] = f32(r % 20001) * 0.001 - 10.0;
  }
  for k in 0..R { softmax(x, e, y); }
  observe("y", y);
  return 0;
}
CAIRN
}
write 1 "$tmp/one.cairn"
write $((K + 1)) "$tmp/eleven.cairn"
"$BIN/cairn" build "$tmp/one.cairn" -o "$tmp/one" >/dev/null
"$BIN/cairn" build "$tmp/eleven.cairn" -o "$tmp/eleven" >/dev/null
best() { # best wall time of 3 runs, seconds
  /usr/bin/python3 - "$@" <<'PY'
import os, subprocess, sys, time
best = 1e9
for _ in range(3):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], check=True)
    best = min(best, time.perf_counter() - t)
print(best)
PY
}
numpy=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 - "$LOG2N" <<'PY'
import sys, timeit
import numpy as np
n = 1 << int(sys.argv[1])
r = np.random.default_rng(1)
x = (r.integers(0, 20001, n) * 0.001 - 10.0).astype(np.float32)
def softmax():
    e = np.exp(x - x.max())
    return e / e.sum()
num = max(5, (1 << 22) // n)
print(min(timeit.repeat(softmax, number=num, repeat=5)) / num)
PY
)
awk -v n=$((1 << LOG2N)) -v s="$numpy" 'BEGIN { printf "softmax over %d f32: numpy %.3f ms\n", n, s * 1000 }'
for t in 1 2; do
  a=$(CAIRN_THREADS=$t best "$tmp/one")
  b=$(CAIRN_THREADS=$t best "$tmp/eleven")
  awk -v t="$t" -v a="$a" -v b="$b" -v k="$K" -v s="$numpy" 'BEGIN { per = (b - a) / k;
    printf "  CAIRN_THREADS=%d: cairn %.3f ms per softmax, %.2fx numpy\n", t, per * 1000, per / s }'
  "$TBIN/bench_softmax_rt" softmax "$LOG2N" "$t" | awk -v s="$numpy" '{
    printf "  CAIRN_THREADS=%d: runtime in C, scalar exp %.3f ms (%.2fx numpy), array exp %.3f ms (%.2fx numpy)\n",
      $3, $4, $4 / (s * 1000), $5, $5 / (s * 1000) }'
done
done
