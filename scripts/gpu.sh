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
# It needs no network and installs nothing: gcc, the build's libraries (make checks them),
# python3's standard library, and for the device half a CUDA toolkit (nvcc) and a driver
# with a GPU (nvidia-smi); it says in one line what is missing and does what it can without
# it. It records the machine, GPU, driver and toolkit (machine.txt), warns when the driver
# is older than the toolkit needs, builds every case in parallel, gives each step its own
# time limit and carries on after a failure (steps.tsv), then on a GPU runs
# compute-sanitizer (memcheck, racecheck, synccheck) over the device programs when the
# toolkit has it, and the GPU benches, each bounded; it ends with summary.txt and the
# signed bundle. Everything lands under GPU_OUT.
# Without a GPU it says so, runs the emulated half (and builds the CUDA checker) and exits
# 0 unless that half itself breaks a promise.
#   scripts/gpu.sh --list   prints the programs it runs, one a line, and exits
# Knobs (environment):
#   GPU_PROGRAMS   programs, relative to GPU_SRC (default: every program of examples/ (and
#                  its folders) and of the suite's device folders, tests/gpu/programs,
#                  tests/device/programs and tests/tensor/programs; one with no main or
#                  no observation runs with its driver, tests/gpu/drivers/PATH, appended)
#   GPU_JOBS       parallel builds (nproc); GPU_BUILD_TIMEOUT, GPU_RUN_TIMEOUT,
#                  GPU_BENCH_TIMEOUT, GPU_SANITIZER_TIMEOUT: seconds per step (300, 60,
#                  120, 60); GPU_SANITIZER_BUDGET: seconds for all sanitizer steps (150)
#   GPU_SRC        the folder those paths are relative to (default: the checkout)
#   GPU_CONTRACTS  which observations are held to which bound (tests/gpu/contracts.json)
#   GPU_OUT        scratch folder (build/gpu); GPU_KEY signing key (build/gpu-key/gpu.key)
#   GPU_MACHINE    the machine's name in the evidence path (hostname -s)
#   GPU_TARGET     the target when no GPU is probed (sm_90); GPU_NVCC the nvcc to use
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
jobs_max=${GPU_JOBS:-$(nproc 2>/dev/null || echo 2)}
t_build=${GPU_BUILD_TIMEOUT:-300}
t_run=${GPU_RUN_TIMEOUT:-60}
t_bench=${GPU_BENCH_TIMEOUT:-120}
t_san=${GPU_SANITIZER_TIMEOUT:-60}
san_budget=${GPU_SANITIZER_BUDGET:-150}
drivers=$root/tests/gpu/drivers

