"""`cairn expand`: the derived functions written out. Its output is a program that
`cairn check` accepts, that expands to itself, and that runs to the same exit status
and the same observed bits as the original."""
import json
import pathlib

import pytest

from cairntest import ROOT, cairn_cell_flags
from gradlib import cairn, gradient_program, workdir
from test_grad_forms import CASES

TRAIN = ROOT / "examples" / "train.cairn"


def observed_run(path, d, tag):
    log = pathlib.Path(d) / f"{tag}.log"
    proc = cairn("run", *cairn_cell_flags(), path, env={"CAIRN_OBSERVE": str(log)}, timeout=240)
    lines = log.read_text().splitlines() if log.exists() else []
    return proc.returncode, [json.loads(x) for x in lines]


def expand_to(src_path, dst_path):
    proc = cairn("expand", src_path)
    assert proc.returncode == 0, proc.stderr
    dst_path.write_text(proc.stdout)
    return proc.stdout


def test_expand_help():
    proc = cairn("expand", "--help")
    assert proc.returncode == 0 and "usage: cairn expand FILE" in proc.stdout
    proc = cairn("expand")
    assert proc.returncode == 2 and "expand" in proc.stderr
    proc = cairn("expand", "/nonexistent/x.cairn")
    assert proc.returncode == 2 and "cannot read" in proc.stderr


def test_expand_refused_program_exits_1(tmp_path):
    bad = tmp_path / "bad.cairn"
    bad.write_text("fn f(x:f64) -> f64 = x * x;\nderive grad[y] for f;\n")
    proc = cairn("expand", bad)
    assert proc.returncode == 1 and "E-GRAD" in proc.stderr


def test_train_expands_checks_and_runs_the_same(tmp_path):
    text = expand_to(TRAIN, tmp_path / "train_expanded.cairn")
    assert "derive" not in text
    assert "fn square_grad(x:f64, seed:f64, d_x:rw<f64>) -> f64" in text
    assert "fn loss_grad(" in text
    assert cairn("check", tmp_path / "train_expanded.cairn").returncode == 0
    again = expand_to(tmp_path / "train_expanded.cairn", tmp_path / "again.cairn")
    assert again == text, "expand of an expanded program is not a fixpoint"
    with workdir() as d:
        rc1, obs1 = observed_run(TRAIN, d, "orig")
        rc2, obs2 = observed_run(tmp_path / "train_expanded.cairn", d, "expanded")
    assert rc1 == 0 and rc2 == 0


# Some forms in every run (a region, a sum loop, calls, a view passed twice to one call);
# all of them in `make matrix`.
QUICK = {"region_outputs", "sum_loop", "calls", "calls_views", "if_then"}
ROUND_TRIP = [pytest.param(c, id=c.name, marks=() if c.name in QUICK else pytest.mark.matrix)
              for c in CASES]


@pytest.mark.parametrize("case", ROUND_TRIP)
def test_forms_round_trip(case, tmp_path):
    """Every form's program (f, f_grad, the central-difference main) gives the same
    observed bits before and after expansion."""
    src = tmp_path / "orig.cairn"
    src.write_text(gradient_program(case))
    expanded = tmp_path / "expanded.cairn"
    expand_to(src, expanded)
    check = cairn("check", expanded)
    assert check.returncode == 0, check.stderr + expanded.read_text()
    with workdir() as d:
        rc1, obs1 = observed_run(src, d, "orig")
        rc2, obs2 = observed_run(expanded, d, "expanded")
    assert rc1 == 0 and rc2 == 0
    assert obs1 and obs1 == obs2


def test_train_runs_and_returns_zero():
    """The spec's training loop: the loss falls under 1e-9 in 100 steps."""
    proc = cairn("run", *cairn_cell_flags(), TRAIN, timeout=240)
    assert proc.returncode == 0, proc.stderr


def test_receipt_lists_derived_functions(tmp_path):
    """A derived function is a function like any other: the receipt lists its numerics."""
    exe = tmp_path / "train"
    proc = cairn("build", *cairn_cell_flags(), TRAIN, "-o", exe, timeout=240)
    assert proc.returncode == 0, proc.stderr
    numerics = json.loads((tmp_path / "train.receipt.json").read_text())["numerics"]
    arith = {"op": "arith", "type": "f64", "rounding": "nearest-even"}
    assert numerics["square_grad"] == [arith]
    assert arith in numerics["loss_grad"]
    assert {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even",
            "sum": "ordered"} in numerics["loss_grad"]
