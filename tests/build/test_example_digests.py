"""Every example and device program gives the recorded generated code, observations and
(under the recorded gcc) receipts: tests/build/example_digests.py. A change that means
to alter what users get records the list again (`example_digests.py record`) and says so
in its commit; any other difference is a regression."""
import subprocess
import sys

import pytest

from cairntest import BIN, ROOT

CAIRN = BIN / "cairn"


@pytest.mark.skipif(not CAIRN.exists(), reason="bin/cairn not built")
def test_examples_give_the_recorded_digests():
    r = subprocess.run([sys.executable, str(ROOT / "tests/build/example_digests.py"), "check",
                        "--cairn", str(CAIRN)], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
