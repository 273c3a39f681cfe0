"""Gradient test harness: builds CAIRN programs that call f and f_grad, reads what
they observe, and holds f_grad to central differences of f computed here in Python.

A case is a CAIRN function f (plus any helpers and its `derive grad` line), a
description of f's parameters and the values to evaluate at. `gradient_check` writes a
main that:
  * calls f_grad once with the given seed and output adjoints (d_out), observing the
    adjoint of every differentiated parameter;
  * evaluates f itself at x +- h e_k for every component k of every differentiated
    parameter, observing f's result and every view f writes.
Python then forms, for each k, the central difference of
    seed * f(x) + sum_i d_out[i] * out_i(x)
in exact rational arithmetic from the observed bits, and compares.

Why the tolerance is what it is (per component k, see `cd_tolerance`):
  * truncation: the central difference of a smooth g has error h^2/6 * |g'''|, so a case
    states a bound M3 on the third derivative near its inputs;
  * rounding: each observed value of f carries at most K roundings of relative size
    eps (2^-53 in f64, 2^-24 where f computes in f32), each of at most the size of the
    largest magnitude seen, S; dividing by 2h turns that into K * eps * S / h;
  * f_grad itself rounds: K * eps * (|gradient| + S) more.
  h is 2^-17 in f64 (the balance point eps^(1/3) of the two error terms) and 2^-8 where
  f computes in f32, times max(1, |x_k|) rounded down to a power of two, and the inputs
  are dyadic so that x +- h is exact. A wrong derivative (a missing term, a wrong
  sign, a dropped factor) moves the result by O(1) on these inputs, far above tol.
"""
import fractions
import math
import pathlib
import struct
import tempfile
from dataclasses import dataclass, field

from cairntest import BIN, cairn_cell_flags, run

CAIRN = BIN / "cairn"
EPS = {"f64": 2.0 ** -53, "f32": 2.0 ** -24}

# The spec's loss (numerics.md, "Gradients"), shared by several tests.
SPEC_LOSS = """
fn square(x:f64) -> f64 = x * x;

fn loss(n:usize, w:ro<f64>[n], x:ro<f64>[n], bias:f64, target:f64) -> f64 {
  let guess = reduce + for i in n yield w[i] * x[i];
  return square(guess + bias - target);
}

derive grad for square;
derive grad[w, bias] for loss;
"""
FMT = {"f64": "d", "f32": "f"}


@dataclass
class Param:
    """One parameter of f: kind is 'size' (usize extent), 'scalar' (a float), 'int'
    (another integer), 'in' (ro float view of `extent` elements) or 'out' (rw float
    view f writes)."""
    name: str
    kind: str
    ty: str = "f64"
    extent: str = "n"


@dataclass
class Case:
    name: str
    source: str             # f, its helpers and its `derive grad` line(s)
    fn: str
    params: list
    values: dict            # name -> float, int or list of floats
    wrt: list               # differentiated parameter names, in parameter order
    returns: str = None     # 'f64', 'f32' or None
    m3: float = 10.0        # bound on |third derivative| near the inputs
    ops: int = 16           # bound on roundings along f's longest path
    compute: str = "f64"    # the float type f rounds in (sets h and eps)
    seed: float = 1.0
    d_out: dict = field(default_factory=dict)   # out view name -> list of floats


def literal(x):
    """An exact CAIRN literal for a Python float (repr round-trips)."""
    text = repr(float(x))
    return text if ("." in text or "e" in text) else text + ".0"


def step_for(x, compute):
    base = 2.0 ** -17 if compute == "f64" else 2.0 ** -8
    scale = 2.0 ** math.floor(math.log2(max(1.0, abs(x))))
    return base * scale


def _declare(case, lines):
    """Declarations in main for every parameter of f, holding case.values."""
    for p in case.params:
        v = case.values.get(p.name)
        if p.kind == "size":
            lines.append(f"  let {p.name}:usize = {v};")
        elif p.kind == "int":
            lines.append(f"  let {p.name}:{p.ty} = {v};")
        elif p.kind == "scalar":
            lines.append(f"  let mut {p.name}:{p.ty} = {literal(v)};")
        else:
            lines.append(f"  buffer {p.name}:{p.ty}[{p.extent}] = zeroed;")
            for i, x in enumerate(v or []):
                lines.append(f"  {p.name}[{i}] = {literal(x)};")


def _call_f(case, tag, lines):
    args = ", ".join(p.name for p in case.params)
    if case.returns:
        lines.append(f"  let r_{tag} = {case.fn}({args});")
        lines.append(f'  observe("f_{tag}", r_{tag});')
    else:
        lines.append(f"  {case.fn}({args});")
    for p in case.params:
        if p.kind == "out":
            lines.append(f'  observe("out_{tag}_{p.name}", {p.name});')


