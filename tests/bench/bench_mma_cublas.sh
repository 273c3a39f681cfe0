#!/bin/sh
# bench_mma_cublas.sh: mma_unordered's device tiling against cuBLAS cublasGemmEx on one GPU
# (make bench; needs nvcc and a GPU, says so and skips otherwise). Builds
# tests/bench/mma_cublas.cu for the GPU's architecture (ARCH, else nvidia-smi's compute
# capability of GPU 0, else sm_90) and runs a
# 4096^3 f16 multiply both ways, each output sample held to the contract's bound.
set -e
if [ "$1" = "--help" ] || [ "$1" = "-h" ]; then
  echo "usage: bench_mma_cublas.sh [N]   (ARCH=sm_NN; needs nvcc and a GPU)"
  exit 0
fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$NVCC" ] || { echo "bench_mma_cublas: skipped (no nvcc)"; exit 0; }
nvidia-smi -L >/dev/null 2>&1 || { echo "bench_mma_cublas: skipped (no GPU here)"; exit 0; }
if [ -z "$ARCH" ]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
  case "$cap" in [0-9][0-9]|[0-9][0-9][0-9]) ARCH=sm_$cap ;; *) ARCH=sm_90 ;; esac
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$NVCC" -arch="$ARCH" -std=c++17 -O2 --fmad=false -DCAIRN_CUDA=1 -Iruntime tests/bench/mma_cublas.cu \
  runtime/cairn_mma.c runtime/cairn_trap.c runtime/cairn_observe.c -lcublas -lcjson -lcrypto -o "$tmp/mma_cublas"
"$tmp/mma_cublas" "${1:-4096}"
