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
from verifylib import CAIRN, concrete  # noqa: E402
from cairntest import run  # noqa: E402

F32 = ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"]
F64 = ["exp", "log"]
PINS = {"nan": "x != x", "ninf": "x == from_bits[T](NINF)", "m2": "x == -2.0",
        "m1": "x == -1.0", "zero": "x == 0.0", "half": "x == 0.5", "one": "x == 1.0",
        "pinf": "x == from_bits[T](PINF)"}


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    return verify(PROGRAMS / "cr.cairn", tmp_path_factory.mktemp("cr"))[1]


@pytest.mark.parametrize("fn", ["tanh_scaled", "sigmoid_two", "sin_cos", "exp_byte", "expm1_byte",
                                "log_finite", "one_result", "nan_canonical", "log_nan_canonical",
                                "stored", "lanes_sigmoid", "loop_cos", "branch_unreached"])
def test_facts_prove(facts, fn):
    """Verified, not "verified up to N": lanes and loops at every extent too."""
    verdicts = [p["verdict"] for p in of(facts, fn)]
    assert verdicts and all(v == "verified" for v in verdicts), of(facts, fn)


@pytest.mark.parametrize("main", [
    "return nan_canonical(from_bits[f32](0x7fc00001), 0);",
    "return nan_canonical(from_bits[f32](0xff800001), 0);",
    "return log_nan_canonical(-1.0, 0);",
    "return log_nan_canonical(from_bits[f64](0xfff0000000000001), 0);",
    "return log_nan_canonical(from_bits[f64](0xfff8000000000000), 0);",
])
def test_the_runtime_gives_the_nan_the_model_has(tmp_path, main):
    """The model takes every NaN std.cr returns to be 0x7fffffff (f32) or
    0x7fffffffffffffff (f64), whatever the input's payload; a run with other NaN payloads
    must not reach the division the model proved unreachable."""
    r, _ = concrete(tmp_path, PROGRAMS / "cr.cairn", f"fn main() -> i32 {{ {main} }}")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("fn,prop,reason", [("exp_big", "float to integer conversion out of range", "std.cr.exp"),
                                            ("log1p_edge", "float to integer conversion out of range",
                                             "std.cr.log1p"),
                                            ("branch_taken", "division by zero", "std.cr.exp")])
def test_what_the_facts_leave_is_unknown(facts, fn, prop, reason):
    """A model through a std.cr value is no counterexample: the function it picked need
    not be the real one (branch_taken does trap, but the facts cannot show it)."""
    props = of(facts, fn, prop)
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


def fact_check(f, t):
    """A CAIRN function that returns 1 where std.cr.f's result at x breaks a fact
    verify_cr.c gives the model, written again here from the mathematics."""
    bits, nan = ("u32", "0x7fffffff") if t == "f32" else ("u64", "0x7fffffffffffffff")
    inf, ninf = ("0x7f800000", "0xff800000") if t == "f32" else ("0x7ff0000000000000", "0xfff0000000000000")
    INF, NINF = f"from_bits[{t}]({inf})", f"from_bits[{t}]({ninf})"
    body = [f"let r = std.cr.{f}(x);",
            f"if r != r && to_bits(r) != {nan} {{ return 1; }}",  # the one NaN pattern
            "if x != x { if r == r { return 1; } return 0; }"]    # NaN in, NaN out
    rng = {"exp": ("0.0", None, "0.0", "1.0"), "exp2": ("0.0", None, "0.0", "1.0"),
           "expm1": ("-1.0", None, "0.0", "0.0"), "tanh": ("-1.0", "1.0", "0.0", "0.0"),
           "sigmoid": ("0.0", "1.0", "0.0", "0.5")}
    if f in rng:  # a number in [lo, hi], rising through (a, ra)
        lo, hi, a, ra = rng[f]
        body.append(f"if r != r || r < {lo} {{ return 1; }}")
        if hi:
            body.append(f"if r > {hi} {{ return 1; }}")
        body.append(f"if (x >= {a} && r < {ra}) || (x <= {a} && r > {ra}) {{ return 1; }}")
    elif f in ("log", "log2", "log1p"):
        low, one = ("-1.0", "0.0") if f == "log1p" else ("0.0", "1.0")
        body += [f"if x < {low} {{ if r == r {{ return 1; }} return 0; }}",
                 f"if x == {low} {{ if r != {NINF} {{ return 1; }} return 0; }}",
                 f"if x != {INF} && (r != r || r == {INF} || r == {NINF}) {{ return 1; }}",
                 f"if (x >= {one} && r < 0.0) || (x <= {one} && r > 0.0) {{ return 1; }}"]
    else:  # sin, cos
        body += [f"if x == {INF} || x == {NINF} {{ if r == r {{ return 1; }} return 0; }}",
                 "if r != r || r < -1.0 || r > 1.0 { return 1; }",
                 "if x == 0.0 && to_bits(r) != to_bits(x) { return 1; }" if f == "sin" else
                 "if x == 0.0 && r != 1.0 { return 1; }"]
    return f"fn fact_{t}_{f}(x:{t}) -> i64 {{\n  " + "\n  ".join(body) + "\n  return 0;\n}\n"


