#!/usr/bin/env bash
# farm/demo.sh (run by `make demo`): the farm's main job on the embedded default. Starts a
# coordinator on loopback with a fresh state folder and one agent, submits the examples
# across gcc and clang plain and gcc with ASan+UBSan (configs/matrix-demo.json: the first
# build of each cell compiles cairn's runtime for it, and clang with ASan takes minutes
# on a small machine; configs/matrix.json is the full product), shows progress,
# prints the comparison, exports the run's signed bundles as folders (cairn-farm export:
# the coordinator stores files by content) and says where they and the agent's public key
# lie, verifies one bundle (with cairn-farm and with the plain openssl command line),
# prints the dashboard's URL while it is up (KEEP=1) or how to serve it again, and stops everything it started, also on Ctrl-C or failure
# (KEEP=1: the coordinator stays up, serving the dashboard, until Ctrl-C).
# tests/farm/test_demo.py runs it whole.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-$(pwd)/bin}
DEMO=${DEMO:-$(pwd)/build/demo}   # DEMO=DIR keeps concurrent demos apart
state=$DEMO/state
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

say() { printf '\n== %s\n' "$*"; }
[ -x "$BIN/cairn" ] || { echo "demo: $BIN/cairn is missing: run make first" >&2; exit 1; }

rm -rf "$DEMO"
mkdir -p "$DEMO"
token() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
enrol_token=$(token) admin_token=$(token)
cat > "$DEMO/farm.json" <<JSON
{"listen": "127.0.0.1:0", "enrol_token": "$enrol_token", "admin_token": "$admin_token",
 "lease_seconds": 30, "sync": "full"}
JSON

say "coordinator: cairn-farm serve (state in $state, log $DEMO/farm.log)"
"$BIN/cairn-farm" serve --state "$state" --config "$DEMO/farm.json" 2>"$DEMO/farm.log" &
pids+=($!)
for _ in $(seq 100); do [ -f "$state/serve.json" ] && break; sleep 0.1; done
url=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$state/serve.json")
echo "listening on $url"
export CAIRN_FARM_URL=$url CAIRN_FARM_TOKEN=$admin_token

say "agent: cairn-agent keygen, then cairn-agent run (probes gcc, clang, sanitizers, GPUs)"
"$BIN/cairn-agent" keygen "$DEMO/agent.key"
(umask 077 && printf '%s\n' "$enrol_token" > "$DEMO/enrol-token")
"$BIN/cairn-agent" run --coordinator "$url" --token-file "$DEMO/enrol-token" --key "$DEMO/agent.key" \
    --cairn "$BIN/cairn" --name demo-agent --sanitizers asan --work "$DEMO/work" \
    --exit-when-idle 300 2> >(sed -u 's/^/    /' >&2) &
pids+=($!)

say "submit: the examples across gcc and clang, plain and with ASan+UBSan"
cat configs/matrix-demo.json
"$BIN/cairn-farm" submit --matrix configs/matrix-demo.json --wait . | tee "$DEMO/submit.out"
run=$(sed -n 's/^run \([0-9]*\): .* jobs.*/\1/p' "$DEMO/submit.out" | head -n 1)

say "compare: cairn-farm compare $run"
set +e
"$BIN/cairn-farm" compare "$run"
compare_status=$?
set -e

say "where the evidence lies: stored by content; cairn-farm export writes run $run out as folders"
echo "the coordinator keeps each file once, by its SHA-256, under ${state#$(pwd)/}/blobs/"
"$BIN/cairn-farm" export "$run" "$DEMO/export"
bundles=$(find "$DEMO/export/evidence" -name bundle.dsse.json | sort)
echo "$bundles" | sed "s|^$(pwd)/||"
echo "agent public key: ${DEMO#$(pwd)/}/agent.key.pub (also beside each bundle as agent.pub.pem)"
first=$(echo "$bundles" | head -n 1)

say "verify one bundle offline: cairn-farm verify"
"$BIN/cairn-farm" verify "$first" --key "$DEMO/agent.key.pub"
say "verify the same bundle with the plain openssl command line (farm/verify_openssl.sh)"
farm/verify_openssl.sh "$first" "$DEMO/agent.key.pub"

say "status"
"$BIN/cairn-farm" status "$run"
if [ "$compare_status" -ne 0 ]; then
  echo
  echo "demo: the farm ran, filed and verified every bundle; compare reported cases that"
  echo "      failed or differ where they must not (see the table above)."
fi
echo
if [ "${KEEP:-0}" = 1 ]; then
  echo "demo: done; KEEP=1 keeps the coordinator up (Ctrl-C stops it). The dashboard:"
  echo "$url/"
  wait "${pids[0]}"
else
  echo "demo: done (coordinator and agent stopped; make demo KEEP=1 keeps them up)."
  echo "the dashboard is down with the coordinator; to see run $run again, serve its state:"
  echo "  $BIN/cairn-farm serve --state $state --config $DEMO/farm.json"
  echo "  (it writes its URL to $state/serve.json; the run's verdicts are under runs/$run)"
fi
