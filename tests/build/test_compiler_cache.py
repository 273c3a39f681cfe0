"""Issue 39, item 12: the compiler's cache under damage and kills. A truncated cached
executable, runtime object or runtime source is built (or written) again rather than
used, and the temporaries a killed build left (NAME.tmp.PID of a process that is gone)
are removed when the folder is next used; a live process's are left. Before: a truncated
executable or object broke every later `cairn run` (SIGSEGV, or "the C compiler
rejected the generated C") until the cache was deleted, and the temporaries stayed."""
import hashlib
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import cairn

PROGRAM = "fn main() -> i32 { return 3; }\n"


def run(tmp_path, name="p.cairn"):
    """`cairn run NAME`; a program other than p.cairn is a new executable, built with the
    runtime objects and generated C in the cache."""
    r = cairn("run", name, cwd=tmp_path, env={"CAIRN_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 3, r.stdout + r.stderr
    return r


def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


def cached(tmp_path, kind, pattern):
    found = sorted((tmp_path / "cache" / kind).glob(f"*/{pattern}"))
    assert found, (kind, pattern)
    return found[0]


@pytest.mark.parametrize("kind,pattern", [("bin", "p"), ("rt", "*.o"), ("rt", "*.h")])
def test_a_truncated_cached_output_is_built_again(tmp_path, kind, pattern):
    (tmp_path / "p.cairn").write_text(PROGRAM)
    run(tmp_path)
    victim = cached(tmp_path, kind, pattern)
    good = victim.read_bytes()
    truncate(victim)
    (tmp_path / "q.cairn").write_text("// another program\n" + PROGRAM)
    run(tmp_path, "q.cairn" if kind == "rt" else "p.cairn")
    if kind == "bin" or pattern == "*.h":   # the same bytes again (objects may differ)
        assert victim.read_bytes() == good
    seal = victim.with_name(victim.name + ".sha256")
    if seal.exists():
        assert seal.read_text().strip() == hashlib.sha256(victim.read_bytes()).hexdigest()
    run(tmp_path)


def test_temporaries_of_a_killed_build_are_removed(tmp_path):
    (tmp_path / "p.cairn").write_text(PROGRAM)
    run(tmp_path)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead, live = gone.pid, os.getpid()
    planted = {}
    for kind, pattern in (("bin", "p"), ("rt", "*.o"), ("c", "*.c")):
        folder = cached(tmp_path, kind, pattern).parent
        planted[folder / f"x.tmp.{dead}"] = False
        planted[folder / f"x.tmp.{dead}.7"] = False
        planted[folder / f"x.tmp.{live}"] = True
        for path in list(planted):
            if path.parent == folder:
                path.write_bytes(b"half a file")
    exe = cached(tmp_path, "bin", "p")
    truncate(exe)   # so that p is built again, through every folder above
    run(tmp_path)
    for path, stays in planted.items():
        assert path.exists() == stays, path
