"""Helpers for the back end's tests: building and running .cairn programs with this
matrix cell's compiler and sanitizer, with a cache shared by the whole session."""
import atexit
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

from cairntest import BIN, ROOT, cairn_cell_flags

CAIRN = BIN / "cairn"
EXAMPLES = ROOT / "examples"
GOLDEN_RUN = ROOT / "tests" / "golden" / "run"
# One cache per test session (removed at exit): the runtime is compiled once per
# compiler and flags. CAIRN_TEST_CACHE keeps one across sessions instead.
if os.environ.get("CAIRN_TEST_CACHE"):
    CACHE = pathlib.Path(os.environ["CAIRN_TEST_CACHE"])
else:
    CACHE = pathlib.Path(tempfile.mkdtemp(prefix="cairn-test-cache-"))
    atexit.register(shutil.rmtree, CACHE, True)
# Sanitizer reports abort (so a test sees them as a failing status); LeakSanitizer stays
# on: generated code frees every buffer it allocates.
SAN_ENV = {"ASAN_OPTIONS": "abort_on_error=1", "CAIRN_CACHE": str(CACHE)}


def cairn(*args, env=None, cwd=None, timeout=300):
    full = dict(os.environ)
    full.update(SAN_ENV)
    if env:
        full.update(env)
    return subprocess.run([str(CAIRN), *map(str, args)], capture_output=True, text=True,
                          env=full, cwd=cwd, timeout=timeout)


def build(source, out, *extra, cell=True, env=None):
    flags = cairn_cell_flags() if cell else []
    result = cairn("build", source, "-o", out, *flags, *extra, env=env)
    assert result.returncode == 0, f"build of {source} failed:\n{result.stderr}"
    return json.loads(pathlib.Path(f"{out}.receipt.json").read_text())


def run_exe(exe, env=None, timeout=120, args=()):
    full = dict(os.environ)
    full.update(SAN_ENV)
    if env:
        full.update(env)
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=full,
                          timeout=timeout)


def read_log(path):
    return [json.loads(line) for line in pathlib.Path(path).read_text().splitlines()]


def sha256(data):
    return hashlib.sha256(data).hexdigest()


DIRECTIVE = re.compile(r"^//\s*expect-(exit|trap|observe):\s*(.*)$")


def expectations(source):
    """The `// expect-...:` lines of a golden program:
       expect-exit: N                          main's return value
       expect-trap: REASON at LINE:COL         a trap, naming this file
       expect-observe: NAME TYPE COUNT SHA256  one observation, in order"""
    found = {"exit": None, "trap": None, "observe": []}
    for line in pathlib.Path(source).read_text().splitlines():
        m = DIRECTIVE.match(line.strip())
        if not m:
            continue
        kind, value = m.groups()
        if kind == "observe":
            name, typ, count, digest = value.split()
            found["observe"].append({"name": name, "type": typ, "count": int(count),
                                     "sha256": digest})
        elif kind == "exit":
            found["exit"] = int(value)
        else:
            found["trap"] = value.strip()
    return found
