#!/bin/sh
# bench_layernorm.sh: a layer-norm over 2^LOG2N f16 values (f16 storage, f32 compute:
# widen, mean by the exact sum, centre, variance by the exact sum, divide by sqrt(v +
# 1e-5), narrow to f16) written in CAIRN (host parallel regions) against numpy's
# x.astype(float32), mean, var, astype(float16), in one run (make bench; issue 34); and
# the same in C on CAIRN's runtime (tests/bench/bench_softmax_rt.c layernorm), with the
# storage conversions one element at a time (what the generated loops do) against the
# runtime's array conversions (F16C), with the same bits.
#
# The CAIRN program runs it R times; two builds, R = 1 and R = 1 + K, time the process
# (best of 3), their difference over K is one layer-norm. numpy by timeit (best of 5),
# OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset. CAIRN_THREADS=1 and 2.
# Usage: bench_layernorm.sh [LOG2N...]   (default 12 16 20)
set -eu
case "${1:-}" in -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
[ $# -gt 0 ] || set -- 12 16 20
BIN=${CAIRN_BIN:-$(dirname "$0")/../../bin}
TBIN=${CAIRN_TBIN:-$(dirname "$0")/../../build/obj/tbin}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
write() { # write N R FILE
  cat > "$3" <<CAIRN
const N:usize = $1;
const R:usize = $2;
fn layernorm(x:ro<f16>[N], t:rw<f32>[N], y:rw<f16>[N]) {
  parallel i in N { t[i] = f32(x[i]); }
  let mu = (reduce + parallel i in N yield t[i]) / f32(N);
  parallel i in N { t[i] = t[i] - mu; }
  let v = (reduce + parallel i in N yield t[i] * t[i]) / f32(N);
  let r = sqrt(v + 0.00001);
  parallel i in N { y[i] = f16(t[i] / r); }
}
fn main() -> i32 {
  buffer x:f16[N] = zeroed;
  buffer t:f32[N] = zeroed;
  buffer y:f16[N] = zeroed;
  let mut r:u64 = 12345;
  for i in 0..N {
    r = r * 48271 % 2147483647;
    x[i] = f16(f32(r % 20001) * 0.001 - 10.0);
  }
  for k in 0..R { layernorm(x, t, y); }
  observe("y", y);
  return 0;
}
CAIRN
}
best() { # best wall time of 3 runs, seconds
  /usr/bin/python3 - "$@" <<'PY'
import subprocess, sys, time
best = 1e9
for _ in range(3):
    t = time.perf_counter()
    subprocess.run(sys.argv[1:], check=True)
    best = min(best, time.perf_counter() - t)
print(best)
PY
}
for LOG2N in "$@"; do
  N=$((1 << LOG2N))
  K=$(( (1 << 22) >> LOG2N )); [ "$K" -ge 10 ] || K=10
  write "$N" 1 "$tmp/one.cairn"
  write "$N" $((K + 1)) "$tmp/more.cairn"
  "$BIN/cairn" build "$tmp/one.cairn" -o "$tmp/one" >/dev/null
  "$BIN/cairn" build "$tmp/more.cairn" -o "$tmp/more" >/dev/null
  numpy=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 - "$LOG2N" <<'PY'
import sys, timeit
import numpy as np
n = 1 << int(sys.argv[1])
r = np.random.default_rng(1)
h = (r.integers(0, 20001, n) * 0.001 - 10.0).astype(np.float16)
def layernorm():
    x = h.astype(np.float32)
    d = x - x.mean()
    return (d / np.sqrt((d * d).mean() + np.float32(1e-5))).astype(np.float16)
num = max(5, (1 << 22) // n)
print(min(timeit.repeat(layernorm, number=num, repeat=5)) / num)
PY
)
  awk -v n="$N" -v s="$numpy" 'BEGIN { printf "layer-norm over %d f16: numpy %.3f ms\n", n, s * 1000 }'
  for t in 1 2; do
    a=$(CAIRN_THREADS=$t best "$tmp/one")
    b=$(CAIRN_THREADS=$t best "$tmp/more")
    awk -v t="$t" -v a="$a" -v b="$b" -v k="$K" -v s="$numpy" 'BEGIN { per = (b - a) / k;
      printf "  CAIRN_THREADS=%d: cairn %.3f ms, %.2fx numpy\n", t, per * 1000, per / s }'
    "$TBIN/bench_softmax_rt" layernorm "$LOG2N" "$t" | awk -v s="$numpy" '{
      printf "  CAIRN_THREADS=%d: runtime in C, element conversions %.3f ms (%.2fx numpy), array conversions %.3f ms (%.2fx numpy)\n",
        $3, $4, $4 / (s * 1000), $5, $5 / (s * 1000) }'
  done
done
