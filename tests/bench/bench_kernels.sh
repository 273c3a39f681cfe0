#!/usr/bin/env bash
# bench_kernels.sh: CAIRN's generated kernels against the same kernels written by hand
# in C (issue 33), in one harness: the generated C (`cairn build --emit-c`) is included
# into a C file that also holds the hand-written versions, and one process times both,
# interleaved (each round times every kernel CAIRN then C), median of R rounds (at least
# 7) of the thread's CPU time (wall time when CAIRN_THREADS > 1), at an L1, an L2 and a
# RAM size. Prints cairn_ns, c_ns and
# the median of the per-round ratios cairn / C (1.00 = as fast as hand C).
#
# Hand C is what a careful C programmer writes: the same loops, the same operation order
# (so the same bits; the harness checks every output against the C's), no guards. Where
# CAIRN's runtime defines the operation (exp, conversions, the exact sum, max), hand C
# calls the same runtime function, so the ratio measures the generated code only.
# quantize's hand C rounds the f64 quotient (double)x / (double)s (that it equals the
# exact quotient's rounding is proved in runtime/cairn_float.h).
#
# Env: CAIRN_BIN (folder of bin/cairn), CAIRN_TBIN (its sibling libcairnrt.a), CC (gcc),
#   BENCH_KERNELS_OPT (C flags of both sides, default -O2; e.g. "-O3 -march=native"),
#   BENCH_KERNELS_LEVELS (default "l1 l2 ram"), BENCH_KERNELS_ONLY (kernel names, spaces),
#   BENCH_KERNELS_ROUNDS (default 7), BENCH_KERNELS_MS (time per measurement, default 4),
#   CAIRN_THREADS (default 1; pooled kernels use the pool's width).
# Development: BENCH_KERNELS_LEVELS=l1 BENCH_KERNELS_MS=1 takes a few seconds.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CAIRN=${CAIRN_BIN:-$ROOT/bin}/cairn
RTLIB=$(dirname "${CAIRN_TBIN:-$ROOT/build/obj/tbin}")/libcairnrt.a
CC=${CC:-gcc}
OPT=${BENCH_KERNELS_OPT:--O2}
FLAGS="-std=c11 $OPT -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math"
LIBS="-lm -pthread -lcrypto -lcjson"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export CAIRN_CACHE=${CAIRN_CACHE:-$W/cache} CAIRN_THREADS=${CAIRN_THREADS:-1}

cat > "$W/kernels.cairn" <<'X'
fn matmul(n:usize, a:ro<f64>[n * n], b:ro<f64>[n * n], c:rw<f64>[n * n]) {
  for i in 0..n {
    for j in 0..n {
      let mut s:f64 = 0.0;
      for k in 0..n { s = s + a[i * n + k] * b[k * n + j]; }
      c[i * n + j] = s;
    }
  }
}
fn stencil2(n:usize, a:ro<f64>[n * n], o:rw<f64>[n * n]) {
  for i in 1..n - 1 {
    for j in 1..n - 1 {
      o[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]) - a[i * n + j];
    }
  }
}
fn prefix(n:usize, x:ro<i64>[n], o:rw<i64>[n]) { scan + for i in n yield x[i] into o; }
fn histo(n:usize, m:usize, x:ro<u32>[n], h:rw<u32>[m]) {
  for i in 0..n { let k = usize(x[i]); h[k] = h[k] + 1; }
}
fn matvec(n:usize, a:ro<f64>[n * n], x:ro<f64>[n], y:rw<f64>[n]) {
  for i in 0..n { y[i] = reduce + for k in n yield a[i * n + k] * x[k]; }
}
fn quant_i8(n:usize, x:ro<f32>[n], s:f32, q:rw<i8>[n]) {
  for i in 0..n { q[i] = quantize[i8](x[i], s); }
}
fn quant_e4m3(n:usize, x:ro<f32>[n], s:f32, q:rw<f8e4m3>[n]) {
  for i in 0..n { q[i] = quantize[f8e4m3](x[i], s); }
}
fn stencil1(n:usize, a:ro<f64>[n], o:rw<f64>[n]) {
  for i in 1..n - 1 { o[i] = 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1]; }
}
fn saxpy(n:usize, a:f32, x:ro<f32>[n], y:rw<f32>[n]) {
  for i in 0..n { y[i] = a * x[i] + y[i]; }
}
fn lanes(n:usize, a:f32, x:ro<f32>[n], y:rw<f32>[n]) {
  parallel i in n { y[i] = a * x[i] + y[i]; }
}
fn dot(n:usize, x:ro<f64>[n], y:ro<f64>[n]) -> f64 = reduce + for i in n yield x[i] * y[i];
fn dot_exact(n:usize, x:ro<f64>[n], y:ro<f64>[n]) -> f64 = reduce + parallel i in n yield x[i] * y[i];
fn max_par(n:usize, x:ro<f64>[n]) -> f64 = reduce max parallel i in n yield x[i];
fn max_for(n:usize, x:ro<f64>[n]) -> f64 = reduce max for i in n yield x[i];
fn softmax(n:usize, x:ro<f32>[n], y:rw<f32>[n]) {
  let m = reduce max for i in n yield x[i];
  for i in 0..n { y[i] = std.cr.exp(x[i] - m); }
  let s = reduce + for i in n yield y[i];
  for i in 0..n { y[i] = y[i] / s; }
}
fn layernorm(n:usize, x:ro<f32>[n], y:rw<f32>[n]) {
  let mu = (reduce + for i in n yield x[i]) / f32(n);
  let v = (reduce + for i in n yield (x[i] - mu) * (x[i] - mu)) / f32(n);
  let r = 1.0 / sqrt(v + 0.00001);
  for i in 0..n { y[i] = (x[i] - mu) * r; }
}
fn to_f16(n:usize, x:ro<f32>[n], y:rw<f16>[n]) { for i in 0..n { y[i] = f16(x[i]); } }
fn to_bf16(n:usize, x:ro<f32>[n], y:rw<bf16>[n]) { for i in 0..n { y[i] = bf16(x[i]); } }
fn main() -> i32 { return 0; }
X
cp "$ROOT/tests/bench/bench_kernels.c" "$W/timing.c"
"$CAIRN" build "$W/kernels.cairn" -o "$W/kernels" --cc "$CC" --emit-c "$W" >/dev/null
$CC $FLAGS -Wno-unused-function -I"$ROOT/runtime" -I"$W" "$W/timing.c" "$RTLIB" -o "$W/timing" $LIBS
echo "CAIRN / hand-written C, $CC $OPT -ffp-contract=off, CAIRN_THREADS=$CAIRN_THREADS," \
     "median of ${BENCH_KERNELS_ROUNDS:-7} interleaved rounds," \
     "$([ "$CAIRN_THREADS" = 1 ] && echo "thread CPU time" || echo "wall time")" \
     "(load $(cut -d' ' -f1-3 /proc/loadavg))"
"$W/timing" "${BENCH_KERNELS_LEVELS:-l1 l2 ram}" "${BENCH_KERNELS_ONLY:-}" \
    "${BENCH_KERNELS_ROUNDS:-7}" "${BENCH_KERNELS_MS:-4}"
