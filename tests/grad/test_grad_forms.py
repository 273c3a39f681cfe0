"""Every form derive grad differentiates, against central differences of f in f64.

Each case is f, its `derive grad` line, where to evaluate and which parameters are
differentiated; gradlib writes a main that calls f_grad once and f at x +- h e_k, and
compares in exact rationals (tolerances: gradlib's docstring).
"""
import pytest

from gradlib import SPEC_LOSS, Case, Param, check_gradient, workdir

N = Param("n", "size")

# Both paths of one if, each evaluated on its own side of a * y = 1.
IF_ELSE = """
fn f(x:f64, y:f64) -> f64 {
  let a = x * y;
  if a > 1.0 {
    let b = a * a;
    return b + y;
  } else {
    return a - x * 3.0;
  }
}
derive grad for f;
"""


def scalar(name, ty="f64"):
    return Param(name, "scalar", ty)


def view(name, ty="f64"):
    return Param(name, "in", ty)


def out(name, ty="f64"):
    return Param(name, "out", ty)


CASES = [
    Case("arith", """
fn f(x:f64, y:f64) -> f64 {
  let a = x * y;
  let b = a / (y + 3.0);
  let c = -x;
  return a - b + x / y + c * 2.0;
}
derive grad for f;
""", "f", [scalar("x"), scalar("y")], {"x": 1.25, "y": -0.75}, ["x", "y"], "f64", m3=100),

    Case("sqrt_abs_floor", """
fn f(x:f64, y:f64) -> f64 {
  return sqrt(x * x + y) * abs(y - 2.0) + floor(x) * y + abs(x);
}
derive grad for f;
""", "f", [scalar("x"), scalar("y")], {"x": -1.25, "y": 0.75}, ["x", "y"], "f64", m3=50),

    Case("ceil_trunc", """
fn f(x:f64) -> f64 = ceil(x) * x + trunc(x * 3.0) + x;
derive grad for f;
""", "f", [scalar("x")], {"x": 2.625}, ["x"], "f64"),

    Case("exp_log", """
fn f(x:f64, y:f64) -> f64 = std.math.exp(x * y) + std.math.log(x + y * y);
derive grad for f;
""", "f", [scalar("x"), scalar("y")], {"x": 0.5, "y": 1.5}, ["x", "y"], "f64", m3=100),

    Case("cr_f32", """
fn f(x:f32, y:f32) -> f32 {
  let a = std.cr.tanh(x * y) + std.cr.sigmoid(x) * std.cr.sin(y) + std.cr.log1p(x * x);
  let b = std.cr.exp2(y) + std.cr.expm1(x) + std.cr.log2(y) - std.cr.cos(x * 3.0);
  return a + b + std.cr.exp(x) * std.cr.log(y);
}
derive grad for f;
""", "f", [scalar("x", "f32"), scalar("y", "f32")], {"x": 0.75, "y": 1.25}, ["x", "y"], "f32",
         compute="f32", m3=60),

    Case("cr_tanh_sigmoid_tails", """
fn f(x:f32) -> f32 = std.cr.tanh(x) * 1000.0 + std.cr.sigmoid(x * 2.0) * 100.0;
derive grad for f;
""", "f", [scalar("x", "f32")], {"x": 4.5}, ["x"], "f32", compute="f32", m3=10),

    Case("cr_f64", """
fn f(x:f64, y:f64) -> f64 = std.cr.exp(x * y) + std.cr.log(x + y * y) * std.cr.exp(-x);
derive grad for f;
""", "f", [scalar("x"), scalar("y")], {"x": 0.5, "y": 1.5}, ["x", "y"], "f64", m3=100),

    Case("convert_f32", """
fn f(x:f64, y:f32) -> f64 {
  let a = f32(x) * y;
  return f64(a) * x;
}
derive grad for f;
""", "f", [scalar("x"), scalar("y", "f32")], {"x": 1.5, "y": 0.75}, ["x", "y"], "f64",
         compute="f32", m3=10),

    Case("f32_function", """
fn f(x:f32, y:f32) -> f32 = x * y * y - x / y;
derive grad for f;
""", "f", [scalar("x", "f32"), scalar("y", "f32")], {"x": 1.5, "y": 2.25}, ["x", "y"], "f32",
         compute="f32", m3=10),

    Case("if_then", IF_ELSE, "f", [scalar("x"), scalar("y")], {"x": 1.5, "y": 2.0}, ["x", "y"], "f64", m3=50),

    Case("if_else", IF_ELSE, "f", [scalar("x"), scalar("y")], {"x": 0.25, "y": 2.0}, ["x", "y"], "f64"),

    Case("if_early_return", """
fn f(x:f64) -> f64 {
  if x < 0.0 { return -x * x; }
  let y = x * x * x;
  return y + x;
}
derive grad for f;
""", "f", [scalar("x")], {"x": 0.75}, ["x"], "f64", m3=10),

    Case("reduce_for", """
fn f(n:usize, w:ro<f64>[n], x:ro<f64>[n]) -> f64 {
  let s = reduce + for i in n yield w[i] * x[i] * x[i];
  return s * s;
}
derive grad for f;
""", "f", [N, view("w"), view("x")], {"n": 3, "w": [0.5, -1.25, 2.0], "x": [1.5, 0.25, -0.75]},
         ["w", "x"], "f64", m3=100),

    Case("reduce_parallel", """
fn f(n:usize, w:ro<f64>[n], x:ro<f64>[n]) -> f64 {
  let s = reduce + parallel i in n yield w[i] * x[i] * x[i];
  return s * s + s;
}
derive grad for f;
""", "f", [N, view("w"), view("x")], {"n": 4, "w": [0.5, -1.25, 2.0, 0.75], "x": [1.5, 0.25, -0.75, 1.0]},
         ["w", "x"], "f64", m3=100),

    Case("sum_loop", """
fn f(n:usize, x:ro<f64>[n], b:f64) -> f64 {
  let mut acc:f64 = b;
  for i in 0..n {
    let t = x[i] * b;
    acc += t * x[i];
    acc = acc - x[i] / 8.0;
  }
  return acc * acc;
}
derive grad for f;
""", "f", [N, view("x"), scalar("b")], {"n": 3, "x": [1.5, 0.25, -0.75], "b": 0.625},
         ["x", "b"], "f64", m3=100),

    Case("loop_outputs", """
fn f(n:usize, x:ro<f64>[n], a:f64, out:rw<f64>[n]) {
  for i in 0..n {
    let t = x[i] * a;
    out[i] = t * t + x[(i + 1) % n];
  }
}
derive grad for f;
""", "f", [N, view("x"), scalar("a"), out("out")], {"n": 3, "x": [1.5, 0.25, -0.75], "a": 1.25},
         ["x", "a"], None, m3=20, d_out={"out": [1.0, -0.5, 0.25]}),

    Case("region_outputs", """
fn f(n:usize, x:ro<f64>[n], y:ro<f64>[n], out:rw<f64>[n]) {
  parallel i in n {
    let t = x[i] * y[i];
    out[i] = sqrt(t * t + 1.0) / y[i];
  }
}
derive grad for f;
""", "f", [N, view("x"), view("y"), out("out")],
         {"n": 4, "x": [1.5, 0.25, -0.75, 2.0], "y": [0.5, 1.25, -2.0, 0.75]},
         ["x", "y"], None, m3=200, d_out={"out": [1.0, -0.5, 0.25, 2.0]}),

    Case("matvec_nested", """
fn f(m:usize, n:usize, mn:usize, w:ro<f64>[mn], x:ro<f64>[n], out:rw<f64>[m]) {
  for i in 0..m {
    let mut s:f64 = 0.0;
    for j in 0..n { s += w[i * n + j] * x[j]; }
    out[i] = s * s;
  }
}
derive grad for f;
""", "f", [Param("m", "size"), N, Param("mn", "size"), Param("w", "in", extent="mn"),
           view("x"), Param("out", "out", extent="m")],
         {"m": 2, "n": 3, "mn": 6, "w": [0.5, -1.0, 0.25, 1.5, 0.75, -0.5], "x": [1.0, -0.5, 2.0]},
         ["w", "x"], None, m3=20, d_out={"out": [1.0, -2.0]}),

    Case("reused_names", """
fn f(n:usize, x:ro<f64>[n], out:rw<f64>[n]) -> f64 {
  for i in 0..n { let t = x[i] * 2.0; out[i] = t * t; }
  let t = x[0] * 3.0;
  let s = reduce + for j in n yield x[j] * t;
  let i = s * s;
  let j = i + 1.0;
  return j * t;
}
derive grad for f;
""", "f", [N, view("x"), out("out")], {"n": 3, "x": [0.5, -0.25, 0.75]},
         ["x"], "f64", m3=2000, d_out={"out": [1.0, -0.5, 0.25]}),  # f is of degree 5 in x[0]

    Case("if_in_region", """
fn f(n:usize, x:ro<f64>[n], out:rw<f64>[n]) {
  parallel i in n {
    let v = x[i] * 2.0;
    if v > 0.0 { out[i] = v * v; } else { let w = v * 0.5; out[i] = w * w * w; }
  }
}
derive grad for f;
""", "f", [N, view("x"), out("out")], {"n": 4, "x": [0.75, -0.5, 1.25, -1.5]},
         ["x"], None, m3=100, d_out={"out": [1.0, -0.5, 0.25, 2.0]}),

    Case("if_in_sum_loop", """
fn f(n:usize, x:ro<f64>[n], k:f64) -> f64 {
  let mut acc:f64 = 0.0;
  for i in 0..n {
    let a = abs(x[i]) * k;
    if a < 1.0 { acc += 0.5 * a * a; } else if a < 2.0 { acc += a - 0.5; } else { acc += 1.5; }
  }
  return acc;
}
derive grad for f;
""", "f", [N, view("x"), scalar("k")], {"n": 4, "x": [0.5, -1.5, 2.5, -0.25], "k": 1.0},
         ["x", "k"], "f64", m3=10),

    Case("if_around_sum", """
fn f(r:usize, c:usize, rc:usize, w:ro<f64>[rc], x:ro<f64>[c], out:rw<f64>[r]) {
  for i in 0..r {
    let mut s:f64 = 0.0;
    for j in 0..c { if x[j] > 0.0 { s += w[i * c + j] * x[j]; } }
    out[i] = s * s;
  }
}
derive grad for f;
""", "f", [Param("r", "size"), Param("c", "size"), Param("rc", "size"), Param("w", "in", extent="rc"),
           Param("x", "in", extent="c"), Param("out", "out", extent="r")],
         {"r": 2, "c": 3, "rc": 6, "w": [0.5, -1.0, 0.25, 1.5, 0.75, -0.5], "x": [1.0, -0.5, 2.0]},
         ["w", "x"], None, m3=20, d_out={"out": [1.0, -2.0]}),

    Case("if_around_loops", """
fn f(n:usize, x:ro<f64>[n], flag:f64, out:rw<f64>[n]) {
  if flag > 0.0 {
    for i in 0..n { out[i] = x[i] * x[i] * flag; }
  } else {
    parallel i in n { out[i] = -x[i]; }
  }
}
derive grad[x] for f;
""", "f", [N, view("x"), scalar("flag"), out("out")], {"n": 3, "x": [1.5, 0.25, -0.75], "flag": 2.0},
         ["x"], None, m3=20, d_out={"out": [1.0, -0.5, 0.25]}),

    Case("calls", """
fn g(a:f64, b:f64) -> f64 = a * b + a;
derive grad for g;
fn f(x:f64) -> f64 = g(x, x * x) + g(2.0, x);
derive grad for f;
""", "f", [scalar("x")], {"x": 0.75}, ["x"], "f64", m3=20),

    Case("calls_views", """
fn dot(n:usize, a:ro<f64>[n], b:ro<f64>[n]) -> f64 = reduce + for i in n yield a[i] * b[i];
derive grad for dot;
fn f(n:usize, x:ro<f64>[n], w:ro<f64>[n]) -> f64 = dot(n, x, w) * dot(n, x, x);
derive grad[x] for f;
""", "f", [N, view("x"), view("w")], {"n": 3, "x": [1.5, 0.25, -0.75], "w": [0.5, -1.25, 2.0]},
         ["x"], "f64", m3=50),

    # One adjoint view may not go to two rw parameters (E-ALIAS): the second and third
    # get zeroed buffers added into d_x after the call.
    Case("calls_views_thrice", """
fn tri(n:usize, a:ro<f64>[n], b:ro<f64>[n], c:ro<f64>[n]) -> f64 =
  reduce + for i in n yield a[i] * b[i] * c[i];
derive grad for tri;
fn f(n:usize, x:ro<f64>[n], w:ro<f64>[n]) -> f64 = tri(n, w, x, x) + tri(n, x, x, x) * tri(n, x, w, x);
derive grad for f;
""", "f", [N, view("x"), view("w")], {"n": 3, "x": [1.5, 0.25, -0.75], "w": [0.5, -1.25, 2.0]},
         ["x", "w"], "f64", m3=200),

    # The scalar twin: h(x, x) gives each of h_grad's adjoints its own `let mut`.
    Case("calls_scalar_twice", """
fn h(a:f64, b:f64) -> f64 = a * a * b - b / a;
derive grad for h;
fn g(x:f64) -> f64 = h(x, x);
derive grad for g;
""", "g", [scalar("x")], {"x": 1.25}, ["x"], "f64", m3=50),

    Case("spec_loss", SPEC_LOSS, "loss", [N, view("w"), view("x"), scalar("bias"), scalar("target")],
         {"n": 2, "w": [0.25, -0.5], "x": [1.0, 2.0], "bias": 0.125, "target": 5.0},
         ["w", "bias"], "f64", m3=1),

    Case("result_and_outputs", """
fn f(n:usize, x:ro<f64>[n], out:rw<f64>[n]) -> f64 {
  for i in 0..n { out[i] = x[i] * x[i]; }
  return reduce + for i in n yield x[i] * 3.0;
}
derive grad for f;
""", "f", [N, view("x"), out("out")], {"n": 3, "x": [1.5, 0.25, -0.75]},
         ["x"], "f64", seed=0.5, d_out={"out": [1.0, -0.5, 0.25]}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_gradient_matches_central_difference(case):
    with workdir() as d:
        problems = check_gradient(case, d)
    assert not problems, "\n".join(problems)
