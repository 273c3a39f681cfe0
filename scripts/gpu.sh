#!/usr/bin/env bash
# scripts/gpu.sh (`make gpu`): the device checks on one GPU host, without a coordinator.
# Probes the GPU's target (nvidia-smi --query-gpu=compute_cap), builds every program for
# it twice, as a CUDA executable (--target sm_XX) and emulated (--target sm_XX --emulate),
# runs both halves with every observation's raw bits written (CAIRN_OBSERVE_RAW), and
# checks each observation by the spec's table (numerics.md, "Emulated device runs"):
# equal bits where the language fixes them; within the contract's bound of an exact
# rational reference where the order is the hardware's (tests/gpu/gpucheck.py). The
# verdicts are `cairn-farm compare`'s over the two halves; the bundle is signed by
# `cairn-agent sign` in the format the agents file, under
# evidence/<version>/gpu/<machine>/ (a real GPU) or $GPU_OUT/bundle (a stand-in).
#
# The bracket GEMM's frozen case set (tests/data/enclose) is bracketed on the device by
# tools/enclose_check_cuda and compared by SHA-256 with the committed digest and case by
# case with the host's bits.
#
# Without a GPU it says so, runs the emulated half (and builds the CUDA checker) and exits
# 0 unless that half itself breaks a promise. Knobs (environment):
#   GPU_PROGRAMS   programs, relative to GPU_SRC (default: those of examples/ (and its
#                  folders, examples/tensor) and
#                  the suite's device programs, tests/gpu/programs/*.cairn and
#                  tests/device/programs/*.cairn, that observe something)
#   GPU_SRC        the folder those paths are relative to (default: the checkout)
#   GPU_CONTRACTS  which observations are held to which bound (tests/gpu/contracts.json)
#   GPU_OUT        scratch folder (build/gpu); GPU_KEY signing key (build/gpu-key/gpu.key)
#   GPU_MACHINE    the machine's name in the evidence path (hostname -s)
#   GPU_TARGET     the target when no GPU is probed (sm_90)
#   CAIRN_GPU_STANDIN  a program that runs the device half instead of a GPU (the tests
#                  use tests/farm/fake_gpu/device-runner); its bundle stays out of evidence/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$root/bin}
CAIRN=${CAIRN:-$BIN/cairn}
CC=${CC:-gcc}
src=$(cd "${GPU_SRC:-$root}" && pwd)
out=${GPU_OUT:-$root/build/gpu}
key=${GPU_KEY:-$root/build/gpu-key/gpu.key}
standin=${CAIRN_GPU_STANDIN:-}
export GPU_CONTRACTS=${GPU_CONTRACTS:-$root/tests/gpu/contracts.json}
machine=$(echo "${GPU_MACHINE:-$(hostname -s)}" | tr -c 'A-Za-z0-9._+\n-' '_')
say() { printf '== %s\n' "$*"; }

# --- the GPU ---------------------------------------------------------------------------
gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total \
        --format=csv,noheader,nounits 2>/dev/null | head -n 1 || true)
