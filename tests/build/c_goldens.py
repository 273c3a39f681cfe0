#!/usr/bin/env python3
"""The generated C of a dozen small programs, kept as text, so that a change of the
lowering shows how the output changed (a unified diff), where example_digests.py only
says that it did.

usage: c_goldens.py record|check [--cairn BIN] [--dir DIR]

Each program tests/build/c_goldens/NAME.cairn is emitted (`cairn build NAME.cairn
--emit-c OUT --emit-only`, no compiler runs) for the host, emulated and for sm_90 (the
modes of example_digests.py), and its checked tree dumped (`cairn check --dump`, in
NAME/check/), from a scratch folder under its relative name; the files
land in tests/build/c_goldens/NAME/MODE/ as FILE.txt (text to read and diff, not sources
for the formatter or the compiler). `record` writes them; `check` prints a unified
diff for every file that differs (or is new, or gone) and exits 1 when one does.
tests/build/test_c_goldens.py runs `check` in `make test`."""
import argparse
import difflib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_DIR = ROOT / "tests" / "build" / "c_goldens"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from example_digests import MODES  # noqa: E402  (one list of modes for both records)

RECORD = "tests/build/c_goldens.py record"
SUFFIX = ".txt"
CHECK = "check"  # the checked tree, `cairn check --dump`, beside the generated code


def emit_all(cairn, programs):
    """{NAME: {MODE: {file name: text}}} as this cairn emits them now."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, CAIRN_CACHE=str(pathlib.Path(tmp) / "cache"))
        for prog in programs:
            work = pathlib.Path(tmp) / prog.stem
            work.mkdir()
            shutil.copy(prog, work / prog.name)
            out[prog.stem] = {}
            for mode, flags in MODES.items():
                dest = work / mode
                r = subprocess.run([cairn, "build", prog.name, "--emit-c", str(dest), "--emit-only",
                                    "-o", "prog", *flags], cwd=work, capture_output=True, text=True,
                                   env=env)
                if r.returncode != 0:
                    sys.exit(f"c_goldens: {prog.name} ({mode}) was refused:\n{r.stderr}")
                out[prog.stem][mode] = {f.name: f.read_text() for f in sorted(dest.iterdir())}
            r = subprocess.run([cairn, "check", "--dump", prog.name], cwd=work, capture_output=True,
                               text=True, env=env)
            out[prog.stem][CHECK] = {f"{prog.stem}.dump": r.stdout}
    return out


def recorded(folder, name):
    """{MODE: {file name: text}} as recorded for program NAME."""
    base = folder / name
    return {mode: {f.name[:-len(SUFFIX)]: f.read_text() for f in sorted((base / mode).iterdir())}
            if (base / mode).is_dir() else {} for mode in [*MODES, CHECK]}


def record(folder, have):
    for name, modes in have.items():
        shutil.rmtree(folder / name, ignore_errors=True)
        for mode, files in modes.items():
            (folder / name / mode).mkdir(parents=True)
            for fname, text in files.items():
                (folder / name / mode / (fname + SUFFIX)).write_text(text)
    print(f"c_goldens: recorded {len(have)} programs in {folder}")


def diffs(folder, have):
    """The unified diffs between the recorded files and the emitted ones."""
    out = []
    for name, modes in have.items():
        want = recorded(folder, name)
        for mode in [*MODES, CHECK]:
            for fname in sorted(set(want[mode]) | set(modes[mode])):
                rel = f"{name}/{mode}/{fname}"
                a = want[mode].get(fname, "").splitlines(keepends=True)
                b = modes[mode].get(fname, "").splitlines(keepends=True)
                if a != b:
                    out.append("".join(difflib.unified_diff(a, b, f"recorded/{rel}", f"emitted/{rel}")))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("--cairn", default=str(ROOT / "bin" / "cairn"))
    ap.add_argument("--dir", default=str(DEFAULT_DIR), type=pathlib.Path)
    a = ap.parse_args()
    programs = sorted(a.dir.glob("*.cairn"))
    have = emit_all(a.cairn, programs)
    if a.mode == "record":
        record(a.dir, have)
        return 0
    found = diffs(a.dir, have)
    for d in found:
        print(d, end="" if d.endswith("\n") else "\n")
    print(f"c_goldens: {len(programs)} programs, {len(found)} files differ")
    if found:
        print(f"c_goldens: if the change is meant, regenerate with `{RECORD}` and commit the diff")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
