"""Random expressions built from the differentiated forms, against central differences.

Each function f_k(x, y) is a random tree of + - * /, unary -, sqrt, abs, floor,
std.math.exp and std.math.log, written so that every value stays in its domain and
bounded (sqrt and log of e * e + 1, exp of e / (e * e + 1), division by e * e + 1).
One program derives all of them and observes each gradient and f at x +- h and
x +- h/2 per component.

Tolerance, without a bound on f''' of a random tree: the central difference's error is
c h^2 + O(h^4) plus rounding, so |D(h) - D(h/2)| = (3/4) c h^2 estimates it; we allow
2 |D(h) - D(h/2)| plus 64 eps |f| / h of rounding and 1e-12 (1 + |g|). A wrong rule
moves the gradient by O(1) and fails it.
"""
import fractions
import random

import pytest

from gradlib import EPS, literal, one, run_observed, workdir

F = fractions.Fraction
COUNT = 24


def expr(rng, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(["x", "y", literal(rng.choice([0.5, 1.25, -0.75, 2.0, 3.0]))])
    a = expr(rng, depth - 1)
    kind = rng.randrange(10)
    if kind < 4:
        return f"({a} {rng.choice('+-*')} {expr(rng, depth - 1)})"
    if kind == 4:
        return f"({a} / ({expr(rng, depth - 1)} * {expr(rng, depth - 1)} + 1.0))"
    if kind == 5:
        return f"sqrt({a} * {a} + 1.0)"
    if kind == 6:
        return f"std.math.log({a} * {a} + 1.0)"
    if kind == 7:
        return f"std.math.exp({a} / ({a} * {a} + 1.0))"
    if kind == 8:
        return f"(abs({a}) + floor({a}) * 0.25)"
    return f"(-{a})"


def program(rng):
    fns, lines = [], ["fn main() -> i32 {"]
    for k in range(COUNT):
        body = expr(rng, 4)
        if "x" not in body or "y" not in body:
            body = f"({body}) * x + y"
        fns.append(f"fn r{k}(x:f64, y:f64) -> f64 = {body};\nderive grad for r{k};")
        x, y = rng.choice([0.3125, -0.6875, 1.1875]), rng.choice([0.4375, -1.3125, 0.8125])
        lines += [f"  let mut dx{k}:f64 = 0.0;", f"  let mut dy{k}:f64 = 0.0;",
                  f"  r{k}_grad({literal(x)}, {literal(y)}, 1.0, dx{k}, dy{k});",
                  f'  observe("g{k}", dx{k});', f'  observe("g{k}", dy{k});']
        for which in ("x", "y"):
            for h in (2.0 ** -14, 2.0 ** -15):
                for sign in (1, -1):
                    px = x + sign * h if which == "x" else x
                    py = y + sign * h if which == "y" else y
                    name = f"v{k}_{len(lines)}"
                    lines += [f"  let {name} = r{k}({literal(px)}, {literal(py)});",
                              f'  observe("v{k}", {name});']
    lines += ["  return 0;", "}"]
    return "\n".join(fns) + "\n\n" + "\n".join(lines) + "\n", fns


@pytest.mark.parametrize("seed", [1, 2])
def test_random_expressions_against_central_differences(seed):
    rng = random.Random(seed)
    source, fns = program(rng)
    with workdir() as d:
        proc, obs = run_observed(source, d, f"random{seed}")
        assert proc.returncode == 0, proc.stderr + source
    eps, problems = EPS["f64"], []
    for k in range(COUNT):
        grads = [one(obs, f"g{k}", "f64", s)[0] for s in range(2)]
        vals = [one(obs, f"v{k}", "f64", s)[0] for s in range(8)]
        for c, g in enumerate(grads):          # c: 0 for x, 1 for y
            p1, m1, p2, m2 = vals[4 * c: 4 * c + 4]
            d1 = (F(p1) - F(m1)) / (2 * F(2.0 ** -14))
            d2 = (F(p2) - F(m2)) / (2 * F(2.0 ** -15))
            scale = max(abs(v) for v in vals)
            tol = 2 * abs(d1 - d2) + F(64 * eps * scale / 2.0 ** -15) + F(1e-12) * (1 + abs(F(g)))
            if abs(F(g) - d2) > tol:
                problems.append(f"{fns[k]}\n  d/d{'xy'[c]} = {g!r}, central {float(d2)!r}, tol {float(tol):.3g}")
    assert not problems, "\n".join(problems)