def _call_grad(case, lines):
    args = [p.name for p in case.params]
    if case.returns:
        args.append(literal(case.seed))
    for p in case.params:
        if p.name in case.wrt:
            if p.kind == "scalar":
                lines.append(f"  let mut d_{p.name}:{p.ty} = 0.0;")
            else:
                lines.append(f"  buffer d_{p.name}:{p.ty}[{p.extent}] = zeroed;")
            args.append(f"d_{p.name}")
    for p in case.params:
        if p.kind == "out":
            lines.append(f"  buffer d_{p.name}:{p.ty}[{p.extent}] = zeroed;")
            for i, u in enumerate(case.d_out[p.name]):
                lines.append(f"  d_{p.name}[{i}] = {literal(u)};")
            args.append(f"d_{p.name}")
    call = f"{case.fn}_grad({', '.join(args)})"
    lines.append(f"  let r_grad = {call};" if case.returns else f"  {call};")
    if case.returns:
        lines.append('  observe("f_grad", r_grad);')
    for name in case.wrt:
        lines.append(f'  observe("d_{name}", d_{name});')


def components(case):
    """(param, index or None, value) for every differentiated component."""
    out = []
    for p in case.params:
        if p.name not in case.wrt:
            continue
        v = case.values[p.name]
        if p.kind == "scalar":
            out.append((p, None, v))
        else:
            out.extend((p, i, x) for i, x in enumerate(v))
    return out


def gradient_program(case):
    lines = ["", "fn main() -> i32 {"]
    _declare(case, lines)
    _call_grad(case, lines)
    for k, (p, i, x) in enumerate(components(case)):
        h = step_for(x, case.compute)
        target = p.name if i is None else f"{p.name}[{i}]"
        for sign, tag in ((1, "p"), (-1, "m")):
            lines.append(f"  {target} = {literal(x + sign * h)};")
            _call_f(case, f"{tag}{k}", lines)
        lines.append(f"  {target} = {literal(x)};")
    lines += ["  return 0;", "}", ""]
    return case.source.rstrip() + "\n" + "\n".join(lines)


def read_raw(folder):
    """Observations written under CAIRN_OBSERVE_RAW: name -> list of byte strings in
    the order observed."""
    found = {}
    for path in sorted(pathlib.Path(folder).glob("*.bin")):
        name, seq, _ = path.name.rsplit(".", 2)
        found.setdefault(name, []).append((int(seq), path.read_bytes()))
    return {k: [b for _, b in sorted(v)] for k, v in found.items()}


def values_of(raw, ty):
    return list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(FMT[ty]), FMT[ty]), raw))


def run_observed(source, workdir, name="prog"):
    """cairn run SOURCE with raw observations on; returns (CompletedProcess, obs)."""
    workdir = pathlib.Path(workdir)
    src = workdir / f"{name}.cairn"
    src.write_text(source)
    raw = workdir / f"{name}.raw"
    raw.mkdir(exist_ok=True)
    proc = run([CAIRN, "run", *cairn_cell_flags(), src],
               env={"CAIRN_OBSERVE_RAW": str(raw), "CAIRN_OBSERVE": str(workdir / f"{name}.log")},
               timeout=240)
    return proc, read_raw(raw)


def one(obs, name, ty, seq=0):
    assert name in obs, f"no observation {name!r}: saw {sorted(obs)}"
    return values_of(obs[name][seq], ty)


def cd_tolerance(case, h, scale, grad):
    eps = EPS[case.compute]
    return h * h / 6 * case.m3 + case.ops * eps * scale / h + case.ops * eps * (abs(grad) + scale)


def check_gradient(case, workdir):
    """Runs the case and returns a list of mismatch descriptions (empty: all agree)."""
    source = gradient_program(case)
    proc, obs = run_observed(source, workdir, case.name)
    assert proc.returncode == 0, f"{case.name}: exit {proc.returncode}\n{proc.stderr}\n{source}"
    problems = []
    outs = [p for p in case.params if p.kind == "out"]
    rty = case.returns
    for k, (p, i, x) in enumerate(components(case)):
        h = step_for(x, case.compute)
        central, scale = fractions.Fraction(0), 0.0
        if rty:
            fp, fm = one(obs, f"f_p{k}", rty)[0], one(obs, f"f_m{k}", rty)[0]
            central += fractions.Fraction(case.seed) * (fractions.Fraction(fp) - fractions.Fraction(fm))
            scale = max(scale, abs(case.seed) * max(abs(fp), abs(fm)))
        for q in outs:
            up, dn = one(obs, f"out_p{k}_{q.name}", q.ty), one(obs, f"out_m{k}_{q.name}", q.ty)
            for u, a, b in zip(case.d_out[q.name], up, dn):
                central += fractions.Fraction(u) * (fractions.Fraction(a) - fractions.Fraction(b))
                scale += abs(u) * max(abs(a), abs(b))
        central /= 2 * fractions.Fraction(h)
        got = one(obs, f"d_{p.name}", p.ty)[0 if i is None else i]
        tol = cd_tolerance(case, h, scale, got)
        err = abs(fractions.Fraction(got) - central)
        if err > fractions.Fraction(tol):
            where = p.name if i is None else f"{p.name}[{i}]"
            problems.append(f"{case.name}: d/d{where} = {got!r}, central difference "
                            f"{float(central)!r}, |diff| {float(err):.3g} > tol {tol:.3g}")
    return problems


def workdir():
    return tempfile.TemporaryDirectory(prefix="cairn-grad-")


def cairn(*args, **kw):
    return run([CAIRN, *args], **kw)


def env_has_torch():
    try:
        import torch  # noqa: F401
        return True
    except ImportError:
        return False


