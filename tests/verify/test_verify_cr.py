"""cairn verify and std.cr: a call is an uninterpreted function of its argument (one
result per input) with facts that hold for every correctly rounded result (exp >= 0,
|tanh| <= 1, 0 <= sigmoid <= 1, log finite inside its domain, ...). A property the facts
prove is verified; one they do not decide answers unknown (never a counterexample the
model made up); and the facts never contradict one another at any input, which would
make every property 'verified' for free."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_verify import PROGRAMS, of, verify  # noqa: E402  (the suite's helpers)

F32 = ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"]
F64 = ["exp", "log"]
PINS = {"nan": "x != x", "ninf": "x == from_bits[T](NINF)", "m2": "x == -2.0",
        "m1": "x == -1.0", "zero": "x == 0.0", "half": "x == 0.5", "one": "x == 1.0",
        "pinf": "x == from_bits[T](PINF)"}


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    return verify(PROGRAMS / "cr.cairn", tmp_path_factory.mktemp("cr"))[1]


@pytest.mark.parametrize("fn", ["tanh_scaled", "sigmoid_two", "sin_cos", "exp_byte", "expm1_byte",
                                "log_finite", "one_result"])
def test_facts_prove(facts, fn):
    verdicts = [p["verdict"] for p in of(facts, fn)]
    assert verdicts and all(v == "verified" for v in verdicts), of(facts, fn)


@pytest.mark.parametrize("fn,reason", [("exp_big", "std.cr.exp"), ("log1p_edge", "std.cr.log1p")])
def test_what_the_facts_leave_is_unknown(facts, fn, reason):
    props = of(facts, fn, "float to integer conversion out of range")
    assert [p["verdict"] for p in props] == ["unknown"]
    assert reason in props[0]["reason"] and "range" in props[0]["reason"]


def test_facts_are_consistent_at_every_kind_of_input(tmp_path):
    """At NaN, the infinities, -2, -1, 0, 1/2 and 1, for every function and type, the
    facts leave a model: `100 / d` must still find d = 0."""
    lines = []
    for t, funcs, ninf, pinf in (("f32", F32, "0xff800000", "0x7f800000"),
                                 ("f64", F64, "0xfff0000000000000", "0x7ff0000000000000")):
        for f in funcs:
            for k, pin in PINS.items():
                pin = pin.replace("T", t).replace("NINF", ninf).replace("PINF", pinf)
                lines.append(f"fn v_{t}_{f}_{k}(x:{t}, d:i32) -> i32 requires {pin} "
                             f"{{ let y = std.cr.{f}(x); return 100 / d; }}")
    src = tmp_path / "consistent.cairn"
    src.write_text("\n".join(lines) + "\n")
    rc, props = verify(src, tmp_path)
    divs = [p for p in props if p["property"] == "division by zero"]
    assert len(divs) == len(lines)
    assert all(p["verdict"] == "counterexample" for p in divs), \
        [p["function"] for p in divs if p["verdict"] != "counterexample"]