EDGES32 = ["0x00000000", "0x80000000", "0x7f800000", "0xff800000", "0x7fc00000", "0xffc00001", "0x7f800001",
           "0x3f800000", "0xbf800000", "0xc0000000", "0x3f000000", "0x00000001", "0x80000001", "0x7f7fffff",
           "0xff7fffff", "0x42b17218", "0xc2cff1b5", "0xc2ce8ed0", "0x3f7fffff", "0x3f800001", "0xbf7fffff",
           "0x41100000", "0xc1100000", "0x4c000000"]
EDGES64 = ["0x0", "0x8000000000000000", "0x7ff0000000000000", "0xfff0000000000000", "0x7ff8000000000000",
           "0xfff8000000000001", "0x7ff0000000000001", "0x3ff0000000000000", "0xbff0000000000000",
           "0x0000000000000001", "0x7fefffffffffffff", "0x40862e42fefa39ef", "0xc0874910d52d3052",
           "0x3fefffffffffffff", "0x3ff0000000000001"]


def test_the_facts_hold_for_the_runtime(tmp_path):
    """Every fact the model gives a std.cr call, checked against the runtime's own results:
    2^20 f32 and 2^20 f64 bit patterns spread over every exponent (a stride through all of
    them), and the edges (signed zeros, infinities, NaN payloads, subnormals, the largest
    finite values, exp's overflow and underflow thresholds, the neighbours of 1). A wrong
    fact would make verify prove what a run breaks; no fact may fail at any of them."""
    src = [fact_check(f, "f32") for f in F32] + [fact_check(f, "f64") for f in F64]
    main = ["fn main() -> i32 {"]
    for t, funcs, edges, sweep in (("f32", F32, EDGES32, "u32(i) * 4093"),
                                   ("f64", F64, EDGES64, "u64(i) * 17592186044399")):
        for f in funcs:
            main.append(f"  let mut bad_{t}_{f}:i64 = 0;")
            main.append(f"  for i in 0..1048576 {{ bad_{t}_{f} += fact_{t}_{f}(from_bits[{t}]({sweep})); }}")
            main += [f"  bad_{t}_{f} += fact_{t}_{f}(from_bits[{t}]({e}));" for e in edges]
            main.append(f'  observe("{t}_{f}", bad_{t}_{f});')
    main.append("  return 0;\n}")
    prog = tmp_path / "facts.cairn"
    prog.write_text("".join(src) + "\n".join(main) + "\n")
    r = run([CAIRN, "run", prog, "--show"], timeout=600)
    assert r.returncode == 0, r.stderr
    shown = dict(line.split()[0::2] for line in r.stdout.splitlines() if line.strip())
    assert len(shown) == len(F32) + len(F64) and all(v == "0" for v in shown.values()), shown
