"""cairn_enclose_strided through ctypes on numpy arrays, as the Python package calls it
(docs/numerics.md, "From Python"): C-ordered, Fortran-ordered, reversed, sliced and
broadcast operands, f64 and f32, each output the exact floor and ceiling of the exact
product computed with fractions; a NaN named by position; overlapping outputs refused.

The library is the runtime's bracket GEMM sources built as a shared object here."""
import ctypes
import pathlib
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import CC, ROOT  # noqa: E402
from enclose_model import ceil_bits, floor_bits  # noqa: E402

SOURCES = ["cairn_enclose.c", "cairn_enclose_x86.c", "cairn_enclose_amx.c", "cairn_enclose_residue.c",
           "cairn_pool.c"]


class Info(ctypes.Structure):
    """cairn_enclose_info (runtime/cairn_enclose.h), field for field."""
    _fields_ = [("tight", ctypes.c_int), ("tight_outputs", ctypes.c_size_t),
                ("lossy_rows", ctypes.c_size_t), ("lossy_cols", ctypes.c_size_t),
                ("bits_a", ctypes.c_int), ("bits_b", ctypes.c_int),
                ("need_bits_a", ctypes.c_int), ("need_bits_b", ctypes.c_int),
                ("ceil_log2_k", ctypes.c_int), ("scale_a_min", ctypes.c_int),
                ("scale_a_max", ctypes.c_int), ("scale_b_min", ctypes.c_int),
                ("scale_b_max", ctypes.c_int), ("kernel", ctypes.c_char_p),
                ("bad_operand", ctypes.c_char), ("bad_row", ctypes.c_size_t),
                ("bad_col", ctypes.c_size_t), ("detail", ctypes.c_char_p)]


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    so = tmp_path_factory.mktemp("lib") / "libcairn_enclose.so"
    proc = subprocess.run([CC, "-std=c11", "-O2", "-shared", "-fPIC", "-pthread", "-D_GNU_SOURCE",
                           "-ffp-contract=off", "-fno-fast-math", "-Wall", "-Wextra", "-Werror",
                           *[str(ROOT / "runtime" / s) for s in SOURCES], "-o", str(so)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lib = ctypes.CDLL(str(so))
    lib.cairn_enclose_strided.restype = ctypes.c_int
    lib.cairn_enclose_strided.argtypes = (
        [ctypes.c_int] + [ctypes.c_size_t] * 3 +
        [ctypes.c_void_p, ctypes.c_ssize_t, ctypes.c_ssize_t] * 4 + [ctypes.POINTER(Info)])
    lib.cairn_enclose_strerror.restype = ctypes.c_char_p
    lib.cairn_enclose_strerror.argtypes = [ctypes.c_int]
    return lib


def mm_enclose(lib, A, B, lo=None, hi=None):
    """What cairn.mm_enclose(A, B) does: (lo, hi), or raises with the runtime's message."""
    width = 64 if A.dtype == np.float64 else 32
    m, k = A.shape
    n = B.shape[1]
    lo = np.empty((m, n), A.dtype) if lo is None else lo
    hi = np.empty((m, n), A.dtype) if hi is None else hi
    info = Info()
    rc = lib.cairn_enclose_strided(width, m, n, k, A.ctypes.data, *A.strides, B.ctypes.data,
                                   *B.strides, lo.ctypes.data, *lo.strides, hi.ctypes.data,
                                   *hi.strides, ctypes.byref(info))
    if rc:
        raise ValueError(lib.cairn_enclose_strerror(rc).decode(), info.bad_operand,
                         info.bad_row, info.bad_col)
    return lo, hi, info


def exact_check(A, B, lo, hi):
    width = 64 if A.dtype == np.float64 else 32
    utype = np.uint64 if width == 64 else np.uint32
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            x = sum(Fraction(float(A[i, t])) * Fraction(float(B[t, j])) for t in range(A.shape[1]))
            got = (int(lo[i:i + 1, j].view(utype)[0]), int(hi[i:i + 1, j].view(utype)[0]))
            assert got == (floor_bits(x, width), ceil_bits(x, width)), (i, j)


def operands(dtype, seed):
    rng = np.random.default_rng(seed)
    A = (rng.standard_normal((9, 13)) * 2.0 ** rng.integers(-20, 20, (9, 13))).astype(dtype)
    B = rng.standard_normal((13, 6)).astype(dtype)
    return A, B


LAYOUTS = {
    "c_order": lambda A, B: (A, B),
    "fortran": lambda A, B: (np.asfortranarray(A), np.asfortranarray(B)),
    "reversed": lambda A, B: (A[::-1, ::-1].copy()[::-1, ::-1], B[::-1].copy()[::-1]),
    "sliced": lambda A, B: (np.repeat(A, 2, axis=1)[:, ::2], np.repeat(B, 3, axis=0)[::3]),
    "broadcast_b": lambda A, B: (A, np.broadcast_to(B[:, :1], B.shape)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_layouts_against_fractions(lib, dtype, layout):
    A, B = LAYOUTS[layout](*operands(dtype, 27))
    assert layout == "c_order" or not (A.flags.c_contiguous and B.flags.c_contiguous)
    lo, hi, info = mm_enclose(lib, A, B)
    assert info.tight == 1 and info.kernel
    exact_check(A, B, lo, hi)
    # the same bits as the contiguous copies give
    lo2, hi2, _ = mm_enclose(lib, np.ascontiguousarray(A), np.ascontiguousarray(B))
    assert lo.tobytes() == lo2.tobytes() and hi.tobytes() == hi2.tobytes()


def test_strided_outputs_and_the_gaps_between(lib):
    A, B = operands(np.float64, 3)
    big = np.full((9, 12), 7.0)
    hi = np.empty((6, 9)).T  # Fortran-ordered output
    lo, hi, _ = mm_enclose(lib, A, B, lo=big[:, ::2], hi=hi)
    assert (big[:, 1::2] == 7.0).all()
    exact_check(A, B, lo, hi)


def test_nan_is_named_and_outputs_overlapping_refused(lib):
    A, B = operands(np.float64, 4)
    A = np.asfortranarray(A)
    A[2, 5] = np.nan
    lo = np.full((9, 6), 3.0)
    with pytest.raises(ValueError) as err:
        mm_enclose(lib, A, B, lo=lo)
    assert "E-ENCLOSE-NONFINITE" in err.value.args[0]
    assert err.value.args[1:] == (b"a", 2, 5) and (lo == 3.0).all()
    A[2, 5] = 1.0
    out = np.zeros((9, 6))
    with pytest.raises(ValueError, match="E-ENCLOSE-OVERLAP"):
        mm_enclose(lib, A, B, lo=out, hi=out)
