#!/bin/sh
# bench_predict.sh: cairn predict --device host against cairn bench, for five programs on
# one core (CAIRN_THREADS=1, taskset when present): the predicted roofline time, the
# measured wall and CPU time of one call, and their ratio (measured / predicted). A
# roofline is a lower bound, so ratios above 1 are expected; what matters is how far.
# On a shared machine the wall clock includes waiting for a core: the CPU time is the
# fairer figure. Uses CAIRN_BIN (the folder holding cairn).
set -eu
cd "$(dirname "$0")/../.."
BIN=${CAIRN_BIN:-bin}
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"
export CAIRN_THREADS=1
/usr/bin/python3 - "$BIN/cairn" "$PIN" <<'PY'
import json, subprocess, sys
cairn, pin = sys.argv[1], sys.argv[2].split()
CASES = [  # (file, function, sizes)
    ("tests/predict/kernels.cairn", "dot", "n=4194304"),
    ("tests/predict/kernels.cairn", "saxpy", "n=4194304,a=1.5"),
    ("tests/predict/kernels.cairn", "matmul", "m=192,n=192,k=192"),
    ("tests/predict/shapes.cairn", "tri", "n=2048"),
    ("examples/exact_dot.cairn", "dot_exact", "n=1048576"),
]
print(f"{'function':>10} {'sizes':>20} {'predicted s':>12} {'bound':>12} {'wall s':>10} {'CPU s':>10} "
      f"{'wall/pred':>9} {'CPU/pred':>9}")
for path, fn, sizes in CASES:
    p = subprocess.run(pin + [cairn, "predict", path, "--device", "host", "--function", fn, "--size", sizes,
                              "--json"], capture_output=True, text=True, check=True)
    f = json.loads(p.stdout)["functions"][0]
    b = subprocess.run(pin + [cairn, "bench", path, "--function", fn, "--size", sizes, "--json"],
                       capture_output=True, text=True, check=True)
    m = json.loads(b.stdout)
    pred = f["time_s"]
    print(f"{fn:>10} {sizes:>20} {pred:>12.4g} {f['bound']:>12} {m['wall_s_per_call']:>10.4g} "
          f"{m['cpu_s_per_call']:>10.4g} {m['wall_s_per_call'] / pred:>9.2f} {m['cpu_s_per_call'] / pred:>9.2f}")
PY
