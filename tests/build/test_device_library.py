"""`cairn build --lib` for the device (docs/devices.md, "Libraries on the device"): a pub
fn takes @device and @unified views, whose C pointers are device (managed) memory, and
has a second entry PREFIX_fn_host that takes host memory and copies. lib_c/use_dlib.c
calls every entry of lib_c/dlib.cairn and prints every input's and output's bits.

Here, without a GPU: the library built --emulate runs through the same C entries (its
device memory is host memory) and each output is held to an independent model (numpy
float32 roundings for saxpy, exact rationals for the dot product); the CUDA library
builds for sm_80, sm_90 and sm_120, exports exactly its entries, its header compiles as
C and C++, a C program links the shared object (the CUDA runtime is inside it) and the
static archive (with -lcudart_static), its device half's PTX assembles with ptxas, and
with no device its entries return 1 with the one-line reason instead of ending the
caller. With a GPU the CUDA library's outputs equal the emulated library's bit for bit
(skipped here)."""
import fractions
import pathlib
import re
import shutil
import struct
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "device"))
from buildlib import cairn  # noqa: E402
from cudalib import NVCC, PTX_FLAGS, cuda_dirs, needs_nvcc  # noqa: E402
from devicelib import has_gpu  # noqa: E402
from cairntest import ROOT  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent / "lib_c"
SRC = HERE / "dlib.cairn"
ENTRIES = {f"dlib_{n}{t}" for n in ("saxpy", "dot", "pick", "bump") for t in ("", "_host")}
ENTRIES.add("dlib_last_error")
LINK = ["-lm", "-pthread", "-lcrypto", "-lcjson"]


def build(folder, *flags):
    folder.mkdir(parents=True, exist_ok=True)
    r = cairn("build", "--lib", SRC, "-o", folder / "libdlib", *flags, timeout=900)
    assert r.returncode == 0, r.stderr
    return folder / "libdlib"


def compile_c(exe, *args, cuda=False):
    extra = ["-DUSE_CUDA", f"-I{cuda_dirs().include}"] if cuda else []
    cmd = ["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", *extra, str(HERE / "use_dlib.c"),
           *map(str, args), "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def run(exe):
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in r.stdout.splitlines()}


def shared_program(lib, name):
    return compile_c(lib.parent / name, f"-I{lib.parent}", f"-L{lib.parent}", "-ldlib",
                     f"-Wl,-rpath,{lib.parent}")


@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    lib = build(tmp_path_factory.mktemp("emu"), "--emulate", "--target", "sm_90")
    return run(shared_program(lib, "use"))


def f32s(text):
    return [struct.unpack("<f", struct.pack("<I", int(w, 16)))[0] for w in text.split()]


def f64s(text):
    return [struct.unpack("<d", struct.pack("<Q", int(w, 16)))[0] for w in text.split()]


def hex32(values):
    return " ".join("%08x" % struct.unpack("<I", struct.pack("<f", v))[0] for v in values)


def test_emulated_saxpy_is_two_f32_roundings_through_both_entries(emulated):
    np = pytest.importorskip("numpy")
    x, y = (np.array(f32s(emulated[k]), dtype=np.float32) for k in ("x", "y"))
    a = np.float32(f32s(emulated["a"])[0])
    want = hex32((a * x) + y)  # numpy rounds the product, then the sum, to f32
    assert emulated["saxpy"] == want
    assert emulated["saxpy_host"] == want


def test_emulated_dot_is_the_exact_sum_rounded_once(emulated):
    p, q = f64s(emulated["p"]), f64s(emulated["q"])
    exact = sum(fractions.Fraction(a * b) for a, b in zip(p, q))  # each product rounded
    want = "%016x" % struct.unpack("<Q", struct.pack("<d", float(exact)))[0]
    assert emulated["dot"] == f"0 {want} 0 {want}"


def test_emulated_traps_name_the_view_and_the_line(emulated):
    assert emulated["pick"] == "0 55"
    src = str(SRC)
    assert emulated["pick_out"] == (f"status=1 message=index 40 out of bounds for extent 37 "
                                    f"at={src}:16:30")
    assert emulated["null"] == f"status=1 message=x is a NULL pointer with 37 elements at={src}:6:8"


def test_emulated_unified_view_is_written_in_place(emulated):
    u = f32s(emulated["u"])
    assert emulated["bump"] == hex32([struct.unpack("<f", struct.pack("<f", v + 1.0))[0]
                                      for v in u])


def test_the_header_says_which_pointers_are_device_memory(tmp_path):
    lib = build(tmp_path, "--emulate", "--target", "sm_90")
    h = (tmp_path / "libdlib.h").read_text()
    assert " * x: device memory (cudaMalloc or cudaMallocManaged" in h
    assert " * x: managed memory (cudaMallocManaged" in h
    assert ("int dlib_saxpy_host(uint64_t n, float a, const float *x, uint64_t x_len, float *y, "
            "uint64_t y_len);") in h
    import json
    entries = json.loads((tmp_path / "libdlib.receipt.json").read_text())["library"]["entries"]
    saxpy = next(e for e in entries if e["name"] == "saxpy")
    assert saxpy["host_symbol"] == "dlib_saxpy_host"
    assert [p.get("place") for p in saxpy["params"]] == [None, None, "device", "device"]
    assert lib


