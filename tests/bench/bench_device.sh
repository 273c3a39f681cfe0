#!/usr/bin/env bash
# bench_device.sh: the emulated device against the host, in one run (issue 11).
#  1. An emulated elementwise kernel of 2^22 lanes (a device parallel region over @device
#     views) against the same work as a host parallel region: the ratio device / host
#     (target: within 2x). Both at the pool's default width.
#  2. An emulated cooperative block reduction, 256 threads, a shared array, 8 barriers in
#     a loop: thread-phases per second per core (CAIRN_THREADS=1; target >= 20 million).
#     A block of this kernel runs 9 phases (the load, then 8 tree steps, the last with
#     the store), so one launch of G blocks is G * 256 * 9 thread-phases.
#  3. The emulated exact device sum of 2^24 f32 (a reduce + parallel over a @device view:
#     the GPU's algorithm, runtime/cairn_dsum.h, on the host pool) against the host's
#     exact sum of the same view on the host (issue 23; target within 1.5x), both at the
#     pool's default width, median of 5 alternating rounds.
# Each figure is the difference between a run of R+1 launches and a run of 1, so the
# program's set-up (allocation, input) cancels (the block reduction: best of 5).
# Env: CAIRN_BIN (folder of bin/cairn), CC (default gcc).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CAIRN=${CAIRN_BIN:-$ROOT/bin}/cairn
CC=${CC:-gcc}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export CAIRN_CACHE=$W/cache

elementwise() {   # PLACEMENT (@device or empty) LAUNCHES
  cat <<X
const N:usize = 4194304;
fn saxpy(a:f32, x:ro<f32>[N]$1, y:rw<f32>[N]$1) {
  parallel i in N { y[i] = a * x[i] + y[i] / 3.0; }
}
fn main() -> i32 {
  buffer hx:f32[N] = zeroed;
  for i in 0..N { hx[i] = f32(i % 1000) * 0.5; }
  buffer x:f32[N]$1 = zeroed;
  buffer y:f32[N]$1 = zeroed;
  copy(x, hx);
  for _ in 0..$2 { saxpy(1.5, x, y); }
  return 0;
}
X
}

blockreduce() {   # LAUNCHES
  cat <<X
const G:usize = 2048;
const T:usize = 256;
fn tree(x:ro<f32>[G * T]@device, out:rw<f32>[G]@device) {
  blocks g in G threads t in T {
    shared s:f32[T] = zeroed;
    s[t] = x[g * T + t];
    for k in 0..8 {
      barrier;
      let stride = 128 >> k;
      if t < stride { s[t] = s[t] + s[t + stride]; }
    }
    if t == 0 { out[g] = s[0]; }  // thread 0 wrote s[0] itself: no barrier needed
  }
}
fn main() -> i32 {
  buffer hx:f32[G * T] = zeroed;
  for i in 0..G * T { hx[i] = f32(i % 1000) * 0.25; }
  buffer x:f32[G * T]@device = zeroed;
  buffer out:f32[G]@device = zeroed;
  copy(x, hx);
  for _ in 0..$1 { tree(x, out); }
  return 0;
}
X
}

exactsum() {   # PLACEMENT LAUNCHES
  cat <<X
const N:usize = 16777216;
fn total(x:ro<f32>[N]$1) -> f32 = reduce + parallel i in N yield x[i];
fn main() -> i32 {
  buffer hx:f32[N] = zeroed;
  let mut s:u64 = 12345;
  for i in 0..N {
    s = s * 48271 % 2147483647;
    hx[i] = f32(i32(s % 2000001) - 1000000) / 1024.0;
  }
  buffer x:f32[N]$1 = zeroed;
  copy(x, hx);
  let mut acc:f32 = 0.0;
  for _ in 0..$2 { acc = acc + total(x); }
  if acc == 0.5 { return 1; }
  return 0;
}
X
}

R=20
exactsum @device 1 > "$W/dsum1.cairn"; exactsum @device 11 > "$W/dsumR.cairn"
exactsum "" 1 > "$W/hsum1.cairn"; exactsum "" 11 > "$W/hsumR.cairn"
elementwise @device 1 > "$W/dev1.cairn"; elementwise @device $((R + 1)) > "$W/devR.cairn"
elementwise "" 1 > "$W/host1.cairn"; elementwise "" $((R + 1)) > "$W/hostR.cairn"
blockreduce 1 > "$W/blk1.cairn"; blockreduce $((R + 1)) > "$W/blkR.cairn"
for p in dev1 devR host1 hostR blk1 blkR dsum1 dsumR hsum1 hsumR; do
  "$CAIRN" build "$W/$p.cairn" -o "$W/$p" --cc "$CC" >/dev/null
done

wall() {   # PROGRAM -> wall seconds of one run
  local s e
  s=$(date +%s.%N); "$1"; e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}
best() {   # PROGRAM -> best-of-5 wall seconds
  local best="" t
  for _ in 1 2 3 4 5; do
    t=$(wall "$1")
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# Device and host runs alternate, so a busy machine slows both alike; the figure is the
# median over 5 rounds of each side's time per launch and of their ratio.
# alternate DEV HOST LAUNCHES WHAT TARGET: 5 rounds, each side's time per launch (a run of
# LAUNCHES + 1 less a run of 1) and their ratio; prints the medians.
alternate() {
  : > "$W/ratios"; : > "$W/devs"; : > "$W/hosts"
  for _ in 1 2 3 4 5; do
    d=$(echo "($(wall "$W/${1}R") - $(wall "$W/${1}1")) / $3" | bc -l)
    h=$(echo "($(wall "$W/${2}R") - $(wall "$W/${2}1")) / $3" | bc -l)
    echo "$d" >> "$W/devs"; echo "$h" >> "$W/hosts"; echo "$d / $h" | bc -l >> "$W/ratios"
  done
  dev=$(median < "$W/devs"); host=$(median < "$W/hosts"); ratio=$(median < "$W/ratios")
  printf '%s: %.2f ms; %s: %.2f ms; device/host %.2fx (median of 5 alternating rounds; target <= %s), pool width %s\n' \
    "$4" "$(echo "$dev * 1000" | bc -l)" "$5" "$(echo "$host * 1000" | bc -l)" "$ratio" "$6" \
    "${CAIRN_THREADS:-default}"
}
alternate dev host "$R" "emulated elementwise kernel, 2^22 lanes" "host parallel region" 2x
alternate dsum hsum 10 "emulated exact device sum, 2^24 f32" "host exact sum" 1.5x

export CAIRN_THREADS=1
blk=$(echo "($(best "$W/blkR") - $(best "$W/blk1")) / $R" | bc -l)
phases=$((2048 * 256 * 9))
printf 'emulated block reduction (256 threads, shared, 8 barriers): %.2f ms per launch of %d thread-phases; %.1f million thread-phases/s per core (target >= 20)\n' \
  "$(echo "$blk * 1000" | bc -l)" "$phases" "$(echo "$phases / $blk / 1000000" | bc -l)"
