#!/bin/sh
# fuzz_verify.sh: the differential harness for cairn verify (tests/verify/differential.py)
# for FUZZ_SECONDS (default 300) from a fresh seed (FUZZ_SEED to repeat one): random
# programs and every hand-written verify program, each verdict attacked with concrete
# runs at boundary inputs and pool widths 1, 2 and 7, every counterexample replayed.
# Prints how many verdicts and runs it tried; exits 1 on any wrong verdict, leaving the
# programs under build/fuzz/verify/ to add to tests/verify/programs/found.cairn.
set -eu
cd "$(dirname "$0")/../.."
CAIRN=${CAIRN_BIN:-bin}/cairn
if [ ! -x "$CAIRN" ]; then
  echo "fuzz_verify: $CAIRN not built: run make first" >&2
  exit 1
fi
OUT=build/fuzz/verify
rm -rf "$OUT" && mkdir -p "$OUT"
SEED=${FUZZ_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
SECONDS_=${FUZZ_SECONDS:-300}
echo "fuzz_verify: seed $SEED for ${SECONDS_}s"
# the hand-written programs whose functions take bounded time on any input (lanes.cairn
# and pooled.cairn spin or allocate by design: their own tests run them)
HAND=$(ls tests/verify/programs/*.cairn | grep -v -e lanes.cairn -e pooled.cairn -e multiply.cairn)
CAIRN_BIN=${CAIRN_BIN:-bin} exec /usr/bin/python3 tests/verify/differential.py \
  --seeds "$SEED..$SEED" --seconds "$SECONDS_" --cases 16 --keep "$OUT" --programs $HAND
