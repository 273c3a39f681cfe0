"""`cairn run`'s exit status, as docs/tools.md's table states it: the program's own status
(main's value modulo 256, a trap's SIGABRT), with and without --show, and cairn run's own
failures on the statuses env(1) and timeout(1) use: 125 cairn failed (a refused program,
a bad flag), 126 built but could not be started, 127 no C compiler."""
import os
import pathlib
import signal
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import cairn  # noqa: E402
from cairntest import cairn_cell_flags  # noqa: E402


def program(tmp_path, body, name="p"):
    src = tmp_path / f"{name}.cairn"
    src.write_text(body)
    return src


RETURNS = "fn main() -> i32 {{ let x:f64 = 1.5; observe(\"x\", x); return {}; }}\n"


@pytest.mark.parametrize("value,status", [(0, 0), (1, 1), (2, 2), (3, 3), (124, 124),
                                          (300, 44), (-1, 255)])
@pytest.mark.parametrize("show", [False, True])
def test_mains_status_passes_through(tmp_path, value, status, show):
    src = program(tmp_path, RETURNS.format(value))
    r = cairn("run", src, *cairn_cell_flags(), *(["--show"] if show else []))
    assert r.returncode == status, r.stderr
    assert r.stdout == ("x  f64  1.5  (0x3ff8000000000000)\n" if show else "")


TRAPS = """fn main() -> i32 {
  buffer a:i32[4] = zeroed;
  observe("before", a);
  let k:usize = 9;
  a[k] = 1;
  observe("after", a);
  return 0;
}
"""


@pytest.mark.parametrize("show", [False, True])
def test_a_trap_is_the_programs_own_abort(tmp_path, show):
    """With --show the observations made before the trap are shown, and cairn run still
    ends by the program's signal."""
    src = program(tmp_path, TRAPS)
    r = cairn("run", src, *cairn_cell_flags(), *(["--show"] if show else []), cwd=tmp_path)
    assert r.returncode == -signal.SIGABRT, (r.returncode, r.stderr)
    assert f"trap: index out of bounds at {src}:5:" in r.stderr
    if show:
        assert r.stdout.startswith("before  i32[4]  min 0  max 0\n") and "after" not in r.stdout


def test_refused_program_is_125_with_its_diagnostics(tmp_path):
    src = program(tmp_path, "fn main() -> i32 { return x; }\n")
    for show in ([], ["--show"]):
        r = cairn("run", src, *cairn_cell_flags(), *show)
        assert r.returncode == 125 and "error[E-UNKNOWN-NAME]" in r.stderr, r.stderr
        assert "cairn run: error" not in r.stderr   # the diagnostics say it all


def test_no_compiler_is_127(tmp_path):
    src = program(tmp_path, RETURNS.format(0))
    r = cairn("run", src, "--cc", str(tmp_path / "no-such-cc"))
    assert r.returncode == 127 and "not found" in r.stderr
    r = cairn("run", src, env={"PATH": str(tmp_path)})   # no gcc, clang or cc at all
    assert r.returncode == 127 and "no C compiler found" in r.stderr, r.stderr


@pytest.mark.parametrize("show", [False, True])
def test_built_but_not_startable_is_126(tmp_path, show):
    """The cached executable made unrunnable: exec fails, and cairn run says so."""
    cache = tmp_path / "cache"
    src = program(tmp_path, RETURNS.format(0))
    env = {"CAIRN_CACHE": str(cache)}
    assert cairn("run", src, *cairn_cell_flags(), env=env).returncode == 0
    (exe,) = [p for p in (cache / "bin").rglob("p") if p.is_file()]
    os.chmod(exe, 0o644)
    r = cairn("run", src, *cairn_cell_flags(), *(["--show"] if show else []), env=env)
    assert r.returncode == 126 and "cannot run" in r.stderr, (r.returncode, r.stderr)


def test_usage_and_observation_errors_are_125(tmp_path):
    src = program(tmp_path, RETURNS.format(7))
    for args in (["--observe-file"], ["--show", "--bogus"], ["--observe-raw"]):
        r = cairn("run", src, *args)
        assert r.returncode == 125 and r.stderr.startswith("cairn run: error: "), (args, r.stderr)
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = cairn("run", src, *cairn_cell_flags(), "--observe-raw", blocker / "raw")
    assert r.returncode == 125 and "cannot create" in r.stderr
    # the program ran (status 7) but its observations cannot be saved: cairn failed
    r = cairn("run", src, *cairn_cell_flags(), "--observe-file", tmp_path / "no" / "x.obs")
    assert r.returncode == 125 and "cannot" in r.stderr, r.stderr


def test_help_states_the_table():
    text = cairn("run", "--help").stdout
    for line in ("125  cairn run failed", "126  the program was built but could not run",
                 "127  no C compiler"):
        assert line in text
