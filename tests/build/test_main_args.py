"""main's parameters from the command line (docs/language.md, "main's parameters";
runtime/cairn_args.c, runtime/cairn_npy.c): views read from .npy files NumPy wrote and
written back with --out, scalars parsed from text, and every mistake one line naming the
parameter, the file and what it holds, exit 126, before main runs. Results are compared
with NumPy's own arithmetic and casts, and scalar parsing with exact rational rounding
(fractions), never with cairn itself."""
import fractions
import math
import os
import pathlib
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import SAN_ENV, build, cairn  # noqa: E402
from cairntest import cairn_cell_flags  # noqa: E402


ELEMENT_TYPES = {  # CAIRN type: (NumPy dtype of its file, values with its edge cases)
    "f32": (np.float32, np.array([0.0, -0.0, 1.5, np.inf, -np.inf, 1e-45, 3.4028235e38], np.float32)),
    "f64": (np.float64, np.array([0.1, -0.0, np.inf, 5e-324, -1.7976931348623157e308], np.float64)),
    "f16": (np.float16, np.array([1.0, -0.0, 6e-8, 65504.0, -np.inf, 0.333], np.float16)),
    "bf16": (np.uint16, np.array([0x3F80, 0x8000, 0x7F80, 0x7FC1, 0x0001, 0xFF7F], np.uint16)),
    "f8e4m3": (np.uint8, np.array([0x00, 0x80, 0x7E, 0x7F, 0xFF, 0x01], np.uint8)),
    "f8e5m2": (np.uint8, np.array([0x3C, 0x7C, 0x7E, 0xFC, 0x01, 0x80], np.uint8)),
    "i8": (np.int8, np.array([-128, 127, 0, -1], np.int8)),
    "i16": (np.int16, np.array([-32768, 32767, 1], np.int16)),
    "i32": (np.int32, np.array([-2**31, 2**31 - 1, 7], np.int32)),
    "i64": (np.int64, np.array([-2**63, 2**63 - 1, 0], np.int64)),
    "u8": (np.uint8, np.array([0, 255, 17], np.uint8)),
    "u16": (np.uint16, np.array([0, 65535], np.uint16)),
    "u32": (np.uint32, np.array([0, 2**32 - 1], np.uint32)),
    "u64": (np.uint64, np.array([0, 2**64 - 1, 12345], np.uint64)),
    "usize": (np.uint64, np.array([2**64 - 1, 3], np.uint64)),
    "bool": (np.bool_, np.array([True, False, True], np.bool_)),
}
NAN_PAYLOADS = {"f32": np.array([0x7FC00001, 0xFFBFFFFF], np.uint32).view(np.float32),
                "f64": np.array([0x7FF0000000000001], np.uint64).view(np.float64),
                "f16": np.array([0x7E01, 0xFC01], np.uint16).view(np.float16)}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """PROGRAM TEXT -> the executable built from it, once per module."""
    root = tmp_path_factory.mktemp("main_args")
    made = {}

    def get(text, name="prog"):
        if text not in made:
            folder = root / f"p{len(made)}"
            folder.mkdir()
            src = folder / f"{name}.cairn"
            src.write_text(text)
            build(src, folder / name)
            made[text] = folder / name
        return made[text]
    return get


def run(exe, *args, cwd, env=None):
    full = dict(os.environ, **SAN_ENV, **(env or {}))
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=full, timeout=120)


COPY = """fn main(n:usize, x:ro<{t}>[n], y:rw<{t}>[n]) -> i32 {{
  for i in 0..n {{ y[i] = x[i]; }}
  return 0;
}}
"""