if [ -n "$gpu" ]; then
  IFS=, read -r gpu_name cap driver mem <<<"$(echo "$gpu" | sed 's/ *, */,/g;s/^ *//;s/ *$//')"
  cap=${cap//./}
  target=sm_$cap
  cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1/p' | head -n 1)
  say "GPU: $gpu_name, compute capability $cap (target $target), driver $driver, CUDA ${cuda:-?}"
else
  target=${GPU_TARGET:-sm_90}
  say "make gpu: no GPU here (nvidia-smi finds none): running the emulated half only, for $target"
fi
halves="emulated"
if [ -n "$gpu" ]; then halves="emulated device"; fi
[ -n "$standin" ] && say "device half: the stand-in $standin (not a GPU: the bundle stays in $out)"

version=$("$CAIRN" --version | awk '{print $NF}')
# The emulated half builds with --target sm_XX --emulate; a cairn without --emulate builds
# it for the host, where device work runs emulated as well (docs/devices.md).
emulated_flags=(--emulate)
if ! "$CAIRN" build --help 2>&1 | grep -q -e --emulate; then
  emulated_flags=()
  say "this cairn has no --emulate: the emulated half builds for the host target"
fi
if [ -z "${GPU_PROGRAMS:-}" ]; then   # a program that observes nothing gives no evidence
  candidates="examples/*.cairn examples/*/*.cairn tests/gpu/programs/*.cairn tests/device/programs/*.cairn"
  GPU_PROGRAMS=$(cd "$src" && grep -l 'observe(' $candidates 2>/dev/null || true)
  skipped=$(cd "$src" && grep -L 'observe(' $candidates 2>/dev/null || true)
  [ -n "$skipped" ] && say "skipped (they observe nothing): $(echo $skipped)"
fi

rm -rf "$out"
mkdir -p "$out"

# --- both halves -----------------------------------------------------------------------
# One case: build PROG for HALF into OUT/HALF/PROG/, run it with raw observations, and
# write meta.json (build and exit statuses) for the checker.
run_case() {
  local half=$1 prog=$2 dir=$out/$1/$2 build_status=0 exit_status=0
  local flags=(--cc "$CC") runner=()
  if [ "$half" = device ] && [ -z "$standin" ]; then
    flags+=(--target "$target")
  elif [ ${#emulated_flags[@]} -gt 0 ]; then
    flags+=(--target "$target" "${emulated_flags[@]}")
  fi
  [ "$half" = device ] && [ -n "$standin" ] && runner=("$standin")
  mkdir -p "$dir/raw"
  (cd "$src" && "$CAIRN" build "$prog" -o "$dir/prog" "${flags[@]}") >"$dir/build.log" 2>&1 ||
    build_status=$?
  if [ "$build_status" -eq 0 ]; then
    (cd "$src" && CAIRN_OBSERVE="$dir/observe.jsonl" CAIRN_OBSERVE_RAW="$dir/raw" \
       timeout 600 "${runner[@]}" "$dir/prog") >"$dir/run.log" 2>&1 || exit_status=$?
  fi
  printf '{"case": "%s", "half": "%s", "build_status": %d, "exit_status": %d}\n' \
    "$prog" "$half" "$build_status" "$exit_status" >"$dir/meta.json"
  printf '   %-9s %-44s build %d exit %d\n' "$half" "$prog" "$build_status" "$exit_status"
}

say "building and running $(echo $GPU_PROGRAMS | wc -w) programs: $halves"
for half in $halves; do
  mkdir -p "$out/$half"
  mode=$half
  [ "$half" = device ] && [ -n "$standin" ] && mode=device-standin
  python3 -c 'import json,sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
    id "$half" machine "$machine" mode "$mode" target "$target" compiler "$CC" \
    cairn_version "$version" gpu "${gpu_name:-none}" driver "${driver:-}" cuda "${cuda:-}" \
    >"$out/$half/cell.json"
  for prog in $GPU_PROGRAMS; do run_case "$half" "$prog"; done
done

# --- the bracket GEMM's frozen case set -----------------------------------------------------
# The CUDA backend (tools/enclose_check_cuda.cu) over tests/data/enclose/cases.txt: the
# SHA-256 of its raw lo/hi bits against the committed digest, which the host's integer
# core (bin/enclose_check) reproduces too, and every case against the host's bits; then
# the seed's case families (tests/data/enclose/make_families.py) against the host's bits.
enclose_status=0
enclose_cases=$root/tests/data/enclose/cases.txt
enclose_want=$(awk '{print $1; exit}' "$root/tests/data/enclose/cases.sha256")
enclose_host=$("$BIN/enclose_check" "$enclose_cases" "$out/enclose_host.bin" 2>/dev/null &&
  sha256sum "$out/enclose_host.bin" | awk '{print $1}' || echo failed)
say "bracket GEMM frozen cases: committed $enclose_want, host $enclose_host"
[ "$enclose_host" = "$enclose_want" ] || enclose_status=1
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [ -n "$standin" ]; then
  say "bracket GEMM on the device: the stand-in runs no CUDA code, not built"
elif [ ! -x "$nvcc" ]; then
  say "bracket GEMM on the device: no nvcc here, not built"
elif ! (cd "$root" && "$nvcc" -arch="$target" -O2 --fmad=false -std=c++17 -Iruntime -Itools \
          tools/enclose_check_cuda.cu runtime/cairn_enclose_cuda.cu tools/enclose_casefile.c \
          runtime/cairn_enclose.c runtime/cairn_enclose_x86.c runtime/cairn_enclose_amx.c \
          runtime/cairn_enclose_residue.c runtime/cairn_pool.c -Xcompiler -pthread \
          -o "$out/enclose_check_cuda") \
        >"$out/enclose_build.log" 2>&1; then
  say "bracket GEMM on the device: the CUDA checker does not build ($out/enclose_build.log)"
  enclose_status=1
elif [ -z "$gpu" ]; then
  say "bracket GEMM on the device: built for $target; no GPU here, not run"
elif "$out/enclose_check_cuda" --check-host "$enclose_cases" "$out/enclose_device.bin"; then
  enclose_device=$(sha256sum "$out/enclose_device.bin" | awk '{print $1}')
  say "bracket GEMM on the device: $enclose_device, every case equal to the host's bits"
  [ "$enclose_device" = "$enclose_want" ] || enclose_status=1
  # and the seed's case families (tests/runtime/enclose_families.py), case by case
  python3 "$root/tests/data/enclose/make_families.py" "$out/enclose_families.txt" --long &&
    "$out/enclose_check_cuda" --check-host "$out/enclose_families.txt" "$out/enclose_families.bin" ||
    enclose_status=1
else
  say "bracket GEMM on the device: FAILED (see above)"
  enclose_status=1
fi

# --- verdicts --------------------------------------------------------------------------
python3 "$root/tests/gpu/gpucheck.py" results "$out"
set +e
"$BIN/cairn-farm" compare "$out/results.json" --json >"$out/verdicts.json"
verdict_status=$?
set -e
say "verdicts (cairn-farm compare $out/results.json)"
"$BIN/cairn-farm" compare "$out/results.json" || true

# --- the signed bundle -----------------------------------------------------------------
machine_json=$(python3 -c 'import json,sys; print(json.dumps({"name": sys.argv[1],
  "gpus": [{"name": sys.argv[2], "compute_cap": sys.argv[3], "driver": sys.argv[4],
  "memory_mib": float(sys.argv[5] or 0)}] if sys.argv[2] else [], "cuda": sys.argv[6]}))' \
  "$machine" "${gpu_name:-}" "${cap:-}" "${driver:-}" "${mem:-}" "${cuda:-}")
python3 "$root/tests/gpu/gpucheck.py" predicate "$out" "$machine_json"
if [ ! -f "$key" ]; then
  mkdir -p "$(dirname "$key")"
  "$BIN/cairn-agent" keygen "$key" >/dev/null
fi
"$BIN/cairn-agent" sign --predicate "$out/predicate.json" --files "$out/bundle" --key "$key" >/dev/null
dest=$out/bundle
if [ -n "$gpu" ] && [ -z "$standin" ]; then
  dest=$root/evidence/$version/gpu/$machine
  rm -rf "$dest"
  mkdir -p "$(dirname "$dest")"
  cp -r "$out/bundle" "$dest"
fi
"$BIN/cairn-farm" verify "$dest/bundle.dsse.json" --key "$dest/agent.pub.pem" | head -n 1
say "bundle: ${dest#$root/}/bundle.dsse.json (public key beside it: agent.pub.pem)"
if [ -z "$gpu" ]; then
  echo "make gpu: no GPU: only the emulated half ran (run make gpu on a GPU host for device evidence)"
fi
[ "$enclose_status" -eq 0 ] || say "bracket GEMM frozen cases: FAILED"
[ "$verdict_status" -ne 0 ] && exit "$verdict_status"
exit "$enclose_status"
