"""`cairn build --lib` (docs/tools.md, "Libraries"): a shared library, a static archive
with the runtime inside, a C header with one entry per pub fn, and the receipt beside
them. C programs (tests/build/lib_c/*.c) link each form and call it: results are
compared with exact values (fractions), a trap returns status 1 with its message and
file:line:col instead of ending the program, threads see only their own traps, a trapped
call frees what it allocated, and two libraries from programs that share function names
and the runtime link into one program. In a sanitizer cell everything is built with the
cell's sanitizer, so ASan/LSan and TSan watch the traps' jumps too."""
import fractions
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import cairn  # noqa: E402
from cairntest import CC, SAN, SANITIZE_FLAG  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent / "lib_c"
SAN_CFLAGS = {"none": [], "asan": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
              "tsan": ["-fsanitize=thread"]}[SAN]
LINK = ["-lm", "-pthread", "-lcrypto", "-lcjson"]


def build_lib(src, out, *extra):
    flags = ["--cc", CC, *(["--sanitize", SANITIZE_FLAG] if SANITIZE_FLAG else [])]
    r = cairn("build", "--lib", src, "-o", out, *flags, *extra)
    assert r.returncode == 0, r.stderr
    return out


def compile_c(source, exe, *args):
    cmd = [CC, "-std=c11", "-Wall", "-Wextra", "-Werror", *SAN_CFLAGS, str(source), *map(str, args),
           "-o", str(exe)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return exe


def run(exe, env=None):
    full = dict(os.environ, ASAN_OPTIONS="abort_on_error=1", **(env or {}))
    return subprocess.run([str(exe)], capture_output=True, text=True, env=full, timeout=300)


@pytest.fixture(scope="module")
def kern(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kern")
    return build_lib(HERE / "kern.cairn", folder / "libkern")


def linked(kern, form, program, tmp_path):
    """PROGRAM (a lib_c/*.c) linked with the shared library or the static archive."""
    if form == "shared":
        return compile_c(HERE / program, tmp_path / form, f"-I{kern.parent}", f"-L{kern.parent}",
                         "-lkern", f"-Wl,-rpath,{kern.parent}", "-pthread")
    return compile_c(HERE / program, tmp_path / form, f"-I{kern.parent}", f"{kern}.a", *LINK)


def lines(text):
    return dict(line.split(" ", 1) if " " in line else line.split("=", 1)
                for line in text.splitlines())


@pytest.mark.parametrize("form", ["shared", "static"])
def test_each_form_links_and_every_entry_answers(kern, tmp_path, form):
    r = run(linked(kern, form, "use_lib.c", tmp_path))
    assert r.returncode == 0, r.stderr
    got = {l.split()[0]: l for l in r.stdout.splitlines()}
    src = HERE / "kern.cairn"
    # the exact sum, against exact rationals
    exact = sum(fractions.Fraction(v) for v in (1e16, 1.0, -1e16, 0.5))
    assert got["dot=1.5"] and float(exact) == 1.5
    assert got["axpy=10.5"] == "axpy=10.5 21 31.5 42 52.5"
    assert got["widen=3"] == "widen=3 -6 196512 calls=8"  # 65504 * 3; the counter bumped
    assert got["pick=8"] == "pick=8"
    assert got["pick_trap"] == (f"pick_trap status=1 message=[index 9 out of bounds for extent "
                                f"4] at={src}:22:10")
    assert got["pick_untouched=-1"]  # a trapped call stores no result
    assert got["pick_again"].startswith("pick_again status=0 message=[] at=-:0:0")
    assert got["pick=5"]
    for name in ("stride", "stride_again"):  # a trap in the pool's lanes, twice
        m = re.fullmatch(rf"{name} status=1 message=\[index (\d+) out of bounds for extent "
                         rf"1000\] at={re.escape(str(src))}:27:30", got[name])
        assert m and int(m.group(1)) >= 1000 and int(m.group(1)) % 2 == 0, got[name]
    assert got["add"].startswith("add status=1 message=[integer overflow: 2147483647 + 1 does "
                                 "not fit in i32]")
    assert got["add=42"]
    assert got["extent"] == (f"extent status=1 message=[view extent mismatch: x has 3 elements,"
                             f" its parameter declares 4] at={src}:5:8")
    assert got["null"].startswith("null status=1 message=[x is a NULL pointer with 4 elements]")
    assert got["no_result"].startswith("no_result status=0")
    assert got["device_twice=2"] == "device_twice=2 5 8 11"  # 2x + i, emulated device lanes
    assert got["loss_grad=30"] == "loss_grad=30 9"  # d(w*w*x)/dw = 2wx, /dx = w*w


@pytest.mark.parametrize("form", ["shared", "static"])
def test_threads_see_only_their_own_traps(kern, tmp_path, form):
    r = run(compile_c(HERE / "threads.c", tmp_path / form, f"-I{kern.parent}",
                      *([f"-L{kern.parent}", "-lkern", f"-Wl,-rpath,{kern.parent}", "-pthread"]
                        if form == "shared" else [f"{kern}.a", *LINK])),
            env={"CAIRN_THREADS": "4"})
    assert r.returncode == 0 and r.stdout == "ok 9600 calls\n", r.stderr


@pytest.mark.skipif(SAN != "none", reason="the sanitizer's own allocator changes the resident set")
def test_a_trapped_call_frees_its_buffers(kern, tmp_path):
    r = run(linked(kern, "static", "leak.c", tmp_path))
    assert r.returncode == 0, r.stderr
    growth = int(r.stdout.split("=")[1])
    assert growth < 64 * 1024, growth  # 4000 leaked buffers would be 4 GiB


def test_a_bad_thread_count_is_a_trap_not_an_exit(kern, tmp_path):
    r = run(linked(kern, "shared", "use_lib.c", tmp_path), env={"CAIRN_THREADS": "many"})
    assert r.returncode == 0, r.stderr
    got = {l.split()[0]: l for l in r.stdout.splitlines()}
    assert "message=[CAIRN_THREADS is not a thread count" in got["stride"]


def test_two_libraries_with_the_same_names_link_into_one_program(tmp_path):
    a = build_lib(HERE / "a.cairn", tmp_path / "liba")
    b = build_lib(HERE / "b.cairn", tmp_path / "libb")
    for form, args in (("static", [f"{a}.a", f"{b}.a", *LINK]),
                       ("shared", [f"-L{tmp_path}", "-la", "-lb", f"-Wl,-rpath,{tmp_path}"])):
        r = run(compile_c(HERE / "two_libs.c", tmp_path / form, f"-I{tmp_path}", *args))
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == [
            "a_f=0 5", "b_f=0 10000000000000000",  # a's exact sum, b's maximum
            "a_bad=1 [index 4 out of bounds for extent 4] line 4", "b_last=[]",
            "b_bad=1 [index 5 out of bounds for extent 4] line 3"], (form, r.stdout)
    for lib in (a, b):  # the archive defines its entries and nothing else globally
        prefix = lib.name[3:]
        names = subprocess.run(["nm", "-g", "--defined-only", f"{lib}.a"], capture_output=True,
                               text=True, check=True).stdout.split()
        defined = {n for n in names if re.fullmatch(r"[A-Za-z_]\w*", n) and n not in "TDBRV"}
        assert defined == {f"{prefix}_f", f"{prefix}_bad", f"{prefix}_last_error"}, defined


def sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def test_the_receipt_sits_beside_the_library_and_lists_its_entries(kern):
    receipt = json.loads(pathlib.Path(f"{kern}.receipt.json").read_text())
    lib = receipt["library"]
    assert receipt["output"] == {"path": f"{kern}.so", "sha256": sha256(f"{kern}.so")}
    for key, ext in (("shared", ".so"), ("static", ".a"), ("header", ".h")):
        assert lib[key] == {"path": f"{kern}{ext}", "sha256": sha256(f"{kern}{ext}")}
    assert lib["prefix"] == "kern" and lib["last_error"] == "kern_last_error"
    entries = {e["name"]: e for e in lib["entries"]}
    assert sorted(entries) == sorted(["dot", "axpy", "widen", "pick", "stride", "add",
                                      "device_twice", "loss_grad"])
    assert entries["dot"]["params"][1] == {"name": "x", "kind": "view", "type": "f64",
                                           "access": "ro", "extent": "n", "extent_param": "n"}
    assert entries["widen"]["params"][3] == {"name": "scale", "kind": "scalar", "type": "bf16"}
    assert entries["widen"]["params"][4] == {"name": "calls", "kind": "ref", "type": "u64",
                                             "access": "rw"}
    assert entries["axpy"]["result"] is None and entries["pick"]["result"] == "i32"
    exported = subprocess.run(["nm", "-D", "--defined-only", f"{kern}.so"], capture_output=True,
                              text=True, check=True).stdout.split()
    symbols = {n for n in exported if n.startswith("kern_")}
    assert symbols == {e["symbol"] for e in lib["entries"]} | {"kern_last_error"}
    assert "-fPIC" in receipt["compiler"]["flags"] and "-DCAIRN_LIB=1" in receipt["compiler"]["flags"]


def test_the_kernel_is_not_inlined_into_the_setjmp_entry(tmp_path):
    """The exported entry calls setjmp, and a function that does keeps its locals in
    memory; so each pub fn's work lives in its own cairn_entry_NAME, kept out of line at
    -O3 too (issue 33: -O3 was slower than -O2 when the kernel was inlined there)."""
    lib = build_lib(HERE / "kern.cairn", tmp_path / "libkern", "-O3")
    names = subprocess.run(["nm", f"{lib}.a"], capture_output=True, text=True,
                           check=True).stdout.split()
    for fn in ("dot", "axpy", "widen", "pick", "stride", "add"):
        assert f"cairn_entry_{fn}" in names, fn


def test_the_header_is_c_and_cpp(kern, tmp_path):
    for compiler, lang in ((CC, "c"), ("g++" if shutil.which("g++") else None, "c++")):
        if not compiler:
            continue
        src = tmp_path / f"h.{lang.replace('+', 'p')}"
        src.write_text('#include "libkern.h"\nint main(void) { return kern_last_error()->line; }\n')
        r = subprocess.run([compiler, "-x", lang, "-Wall", "-Wextra", "-Werror", "-pedantic",
                            "-fsyntax-only", f"-I{kern.parent}", str(src)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("args,status,message", [
    (["--lib", "NOPUB"], 1, "error[E-PUB]: a library exports its pub functions, and this program has none"),
    (["--lib", "KERN", "--target", "sm_90", "--sanitize", "address"], 2,
     "--sanitize checks host builds: add --emulate"),
    (["--lib", "KERN", "--prefix", "9x"], 2, "--prefix takes a C name"),
    (["KERN", "--prefix", "k"], 2, "--prefix names a library's symbols: add --lib"),
])
def test_refusals(tmp_path, args, status, message):
    nopub = tmp_path / "nopub.cairn"
    nopub.write_text("fn f() -> i32 = 1;\n")
    args = [str(nopub) if a == "NOPUB" else str(HERE / "kern.cairn") if a == "KERN" else a
            for a in args]
    r = cairn("build", *args, "-o", tmp_path / "libx", cwd=tmp_path)
    assert r.returncode == status and message in r.stderr, r.stderr
    assert not (tmp_path / "libx.so").exists()


def test_cairn_run_does_not_run_a_library(tmp_path):
    r = cairn("run", "--lib", HERE / "kern.cairn")
    assert r.returncode == 125 and "cairn build --lib" in r.stderr


def test_names_and_prefix(tmp_path):
    """-o NAME.so names NAME.so, NAME.a, NAME.h; the prefix is NAME less `lib`, or --prefix."""
    build_lib(HERE / "a.cairn", tmp_path / "libfast-sum.so")
    assert {p.name for p in tmp_path.iterdir()} >= {"libfast-sum.so", "libfast-sum.a",
                                                    "libfast-sum.h", "libfast-sum.receipt.json"}
    assert "int fast_sum_f(" in (tmp_path / "libfast-sum.h").read_text()
    build_lib(HERE / "a.cairn", tmp_path / "other", "--prefix", "mine")
    assert "int mine_f(" in (tmp_path / "other.h").read_text()
