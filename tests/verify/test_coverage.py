"""Every guard the built program checks is a cairn verify property, and every property is
a guard the built program checks (issue 35, "by construction, not by list").

The lowering records each place it writes a trap (lower_at: the guard's line and column,
and the function or constant holding it); `cairn verify --coverage` runs the model of
every function and lists the trap sites it reaches without a property (a guard the
model does not know, or one only in code it does not walk) and the properties at no trap
site. Over every accepted program in tests/ and examples/ both lists must be empty; a
compiler variant with a planted guard (an extra trap at every `if`) must be caught. In a
normal run such a site is reported `unknown`, never left out."""
import pathlib
import subprocess
import sys

import pytest

from cairntest import ROOT

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # verifylib.py
from verifylib import CAIRN, verify  # noqa: E402


def accepted():
    out = []
    for path in sorted(list((ROOT / "tests").rglob("*.cairn")) + list((ROOT / "examples").rglob("*.cairn"))):
        r = subprocess.run([str(CAIRN), "check", str(path)], capture_output=True, text=True, timeout=120)
        if r.returncode == 0:
            out.append(path)
    return out


def coverage(binary, path):
    r = subprocess.run([str(binary), "verify", str(path), "--coverage"], capture_output=True, text=True,
                       timeout=600, cwd=ROOT)
    assert r.returncode in (0, 5), (path, r.stderr[-2000:])
    apart = [line for line in r.stdout.splitlines() if ": uncovered: " in line or ": unsited: " in line]
    return r.returncode, apart


def test_every_trap_site_has_a_property_and_back():
    progs = accepted()
    assert len(progs) > 100
    bad = {}
    for path in progs:
        rc, apart = coverage(CAIRN, path)
        if rc or apart:
            bad[str(path.relative_to(ROOT))] = apart
    assert not bad, bad


def test_a_site_without_property_is_unknown_in_a_run(tmp_path):
    """The planted variant's extra site is an unknown verdict in a normal run, never left
    out (so the function is never all verified)."""
    cairn = planted(tmp_path)
    src = tmp_path / "branch.cairn"
    src.write_text("fn pick(a:i32) -> i32 {\n  if a > 0 { return 1; }\n  return 0;\n}\n"
                   "fn main() -> i32 { return 0; }\n")
    rc, apart = coverage(cairn, src)
    assert rc == 5 and any("uncovered: a trap site at" in a and ":2:" in a for a in apart), apart
    r = subprocess.run([str(cairn), "verify", str(src), "--json", "--cex-dir", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 5, r.stdout
    assert '"title":"a guard the model has no property for"' in r.stdout and '"verdict":"unknown"' in r.stdout
    rc, apart = coverage(CAIRN, src)  # the real compiler: nothing apart
    assert rc == 0 and not apart


def planted(tmp):
    """bin/cairn linked again with lower_c.c compiled under CAIRN_PLANT_GUARD: every `if`
    also writes a trap (a guard the model knows nothing of)."""
    plan = subprocess.run(["make", "-s", "-n", "-W", "compiler/main.c", "bin/cairn"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout
    link = next(line for line in plan.splitlines() if " -o bin/cairn" in line).split()
    compile_line = next(line for line in plan.splitlines() if "compiler/main.c" in line and " -c " in line).split()
    mine, out = tmp / "lower_c.o", tmp / "cairn"
    flags = [f for f in compile_line[1:] if f.startswith(("-I", "-D", "-std"))]
    subprocess.run([compile_line[0], *flags, "-DCAIRN_PLANT_GUARD", "-c", "compiler/lower/lower_c.c", "-o", str(mine)],
                   cwd=ROOT, check=True)
    link = [str(mine) if w.endswith("lower/lower_c.o") else w for w in link]
    link[link.index("-o") + 1] = str(out)
    subprocess.run(link, cwd=ROOT, check=True)
    return out
