#!/bin/sh
# bench_gpu_reduce.sh: device reductions on one GPU (issue 23): a copy kernel's bandwidth,
# the exact device sum of 2^28 f32 and f64 (its bits checked against the host's exact
# sum), an integer reduce + of i32, each as a fraction of the copy bandwidth (targets 70%
# and 85%) and against cub::DeviceReduce::Sum of the same terms
# (tests/bench/reduce_cub.cu says what is timed). make bench runs it; it needs nvcc, and a
# GPU to run: without one it still compiles everything and says so.
# usage: bench_gpu_reduce.sh [LOG2_TERMS] [RUNS]   (ARCH=sm_NN, default: the GPU's, else sm_90)
set -e
if [ "$1" = "--help" ] || [ "$1" = "-h" ]; then
  echo "usage: bench_gpu_reduce.sh [LOG2_TERMS (28)] [RUNS (9)]   (ARCH=sm_NN; needs nvcc)"
  exit 0
fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
CC=${CC:-gcc}
[ -x "$NVCC" ] || { echo "bench_gpu_reduce: skipped (no nvcc)"; exit 0; }
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .' || true)
ARCH=${ARCH:-sm_${cap:-90}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
R=$ROOT/runtime
for c in cairn_dsum cairn_sum cairn_pool cairn_trap cairn_observe; do
  "$CC" -std=c11 -O2 -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math -D_GNU_SOURCE \
    -I"$R" -c "$R/$c.c" -o "$tmp/$c.o"
done
"$NVCC" -arch="$ARCH" -std=c++17 -O2 --fmad=false -prec-div=true -prec-sqrt=true -ftz=false \
  -Xcompiler -Wall,-Wextra,-ffp-contract=off,-fno-fast-math -DCAIRN_CUDA=1 -I"$R" \
  "$ROOT/tests/bench/reduce_cub.cu" "$tmp"/*.o -o "$tmp/reduce_cub" \
  -lm -lcrypto -lcjson -Xcompiler -pthread
if [ -z "$cap" ]; then
  echo "bench_gpu_reduce: compiled for $ARCH (reduce_cub.cu and the runtime); not run: no GPU here"
  exit 0
fi
"$tmp/reduce_cub" "${1:-28}" "${2:-9}"
