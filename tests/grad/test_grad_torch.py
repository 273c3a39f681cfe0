"""f_grad against torch's autograd on the same functions, in f64.

Debian's python3-torch is not installed on the development machine: with
--no-install-recommends it pulls 175 packages (OpenCV, Qt, GDAL, ffmpeg), too large for
the shared machine, so these tests skip there and run wherever torch is present. Both
sides compute the same derivative formulas in f64 with different association, so they
agree to K eps times the magnitudes involved (K = 64 covers these short formulas); a
wrong derivative differs by O(1).
"""
import pytest

from gradlib import EPS, one, run_observed, workdir, gradient_program
from test_grad_forms import CASES

torch = pytest.importorskip(
    "torch", reason="torch not installed (Debian's python3-torch pulls 175 packages; see module doc)")

BY_NAME = {c.name: c for c in CASES}


def t(values):
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def torch_arith(v):
    x, y = t(v["x"]), t(v["y"])
    a = x * y
    b = a / (y + 3.0)
    c = -x
    return a - b + x / y + c * 2.0, {"x": x, "y": y}


def torch_exp_log(v):
    x, y = t(v["x"]), t(v["y"])
    return torch.exp(x * y) + torch.log(x + y * y), {"x": x, "y": y}


def torch_reduce_for(v):
    w, x = t(v["w"]), t(v["x"])
    s = (w * x * x).sum()
    return s * s, {"w": w, "x": x}


def torch_region_outputs(v):
    x, y = t(v["x"]), t(v["y"])
    tt = x * y
    out = torch.sqrt(tt * tt + 1.0) / y
    return out, {"x": x, "y": y}


def torch_spec_loss(v):
    w, bias = t(v["w"]), t(v["bias"])
    x = torch.tensor(v["x"], dtype=torch.float64)
    guess = (w * x).sum()
    r = guess + bias - v["target"]
    return r * r, {"w": w, "bias": bias}


MIRRORS = {"arith": torch_arith, "exp_log": torch_exp_log, "reduce_for": torch_reduce_for,
           "region_outputs": torch_region_outputs, "spec_loss": torch_spec_loss}


@pytest.mark.parametrize("name", sorted(MIRRORS))
def test_against_torch_autograd(name):
    case = BY_NAME[name]
    value, inputs = MIRRORS[name](case.values)
    if case.returns:
        (case.seed * value).backward()
    else:
        weights = torch.tensor(next(iter(case.d_out.values())), dtype=torch.float64)
        (weights * value).sum().backward()
    with workdir() as d:
        proc, obs = run_observed(gradient_program(case), d, name)
        assert proc.returncode == 0, proc.stderr
    for pname, tensor in inputs.items():
        ours = one(obs, f"d_{pname}", "f64")
        theirs = tensor.grad.reshape(-1).tolist()
        for a, b in zip(ours, theirs):
            assert abs(a - b) <= 64 * EPS["f64"] * (abs(b) + 1.0), (pname, ours, theirs)
