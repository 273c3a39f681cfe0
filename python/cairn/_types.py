"""CAIRN's types as NumPy and ctypes see them, and the checks on what a caller passes.

Nothing is converted with a rounding the caller did not ask for: a Python number passed
for an f32, f16 or integer parameter is taken only when that type holds it exactly
(pass numpy.float32(0.1) to round 0.1 yourself), and an array must already have the
parameter's dtype. Storage floats without a NumPy type travel as their bits: bf16 as
uint16, f8e4m3 and f8e5m2 as uint8."""
import ctypes
import fractions
import math

import numpy as np

# CAIRN type: (NumPy dtype of its values or bits, ctypes type of one, what it is)
TYPES = {
    "bool": (np.bool_, ctypes.c_bool, "bool"),
    "i8": (np.int8, ctypes.c_int8, "int8"),
    "i16": (np.int16, ctypes.c_int16, "int16"),
    "i32": (np.int32, ctypes.c_int32, "int32"),
    "i64": (np.int64, ctypes.c_int64, "int64"),
    "u8": (np.uint8, ctypes.c_uint8, "uint8"),
    "u16": (np.uint16, ctypes.c_uint16, "uint16"),
    "u32": (np.uint32, ctypes.c_uint32, "uint32"),
    "u64": (np.uint64, ctypes.c_uint64, "uint64"),
    "usize": (np.uint64, ctypes.c_uint64, "uint64"),
    "f32": (np.float32, ctypes.c_float, "float32"),
    "f64": (np.float64, ctypes.c_double, "float64"),
    "f16": (np.float16, ctypes.c_uint16, "float16"),
    "bf16": (np.uint16, ctypes.c_uint16, "uint16 holding bf16 bits"),
    "f8e4m3": (np.uint8, ctypes.c_uint8, "uint8 holding f8e4m3 bits"),
    "f8e5m2": (np.uint8, ctypes.c_uint8, "uint8 holding f8e5m2 bits"),
}
BITS_ONLY = {"bf16", "f8e4m3", "f8e5m2"}


def dtype(cairn_type):
    return np.dtype(TYPES[cairn_type][0])


def ctype(cairn_type):
    return TYPES[cairn_type][1]


def _exactly(value, want):
    """VALUE as the NumPy scalar type WANT when WANT holds it exactly, else None."""
    if np.issubdtype(want, np.integer):
        if not isinstance(value, (int, np.integer)):
            return None  # a float for an integer parameter
        info = np.iinfo(want)
        return want(value) if info.min <= int(value) <= info.max else None
    number = int(value) if isinstance(value, (int, np.integer)) else float(value)
    with np.errstate(over="ignore", invalid="ignore"):
        held = want(number)
    if isinstance(number, float) and math.isnan(number):
        return held
    if math.isinf(number) or not np.isfinite(held):
        return held if float(held) == number else None
    return held if fractions.Fraction(float(held)) == fractions.Fraction(number) else None


def scalar(name, cairn_type, value):
    """The ctypes value for scalar parameter NAME of CAIRN_TYPE, or TypeError/ValueError."""
    kind = dtype(cairn_type)
    if cairn_type == "bool":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{name}: a bool parameter takes True or False, not {value!r}")
        return ctype("bool")(bool(value))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        raise TypeError(f"{name}: {cairn_type} takes a number, not {value!r}")
    if cairn_type in BITS_ONLY:
        if not isinstance(value, (int, np.integer)) or not 0 <= int(value) <= np.iinfo(kind).max:
            raise TypeError(f"{name}: {cairn_type} is passed as its bits, a {kind} "
                            f"(0 to {np.iinfo(kind).max}), not {value!r}")
        return ctype(cairn_type)(int(value))
    if isinstance(value, np.number) and value.dtype == kind:
        held = value
    else:
        held = _exactly(value, kind.type)
    if held is None:
        if np.issubdtype(kind, np.integer):
            raise ValueError(f"{name}: {value!r} is not a {cairn_type} (it would be rounded "
                             f"or wrapped)")
        raise TypeError(f"{name}: {value!r} is not exactly a {cairn_type}: round it yourself, "
                        f"e.g. numpy.{kind.name}({value!r})")
    if cairn_type == "f16":
        return ctype("f16")(int(np.array(held, np.float16).view(np.uint16)))
    return ctype(cairn_type)(held.item() if hasattr(held, "item") else held)


def result(cairn_type, raw):
    """A returned ctypes value as NumPy scalar of its type (f16 from its bits)."""
    if cairn_type == "f16":
        return np.array(raw, np.uint16).view(np.float16)[()]
    if cairn_type == "bool":
        return bool(raw)
    return dtype(cairn_type).type(raw)


def view(name, cairn_type, access, value):
    """The array to pass for view NAME: VALUE itself when it is C-contiguous (zero-copy);
    a contiguous copy of an ro view that is not; TypeError/ValueError otherwise."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name}: {access}<{cairn_type}> takes a numpy array, not "
                        f"{type(value).__name__}")
    want = dtype(cairn_type)
    if value.dtype != want:
        hint = f"numpy.{want.name}" if cairn_type not in BITS_ONLY else f"its bits as {want.name}"
        raise TypeError(f"{name}: {access}<{cairn_type}> takes a {TYPES[cairn_type][2]} array, "
                        f"not {value.dtype} (convert it: a.astype({hint}))"
                        if cairn_type not in BITS_ONLY else
                        f"{name}: {access}<{cairn_type}> takes {TYPES[cairn_type][2]}, not "
                        f"{value.dtype}")
    if value.dtype.byteorder == ">":
        raise TypeError(f"{name}: a big-endian array; CAIRN reads little-endian")
    if access == "rw":
        if not value.flags.c_contiguous:
            raise ValueError(f"{name}: rw<{cairn_type}> writes into the array itself, which "
                             f"must be C-contiguous (numpy.ascontiguousarray, then copy back)")
        if not value.flags.writeable:
            raise ValueError(f"{name}: rw<{cairn_type}> writes into a read-only array")
        return value
    return value if value.flags.c_contiguous else np.ascontiguousarray(value)
