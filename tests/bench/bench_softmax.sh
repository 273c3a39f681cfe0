#!/bin/sh
# bench_softmax.sh: a softmax over 2^20 f32 written in CAIRN (a host parallel region:
# reduce max, std.cr.exp in the lanes, the exact sum, the division) against numpy's
# exp(x - max) / sum in float32, in one run (make bench; issue 26 asks for the ratio).
#
# The CAIRN program runs the softmax R times; two builds, R = 1 and R = 11, time the
# whole process (best of 3 each), and their difference over 10 is one softmax without
# the process start and the input setup. numpy is timed with timeit (best of 5 x 20).
# Ratios at CAIRN_THREADS=1 and 2. The machine may be shared: run it quiet.
# Usage: bench_softmax.sh [LOG2N]   (default 20)
set -eu
case "${1:-}" in -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
LOG2N=${1:-20}
BIN=${CAIRN_BIN:-$(dirname "$0")/../../bin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
write 11 "$tmp/eleven.cairn"
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
numpy=$(/usr/bin/python3 - "$LOG2N" <<'PY'
import sys, timeit
import numpy as np
n = 1 << int(sys.argv[1])
r = np.random.default_rng(1)
x = (r.integers(0, 20001, n) * 0.001 - 10.0).astype(np.float32)
def softmax():
    e = np.exp(x - x.max())
    return e / e.sum()
print(min(timeit.repeat(softmax, number=20, repeat=5)) / 20)
PY
)
awk -v n=$((1 << LOG2N)) -v s="$numpy" 'BEGIN { printf "softmax over %d f32: numpy %.3f ms\n", n, s * 1000 }'
for t in 1 2; do
  a=$(CAIRN_THREADS=$t best "$tmp/one")
  b=$(CAIRN_THREADS=$t best "$tmp/eleven")
  awk -v t="$t" -v a="$a" -v b="$b" -v s="$numpy" 'BEGIN { per = (b - a) / 10;
    printf "  CAIRN_THREADS=%d: cairn %.3f ms per softmax, %.2fx numpy\n", t, per * 1000, per / s }'
done
