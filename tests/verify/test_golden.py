"""Golden verdicts: tests/verify/golden/NAME.cairn verified, its verdict lines (the
times and a counterexample's inputs aside) compared with NAME.expected. One of each
verdict kind (verified, bounded, counterexample, unknown, vacuous) and of each kind of
line the issue 22 changes added (a buffer's size, an extent's own guard, guards that share
a place, `the same inputs also fail`, a NaN's hardware bits, a refinement). Regenerate
with CAIRN_GOLDEN_UPDATE=1 after checking the difference by hand."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

from cairntest import BIN, ROOT

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # verifylib.py
from verifylib import replay_text  # noqa: E402

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"


def verdict_lines(text):
    out = []
    for line in text.splitlines():
        if re.match(r"^[a-z_0-9]+: |^    reason: |^    the same inputs also fail: |^\d+ verified", line):
            out.append(re.sub(r" \([0-9.]+ s\)$", "", line))
    return out


@pytest.mark.parametrize("name", sorted(p.stem for p in GOLDEN.glob("*.cairn")))
def test_golden(name, tmp_path):
    src = GOLDEN / f"{name}.cairn"
    r = subprocess.run([str(BIN / "cairn"), "verify", str(src.relative_to(ROOT)), "--cex-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert r.returncode in (0, 5, 10), r.stderr
    got = verdict_lines(r.stdout)
    expected = GOLDEN / f"{name}.expected"
    if os.environ.get("CAIRN_GOLDEN_UPDATE"):
        expected.write_text("\n".join(got) + "\n")
    assert got == expected.read_text().splitlines(), "\n".join(got)
    # and every counterexample replays: its trap at its place (or one its inputs also fail)
    replay_text(r.stdout, cwd=ROOT)
