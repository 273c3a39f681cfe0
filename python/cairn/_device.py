"""Arrays in device memory, as the package passes them to a pub fn's @device and
@unified views (docs/devices.md, "Libraries on the device").

A view placed on the device takes
  - an object with __cuda_array_interface__ (version 2 or 3: CuPy, Numba device arrays,
    PyTorch CUDA tensors): its pointer is passed as is, no copy;
  - an object with __dlpack__ and __dlpack_device__ (PyTorch, JAX, CuPy, ...): its
    DLTensor's pointer is passed as is when it is on a CUDA device (or managed memory);
    one on the CPU is host memory, like a numpy array;
  - host memory (a numpy array, or a CPU tensor through DLPack): then the function's
    host entry PREFIX_fn_host is called, which copies each placed view to the device and
    the rw ones back. Host and device memory cannot be mixed in one call.
Each is checked before the call, with one line naming the parameter: its element type,
its contiguity (C order; a stride of an extent-1 dimension does not count), a read-only
array for an rw view, and its device. In a CUDA library the C entry then asks CUDA
whether the pointer is device memory (cudaPointerGetAttributes) and traps if not. In an
emulated library (--emulate) device memory is host memory, so a DLPack tensor on a CUDA
device is refused and a __cuda_array_interface__ pointer must point at host memory
(the tests' stand-in does). Nothing here imports CuPy, Numba or PyTorch."""
import ctypes

import numpy as np

from . import _types

# DLPack's device types (DLDeviceType in the DLPack standard's C header)
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
DL_NAMES = {1: "cpu", 2: "cuda", 3: "cuda pinned host", 4: "opencl", 7: "vulkan", 8: "metal",
            10: "rocm", 13: "cuda managed"}
# DLPack's type codes (DLDataTypeCode) for each CAIRN type; bits-only storage floats as
# their unsigned bits, bf16 also as DLPack's bfloat
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_BOOL = 0, 1, 2, 4, 6


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):  # its first member is the DLTensor
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                         ctypes.c_char_p]


class Placed:
    """Device memory for one view: its pointer and element count; `keep` lives through
    the call (a DLPack capsule frees its tensor when it goes)."""

    def __init__(self, pointer, size, keep):
        self.pointer, self.size, self.keep = pointer, size, keep


def _dl_types(cairn_type):
    """The (code, bits) DLPack pairs a view of CAIRN_TYPE takes."""
    kind = _types.dtype(cairn_type)
    if cairn_type == "bool":
        return {(DL_BOOL, 8), (DL_UINT, 8)}
    if cairn_type == "bf16":
        return {(DL_BFLOAT, 16), (DL_UINT, 16)}
    if cairn_type in _types.BITS_ONLY:
        return {(DL_UINT, 8)}
    code = DL_FLOAT if kind.kind == "f" else DL_UINT if kind.kind == "u" else DL_INT
    return {(code, kind.itemsize * 8)}


def _contiguous(shape, strides, itemsize):
    """Whether STRIDES (in bytes; None: C order) lay SHAPE out in C order."""
    if strides is None:
        return True
    expect = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != expect:
            return False
        expect *= extent
    return True


def _size(shape):
    n = 1
    for extent in shape:
        n *= int(extent)
    return n


def _from_cuda_interface(name, cairn_type, access, iface):
    want = _types.dtype(cairn_type)
    label = f"{name}: {access}<{cairn_type}>"
    if iface.get("mask") is not None:
        raise ValueError(f"{label} takes a device array without a mask")
    typestr = np.dtype(iface["typestr"])
    if typestr != want:
        raise TypeError(f"{label} takes {_types.TYPES[cairn_type][2]} elements, not {typestr} "
                        f"(typestr {iface['typestr']!r})")
    shape = tuple(iface["shape"])
    if not _contiguous(shape, iface.get("strides"), want.itemsize):
        raise ValueError(f"{label} takes C-contiguous memory, and its strides are "
                         f"{tuple(iface['strides'])} for shape {shape} (copy it: .copy())")
    pointer, readonly = iface["data"]
    if readonly and access == "rw":
        raise ValueError(f"{label} writes into the array, which is read-only")
    return Placed(pointer, _size(shape), None)


def _from_dlpack(name, cairn_type, access, value, device):
    label = f"{name}: {access}<{cairn_type}>"
    capsule = value.__dlpack__()
    address = _capsule_pointer(capsule, b"dltensor")
    t = _DLManagedTensor.from_address(address).dl_tensor
    pair = (t.dtype.code, t.dtype.bits)
    if pair not in _dl_types(cairn_type) or t.dtype.lanes != 1:
        raise TypeError(f"{label} takes {_types.TYPES[cairn_type][2]} elements, not DLPack "
                        f"type code {t.dtype.code} with {t.dtype.bits} bits x{t.dtype.lanes}")
    shape = tuple(t.shape[k] for k in range(t.ndim))
    itemsize = t.dtype.bits // 8
    strides = None if not t.strides else tuple(t.strides[k] * itemsize for k in range(t.ndim))
    if not _contiguous(shape, strides, itemsize):
        raise ValueError(f"{label} takes C-contiguous memory, and its strides are "
                         f"{tuple(s // itemsize for s in strides)} elements for shape {shape} "
                         f"(copy it: .contiguous())")
    return Placed((t.data or 0) + t.byte_offset, _size(shape), capsule)


def where(value):
    """'device', 'host' or None (neither: let the host path say what it takes), and the
    DLPack device of VALUE when it has one."""
    if isinstance(value, np.ndarray):
        return "host", None
    if hasattr(value, "__cuda_array_interface__"):
        return "device", None
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        device = tuple(value.__dlpack_device__())
        return ("host" if device[0] == DL_CPU else "device"), device
    return None, None


def host_array(name, cairn_type, access, value):
    """VALUE as a numpy array when it is host memory through DLPack (a CPU tensor): a
    writable view of the tensor's own memory (numpy.from_dlpack's would be read-only),
    which keeps the capsule alive; else VALUE unchanged (the host path checks it)."""
    place, device = where(value)
    if place != "host" or device is None:
        return value
    got = _from_dlpack(name, cairn_type, access, value, device)
    want = _types.dtype(cairn_type)
    if got.size == 0:
        return np.zeros(0, want)
    buf = (ctypes.c_char * (got.size * want.itemsize)).from_address(got.pointer)
    buf.capsule = got.keep
    return np.frombuffer(buf, dtype=want)


def placed(name, cairn_type, access, place, value, emulated):
    """The device memory VALUE gives for view NAME placed PLACE ('device' or 'unified')."""
    label = f"{name}: {access}<{cairn_type}>@{place}"
    _, device = where(value)
    if hasattr(value, "__cuda_array_interface__"):
        return _from_cuda_interface(name, cairn_type, access, value.__cuda_array_interface__)
    kind = device[0]
    if emulated and kind != DL_CPU:
        raise ValueError(f"{label}: an emulated library (--emulate) runs on host memory, and "
                         f"this array is on {DL_NAMES.get(kind, kind)}:{device[1]}")
    if not emulated and place == "unified" and kind != DL_CUDA_MANAGED:
        raise ValueError(f"{label} takes managed memory (cudaMallocManaged), and this array is "
                         f"on {DL_NAMES.get(kind, kind)}:{device[1]}")
    if not emulated and kind not in (DL_CUDA, DL_CUDA_MANAGED):
        raise ValueError(f"{label} takes CUDA device memory, and this array is on "
                         f"{DL_NAMES.get(kind, kind)}:{device[1]}")
    return _from_dlpack(name, cairn_type, access, value, device)
