"""Properties of f_grad that hold whatever f is: the adjoint identity (dot-product test),
accumulation, linearity in the seed, the derivative conventions at kinks, and that
`derive grad[...]` gives adjoints to the named parameters only."""
import fractions
import re

from gradlib import EPS, SPEC_LOSS, cairn, one, run_observed, workdir

F = fractions.Fraction

# A linear map out = A x with A[i][i] = w[i] - 1/4, A[i][i+1 mod n] = 1/2: J is A.
LINEAR = """
fn lin(n:usize, x:ro<f64>[n], w:ro<f64>[n], out:rw<f64>[n]) {
  for i in 0..n { out[i] = w[i] * x[i] + 0.5 * x[(i + 1) % n] - x[i] / 4.0; }
}
derive grad[x] for lin;
"""

W = [0.3, -1.7, 2.9, 0.11, -0.6]
V = [1.1, -0.35, 0.8, 2.3, -1.9]
U = [-0.45, 1.3, 0.27, -2.2, 0.9]


def buffer(name, values):
    lines = [f"  buffer {name}:f64[n] = zeroed;"]
    lines += [f"  {name}[{i}] = {v!r};" for i, v in enumerate(values)]
    return "\n".join(lines)


def test_dot_product_identity_to_rounding():
    """<v, J^T u> = <J v, u> for a linear map, where J v = lin(v) exactly as a map and
    J^T u is lin_grad's d_x with d_out = u. Each computed element of J v and J^T u
    holds at most 3 terms and 4 roundings, so each is within 4 eps sum_j |A_ij z_j|;
    the identity therefore holds to 8 eps sum_ij |u_i| |A_ij| |v_j| (about 1e-15 here),
    while a wrong adjoint (a transposed or dropped term) misses by O(1)."""
    n = len(V)
    main = "\n".join(["fn main() -> i32 {", f"  let n:usize = {n};",
                      buffer("v", V), buffer("w", W), buffer("u", U),
                      "  buffer jv:f64[n] = zeroed;", "  buffer jtu:f64[n] = zeroed;", "  buffer o:f64[n] = zeroed;",
                      "  lin(n, v, w, jv);", "  lin_grad(n, v, w, o, jtu, u);",
                      '  observe("jv", jv);', '  observe("jtu", jtu);', "  return 0;", "}"])
    with workdir() as d:
        proc, obs = run_observed(LINEAR + main, d, "dot")
        assert proc.returncode == 0, proc.stderr
        jv, jtu = one(obs, "jv", "f64"), one(obs, "jtu", "f64")
    A = [[F(0)] * n for _ in range(n)]
    for i in range(n):
        A[i][i] += F(W[i]) - F(1, 4)
        A[i][(i + 1) % n] += F(1, 2)
    lhs = sum(F(V[j]) * F(jtu[j]) for j in range(n))
    rhs = sum(F(jv[i]) * F(U[i]) for i in range(n))
    bound = 8 * F(EPS["f64"]) * sum(abs(F(U[i]) * A[i][j] * F(V[j])) for i in range(n) for j in range(n))
    assert abs(lhs - rhs) <= bound, (float(lhs), float(rhs), float(bound))
    # and each side against the exact rational model A
    for j in range(n):
        exact = sum(F(U[i]) * A[i][j] for i in range(n))
        assert abs(F(jtu[j]) - exact) <= 4 * F(EPS["f64"]) * sum(abs(F(U[i]) * A[i][j]) for i in range(n))


NONLINEAR = """
fn f(n:usize, x:ro<f64>[n], y:ro<f64>[n], out:rw<f64>[n]) {
  parallel i in n {
    let t = x[i] * y[i];
    out[i] = t * t / (y[i] * y[i] + 1.0) + std_free(x[i]);
  }
}
fn std_free(a:f64) -> f64 = a * a * a;
derive grad for std_free;
derive grad[x] for f;
"""


def test_dot_product_nonlinear_central():
    """For a nonlinear region, <J v, u> by a central difference along v against
    <v, J^T u> from f_grad: within the central difference's truncation error
    h^2/6 * |u . F'''[v,v,v]| (h = 2^-17, |F'''| < 200 on these inputs) plus the rounding of each observed
    output, 16 eps |F| / h: about 1e-8 here, where a wrong adjoint misses by O(1)."""
    n = 4
    x = [0.75, -1.25, 0.5, 1.5]
    y = [1.5, 0.5, -2.0, 0.25]
    v = [0.5, -0.25, 1.0, 0.75]
    u = [1.0, 2.0, -0.5, 0.25]
    h = 2.0 ** -17
    plus = [a + h * b for a, b in zip(x, v)]
    minus = [a - h * b for a, b in zip(x, v)]
    main = "\n".join(["fn main() -> i32 {", f"  let n:usize = {n};",
                      buffer("x", x), buffer("y", y), buffer("u", u), buffer("xp", plus),
                      buffer("xm", minus), "  buffer o:f64[n] = zeroed;",
                      "  buffer g:f64[n] = zeroed;",
                      "  f_grad(n, x, y, o, g, u);", '  observe("g", g);',
                      "  f(n, xp, y, o);", '  observe("op", o);',
                      "  f(n, xm, y, o);", '  observe("om", o);', "  return 0;", "}"])
    with workdir() as d:
        proc, obs = run_observed(NONLINEAR + main, d, "dotnl")
        assert proc.returncode == 0, proc.stderr
        g, op, om = one(obs, "g", "f64"), one(obs, "op", "f64"), one(obs, "om", "f64")
    assert all(F(p) - F(m) == 2 * F(h) * F(b) for p, m, b in zip(plus, minus, v))  # dyadic: exact
    lhs = sum(F(a) * F(b) for a, b in zip(v, g))
    rhs = sum(F(ui) * (F(a) - F(b)) for ui, a, b in zip(u, op, om)) / (2 * F(h))
    size = sum(abs(a) for a in u) * max(abs(a) for a in v + op + om)
    tol = h * h / 6 * 200 * size + 16 * EPS["f64"] * size / h
    assert abs(float(lhs - rhs)) <= tol, (float(lhs), float(rhs), tol)


