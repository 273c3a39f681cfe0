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
            assert (GOLDENS / prog.stem / mode / f"{prog.stem}.c.txt").is_file(), (prog, mode)
        assert (GOLDENS / prog.stem / "sm_90" / f"{prog.stem}_dev.cu.txt").is_file(), prog


@pytest.mark.skipif(not CAIRN.exists(), reason="bin/cairn not built")
def test_a_changed_lowering_shows_a_diff_and_the_command(tmp_path):
    """A recorded file edited (as a lowering change would make the emitted one differ):
    check fails with a unified diff of that file and names the record command."""
    folder = tmp_path / "goldens"
    folder.mkdir()
    shutil.copy(GOLDENS / "exact_sum.cairn", folder)
    shutil.copytree(GOLDENS / "exact_sum", folder / "exact_sum")
    target = folder / "exact_sum" / "host" / "exact_sum.c.txt"
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


@pytest.mark.skipif(not CAIRN.exists(), reason="bin/cairn not built")
def test_check_dump_shows_types_symbols_and_placements():
    """`cairn check --dump` (docs/tools.md): each region's and reduction's placement as
    the checker decided it, types on nodes, symbols with their numbers; --help lists it."""
    def dump(name):
        r = subprocess.run([str(CAIRN), "check", "--dump", str(GOLDENS / f"{name}.cairn")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        return r.stdout
    lanes, pooled, block = dump("lanes"), dump("exact_sum"), dump("block")
    assert "  3:3 parallel i : usize  (loop #2)  [device]\n" in lanes
    assert "reduce + parallel i  (loop #3) : f64  [host pool]" in pooled
    assert "reduce + parallel i  (loop #2) : i32  [device]" in dump("device_reduce")
    assert "scan + for i  (loop #4) : void  [written order]" in dump("scan")
    assert "shared s : i32  [block]" in block and "[device]" in block
    assert "(derived from square)" in dump("grad")
    assert "name x : ro<f64>[n]  (param #1)" in pooled
    help_text = subprocess.run([str(CAIRN), "check", "--help"], capture_output=True,
                               text=True).stdout
    assert "--dump" in help_text


@pytest.mark.skipif(not CAIRN.exists(), reason="bin/cairn not built")
def test_check_dump_of_a_refused_program_is_its_diagnostics(tmp_path):
    bad = tmp_path / "bad.cairn"
    bad.write_text("fn main() -> i32 { return 1.5; }\n")
    r = subprocess.run([str(CAIRN), "check", "--dump", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == "" and "error[" in r.stderr
