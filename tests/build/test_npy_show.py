"""`cairn show` and `cairn diff` on NumPy's .npy files (compiler/npy_set.c): files that
numpy itself writes (versions 1.0 and 2.0, every dtype cairn reads), each element and its
bits held to numpy's own array, ULP distances to numpy's integer view of the bits, and the
refusals (big-endian, Fortran order, a dtype cairn does not read) held to the goldens in
tests/golden/npy/."""
import hashlib
import json
import pathlib
import subprocess

import numpy as np
import pytest

from cairntest import BIN, ROOT

CAIRN = BIN / "cairn"
GOLDEN = ROOT / "tests" / "golden" / "npy"
DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
          "uint16", "uint32", "uint64", "bool"]
CAIRN_TYPE = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int16": "i16",
              "int32": "i32", "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
              "uint64": "u64", "bool": "bool"}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def cairn(*args, cwd):
    return subprocess.run([str(CAIRN), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def sample(dtype, rng):
    if dtype == "bool":
        return rng.integers(0, 2, 9).astype(bool)
    if dtype.startswith("float"):
        a = (rng.standard_normal(9) * 1e3).astype(dtype)
        a[2], a[5] = np.nan, -0.0
        return a
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, 9, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("version", [(1, 0), (2, 0)])
def test_every_element_and_its_bits_are_numpys(dtype, version, tmp_path):
    a = sample(dtype, np.random.default_rng(len(dtype) * 7 + version[0]))
    with open(tmp_path / "a.npy", "wb") as f:
        np.lib.format.write_array(f, a.reshape(3, 3), version=version)
    r = cairn("show", "--all", "a.npy", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["a", f"{CAIRN_TYPE[dtype]}[9]"]
    elements = [line.split() for line in lines if line.strip().startswith("[")]
    assert len(elements) == 9
    bits = a.view(UINT[a.itemsize]) if dtype != "bool" else a.view(np.uint8)
    for i, (index, text, hexbits) in enumerate(elements):
        assert index == f"[{i}]"
        assert int(hexbits.strip("()"), 16) == int(bits[i])
        if dtype == "bool":
            assert text == ("true" if a[i] else "false")
        elif dtype.startswith("float"):
            value = np.array(float(text), dtype)  # the shortest decimal reads back as a[i]
            assert value.view(UINT[a.itemsize]) == bits[i] or (np.isnan(a[i]) and text == "nan")
        else:
            assert int(text) == int(a[i])


def ulp_shift(a, k):
    """a with element i moved k[i] steps up (positive finite values: the bits' order)."""
    return (a.view(np.uint32) + k.astype(np.uint32)).view(np.float32)


def test_diff_counts_ulps_as_numpys_bits_do(tmp_path):
    rng = np.random.default_rng(5)
    a = np.abs(rng.standard_normal(1000)).astype(np.float32) + np.float32(1)
    k = np.zeros(1000, np.int64)
    k[[3, 40, 977]] = [1, 9, 4]
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", ulp_shift(a, k))
    r = cairn("diff", "a.npy", "b.npy", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    b = ulp_shift(a, k)
    want_ulp = (b.view(np.uint32).astype(np.int64) - a.view(np.uint32).astype(np.int64))
    assert (want_ulp == k).all()
    line = r.stdout.splitlines()[0]
    assert line.startswith("a  f32[1000]  differs in 3 of 1000 elements; first [3]: ")
    assert f"{a[3]!r}".replace("np.float32(", "").rstrip(")") in line
    assert line.endswith(f"1 ULP; largest {k.max()} ULP at [{int(k.argmax())}]")
    assert cairn("diff", "a.npy", "a.npy", cwd=tmp_path).returncode == 0


def write_obs(path, name, array):
    """An observation file of one observation, as docs/tools.md describes the format."""
    bits = array.astype("<f8").tobytes()
    line = json.dumps({"name": name, "type": "f64", "count": array.size,
                       "sha256": hashlib.sha256(bits).hexdigest()}, separators=(",", ":"))
    pathlib.Path(path).write_bytes(b"CAIRN-OBSERVATIONS 1\n" + line.encode() + b"\n" + bits + b"\n")


def test_an_observation_set_against_an_array_on_either_side(tmp_path):
    y = np.array([0.1, 0.2, 0.30000000000000004])
    write_obs(tmp_path / "run.obs", "y", y)
    np.save(tmp_path / "want.npy", y)
    for pair in (("run.obs", "want.npy"), ("want.npy", "run.obs")):
        r = cairn("diff", *pair, cwd=tmp_path)
        assert r.returncode == 0 and "identical" in r.stdout, r.stdout + r.stderr
    np.save(tmp_path / "want.npy", np.array([0.1, 0.2, 0.3]))
    r = cairn("diff", "run.obs", "want.npy", cwd=tmp_path)
    assert r.returncode == 1 and "first [2]: 0.30000000000000004" in r.stdout, r.stdout


@pytest.mark.parametrize("case,make", [
    ("big_endian", lambda: np.arange(3, dtype=">f8")),
    ("fortran", lambda: np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))),
    ("complex", lambda: np.ones(2, np.complex64)),
])
def test_refusals_match_their_goldens(case, make, tmp_path):
    np.save(tmp_path / "x.npy", make())
    for command in ("show", "diff"):
        args = ["x.npy"] if command == "show" else ["x.npy", "x.npy"]
        r = cairn(command, *args, cwd=tmp_path)
        assert r.returncode == 2
        golden = (GOLDEN / f"{case}.stderr").read_text().replace("CMD", command)
        assert r.stderr == golden


def test_a_one_byte_file_has_no_byte_order_and_one_dimension_no_fortran_order(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(4, dtype="|u1"))
    with open(tmp_path / "f.npy", "wb") as f:  # 1-D: C and Fortran order are one order
        np.lib.format.write_array(f, np.asfortranarray(np.arange(3.0)))
    assert cairn("show", "x.npy", "f.npy", cwd=tmp_path).returncode == 0
