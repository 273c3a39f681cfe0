#!/usr/bin/env bash
# bench_farm.sh: the coordinator under load through its real API. A fresh coordinator on
# loopback, one run of JOBS small jobs (a matrix with "repeat"), AGENTS simulated agents
# (cairn-agent loadgen: enrol, long-poll claim, sign, upload). Prints jobs per second,
# p50/p99 claim latency, and the coordinator's resident memory sampled through the run
# (flat means no growth per job). The baseline in the same run is one agent alone
# working through 200 jobs: the ratio says how far concurrency carries the coordinator.
#   usage: tests/bench/bench_farm.sh [AGENTS] [JOBS]      (defaults 50 and 2000)
set -euo pipefail
AGENTS=${1:-50}
JOBS=${2:-2000}
BIN=${CAIRN_BIN:-$(pwd)/bin}
work=$(mktemp -d "${TMPDIR:-/tmp}/bench_farm.XXXXXX")
farm_pid=""
cleanup() { [ -n "$farm_pid" ] && kill "$farm_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

cat > "$work/farm.json" <<JSON
{"listen": "127.0.0.1:0", "enrol_token": "bench-enrol-token-0123456789",
 "admin_token": "bench-admin-token-0123456789", "lease_seconds": 60,
 "sync": "${CAIRN_FARM_SYNC:-full}"}
JSON
"$BIN/cairn-farm" serve --state "$work/state" --config "$work/farm.json" 2>"$work/farm.log" &
farm_pid=$!
for _ in $(seq 100); do [ -f "$work/state/serve.json" ] && break; sleep 0.05; done
url=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' \
      "$work/state/serve.json")
rss() { awk '/VmRSS/ {print $2}' "/proc/$farm_pid/status"; }

mkdir -p "$work/src/examples"
echo '// one small case' > "$work/src/examples/one.cairn"
half=$((JOBS / 2))
echo "{\"compilers\": [\"gcc\", \"clang\"], \"repeat\": $half}" > "$work/matrix.json"
export CAIRN_FARM_URL=$url CAIRN_FARM_TOKEN=bench-admin-token-0123456789
"$BIN/cairn-farm" submit --matrix "$work/matrix.json" "$work/src" >/dev/null

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rss_start=$(rss)
( while kill -0 "$farm_pid" 2>/dev/null; do rss >> "$work/rss"; sleep 0.25; done ) &
sampler=$!
result=$("$BIN/cairn-agent" loadgen --coordinator "$url" --token bench-enrol-token-0123456789 \
         --agents "$AGENTS" --jobs "$((half * 2))")
kill $sampler 2>/dev/null || true
rss_end=$(rss)
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
rss_max=$(sort -n "$work/rss" | tail -n 1)

# Baseline: one agent alone through 200 jobs.
echo '{"compilers": ["gcc"], "repeat": 200}' > "$work/matrix1.json"
"$BIN/cairn-farm" submit --matrix "$work/matrix1.json" "$work/src" >/dev/null
base=$("$BIN/cairn-agent" loadgen --coordinator "$url" --token bench-enrol-token-0123456789 \
       --agents 1 --jobs 200)
echo "bench_farm: $AGENTS agents, $((half * 2)) jobs on $(nproc) cores, sync ${CAIRN_FARM_SYNC:-full}, state in ${TMPDIR:-/tmp} (machine shared: figures are upper bounds on latency)"
echo "bench_farm: load average before $load_before, after $load_after"
echo "bench_farm: $result"
echo "bench_farm: baseline, 1 agent: $base"
echo "bench_farm: coordinator RSS start ${rss_start} KiB, max ${rss_max} KiB, end ${rss_end} KiB"
/usr/bin/python3 - "$result" "$base" <<'PY'
import json, sys
r, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"bench_farm: {r['agents']} agents vs 1 agent: jobs/s ratio {r['jobs_per_s'] / b['jobs_per_s']:.2f}")
print(f"bench_farm: jobs/s {r['jobs_per_s']:.0f} (target >= 500: ratio {r['jobs_per_s'] / 500:.2f}), "
      f"claim p50 {r['claim_p50_ms']:.1f} ms, p99 {r['claim_p99_ms']:.1f} ms "
      f"(target < 50 ms: ratio {r['claim_p99_ms'] / 50:.2f})")
PY
