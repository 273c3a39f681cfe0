#!/bin/sh
# bench_cr.sh: ns per call of the correctly rounded math (runtime/cairn_cr.h) against
# glibc's expf, logf, tanhf, ..., exp and log, as ratios measured in this one run
# (tests/bench/bench_cr.c); then the array forms (cairn_cr_array.h) of exp, log, tanh, sin
# in elements per ns over 4K, 256K and 16M f32 against glibc's scalar loop and numpy's
# np.exp/np.log/np.tanh/np.sin on float32 (out= given), in the same run. `make bench` runs it
# with CAIRN_TBIN set. numpy runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset.
# Usage: bench_cr.sh [N [REPS]]   (default: 65536 inputs per function, best of 15 rounds)
set -eu
case "${1:-}" in -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
tbin=${CAIRN_TBIN:-$(dirname "$0")/../../build/obj/tbin}
if [ ! -x "$tbin/bench_cr" ]; then
    echo "bench_cr.sh: $tbin/bench_cr not built (run make, or set CAIRN_TBIN)" >&2
    exit 2
fi
"$tbin/bench_cr" "$@"
reps=${2:-15}
ours=$("$tbin/bench_cr" array "$reps")
numpy=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 - "$reps" <<'PY'
import sys, timeit
import numpy as np
reps = int(sys.argv[1])
r = np.random.default_rng(1)
for name, f, lo, hi in [("exp", np.exp, -87, 88), ("log", np.log, 0, 0), ("tanh", np.tanh, -10, 10),
                       ("sin", np.sin, -10, 10)]:
    for n in (4096, 262144, 16777216):
        if lo == hi:  # any positive finite f32 pattern, as bench_cr.c
            x = r.integers(1, 0x7F800000, n, dtype=np.uint32).view(np.float32)
        else:
            x = r.uniform(lo, hi, n).astype(np.float32)
        o = np.empty_like(x)
        num = 1 if n > 1 << 20 else (1 << 22) // n
        t = min(timeit.repeat(lambda: f(x, out=o), number=num, repeat=max(2, reps if n < 1 << 20 else (reps + 3) // 4))) / num
        print(name, n, "%.4f" % (n / t * 1e-9))
PY
)
echo
printf '%-6s %9s %8s %10s %10s %10s %9s %9s\n' array N kernel "cairn/ns" "glibc/ns" "numpy/ns" "vs glibc" "vs numpy"
echo "$ours" | while read -r _ f n k c g; do
  p=$(echo "$numpy" | awk -v f="$f" -v n="$n" '$1 == f && $2 == n { print $3 }')
  awk -v f="$f" -v n="$n" -v k="$k" -v c="$c" -v g="$g" -v p="$p" 'BEGIN {
    printf "%-6s %9d %8s %10.3f %10.3f %10.3f %8.2fx %8.2fx\n", f, n, k, c, g, p, c / g, c / p }'
done
