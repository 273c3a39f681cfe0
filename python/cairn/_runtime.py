"""The runtime's own entry points, from libcairn.so: the exact sum (runtime/cairn_sum.h)
and the exact bracket GEMM (runtime/cairn_enclose.h). Both return codes or values, never
trap, so they are called directly; the checks a CAIRN call would make are made here."""
import ctypes
import os
import threading

import numpy as np

from . import _find

_lock = threading.Lock()
_lib = None


class _EncloseInfo(ctypes.Structure):
    """The first fields of cairn_enclose_info (runtime/cairn_enclose.h), then space for
    what later runtimes append."""
    _fields_ = [("tight", ctypes.c_int), ("tight_outputs", ctypes.c_size_t),
                ("lossy_rows", ctypes.c_size_t), ("lossy_cols", ctypes.c_size_t),
                ("bits_a", ctypes.c_int), ("bits_b", ctypes.c_int),
                ("need_bits_a", ctypes.c_int), ("need_bits_b", ctypes.c_int),
                ("ceil_log2_k", ctypes.c_int), ("scale_a_min", ctypes.c_int),
                ("scale_a_max", ctypes.c_int), ("scale_b_min", ctypes.c_int),
                ("scale_b_max", ctypes.c_int), ("kernel", ctypes.c_char_p),
                ("bad_operand", ctypes.c_char), ("bad_row", ctypes.c_size_t),
                ("bad_col", ctypes.c_size_t), ("_room", ctypes.c_char * 256)]


def _runtime():
    """libcairn.so, loaded once, with the prototypes this module calls."""
    global _lib
    with _lock:
        if _lib is None:
            threads = os.environ.get("CAIRN_THREADS")
            if threads and not (threads.isdigit() and 1 <= int(threads) <= 64):
                raise ValueError(f"CAIRN_THREADS={threads!r} is not a thread count (1 to 64): "
                                 "the runtime would exit")
            lib = ctypes.CDLL(str(_find.runtime_library()))
            size, ptr, info = ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(_EncloseInfo)
            lib.cairn_sum_f64.argtypes, lib.cairn_sum_f64.restype = [ptr, size], ctypes.c_double
            lib.cairn_sum_f32.argtypes, lib.cairn_sum_f32.restype = [ptr, size], ctypes.c_float
            diff = ctypes.c_ssize_t
            lib.cairn_enclose_strided.argtypes = [ctypes.c_int, size, size, size, ptr, diff,
                                                  diff, ptr, diff, diff, ptr, diff, diff,
                                                  ptr, diff, diff, info]
            lib.cairn_enclose_strided.restype = ctypes.c_int
            lib.cairn_enclose_strerror.argtypes = [ctypes.c_int]
            lib.cairn_enclose_strerror.restype = ctypes.c_char_p
            _lib = lib
    return _lib


def exact_sum(x):
    """The exact sum of the elements of X (float64 or float32, any shape), rounded once to
    nearest, ties to even, in X's type: what `reduce + parallel` gives (numerics.md). NaN
    if any element is NaN or the infinities disagree; an infinity if they agree or the
    exact sum lies past the format's range; no terms give +0.0."""
    x = np.asarray(x)
    if x.dtype not in (np.float64, np.float32):
        raise TypeError(f"exact_sum takes float64 or float32 elements, not {x.dtype} "
                        "(convert them yourself: the conversion may round)")
    x = np.ascontiguousarray(x)
    if x.dtype.byteorder == ">":
        raise TypeError("exact_sum: a big-endian array; CAIRN reads little-endian")
    lib = _runtime()
    if x.dtype == np.float64:
        return np.float64(lib.cairn_sum_f64(x.ctypes.data, x.size))
    return np.float32(lib.cairn_sum_f32(x.ctypes.data, x.size))


def _operand(name, m):
    if not isinstance(m, np.ndarray) or m.ndim != 2:
        raise TypeError(f"mm_enclose: {name} is a 2-D numpy array (rows, columns)")
    if m.dtype not in (np.float64, np.float32) or m.dtype.byteorder == ">":
        raise TypeError(f"mm_enclose: {name} holds float64 or float32, not {m.dtype}")
    return m


def mm_enclose(a, b, info=False):
    """The exact bracket of A @ B (numerics.md, "The bracket GEMM"): (lo, hi), arrays of
    A's type with lo <= the exact product <= hi elementwise, each rounded once outward from
    the exact sum of products (lo == hi where that sum is representable, neighbours
    otherwise, whenever the operands scale losslessly). A and B are float64 or float32
    (both the same), any strides. With info=True also a dict: tight (every output got the
    one-step bracket), kernel. ValueError for a NaN or infinite operand (naming it) or
    k > 2^17."""
    a, b = _operand("A", a), _operand("B", b)
    if a.dtype != b.dtype:
        raise TypeError(f"mm_enclose: A is {a.dtype} and B {b.dtype}: one type for both")
    (m, k), (k2, n) = a.shape, b.shape
    if k != k2:
        raise ValueError(f"mm_enclose: A is {m}x{k} and B {k2}x{n}: A's columns must be B's rows")
    lo, hi = np.empty((m, n), a.dtype), np.empty((m, n), a.dtype)
    lib, meta = _runtime(), _EncloseInfo()
    width = 64 if a.dtype == np.float64 else 32  # any layout: numpy's byte strides, no copies
    code = lib.cairn_enclose_strided(width, m, n, k, a.ctypes.data, *a.strides,
                                     b.ctypes.data, *b.strides, lo.ctypes.data, *lo.strides,
                                     hi.ctypes.data, *hi.strides, ctypes.byref(meta))
    if code != 0:
        what = lib.cairn_enclose_strerror(code).decode()
        if meta.bad_operand in (b"a", b"b"):
            what = f"{meta.bad_operand.decode().upper()}[{meta.bad_row}][{meta.bad_col}]: {what}"
        raise ValueError(f"mm_enclose: {what}")
    if info:
        return lo, hi, {"tight": bool(meta.tight),
                        "kernel": meta.kernel.decode() if meta.kernel else None}
    return lo, hi
