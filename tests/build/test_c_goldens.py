"""The generated C of the small programs in tests/build/c_goldens/ is the recorded text
(tests/build/c_goldens.py): a lowering change shows up as a unified diff, and the
failure names the command that records the new text when the change is meant."""
import pathlib
import shutil
import subprocess
import sys

import pytest

from cairntest import BIN, ROOT

CAIRN = BIN / "cairn"
SCRIPT = ROOT / "tests" / "build" / "c_goldens.py"
GOLDENS = ROOT / "tests" / "build" / "c_goldens"


def check(folder):
    return subprocess.run([sys.executable, str(SCRIPT), "check", "--cairn", str(CAIRN),
                           "--dir", str(folder)], capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not CAIRN.exists(), reason="bin/cairn not built")
def test_generated_c_is_the_recorded_text():
    r = check(GOLDENS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_program_has_all_three_modes():
    programs = sorted(GOLDENS.glob("*.cairn"))
    assert len(programs) >= 10
    for prog in programs:
        for mode in ("host", "emulate", "sm_90"):
            assert (GOLDENS / prog.stem / mode / f"{prog.stem}.c").is_file(), (prog, mode)
        assert (GOLDENS / prog.stem / "sm_90" / f"{prog.stem}_dev.cu").is_file(), prog


@pytest.mark.skipif(not CAIRN.exists(), reason="bin/cairn not built")
def test_a_changed_lowering_shows_a_diff_and_the_command(tmp_path):
    """A recorded file edited (as a lowering change would make the emitted one differ):
    check fails with a unified diff of that file and names the record command."""
    folder = tmp_path / "goldens"
    folder.mkdir()
    shutil.copy(GOLDENS / "exact_sum.cairn", folder)
    shutil.copytree(GOLDENS / "exact_sum", folder / "exact_sum")
    target = folder / "exact_sum" / "host" / "exact_sum.c"
    lines = target.read_text().splitlines(keepends=True)
    lines[5] = "/* a line the lowering no longer writes */\n"
    target.write_text("".join(lines))
    r = check(folder)
    assert r.returncode == 1
    assert "--- recorded/exact_sum/host/exact_sum.c" in r.stdout
    assert "+++ emitted/exact_sum/host/exact_sum.c" in r.stdout
    assert "-/* a line the lowering no longer writes */" in r.stdout
    assert "tests/build/c_goldens.py record" in r.stdout
    assert "emulate/" not in r.stdout  # only the file that differs