@pytest.fixture(scope="module")
def cuda90(tmp_path_factory):
    if not NVCC:
        pytest.skip("nvcc not found: the CUDA toolkit is not installed here")
    return build(tmp_path_factory.mktemp("sm90"), "--target", "sm_90")


@needs_nvcc
def test_cuda_library_exports_exactly_its_entries(cuda90):
    nm = shutil.which("nm")
    out = subprocess.run([nm, "-D", "--defined-only", f"{cuda90}.so"], capture_output=True,
                         text=True, check=True).stdout
    assert {l.split()[-1] for l in out.splitlines() if l.split()[1:2] == ["T"]} == ENTRIES
    out = subprocess.run([nm, "--defined-only", f"{cuda90}.a"], capture_output=True,
                         text=True, check=True).stdout
    assert {l.split()[-1] for l in out.splitlines() if " T " in l} == ENTRIES


@needs_nvcc
@pytest.mark.parametrize("lang", ["c", "c++"])
def test_cuda_library_header_compiles_as_c_and_cpp(cuda90, tmp_path, lang):
    probe = tmp_path / "probe.c"
    probe.write_text('#include "libdlib.h"\nint (*f)(uint64_t, float, const float *, uint64_t, '
                     'float *, uint64_t) = dlib_saxpy;\n')
    std = ["-std=c11"] if lang == "c" else ["-std=c++17"]
    r = subprocess.run(["gcc", "-x", lang, *std, "-Wall", "-Wextra", "-Werror", "-pedantic",
                        f"-I{cuda90.parent}", "-fsyntax-only", str(probe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def without_device(lines):
    return lines["saxpy_host"].startswith("status=1 message=no CUDA device to run on (")


@needs_nvcc
def test_cuda_library_from_c_shared_and_static(cuda90):
    """Both forms link; with no GPU each entry returns 1 and says why (the caller lives
    on); with one, every output equals the emulated library's bits."""
    shared = run(shared_program(cuda90, "use_shared"))
    static = run(compile_c(cuda90.parent / "use_static", f"-I{cuda90.parent}", f"{cuda90}.a",
                           f"-L{cuda_dirs().lib}", "-lcudart_static", "-ldl", "-lrt", "-lstdc++",
                           *LINK, cuda=True))
    for lines in (shared, static):
        assert without_device(lines) or lines["saxpy"], lines
        assert "at=-:0:0" in lines["saxpy_host"] or not without_device(lines)


@pytest.mark.skipif(not has_gpu(), reason="no GPU here: the CUDA library's bits against the "
                    "emulated library's are checked by make gpu on a GPU host")
def test_cuda_library_equals_the_emulated_library_bit_for_bit(cuda90, emulated):
    got = run(compile_c(cuda90.parent / "use_dev", f"-I{cuda90.parent}", f"{cuda90}.a",
                        f"-L{cuda_dirs().lib}", "-lcudart_static", "-ldl", "-lrt", "-lstdc++",
                        *LINK, cuda=True))
    assert got == emulated


@needs_nvcc
@pytest.mark.parametrize("target", ["sm_80", "sm_90", "sm_120"])
def test_cuda_library_builds_and_its_ptx_assembles(tmp_path, target):
    """The library for each target; its device half as PTX, assembled by ptxas."""
    build(tmp_path / "lib", "--target", target)
    emit = tmp_path / "emit"
    r = cairn("build", "--lib", SRC, "--target", target, "--emit-c", emit, "--emit-only", "-o",
              tmp_path / "libdlib")
    assert r.returncode == 0, r.stderr
    ptx = tmp_path / f"{target}.ptx"
    r = subprocess.run([NVCC, "-ptx", f"-arch={target}", *PTX_FLAGS, "-DCAIRN_LIB=1",
                        f"-I{ROOT / 'runtime'}", str(emit / "dlib_dev.cu"), "-o", str(ptx)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr
    text = ptx.read_text()
    assert len(re.findall(r"^\.visible \.entry|^\.entry", text, re.M)) >= 4
    assert "fma.rn" not in text
    r = subprocess.run([str(cuda_dirs().bin / "ptxas"), f"-arch={target}", str(ptx), "-o",
                        str(tmp_path / "k.cubin")], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr


def test_cuda_library_without_nvcc_is_one_line_and_exit_2(tmp_path):
    r = cairn("build", "--lib", SRC, "--target", "sm_90", "-o", tmp_path / "libdlib",
              env={"CAIRN_NVCC": str(tmp_path / "missing")})
    assert r.returncode == 2 and "nvcc not found" in r.stderr, r.stderr
    assert not (tmp_path / "libdlib.so").exists()
