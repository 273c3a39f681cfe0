#!/bin/sh
# bench_enclose_cuda.sh: `make bench` entry for the bracket GEMM's CUDA backend, one
# prepared run for a GPU host (an H200 when one is lent). Builds
# tests/bench/enclose_cuda_bench.cu with nvcc for the GPU's architecture (ARCH, else the
# probed one, else sm_90) with the runtime's bracket GEMM sources and cuBLAS, then times
# the CUDA backend at 256x1024x256 and 4096^3 f64 against cuBLAS DGEMM on the same device
# arrays and against the CPU backend on the host, and compares the device's bits with the
# host's (SHA-256 and element by element). Without nvcc or a GPU it says so and exits 0
# (with nvcc it still builds the benchmark, so the code is known to compile).
set -eu
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    echo "usage: bench_enclose_cuda.sh [REPS] [--small]   (ARCH=sm_NN; needs nvcc and a GPU)"
    exit 0
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ ! -x "$NVCC" ]; then
    echo "bench_enclose_cuda: skipped (no nvcc)"
    exit 0
fi
cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .' || true)
arch=${ARCH:-sm_${cap:-90}}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && "$NVCC" -arch="$arch" -O2 --fmad=false -std=c++17 -Iruntime \
    tests/bench/enclose_cuda_bench.cu runtime/cairn_enclose_cuda.cu runtime/cairn_enclose.c \
    runtime/cairn_enclose_x86.c runtime/cairn_enclose_amx.c runtime/cairn_enclose_residue.c \
    runtime/cairn_enclose_digest.c runtime/cairn_pool.c -lcublas -lcrypto -Xcompiler -pthread \
    -o "$tmp/enclose_cuda_bench")
if [ -z "$cap" ]; then
    echo "bench_enclose_cuda: built for $arch; no GPU here, not run"
    exit 0
fi
"$tmp/enclose_cuda_bench" "$@"