# --- the programs: every one of the device folders; one without a main or an observation
# runs with its driver (tests/gpu/drivers/PATH appended); one with neither is named -------
if [ -z "${GPU_PROGRAMS:-}" ]; then
  candidates=$(cd "$src" && ls examples/*.cairn examples/*/*.cairn tests/gpu/programs/*.cairn \
    tests/device/programs/*.cairn tests/tensor/programs/*.cairn 2>/dev/null || true)
  GPU_PROGRAMS=""
  skipped=""
  for p in $candidates; do
    if [ -f "$drivers/$p" ] || grep -q 'observe(' "$src/$p"; then GPU_PROGRAMS+="$p "
    else skipped+="$p "; fi
  done
  [ -n "$skipped" ] && [ "${1:-}" != --list ] && say "skipped (no observation and no driver in tests/gpu/drivers): $skipped"
fi
if [ "${1:-}" = --list ]; then printf '%s\n' $GPU_PROGRAMS; exit 0; fi

# --- what it needs: without gcc or python3 nothing runs; without nvcc or a GPU, the
# emulated half only --------------------------------------------------------------------
missing=""
command -v "$CC" >/dev/null 2>&1 || missing+=" $CC"
command -v python3 >/dev/null 2>&1 || missing+=" python3"
for b in "$CAIRN" "$BIN/cairn-farm" "$BIN/cairn-agent"; do [ -x "$b" ] || missing+=" $b (run make)"; done
if [ -n "$missing" ]; then echo "make gpu: missing:$missing (nothing can run without them)"; exit 2; fi

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
nvcc=${GPU_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
toolkit=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\),.*/\1/p' | head -n 1 || true)
gaps=""
[ -n "$toolkit" ] || gaps+=" nvcc (a CUDA toolkit: not on PATH or in /usr/local/cuda/bin);"
if [ -z "$gpu" ] && [ -z "$standin" ]; then
  if command -v nvidia-smi >/dev/null 2>&1; then gaps+=" a GPU (nvidia-smi finds none);"
  else gaps+=" an NVIDIA driver and GPU (no nvidia-smi);"; fi
fi
[ -n "$gaps" ] && echo "make gpu: missing:${gaps%;}: it stops before the device half"
if [ -n "$toolkit" ] && [ -n "${cuda:-}" ] &&
   [ "$(printf '%s\n%s\n' "$cuda" "$toolkit" | sort -V | head -n 1)" != "$toolkit" ]; then
  echo "make gpu: warning: the driver ($driver, CUDA $cuda) is older than the toolkit (CUDA $toolkit) needs: device programs may not launch (cudaErrorInsufficientDriver)"
fi
halves="emulated"   # the device half needs the GPU, and nvcc unless a stand-in runs it
if [ -n "$gpu" ] && { [ -n "$toolkit" ] || [ -n "$standin" ]; }; then halves="emulated device"; fi
[ -n "$standin" ] && say "device half: the stand-in $standin (not a GPU: the bundle stays in $out)"

version=$("$CAIRN" --version | awk '{print $NF}')
# The emulated half builds with --target sm_XX --emulate; a cairn without --emulate builds
# it for the host, where device work runs emulated as well (docs/devices.md).
emulated_flags=(--emulate)
if ! "$CAIRN" build --help 2>&1 | grep -q -e --emulate; then
  emulated_flags=()
  say "this cairn has no --emulate: the emulated half builds for the host target"
fi

rm -rf "$out"
mkdir -p "$out"
# The machine, GPU, driver and toolkit, as found.
{ echo "date: $(date -u +%FT%TZ)"; echo "host: $(uname -a)"; echo "cpus: $(nproc 2>/dev/null)"
  echo "memory: $(awk '/MemTotal/ {print $2, $3}' /proc/meminfo 2>/dev/null)"
  echo "cairn: $("$CAIRN" --version)"; echo "compiler: $("$CC" --version | head -n 1)"
  echo "toolkit: ${toolkit:-none} ($nvcc)"; echo "gpu: ${gpu:-none}"; echo "driver CUDA: ${cuda:-none}"
  echo "compute-sanitizer: $(command -v compute-sanitizer || ls "$(dirname "$nvcc")/compute-sanitizer" 2>/dev/null || echo none)"
  echo "--- nvidia-smi"; nvidia-smi 2>&1 || true; } >"$out/machine.txt"
# Every step: NAME, STATUS (ok, failed, timeout, skipped; a run's nonzero exit is
# "exit N") and seconds, in steps.tsv.
step() { printf '%s\t%s\t%s\n' "$1" "$2" "${3:-0}" >>"$out/steps.tsv"; }
# timed NAME LIMIT LOG CMD...: CMD under its own time limit, recorded as a step.
timed() {
  local name=$1 limit=$2 log=$3 t0=$SECONDS rc=0
  shift 3
  # (the braces keep bash's "Aborted" line of a trapping program out of the output)
  { timeout "$limit" "$@" >"$log" 2>&1; } 2>/dev/null || rc=$?
  local status=ok
  [ "$rc" -eq 124 ] && status=timeout
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && status=failed
  # a program's own exit is its result, judged by the checker (a trap may be the promise)
  [ "$status" = failed ] && [ "${name%% *}" = run ] && status="exit $rc"
  step "$name" "$status" $((SECONDS - t0))
  return "$rc"
}

# --- both halves -----------------------------------------------------------------------
# build_case HALF PROG: build PROG (with its driver appended, when it has one) for HALF
# into OUT/HALF/PROG/, under its own time limit; run_case HALF PROG runs it with raw
# observations and writes meta.json (build and exit statuses) for the checker.
build_case() {
  local half=$1 prog=$2 dir=$out/$1/$2 build_status=0 source=$2
  local flags=(--cc "$CC")
  if [ "$half" = device ] && [ -z "$standin" ]; then
    flags+=(--target "$target")
  elif [ ${#emulated_flags[@]} -gt 0 ]; then
    flags+=(--target "$target" "${emulated_flags[@]}")
  fi
  mkdir -p "$dir/raw"
  if [ -f "$drivers/$prog" ]; then
    source=$out/src/$half/$prog
    mkdir -p "$(dirname "$source")"
    cat "$src/$prog" "$drivers/$prog" >"$source"
  fi
  (cd "$src" && timed "build $half $prog" "$t_build" "$dir/build.log" \
     "$CAIRN" build "$source" -o "$dir/prog" "${flags[@]}") || build_status=$?
  echo "$build_status" >"$dir/build_status"
}
run_case() {
  local half=$1 prog=$2 dir=$out/$1/$2 exit_status=0 runner=()
  local build_status
  build_status=$(cat "$dir/build_status")
  [ "$half" = device ] && [ -n "$standin" ] && runner=("$standin")
  if [ "$build_status" -eq 0 ]; then
    (cd "$src" && CAIRN_OBSERVE="$dir/observe.jsonl" CAIRN_OBSERVE_RAW="$dir/raw" \
       timed "run $half $prog" "$t_run" "$dir/run.log" "${runner[@]}" "$dir/prog") || exit_status=$?
  else
    step "run $half $prog" skipped
  fi
  printf '{"case": "%s", "half": "%s", "build_status": %d, "exit_status": %d}\n' \
    "$prog" "$half" "$build_status" "$exit_status" >"$dir/meta.json"
  printf '   %-9s %-44s build %d exit %d\n' "$half" "$prog" "$build_status" "$exit_status"
}

say "building $(echo $GPU_PROGRAMS | wc -w) programs ($halves), $jobs_max at a time, then running them"
for half in $halves; do
  mkdir -p "$out/$half"
  mode=$half
  [ "$half" = device ] && [ -n "$standin" ] && mode=device-standin
  python3 -c 'import json,sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
    id "$half" machine "$machine" mode "$mode" target "$target" compiler "$CC" \
    cairn_version "$version" gpu "${gpu_name:-none}" driver "${driver:-}" cuda "${cuda:-}" \
    >"$out/$half/cell.json"
  for prog in $GPU_PROGRAMS; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
    build_case "$half" "$prog" &
  done
done
wait
for half in $halves; do
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
if [ -n "$standin" ]; then
  say "bracket GEMM on the device: the stand-in runs no CUDA code, not built"
elif [ ! -x "$nvcc" ]; then
  say "bracket GEMM on the device: no nvcc here, not built"
elif ! (cd "$root" && timeout "$t_build" "$nvcc" -arch="$target" -O2 --fmad=false -std=c++17 -Iruntime -Itools \
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

# --- compute-sanitizer over the device programs, then the GPU benches, each bounded -----
extra_status=0
sanitizer=$(command -v compute-sanitizer || echo "$(dirname "$nvcc")/compute-sanitizer")
if [ -z "$gpu" ] || [ -n "$standin" ]; then
  say "compute-sanitizer and the GPU benches: no GPU here, not run"
elif [ ! -x "$sanitizer" ]; then
  say "compute-sanitizer: not in this toolkit, not run"
  step "compute-sanitizer" skipped
else
  mkdir -p "$out/sanitizer"
  san_start=$SECONDS
  for prog in $GPU_PROGRAMS; do
    dir=$out/device/$prog
    [ "$(cat "$dir/build_status")" -eq 0 ] || continue
    for tool in memcheck racecheck synccheck; do
      name="sanitizer $tool $prog"
      if [ $((SECONDS - san_start)) -ge "$san_budget" ]; then step "$name" skipped; continue; fi
      log=$out/sanitizer/$(echo "$prog" | tr / _).$tool.log
      rc=0
      (cd "$src" && CAIRN_OBSERVE=/dev/null timed "$name" "$t_san" "$log" \
         "$sanitizer" --tool "$tool" --error-exitcode 99 "$dir/prog") || rc=$?
      # a trap's exit is the program's own; the sanitizer's exit (99) is a finding
      [ "$rc" -eq 99 ] && extra_status=1
    done
  done
  say "compute-sanitizer: $(grep -c '^sanitizer' "$out/steps.tsv") steps, logs in ${out#$root/}/sanitizer"
fi
if [ -n "$gpu" ] && [ -z "$standin" ]; then
  mkdir -p "$out/bench"
  for b in bench_gpu_reduce.sh:"26 5" bench_enclose_cuda.sh: bench_mma_cublas.sh:; do
    script=${b%%:*}
    (cd "$root" && ARCH=$target timed "bench $script" "$t_bench" "$out/bench/${script%.sh}.log" \
       sh "tests/bench/$script" ${b#*:}) || extra_status=1
    say "bench $script: $(tail -n 1 "$out/steps.tsv" | cut -f2) (${out#$root/}/bench/${script%.sh}.log)"
  done
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

# --- the summary -------------------------------------------------------------------------
{ echo "make gpu on $machine: target $target, GPU ${gpu_name:-none}, driver ${driver:-none} (CUDA ${cuda:-none}), toolkit ${toolkit:-none}"
  [ -n "$gaps" ] && echo "missing:${gaps%;}"
  awk -F'\t' '{n[$2]++} END {printf "steps: %d", NR; for (s in n) printf ", %s %d", s, n[s]; print ""}' "$out/steps.tsv"
  awk -F'\t' '$2 == "failed" || $2 == "timeout" || $2 ~ /^exit/ {print "  " $2 ": " $1}' "$out/steps.tsv"
  echo "verdicts: $(python3 -c 'import json,sys,collections; c=collections.Counter(r["verdict"] for r in json.load(open(sys.argv[1]))["cases"]); print(", ".join("%s %d" % kv for kv in sorted(c.items())))' "$out/verdicts.json")"
  echo "bracket GEMM frozen cases: $([ "$enclose_status" -eq 0 ] && echo ok || echo FAILED)"
  echo "bundle: ${dest#$root/}/bundle.dsse.json; everything: ${out#$root/}"
  echo "time: ${SECONDS}s"; } >"$out/summary.txt"
say "summary (${out#$root/}/summary.txt)"
cat "$out/summary.txt"
[ "$verdict_status" -ne 0 ] && exit "$verdict_status"
[ "$enclose_status" -ne 0 ] && exit "$enclose_status"
exit "$extra_status"
