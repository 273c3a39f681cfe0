"""The package's device-array path (python/cairn/_device.py) on tests/build/lib_c/
dlib.cairn, whose pub fns take @device and @unified views.

Without a GPU: the library built --emulate takes objects with __cuda_array_interface__
(a stand-in over numpy memory: an emulated library's device memory is host memory) and
numpy arrays or CPU DLPack tensors (then its host entry PREFIX_fn_host copies), every
result held to numpy float32 arithmetic or exact rationals; the refusals name the
parameter (element type, strides, read-only, device, host and device mixed); the DLPack
reader is checked on numpy's own capsules; and the CUDA library (nvcc only) receives the
stand-ins' pointers and, with no device, raises TrapError saying so. Real CUDA arrays
(CuPy, PyTorch) need a GPU: that test is skipped here. PyTorch CPU tensors run where
torch is installed."""
import fractions
import pathlib
import shutil
import sys

import numpy as np
import pytest

import cairn
from cairn import _device

SRC = pathlib.Path(__file__).resolve().parent.parent / "build" / "lib_c" / "dlib.cairn"
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "device"))
from devicelib import has_gpu  # noqa: E402


class CudaArray:
    """A stand-in device array: __cuda_array_interface__ v3 over a numpy array's memory."""

    def __init__(self, a, typestr=None, strides=None, readonly=False, shape=None):
        self.base = a
        self.__cuda_array_interface__ = {
            "version": 3, "shape": tuple(shape or a.shape), "typestr": typestr or a.dtype.str,
            "data": (a.ctypes.data, readonly), "strides": strides, "stream": None}


class DLArray:
    """A stand-in DLPack producer: numpy's capsule, on the device it claims."""

    def __init__(self, a, device=(_device.DL_CPU, 0)):
        self.base, self.device = a, device

    def __dlpack__(self, stream=None):
        return self.base.__dlpack__()

    def __dlpack_device__(self):
        return self.device


@pytest.fixture(scope="module")
def emu():
    return cairn.build(SRC, emulate=True, target="sm_90")


def data(n=37):
    x = (np.arange(1, n + 1, dtype=np.float32) / np.float32(3)) - np.float32(5)
    y = np.float32(1) / np.arange(7, n + 7, dtype=np.float32)
    return x, y


A = np.float32(2.5) / np.float32(7)


@pytest.mark.parametrize("wrap", ["cuda", "numpy", "dlpack_cpu"])
def test_saxpy_through_each_kind_of_array(emu, wrap):
    x, y = data()
    want = A * x + y  # numpy: the product rounded to f32, then the sum
    box = {"cuda": CudaArray, "numpy": lambda a: a, "dlpack_cpu": DLArray}[wrap]
    emu.saxpy(A, box(x), box(y))
    assert y.tobytes() == want.tobytes()


def test_dot_on_device_arrays_is_the_exact_sum(emu):
    rng = np.random.default_rng(3)
    p = rng.standard_normal(50) * 10.0 ** rng.integers(-20, 20, 50)
    q = rng.standard_normal(50)
    exact = sum(fractions.Fraction(float(a * b)) for a, b in zip(p, q))
    assert emu.dot(CudaArray(p), CudaArray(q)) == float(exact)
    assert emu.dot(p, q) == float(exact)


def test_a_lane_trap_is_a_trap_error_with_its_line(emu):
    k = np.arange(37, dtype=np.int32) * 11
    out = np.zeros(1, np.int32)
    emu.pick(CudaArray(k), 5, CudaArray(out))
    assert out[0] == 55
    with pytest.raises(cairn.TrapError) as e:
        emu.pick(CudaArray(k), 40, CudaArray(out))
    assert e.value.message == "index 40 out of bounds for extent 37"
    assert (pathlib.Path(e.value.file).name, e.value.line, e.value.col) == ("dlib.cairn", 16, 30)


def test_unified_view_takes_device_arrays_too(emu):
    u = np.arange(37, dtype=np.float32) * np.float32(0.1)
    want = u + np.float32(1)
    emu.bump(CudaArray(u))
    assert u.tobytes() == want.tobytes()


@pytest.mark.parametrize("make,error,words", [
    (lambda x: CudaArray(x.astype(np.float64)), TypeError,
     "x: ro<f32> takes float32 elements, not float64"),
    (lambda x: CudaArray(x[:18], strides=(8,), shape=(18,)), ValueError,
     "x: ro<f32> takes C-contiguous memory, and its strides are (8,) for shape (18,)"),
    (lambda x: DLArray(x, device=(_device.DL_CUDA, 0)), ValueError,
     "x: ro<f32>@device: an emulated library (--emulate) runs on host memory, and this "
     "array is on cuda:0"),
])
def test_refusals_name_the_parameter(emu, make, error, words):
    x, y = data()
    with pytest.raises(error) as e:
        emu.saxpy(A, make(x), CudaArray(y))
    assert str(e.value).startswith(words), str(e.value)