ACCUM = """
fn f(n:usize, x:ro<f64>[n], b:f64) -> f64 {
  let s = reduce + for i in n yield x[i] * x[i] * b;
  return s / (b + 2.0) + b * b;
}
derive grad for f;

fn main() -> i32 {
  let n:usize = 3;
  buffer x:f64[n] = zeroed;
  x[0] = 1.3;
  x[1] = -0.7;
  x[2] = 2.1;
  buffer g1:f64[n] = zeroed;
  let mut b1:f64 = 0.0;
  let r1 = f_grad(n, x, 0.9, 1.0, g1, b1);
  observe("g1", g1);
  observe("b1", b1);
  observe("r", r1);
  let fr = f(n, x, 0.9);
  observe("f", fr);
  buffer g2:f64[n] = zeroed;
  let mut b2:f64 = 0.375;
  for k in 0..n { g2[k] = 0.375; }
  f_grad(n, x, 0.9, 1.0, g2, b2);
  f_grad(n, x, 0.9, 1.0, g2, b2);
  observe("g2", g2);
  observe("b2", b2);
  buffer gs:f64[n] = zeroed;
  let mut bs:f64 = 0.0;
  f_grad(n, x, 0.9, 2.0, gs, bs);
  observe("gs", gs);
  observe("bs", bs);
  buffer gt:f64[n] = zeroed;
  let mut bt:f64 = 0.0;
  f_grad(n, x, 0.9, -3.0, gt, bt);
  observe("gt", gt);
  observe("bt", bt);
  return 0;
}
"""


def test_accumulate_twice_and_seed_linearity():
    """f_grad adds and never assigns: from p, two calls leave p + 2g (each call adds
    g's few terms: within 8 eps (|p| + 2|g| + terms)); f_grad returns f's result bit for
    bit; seed 2 scales every adjoint exactly (a power of two commutes with rounding
    away from overflow and underflow); seed -3 scales to within rounding."""
    with workdir() as d:
        proc, obs = run_observed(ACCUM, d, "accum")
        assert proc.returncode == 0, proc.stderr
    g1 = one(obs, "g1", "f64") + one(obs, "b1", "f64")
    g2 = one(obs, "g2", "f64") + one(obs, "b2", "f64")
    gs = one(obs, "gs", "f64") + one(obs, "bs", "f64")
    gt = one(obs, "gt", "f64") + one(obs, "bt", "f64")
    assert one(obs, "r", "f64") == one(obs, "f", "f64")
    assert all(g != 0.0 for g in g1)
    eps = EPS["f64"]
    for a, b in zip(g1, g2):
        assert abs(b - (0.375 + 2 * a)) <= 16 * eps * (0.375 + 2 * abs(a) + 10), (a, b)
    assert gs == [2 * a for a in g1]
    for a, b in zip(g1, gt):
        assert abs(b + 3 * a) <= 32 * eps * (3 * abs(a) + 10), (a, b)


def test_abs_derivative_is_one_at_zero_and_rounding_ops_zero():
    src = """
fn f(x:f64) -> f64 = abs(x) + floor(x) + ceil(x) + trunc(x);
derive grad for f;
fn main() -> i32 {
  let mut d0:f64 = 0.0;
  f_grad(0.0, 1.0, d0);
  let mut dm:f64 = 0.0;
  f_grad(-2.5, 1.0, dm);
  let mut dp:f64 = 0.0;
  f_grad(3.5, 1.0, dp);
  observe("d0", d0);
  observe("dm", dm);
  observe("dp", dp);
  return 0;
}
"""
    with workdir() as d:
        proc, obs = run_observed(src, d, "abs0")
        assert proc.returncode == 0, proc.stderr
    assert one(obs, "d0", "f64") == [1.0]
    assert one(obs, "dm", "f64") == [-1.0]
    assert one(obs, "dp", "f64") == [1.0]





def test_list_gives_adjoints_to_named_parameters_only(tmp_path):
    path = tmp_path / "loss.cairn"
    path.write_text(SPEC_LOSS)
    proc = cairn("expand", path)
    assert proc.returncode == 0, proc.stderr
    sig = re.search(r"fn loss_grad\(([^)]*)\)", proc.stdout)
    assert sig, proc.stdout
    params = [p.strip() for p in sig.group(1).split(",")]
    assert params == ["n:usize", "w:ro<f64>[n]", "x:ro<f64>[n]", "bias:f64", "target:f64",
                      "seed:f64", "d_w:rw<f64>[n]", "d_bias:rw<f64>"], params
    assert re.search(r"fn square_grad\(x:f64, seed:f64, d_x:rw<f64>\) -> f64", proc.stdout), proc.stdout
    # no adjoint for x or target: passing one more argument is refused
    bad = tmp_path / "extra.cairn"
    bad.write_text(SPEC_LOSS + """
fn main() -> i32 {
  let n:usize = 2;
  buffer w:f64[n] = zeroed;
  buffer dw:f64[n] = zeroed;
  buffer dx:f64[n] = zeroed;
  let mut db:f64 = 0.0;
  loss_grad(n, w, w, 0.0, 1.0, 1.0, dw, db, dx);
  return 0;
}
""")
    proc = cairn("check", bad)
    assert proc.returncode == 1 and "E-ARG-COUNT" in proc.stderr, proc.stderr