@pytest.mark.parametrize("cairn_type", sorted(ELEMENT_TYPES))
def test_every_element_type_reads_and_writes_its_bits(builds, tmp_path, cairn_type):
    """An rw view copied from an ro one comes back in NumPy's file with the same bits and
    dtype: f16 as '<f2', bf16 as '<u2' and f8 as '|u1' holding the bits, NaN payloads
    kept. An rw view given a file keeps its shape; `zeros` gives a 1-D array."""
    dtype, values = ELEMENT_TYPES[cairn_type]
    if cairn_type in NAN_PAYLOADS:
        values = np.concatenate([values, NAN_PAYLOADS[cairn_type]])
    values = values[: len(values) // 2 * 2]
    exe = builds(COPY.format(t=cairn_type))
    np.save(tmp_path / "x.npy", values)
    np.save(tmp_path / "y0.npy", np.zeros((2, len(values) // 2), dtype))
    for y, shape in (("zeros", values.shape), ("y0.npy", (2, len(values) // 2))):
        r = run(exe, "x=x.npy", f"y={y}", "--out", "out", cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        got = np.load(tmp_path / "out" / "y.npy")
        assert got.dtype == np.dtype(dtype) and got.shape == shape
        assert got.reshape(-1).tobytes() == values.tobytes()
        assert not (tmp_path / "out" / "x.npy").exists()  # ro views are not written


AXPY = """fn main(n:usize, x:ro<f32>[n], w:ro<f32>[n], s:f32, y:rw<f32>[n]) -> i32 {
  for i in 0..n { y[i] = x[i] * w[i] + s; }
  return 0;
}
"""


def test_f32_arithmetic_on_file_data_equals_numpys(builds, tmp_path):
    rng = np.random.default_rng(25)
    x = (rng.standard_normal(1000) * 2.0 ** rng.integers(-140, 120, 1000)).astype(np.float32)
    w = rng.standard_normal(1000).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "w.npy", w)
    r = run(builds(AXPY), "x=x.npy", "w=w.npy", "s=0.1", "y=zeros", "--out", ".", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    with np.errstate(over="ignore"):
        want = x * w + np.frombuffer(f32_nearest("0.1"), np.float32)[0]  # one rounding per op
    assert np.load(tmp_path / "y.npy").tobytes() == want.tobytes()


STORAGE = """fn main(n:usize, h:ro<f16>[n], scale:f32, y:rw<f16>[n], b:rw<bf16>[n], z:rw<f32>[n]) -> i32 {
  for i in 0..n {
    let v = f32(h[i]) * scale;
    y[i] = f16(v);
    b[i] = bf16(v);
    z[i] = f32(h[i]);
  }
  return 0;
}
"""


def bf16_bits(f32):
    """Round f32 values (finite) to bf16 bits, nearest even: the model, from the bits."""
    u = f32.view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def test_storage_floats_from_files_equal_numpys_casts(builds, tmp_path):
    rng = np.random.default_rng(7)
    h = rng.standard_normal(4096).astype(np.float16)
    np.save(tmp_path / "h.npy", h)
    r = run(builds(STORAGE), "h=h.npy", "scale=3.0", "y=zeros", "b=zeros", "z=zeros",
            "--out", "o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    v = h.astype(np.float32) * np.float32(3.0)
    assert np.load(tmp_path / "o/y.npy").tobytes() == v.astype(np.float16).tobytes()
    assert np.load(tmp_path / "o/b.npy").tobytes() == bf16_bits(v).tobytes()
    assert np.load(tmp_path / "o/z.npy").tobytes() == h.astype(np.float32).tobytes()


SCALARS = """fn main(a:i8, b:u64, c:i64, f:f32, d:f64, t:bool) -> i32 {
  observe("a", a);
  observe("b", b);
  observe("c", c);
  observe("f", f);
  observe("d", d);
  observe("t", t);
  return 0;
}
"""


def observed(folder):
    return {p.name.split(".")[0]: p.read_bytes() for p in pathlib.Path(folder).glob("*.bin")}


def f32_nearest(text):
    """The f32 nearest the decimal TEXT, ties to even, by exact rationals."""
    q = fractions.Fraction(text)
    lo = np.float32(float(q))  # then step to the right neighbour by exact comparison
    cands = [np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))]
    best = min(cands, key=lambda c: (abs(fractions.Fraction(float(c)) - q),
                                     int(np.array(c).view(np.uint32)) & 1))
    return struct.pack("<f", best)


@pytest.mark.parametrize("args,want", [
    (("a=-128", "b=18446744073709551615", "c=-9223372036854775808", "f=0.1", "d=0.1", "t=true"),
     {"a": b"\x80", "b": b"\xff" * 8, "c": struct.pack("<q", -2**63), "f": f32_nearest("0.1"),
      "d": struct.pack("<d", 0.1), "t": b"\x01"}),
    (("a=0x7f", "b=0x10", "c=+42", "f=1.000000059604644775390625001", "d=-0", "t=false"),
     {"a": b"\x7f", "b": struct.pack("<Q", 16), "c": struct.pack("<q", 42),
      # above the midpoint of 1 and 1 + 2^-23: one rounding goes up, a double's two down
      "f": struct.pack("<I", 0x3F800001), "d": struct.pack("<d", -0.0), "t": b"\x00"}),
    (("a=0", "b=0", "c=0", "f=1e-46", "d=inf", "t=true"),
     {"f": struct.pack("<f", 0.0), "d": struct.pack("<d", math.inf)}),
    (("a=0", "b=0", "c=0", "f=-inf", "d=4.9406564584124654e-324", "t=true"),
     {"f": struct.pack("<f", -math.inf), "d": struct.pack("<d", 5e-324)}),
])
def test_scalars_parse_to_the_nearest_value_of_their_type(builds, tmp_path, args, want):
    assert f32_nearest("1.000000059604644775390625001") == struct.pack("<I", 0x3F800001)
    r = run(builds(SCALARS), *args, cwd=tmp_path, env={"CAIRN_OBSERVE_RAW": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    got = observed(tmp_path)
    for name, bits in want.items():
        assert got[name] == bits, name


GUARDED = """fn main(n:usize, x:ro<f32>[n], y:rw<f32>[n], k:u8, flag:bool) -> i32 {
  observe("ran", 1);
  for i in 0..n { y[i] = x[i]; }
  if flag { return i32(k); }
  return 0;
}
"""


@pytest.fixture
def guarded(builds, tmp_path):
    np.save(tmp_path / "x.npy", np.arange(4, dtype=np.float32))
    np.save(tmp_path / "x64.npy", np.arange(4, dtype=np.float64))
    np.save(tmp_path / "x2d.npy", np.ones((2, 3), np.float32))
    np.save(tmp_path / "xf.npy", np.asfortranarray(np.ones((2, 3), np.float32)))
    np.save(tmp_path / "y5.npy", np.zeros(5, np.float32))
    np.save(tmp_path / "b.npy", np.zeros(4, np.bool_))
    full = (tmp_path / "x.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(full[:-2])
    (tmp_path / "long.npy").write_bytes(full + b"\0" * 4)
    (tmp_path / "text.npy").write_text("x,y\n1,2\n")
    return builds(GUARDED)


MISTAKES = [  # arguments, what the one error line says
    (["y=zeros", "k=1", "flag=true"],
     "prog: error: missing x: ro<f32>[n], a .npy file of float32 ('<f4') (give x=FILE.npy)"),
    (["x=x.npy", "y=zeros", "flag=true"], "prog: error: missing k (u8): give k=VALUE"),
    (["x=x.npy", "y=zeros", "k=1", "flag=true", "kk=2"], "prog: error: main has no parameter 'kk'"),
    (["x=x.npy", "x=x.npy", "y=zeros", "k=1", "flag=true"], "prog: error: x given twice"),
    (["x=x.npy", "y=zeros", "k=256", "flag=true"], "prog: error: k=256: out of range for u8"),
    (["x=x.npy", "y=zeros", "k=-1", "flag=true"], "prog: error: k=-1: out of range for u8"),
    (["x=x.npy", "y=zeros", "k=1.5", "flag=true"], "prog: error: k=1.5: not a whole number (k is u8)"),
    (["x=x.npy", "y=zeros", "k=1", "flag=yes"], "prog: error: flag=yes: flag is a bool: write true or false"),
    (["x=x.npy", "y=zeros", "k=1", "flag=true", "oops"],
     "prog: error: 'oops' is not NAME=VALUE (main's parameters are named)"),
    (["x=x64.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=x64.npy: the file holds float64 ('<f8'); x is ro<f32>[n], which reads float32 ('<f4')"),
    (["x=b.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=b.npy: the file holds bool ('|b1'); x is ro<f32>[n], which reads float32 ('<f4')"),
    (["x=xf.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=xf.npy: the file is in Fortran order; x reads its elements in C order"),
    (["x=short.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=short.npy: truncated: its header says 4 elements (16 bytes), the file holds 14 bytes after the header"),
    (["x=long.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=long.npy: it holds 20 bytes after the header, more than its 4 elements take (16)"),
    (["x=text.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=text.npy: not a .npy file: it does not start with \\x93NUMPY"),
    (["x=nothere.npy", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=nothere.npy: cannot open it: No such file or directory"),
    (["x=x.npy", "y=y5.npy", "k=1", "flag=true"],
     "prog: error: y=y5.npy: the file holds 5 elements (shape (5,)); y is rw<f32>[n]: 4 elements"),
    (["x=x2d.npy", "n=4", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=x2d.npy: the file holds 6 elements (shape (2, 3)); x is ro<f32>[n]: 4 elements"),
    (["x=zeros", "y=zeros", "k=1", "flag=true"],
     "prog: error: x=zeros: only an rw view starts zeroed; x is ro<f32>[n]"),
    (["y=zeros", "x=x.npy", "k=1", "flag=true", "--out"], "prog: error: --out needs a folder"),
]


@pytest.mark.parametrize("args,line", MISTAKES, ids=range(len(MISTAKES)))
def test_each_mistake_is_one_line_and_exit_126_before_main(guarded, tmp_path, args, line):
    raw = tmp_path / "raw"
    r = run(guarded, *args, cwd=tmp_path, env={"CAIRN_OBSERVE_RAW": str(raw)})
    assert r.returncode == 126, (r.returncode, r.stderr)
    errors = [l for l in r.stderr.splitlines() if "error:" in l]
    assert errors and errors[0].startswith(line) and len(errors) == 1, r.stderr
    assert "trap" not in r.stderr and r.stdout == ""
    assert not raw.exists() or not list(raw.iterdir())  # main never ran


def test_a_scalar_left_out_is_the_length_of_the_view_it_sizes(guarded, tmp_path):
    r = run(guarded, "x=x2d.npy", "y=zeros", "k=7", "flag=true", "--out", "o", cwd=tmp_path)
    assert r.returncode == 7, r.stderr
    assert np.load(tmp_path / "o/y.npy").shape == (6,)  # n = 6, from x's file


def test_help_lists_each_parameter_and_exits_0(guarded, tmp_path):
    r = run(guarded, "--help", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert lines[0] == "usage: prog n=VALUE x=FILE.npy y=FILE.npy|zeros k=VALUE flag=VALUE [--out DIR]"
    assert any(l.split()[:2] == ["x", "ro<f32>[n]"] and "float32 ('<f4')" in l for l in lines)
    assert any("may be left out: the length of x" in l for l in lines)


def test_cairn_run_passes_parameters_and_out(tmp_path):
    src = tmp_path / "scale.cairn"
    src.write_text("""fn main(n:usize, x:rw<f64>[n], s:f64) -> i32 {
  for i in 0..n { x[i] = x[i] * s; }
  return 3;
}
""")
    np.save(tmp_path / "x.npy", np.array([[1.0, 2.0], [3.0, 0.1]]))
    r = cairn("run", src, *cairn_cell_flags(), "--out", tmp_path / "o", "--", "x=x.npy",
              "s=3", cwd=tmp_path)
    assert r.returncode == 3, r.stderr
    got = np.load(tmp_path / "o/x.npy")
    assert got.shape == (2, 2) and got.tobytes() == (np.load(tmp_path / "x.npy") * 3.0).tobytes()
    r = cairn("run", src, *cairn_cell_flags(), "--", "x=x.npy", cwd=tmp_path)
    assert r.returncode == 126 and "scale: error: missing s (f64): give s=VALUE" in r.stderr


FLOAT_TRAP = """fn main(x:f64) -> i32 { return i32(x); }
"""


@pytest.mark.parametrize("x", ["3000000000.5", "1e20", "-1.7976931348623157e308", "nan",
                               "2147483648", "-2147483649.5", "inf", "123456789012345680000", "1e300"])
def test_a_trap_names_its_float_in_the_fewest_digits_that_read_back(builds, tmp_path, x):
    r = run(builds(FLOAT_TRAP, "trap"), f"x={x}", cwd=tmp_path)
    assert r.returncode != 0
    line = r.stderr.splitlines()[0]
    head = "trap: float to integer conversion out of range: "
    assert line.startswith(head) and " does not fit in i32 at " in line, line
    text = line[len(head):].split(" does not fit")[0]
    value = float(x)
    assert (math.isnan(value) and text == "nan") or float(text) == value
    digits = len(repr(value).split("e")[0].replace("-", "").replace(".", "").strip("0"))
    assert math.isnan(value) or math.isinf(value) or \
        len(text.split("e")[0].replace("-", "").replace(".", "").strip("0")) == digits


def test_verify_replays_a_counterexample_of_a_main_with_parameters(tmp_path):
    """cairn verify models main's parameters as inputs like any function's; its replay keeps
    main under another name of the same length and calls it, so the trap is at main's own
    line and column."""
    src = tmp_path / "m.cairn"
    src.write_text("fn main(n:usize, x:ro<i32>[n], k:usize) -> i32 { return x[k]; }\n")
    r = cairn("verify", src, "--cex-dir", tmp_path / "cex", cwd=tmp_path)
    assert r.returncode == 10, r.stdout + r.stderr
    [replay] = list((tmp_path / "cex").glob("main_1_57_index.cairn"))
    r = cairn("run", replay, cwd=tmp_path)
    assert r.returncode != 0
    assert re.search(rf"trap: index \d+ out of bounds for extent \d+ at {re.escape(str(replay))}:1:57",
                     r.stderr), r.stderr