def test_a_read_only_device_array_for_an_rw_view(emu):
    x, y = data()
    with pytest.raises(ValueError, match="^y: rw<f32> writes into the array, which is read-only"):
        emu.saxpy(A, CudaArray(x), CudaArray(y, readonly=True))


def test_host_and_device_memory_do_not_mix(emu):
    x, y = data()
    with pytest.raises(TypeError, match=r"^saxpy\(\): x device memory and y host memory"):
        emu.saxpy(A, CudaArray(x), y)


def test_dlpack_reader_on_numpy_capsules():
    """The DLTensor as _device reads it: pointer, count, dtype and strides."""
    a = np.arange(12, dtype=np.float64)
    got = _device._from_dlpack("v", "f64", "ro", a, (1, 0))
    assert (got.pointer, got.size) == (a.ctypes.data, 12)
    two = a.reshape(3, 4)[:, 1:2]  # shape (3, 1): one stride that counts, not C order
    with pytest.raises(ValueError, match=r"^v: ro<f64> takes C-contiguous memory, and its "
                                         r"strides are \(4, 1\) elements for shape \(3, 1\)"):
        _device._from_dlpack("v", "f64", "ro", two, (1, 0))
    col = a.reshape(12, 1)[3:7]  # an extent-1 dimension's stride does not count
    assert _device._from_dlpack("v", "f64", "ro", col, (1, 0)).pointer == a[3:].ctypes.data
    with pytest.raises(TypeError, match=r"^v: ro<f32> takes float32 elements, not DLPack "
                                        r"type code 2 with 64 bits"):
        _device._from_dlpack("v", "f32", "ro", a, (1, 0))
    h = np.arange(4, dtype=np.uint16)
    assert _device._from_dlpack("v", "bf16", "ro", h, (1, 0)).size == 4  # bits as uint16


@pytest.fixture(scope="module")
def cuda_lib():
    if not (shutil.which("nvcc") or pathlib.Path("/usr/local/cuda/bin/nvcc").exists()):
        pytest.skip("nvcc not found: the CUDA library is not built here")
    return cairn.build(SRC, target="sm_90")


def test_cuda_library_passes_the_pointer_and_says_when_there_is_no_device(cuda_lib):
    """The CUDA library gets the stand-ins' pointers; here its entry answers that there is
    no device (a TrapError, the process goes on); on a GPU host the C entry refuses host
    memory posing as device memory."""
    if has_gpu():
        pytest.skip("a GPU is here: test_real_cuda_arrays checks device memory")
    x, y = data()
    for args in ((CudaArray(x), CudaArray(y)), (x, y),
                 (DLArray(x, (_device.DL_CUDA, 0)), DLArray(y, (_device.DL_CUDA, 0)))):
        with pytest.raises(cairn.TrapError, match="^no CUDA device to run on"):
            cuda_lib.saxpy(A, *args)
    with pytest.raises(ValueError, match=r"^x: ro<f32>@device takes CUDA device memory, and "
                                         r"this array is on cuda pinned host:0"):
        cuda_lib.saxpy(A, DLArray(x, (_device.DL_CUDA_HOST, 0)), CudaArray(y))
    with pytest.raises(ValueError, match=r"^x: rw<f32>@unified takes managed memory"):
        cuda_lib.bump(DLArray(x, (_device.DL_CUDA, 0)))


@pytest.mark.skipif(not has_gpu(), reason="no GPU here: CuPy/PyTorch CUDA arrays through "
                    "the CUDA library are checked on a GPU host")
def test_real_cuda_arrays(cuda_lib, emu):
    torch = pytest.importorskip("torch")
    x, y = data()
    want = y.copy()
    emu.saxpy(A, x, want)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    cuda_lib.saxpy(A, tx, ty)
    assert ty.cpu().numpy().tobytes() == want.tobytes()
    dy = torch.from_numpy(y).cuda()  # the DLPack path: a producer without the interface
    cuda_lib.saxpy(A, DLArray(tx, tuple(tx.__dlpack_device__())),
                   DLArray(dy, tuple(dy.__dlpack_device__())))
    assert dy.cpu().numpy().tobytes() == want.tobytes()
    with pytest.raises(cairn.TrapError, match="must be device memory"):
        cuda_lib.saxpy(A, CudaArray(x), CudaArray(y))  # host memory posing as device memory


def test_torch_cpu_tensors_work_as_numpy_arrays_do(emu):
    torch = pytest.importorskip("torch", reason="python3-torch is not installed here")
    x, y = data()
    want = A * x + y
    ty = torch.from_numpy(y.copy())
    emu.saxpy(A, torch.from_numpy(x), ty)
    assert ty.numpy().tobytes() == want.tobytes()
