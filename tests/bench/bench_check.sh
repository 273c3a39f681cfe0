#!/bin/sh
# bench_check.sh: how fast the front end is. Times `cairn check` on a generated CAIRN
# program of about 100,000 lines against `cc -fsyntax-only` on the same program written
# in C (the same functions, loops, branches and calls), best of 3 runs each (CPU time), and prints
# the ratio. Target: the front end is not slower than the C compiler's own parse.
# Uses CAIRN_BIN (the folder holding cairn) and CAIRN_CC (gcc|clang, default cc).
set -eu
cd "$(dirname "$0")/../.."
BIN=${CAIRN_BIN:-bin}
CC_PARSE=${CAIRN_CC:-cc}
LINES=${BENCH_LINES:-100000}
OUT=build/bench/check
mkdir -p "$OUT"
/usr/bin/python3 - "$LINES" "$OUT" <<'PY'
import sys
lines, out = int(sys.argv[1]), sys.argv[2]
fns = lines // 12
cairn, c = [], ["#include <stddef.h>\n"]
for i in range(fns):
    call = f" + g{i - 1}(n, x, y, a)" if i else ""
    cairn.append(f"""fn g{i}(n:usize, x:ro<f64>[n], y:rw<f64>[n], a:f64) -> f64 {{
  let mut s:f64 = 0.0;
  for j in 0..n {{
    y[j] = a * x[j] + y[j];
    s += y[j] * 2.0;
  }}
  if s > 1.0 {{ s = s / 3.0; }} else {{ s = s - 1.0; }}
  let t = reduce + for k in n yield x[k] * y[k];
  let u:i64 = i64(n) * 3 + 7;
  return s + t + f64(u){call};
}}

""")
    c.append(f"""double g{i}(size_t n, const double *x, double *y, double a) {{
  double s = 0.0;
  for (size_t j = 0; j < n; j++) {{
    y[j] = a * x[j] + y[j];
    s += y[j] * 2.0;
  }}
  if (s > 1.0) {{ s = s / 3.0; }} else {{ s = s - 1.0; }}
  double t = 0.0; for (size_t k = 0; k < n; k++) {{ t += x[k] * y[k]; }}
  long long u = (long long)n * 3 + 7;
  return s + t + (double)u{call};
}}

""")
cairn.append("fn main() -> i32 { return 0; }\n")
c.append("int main(void) { return 0; }\n")
open(f"{out}/big.cairn", "w").write("".join(cairn))
open(f"{out}/big.c", "w").write("".join(c))
PY
# CPU seconds (user + system) of the best of 3 runs: on a shared machine the wall clock
# measures the neighbours, the CPU time measures the work.
best() {
  b=""
  for _ in 1 2 3; do
    /usr/bin/time -o "$OUT/time" -f "%U %S" "$@" >/dev/null 2>&1 || { echo "bench_check: '$*' failed" >&2; exit 1; }
    t=$(awk '{print $1 + $2}' "$OUT/time")
    [ -n "$t" ] || { echo "bench_check: '$*' failed" >&2; exit 1; }
    if [ -z "$b" ] || [ "$(echo "$t < $b" | bc -l)" = 1 ]; then b=$t; fi
  done
  echo "$b"
}
"$BIN/cairn" check "$OUT/big.cairn" || { echo "bench_check: the generated program was refused" >&2; exit 1; }
cairn_t=$(best "$BIN/cairn" check "$OUT/big.cairn")
cc_t=$(best "$CC_PARSE" -std=c11 -fsyntax-only "$OUT/big.c")
printf 'bench_check: %s lines of CAIRN, %s of C\n' "$(wc -l < "$OUT/big.cairn")" "$(wc -l < "$OUT/big.c")"
printf 'bench_check: CPU time: cairn check %.2f s, %s -fsyntax-only %.2f s, ratio cairn/cc %.2f (target <= 1)\n' \
  "$cairn_t" "$CC_PARSE" "$cc_t" "$(echo "$cairn_t / $cc_t" | bc -l)"
