"""How positional arguments meet a pub fn's parameters (python/cairn/_bind.py): when they
line up wrongly (a scalar that sizes a compound extent cannot be left out; a full count
binds the extents too) the TypeError names that cause and the binding used, not the
first argument that happened to have the wrong type; a right call still matches NumPy."""
import numpy as np
import pytest

import cairn

SOURCE = """
pub fn layernorm(r:usize, c:usize, x:ro<f16>[r * c], gamma:ro<f16>[c], beta:ro<f16>[c],
                 y:rw<f16>[r * c], eps:f32) {
  for i in 0..r { for j in 0..c {
    y[i * c + j] = f16(f32(x[i * c + j]) * f32(gamma[j]) + f32(beta[j]) + eps);
  } }
}
pub fn axpy(n:usize, a:f32, x:ro<f32>[n], y:rw<f32>[n]) {
  parallel i in n { y[i] = a * x[i] + y[i]; }
}
"""


@pytest.fixture(scope="module")
def k(tmp_path_factory):
    src = tmp_path_factory.mktemp("bind") / "ln.cairn"
    src.write_text(SOURCE)
    return cairn.build(src)


def arrays():
    x = np.arange(12, dtype=np.float16).reshape(4, 3)
    return x, np.full(3, 2, np.float16), np.full(3, 0.5, np.float16), np.zeros((4, 3), np.float16)


def test_an_extent_that_cannot_be_left_out_is_the_cause_named(k):
    x, g, b, y = arrays()
    with pytest.raises(TypeError) as e:
        k.layernorm(x, g, b, y, np.float32(1e-5))
    text = str(e.value)
    assert "beta: ro<f16> takes a numpy array" not in text
    assert "r cannot be left out: x's extent is r * c, not one parameter" in text
    assert "only c may be left out: pass r, x, gamma, beta, y, eps in this order" in text
    assert text.splitlines()[1] == (
        "  bound: r=float16[4, 3]?, c=(gamma's size), x=float16[3], gamma=float16[3], "
        "beta=float16[4, 3], y=float32(9.999999747378752e-06)?, eps=(missing)")


def test_one_argument_too_many_binds_the_extent_by_position(k):
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError) as e:
        k.axpy(2.0, x, x, np.ones(3, np.float32))
    text = str(e.value)
    assert "n: 2.0 is not a usize" not in text
    assert "a (f32) got float32[3]" in text
    assert "4 arguments for 4 parameters bind every one by position, n included; " \
           "leave n out to pass 3 (a, x, y)" in text
    assert text.splitlines()[1] == "  bound: n=2.0, a=float32[3]?, x=float32[3], y=float32[3]"


def test_a_wrong_value_by_position_shows_the_binding(k):
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError) as e:
        k.axpy(2.0, np.float32(1), x, np.ones(3, np.float32))
    assert str(e.value).splitlines() == [
        "n: 2.0 is not a usize (it would be rounded or wrapped) (4 arguments for 4 parameters "
        "bind every one by position, n included; leave n out to pass 3 (a, x, y))",
        "  bound: n=2.0, a=float32(1.0), x=float32[3], y=float32[3]"]


def test_by_name_and_by_position_still_compute_what_numpy_does(k):
    x, g, b, y = arrays()
    k.layernorm(4, x=x, gamma=g, beta=b, y=y, eps=np.float32(0.25))
    want = (x.astype(np.float32) * g.astype(np.float32) + b.astype(np.float32)
            + np.float32(0.25)).astype(np.float16)
    assert (y == want).all()
    y2 = np.zeros_like(y)
    k.layernorm(4, x, g, b, y2, np.float32(0.25))
    assert (y2 == want).all()
