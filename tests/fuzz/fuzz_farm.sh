#!/bin/sh
# fuzz_farm.sh: build the coordinator API's libFuzzer target (tests/fuzz/fuzz_farm.c: the
# request router and its handlers on a throwaway state folder, the bundle, envelope,
# proof and archive parsers) with ASan+UBSan, leak detection on, and run it for a
# bounded time (FUZZ_SECONDS, default 60), seeded from tests/fuzz/corpus_farm. A crash,
# hang (over 10 s) or leak stops it with the input saved under build/fuzz/farm/artifacts;
# copy that input into tests/fuzz/corpus_farm/ so tests/fuzz/test_fuzz_farm.py replays it
# in `make test`. The inputs a run finds stay in build/fuzz/farm/corpus until the next
# run (each starts from the kept corpus alone, so that its time goes to new inputs);
#   build/fuzz/farm/fuzz_farm -merge=1 tests/fuzz/corpus_farm build/fuzz/farm/corpus
# keeps those that add coverage.
set -eu
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
OUT=build/fuzz/farm
rm -rf "$OUT/corpus"
mkdir -p "$OUT/corpus" "$OUT/artifacts" "$OUT/tmp"
# The state folder on tmpfs where there is one: the target fsyncs what it files.
SCRATCH=$OUT/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && SCRATCH=/dev/shm
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz_farm: clang not found; skipping" >&2
  exit 0
fi
SRCS=""
for f in farm/*.c farm/*/*.c lib/*.c; do
  [ "$f" = farm/main.c ] || SRCS="$SRCS $f" # main.c has cairn-farm's main
done
LIBS=$(pkg-config --libs libmicrohttpd sqlite3 libcjson openssl libcurl libpq 2>/dev/null ||
       echo -lmicrohttpd -lsqlite3 -lcjson -lcrypto -lcurl -lpq)
PQ_CFLAGS=$(pkg-config --cflags libpq 2>/dev/null || echo -I/usr/include/postgresql)
# shellcheck disable=SC2086
clang -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. -Ifarm $PQ_CFLAGS \
  tests/fuzz/fuzz_farm.c $SRCS -o "$OUT/fuzz_farm" $LIBS -lm -pthread
echo "fuzz_farm: running for ${SECONDS_TO_RUN}s"
status=0
TMPDIR="$SCRATCH" ASAN_OPTIONS=detect_leaks=1 \
  "$OUT/fuzz_farm" "$OUT/corpus" tests/fuzz/corpus_farm -max_total_time="$SECONDS_TO_RUN" \
  -timeout=10 -rss_limit_mb=2048 -max_len=16384 -dict=tests/fuzz/farm.dict \
  -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 >"$OUT/log" 2>&1 || status=$?
grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss' "$OUT/log" || true
if [ "$status" -ne 0 ]; then
  tail -40 "$OUT/log" >&2
  echo "fuzz_farm: FAILED (exit $status); the input is in $OUT/artifacts/, the log in $OUT/log" >&2
  exit 1
fi
echo "fuzz_farm: no crash, hang or leak in ${SECONDS_TO_RUN}s"
