"""The assert()s that state invariants (compiler/base, syntax, check, lower, grad,
predict, driver; the farm's store job states, server and protocol invariants; the
agent's; the exact sum in runtime/cairn_sum.c) are
compiled in: the project's objects and the runtime a program
built by cairn links both call glibc's __assert_fail, and no build defines NDEBUG. The
runtime's asserts were measured to cost nothing (the commit that added them gives the
bench_sum figures), so they are not behind a macro; this fails if a build starts
dropping them."""
import pathlib
import subprocess
import sys

import pytest

from cairntest import ROOT, TBIN

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import build  # noqa: E402

OBJ = TBIN.parent  # the Makefile's $(OBJ)


def undefined(path):
    out = subprocess.run(["nm", "-u", str(path)], capture_output=True, text=True, check=True)
    return {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}


@pytest.mark.parametrize("obj", ["compiler/base/intsys.o", "compiler/base/arena.o",
                                 "compiler/syntax/parser.o", "compiler/check/check_expr.o",
                                 "compiler/check/layout_check.o", "compiler/lower/lower_c.o",
                                 "compiler/lower/lower_c_region.o", "runtime/cairn_sum.o",
                                 "farm/db/db.o", "farm/serve/hub.o", "farm/serve/server.o",
                                 "farm/serve/handlers.o", "farm/serve/auth.o",
                                 "farm/serve/config.o",
                                 # grad's fresh names and adjoints, predict's polynomial
                                 # powers and atoms, the driver's build steps, the
                                 # protocol's base64 and name sets, the archive's order
                                 # and signature length, the agent's argv and results
                                 "compiler/grad/grad_ast.o", "compiler/grad/grad_sweep.o",
                                 "compiler/grad/grad_forms.o", "compiler/predict/predict_poly.o",
                                 "compiler/driver/driver.o", "farm/proto/util.o",
                                 "farm/proto/dsse.o", "farm/proto/archive.o", "agent/suite.o",
                                 "agent/client.o"])
def test_project_objects_keep_their_asserts(obj):
    assert "__assert_fail" in undefined(OBJ / obj)


def test_no_build_defines_ndebug():
    for mk in [ROOT / "Makefile", *ROOT.glob("*/build.mk")]:
        assert "NDEBUG" not in mk.read_text(), mk
    assert "NDEBUG" not in (ROOT / "compiler/driver/driver.c").read_text()


def test_programs_link_the_exact_sum_with_its_asserts(tmp_path):
    receipt = build(ROOT / "examples/parallel_sum.cairn", tmp_path / "ps")
    assert not any("NDEBUG" in f for f in receipt["compiler"]["flags"])
    assert "__assert_fail" in undefined(tmp_path / "ps")
