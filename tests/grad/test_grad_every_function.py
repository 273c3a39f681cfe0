"""derive grad for every function of every program the checker accepts (the front end's
goldens and spec programs, the examples, the run goldens): it never crashes, it refuses
only with a gradient code (or E-UNSUPPORTED for what a later issue lowers), and whatever
it accepts expands to a program `cairn check` accepts."""
import re

import pytest

from cairntest import ROOT
from gradlib import cairn

SOURCES = sorted((ROOT / "tests" / "golden" / "check").glob("*.cairn")) + \
    sorted((ROOT / "tests" / "frontend" / "spec").glob("*.cairn")) + \
    sorted((ROOT / "tests" / "golden" / "run").glob("*.cairn")) + \
    sorted((ROOT / "examples").glob("*.cairn"))
ALLOWED = {"E-GRAD", "E-GRAD-FORM", "E-GRAD-CALL", "E-GRAD-RACE", "E-UNSUPPORTED"}


def test_derive_grad_for_every_function(tmp_path):
    tried = accepted = 0
    problems = []
    for path in SOURCES:
        text = path.read_text()
        if cairn("check", path).returncode != 0:
            continue
        for name in re.findall(r"^fn (\w+)", text, re.M):
            if name == "main" or re.search(rf"derive grad(\[[^\]]*\])? for {name};", text):
                continue
            tried += 1
            src = tmp_path / "derived.cairn"
            src.write_text(text + f"\nderive grad for {name};\n")
            proc = cairn("check", src)
            codes = set(re.findall(r"error\[(E-[A-Z0-9-]+)\]", proc.stderr))
            if proc.returncode == 1 and codes and codes <= ALLOWED:
                continue
            if proc.returncode != 0:
                problems.append(f"{path.name}/{name}: exit {proc.returncode}\n{proc.stderr[-600:]}")
                continue
            accepted += 1
            out = cairn("expand", src)
            expanded = tmp_path / "expanded.cairn"
            expanded.write_text(out.stdout)
            check = cairn("check", expanded)
            if out.returncode != 0 or check.returncode != 0:
                problems.append(f"{path.name}/{name}: expansion refused\n{check.stderr[-600:]}")
    assert not problems, "\n".join(problems)
    assert tried >= 40 and accepted >= 10, (tried, accepted)
