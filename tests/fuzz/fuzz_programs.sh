#!/bin/sh
# fuzz_programs.sh: random well-typed programs (tests/fuzz/gen_programs.py), each checked
# and, when accepted, built with gcc and clang at -O0 .. -O3, for FUZZ_SECONDS (default
# 60) from a fresh seed (FUZZ_SEED to repeat one). Any accepted program the C compiler
# rejects fails the run; the program stays under build/fuzz/programs/ to add to
# tests/fuzz/test_random_programs.py.
set -eu
cd "$(dirname "$0")/../.."
CAIRN=${CAIRN_BIN:-bin}/cairn
if [ ! -x "$CAIRN" ]; then
  echo "fuzz_programs: $CAIRN not built: run make first" >&2
  exit 1
fi
OUT=build/fuzz/programs
rm -rf "$OUT" && mkdir -p "$OUT"
SEED=${FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "fuzz_programs: seed $SEED for ${FUZZ_SECONDS:-60}s"
exec /usr/bin/python3 tests/fuzz/gen_programs.py --sweep "$CAIRN" "$SEED" "${FUZZ_SECONDS:-60}" "$OUT"
