"""What the cairn verify tests share: running verify, replaying counterexamples, and
concrete runs of a program's function with inputs a test chooses.

A verdict is held to the built program, not to the model: a counterexample's replay
must trap with the runtime's own message at the property's line and column (or at one of
the sites the verdict says its inputs also fail: lanes of one region that all trap), and
a concrete run is the program with its `main` replaced, built and run by `cairn run`."""
import json
import pathlib
import re
import subprocess

from cairntest import BIN, run
from trapmsg import TRAP_LINE, TRAPS, kind_of, says  # noqa: F401  (TRAPS: for the tests)

CAIRN = BIN / "cairn"
PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"



def verify(path, cex_dir, *args, timeout=600):
    """cairn verify --json: (exit status, [property objects])."""
    r = run([CAIRN, "verify", path, "--json", "--cex-dir", cex_dir, *args], timeout=timeout)
    assert r.returncode in (0, 5, 10), r.stderr
    return r.returncode, [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def of(props, function, prop=None, line=None):
    """The properties of a function (of one kind, at one line)."""
    return [p for p in props if p["function"] == function and (prop is None or p["property"] == prop)
            and (line is None or int(p["at"].rsplit(":", 2)[1]) == line)]


def place(at):
    """'file:line:col' -> (line, col)."""
    _, line, col = at.rsplit(":", 2)
    return int(line), int(col)


def trap(stderr):
    """(message, line, col) of a run's trap line, or None."""
    m = TRAP_LINE.search(stderr)
    return (m.group(1), int(m.group(3)), int(m.group(4))) if m else None


def replay(p, env=None, timeout=300):
    """Runs a counterexample's replay; asserts it traps with the property's message at its
    line and column, or at a site the verdict says the same inputs also fail. Returns the
    trap (message, line, col)."""
    r = run([CAIRN, "run", p["replay"]], env=env, timeout=timeout)
    got = trap(r.stderr)
    assert r.returncode != 0 and got, (p, r.returncode, r.stderr[-2000:])
    sites = [(p["property"], place(p["at"]))]
    for also in p.get("also", []):
        at, title = also.split(": ", 1)
        kind = kind_of(title)
        assert kind, also
        sites.append((kind, place(at)))
    assert any(says(kind, got[0]) and (got[1], got[2]) == at for kind, at in sites), \
        (p, got, r.stderr[-2000:])
    return got


def concrete(tmp_path, program, main, name=None, env=None, timeout=300):
    """Runs `program` with its last line (`fn main() -> i32 { return 0; }`) replaced by
    `main`; every other line keeps its place. Returns the CompletedProcess."""
    lines = pathlib.Path(program).read_text().split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    assert lines[-1].startswith("fn main()"), lines[-1]
    lines[-1] = ""
    path = pathlib.Path(tmp_path) / (name or pathlib.Path(program).name)
    path.write_text("\n".join(lines) + "\n" + main.strip() + "\n")
    return run([CAIRN, "run", path], env=env, timeout=timeout), path


VERDICT_LINE = re.compile(r"^\w+: (.*) at (.*):(\d+):(\d+): counterexample", re.M)


def replay_text(stdout, cwd=None, timeout=300):
    """Replays every counterexample in `cairn verify`'s text output: each must trap with
    its property's message at its line and column, or with the message of a site its
    inputs also fail (`    the same inputs also fail: FILE:L:C: TITLE`) at that site;
    an implementation's replay exits non-zero. Returns how many were replayed."""
    lines = stdout.splitlines()
    count = 0
    for k, line in enumerate(lines):
        m = VERDICT_LINE.match(line)
        if not m:
            continue
        path = next(x.split("cairn run ", 1)[1] for x in lines[k + 1:k + 3] if "replay: cairn run" in x)
        r = subprocess.run([str(CAIRN), "run", path], capture_output=True, text=True, timeout=timeout,
                           cwd=cwd)
        count += 1
        assert r.returncode != 0, (line, r.stderr)
        if m.group(1).startswith("same result as"):
            continue  # an implementation: a difference (exit 10, 11) or a trap
        sites = [(kind_of(m.group(1)), (int(m.group(3)), int(m.group(4))))]
        for x in lines[k + 1:k + 20]:
            if x.startswith("    the same inputs also fail: "):
                at, title = x.split(": ", 1)[1].split(": ", 1)
                sites.append((kind_of(title), place(at)))
        got = trap(r.stderr)
        assert got and any(kind and says(kind, got[0]) and got[1:] == at for kind, at in sites), \
            (line, sites, r.stderr[-2000:])
    return count


def verdict_cache(tmp_path_factory):
    """get(name, *args): PROGRAMS/name.cairn verified once per module, its replays in a
    folder of its own (the `verdicts` fixtures of test_classes.py and test_soundness.py)."""
    cache = {}

    def get(name, *args):
        key = (name, args)
        if key not in cache:
            cache[key] = verify(PROGRAMS / f"{name}.cairn", tmp_path_factory.mktemp(name) / "cex", *args)
        return cache[key]
    return get


def only(props, function, prop, line=None):
    """The one property of FUNCTION named PROP (at LINE): exactly one, or the test fails."""
    found = of(props, function, prop, line)
    assert len(found) == 1, (function, prop, line, found)
    return found[0]
