#!/usr/bin/env bash
# scripts/test_loaded.sh (`make test-loaded`): runs its arguments (make passes `make
# test` with the cell's settings) beside a CPU hog of HOG_PER_CORE busy processes per
# core (default 2), so that a test which counts on the machine's speed or load (a rate,
# a latency, a count of what happened "meanwhile", a short timeout) fails here rather
# than at random in CI (docs/design.md, "Tests that hold on a loaded machine"). The hog
# is stopped when the command ends, fails or is interrupted; the exit status is the
# command's. ONE_CORE=1 pins the command and the hog to core 0 (taskset -c 0): all the
# suite's processes and HOG_PER_CORE busy ones share that core.
set -u
per_core=${HOG_PER_CORE:-2}
cores=$(nproc)
pin=()
if [ "${ONE_CORE:-0}" = 1 ]; then
    command -v taskset >/dev/null || { echo "test-loaded: ONE_CORE=1 needs taskset" >&2; exit 2; }
    cores=1
    pin=(taskset -c 0)
fi
hogs=()
stop_hogs() {
    for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
    for pid in "${hogs[@]}"; do wait "$pid" 2>/dev/null; done
    hogs=()
}
child=
# On an interrupt or a TERM the command's whole process group goes too (make, pytest and
# the coordinators they started), then the hog.
on_signal() {
    [ -n "$child" ] && kill -TERM -- "-$child" 2>/dev/null
    stop_hogs
    exit "$1"
}
trap stop_hogs EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
for _ in $(seq $((per_core * cores))); do
    (trap - INT TERM; while :; do :; done) &
    hogs+=($!)
    [ ${#pin[@]} -gt 0 ] && taskset -p -c 0 "$!" >/dev/null
done
echo "== test-loaded: ${#hogs[@]} busy processes beside: ${pin[*]} $*"
set -m # the command in a process group of its own, so that a signal reaches all of it
"${pin[@]}" "$@" &
child=$!
set +m
wait "$child"
rc=$?
child=
stop_hogs
exit $rc
