#!/bin/sh
# fuzz_frontend.sh: build the front end's libFuzzer target with ASan+UBSan and run it for a
# bounded time (FUZZ_SECONDS, default 60), seeded from every .cairn program in the suite.
# A crash, hang (over 5 s) or leak stops it with the input saved under build/fuzz/; copy
# that input into tests/fuzz/crashes/ so tests/fuzz/test_fuzz_regressions.py keeps it.
set -eu
cd "$(dirname "$0")/../.."
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
OUT=build/fuzz
mkdir -p "$OUT/corpus" "$OUT/artifacts"
if ! command -v clang >/dev/null 2>&1; then
  echo "fuzz_frontend: clang not found; skipping" >&2
  exit 0
fi
# The front end is the folders below the lowering: base, syntax, grad and check.
SRCS=$(ls compiler/base/*.c compiler/syntax/*.c compiler/grad/*.c compiler/check/*.c)
SRCS="$SRCS lib/fs.c lib/err.c" # frontend.c reads files with lib/'s fs_read
clang -std=c11 -g -O1 -D_GNU_SOURCE -Wall -Wextra -Werror -ffp-contract=off -fno-fast-math \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I. -Icompiler \
  tests/fuzz/fuzz_frontend.c $SRCS -lm -o "$OUT/fuzz_frontend"
for f in tests/golden/check/*.cairn tests/frontend/spec/*.cairn tests/fuzz/crashes/* examples/*.cairn; do
  [ -f "$f" ] && cp "$f" "$OUT/corpus/seed-$(basename "$f")"
done
echo "fuzz_frontend: running for ${SECONDS_TO_RUN}s"
status=0
"$OUT/fuzz_frontend" "$OUT/corpus" -max_total_time="$SECONDS_TO_RUN" -timeout=5 -rss_limit_mb=2048 \
  -max_len=4096 -dict=tests/fuzz/cairn.dict -artifact_prefix="$OUT/artifacts/" -print_final_stats=1 >"$OUT/log" 2>&1 || status=$?
tail -8 "$OUT/log"
if [ "$status" -ne 0 ]; then
  echo "fuzz_frontend: FAILED (exit $status); the input is in $OUT/artifacts/, the log in $OUT/log" >&2
  exit 1
fi
echo "fuzz_frontend: no crash, hang or leak in ${SECONDS_TO_RUN}s"
