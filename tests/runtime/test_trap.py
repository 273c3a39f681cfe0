"""One trap line per process (docs/devices.md, "Traps"): when several threads trap at
the same moment (pool workers whose emulated lanes fail together), the first prints
`trap: REASON at FILE:LINE:COL` and aborts; the others print nothing.

tests/c/trap_race.c releases N threads from one barrier straight into cairn_trap_at;
before the fix about one run in twelve printed two to four lines. Each case runs many
times, since a race shows only in some schedules."""
import re
import signal

import pytest

from cairntest import harness, run

LINE = re.compile(r"^trap: (integer overflow|index out of bounds) at trap_race\.cairn:\d+:7$")


@pytest.mark.parametrize("threads", [2, 7, 16, 64])
def test_threads_trapping_at_once_print_one_line(threads):
    for _ in range(60):
        res = run([harness("trap_race"), str(threads)], timeout=60)
        assert res.returncode == -signal.SIGABRT, res.stderr
        lines = [ln for ln in res.stderr.splitlines() if ln.startswith("trap:")]
        assert len(lines) == 1, res.stderr
        assert LINE.match(lines[0]), lines[0]
