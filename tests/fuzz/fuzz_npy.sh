#!/bin/sh
# fuzz_npy.sh: build the .npy reader's libFuzzer target (tests/fuzz/fuzz_npy.c: the header
# parser and the file reader of runtime/cairn_npy.c, which read what users pass a
# program's main) with ASan+UBSan and leak detection, and run it for a bounded time
# (FUZZ_SECONDS, default 60) from tests/fuzz/corpus_npy. A crash, hang (over 5 s) or leak
# stops it with the input under build/fuzz/npy/artifacts; copy that input into
# tests/fuzz/corpus_npy/ so tests/fuzz/test_fuzz_npy.py replays it in `make test`.
set -eu
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
OUT=build/fuzz/npy
rm -rf "$OUT/corpus"
mkdir -p "$OUT/corpus" "$OUT/artifacts"
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz_npy: clang not found; skipping" >&2
  exit 0
fi
clang -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iruntime \
  tests/fuzz/fuzz_npy.c runtime/cairn_npy.c -o "$OUT/fuzz_npy"
SCRATCH=$OUT
[ -d /dev/shm ] && [ -w /dev/shm ] && SCRATCH=/dev/shm
echo "fuzz_npy: running for ${SECONDS_TO_RUN}s"
status=0
TMPDIR="$SCRATCH" ASAN_OPTIONS=detect_leaks=1 \
  "$OUT/fuzz_npy" "$OUT/corpus" tests/fuzz/corpus_npy -max_total_time="$SECONDS_TO_RUN" \
  -timeout=5 -rss_limit_mb=2048 -max_len=4096 -dict=tests/fuzz/npy.dict \
  -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 >"$OUT/log" 2>&1 || status=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::average_exec_per_sec' "$OUT/log" || true
if [ "$status" -ne 0 ]; then
  tail -40 "$OUT/log" >&2
  echo "fuzz_npy: FAILED (exit $status); the input is in $OUT/artifacts/, the log in $OUT/log" >&2
  exit 1
fi
echo "fuzz_npy: no crash, hang or leak in ${SECONDS_TO_RUN}s"
