"""`make install PREFIX=...` (the Makefile's install rule): into a temporary prefix, then
used from there alone, in an environment whose PATH holds the prefix's bin and the
system's, with no variable pointing back into the source tree: the binaries build and run
a program and a library; a C program compiles against the runtime through pkg-config
(cairn.pc), as a shared library (the rpath from cairn.pc) and as the static archive
(--static); the Python package builds and calls a library and the runtime's exact sum,
installed by make install (where the interpreter asked looks) or by pip install ./python
into a venv; the man pages render and bash completes."""
import os
import pathlib
import shutil
import subprocess

import pytest

from cairntest import BIN, CC, ROOT, SAN, TBIN

APP = r"""
#include <stdio.h>
#include "cairn.h"

int main(void) {
    double x[3] = {1e16, 1.0, -1e16};
    uint64_t shape[1] = {3};
    char err[256];
    if (cairn_npy_write("x.npy", "<f8", 1, shape, x, 8, err, sizeof err) != 0) return 2;
    cairn_npy info;
    void *data = NULL;
    if (cairn_npy_read("x.npy", 8, &info, &data, err, sizeof err) != 0) return 3;
    printf("%.17g %s %llu\n", cairn_sum_f64(data, info.count), info.descr,
           (unsigned long long)info.count);
    free(data);
    return 0;
}
"""


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    root = tmp_path_factory.mktemp("prefix")
    r = subprocess.run(["make", "-s", "install", f"PREFIX={root}", f"BIN={BIN}",
                        f"OBJ={pathlib.Path(TBIN).parent}", f"CC={CC}", f"SAN={SAN}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    return root


def python_dir(prefix):
    """Where make install put the package for Debian's python3 (scripts/python_dir.py)."""
    [found] = list((prefix / "lib").glob("python3*/*-packages"))
    return found


@pytest.fixture
def env(prefix, tmp_path):
    """Only the prefix and the system: no CAIRN, CAIRN_RUNTIME_LIB, nor the tree."""
    return {"PATH": f"{prefix}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path),
            "CAIRN_CACHE": str(tmp_path / "cache"), "LANG": "C.UTF-8",
            "PKG_CONFIG_PATH": f"{prefix}/lib/pkgconfig", "PYTHONPATH": str(python_dir(prefix))}


def sh(cmd, env, cwd):
    r = subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, text=True, env=env, cwd=cwd,
                       timeout=600)
    assert r.returncode == 0, f"{cmd}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_what_is_installed(prefix):
    for path in ("bin/cairn", "bin/cairn-farm", "bin/cairn-agent", "include/cairn/cairn.h",
                 "include/cairn/cairn_sum.h", "lib/libcairn.so", "lib/libcairn.a",
                 "lib/pkgconfig/cairn.pc", "share/man/man1/cairn.1", "share/man/man1/cairn-farm.1",
                 "share/man/man1/cairn-agent.1", "share/bash-completion/completions/cairn"):
        assert (prefix / path).is_file(), path
    installed = (python_dir(prefix) / "cairn" / "_installed.py").read_text()
    assert f'BINDIR = "{prefix}/bin"' in installed and f'LIBDIR = "{prefix}/lib"' in installed


def test_a_c_program_builds_against_the_installed_runtime(prefix, env, tmp_path):
    """The documented commands verbatim: the shared build starts without LD_LIBRARY_PATH
    (cairn.pc carries the rpath of a prefix outside the loader's path), and --static
    links the archive."""
    (tmp_path / "app.c").write_text(APP)
    sh("cc app.c $(pkg-config --cflags --libs cairn) -o app_so", env, tmp_path)
    sh("cc app.c $(pkg-config --static --cflags --libs cairn) -o app_a", env, tmp_path)
    for exe in ("app_so", "app_a"):
        assert sh(f"./{exe}", env, tmp_path) == "1 <f8 3\n"  # the exact sum, through a .npy file
    assert f"{prefix}/lib/libcairn.so" in sh("ldd ./app_so", env, tmp_path)
    assert "libcairn" not in sh("ldd ./app_a", env, tmp_path)
    assert f"-Wl,-rpath,{prefix}/lib" in sh("pkg-config --libs cairn", env, tmp_path)


def test_a_system_prefix_gets_no_rpath(tmp_path):
    r = subprocess.run(["make", "-s", "-n", "install", "PREFIX=/usr/local", f"BIN={BIN}",
                        f"OBJ={pathlib.Path(TBIN).parent}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    [sed] = [line for line in r.stdout.splitlines() if "@RPATH@" in line]
    assert "s|@RPATH@||" in sed


def test_pip_installs_the_package_into_a_venv_and_it_finds_the_prefix(prefix, env, tmp_path):
    """pip install ./python (offline, no build step) into a venv over Debian's numpy; the
    package records no folders and finds cairn on PATH, libcairn.so beside it."""
    venv = tmp_path / "venv"
    sh(f"/usr/bin/python3 -m venv --system-site-packages {venv}", env, tmp_path)
    shutil.copytree(ROOT / "python", tmp_path / "src", ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    sh(f"{venv}/bin/pip install -q --no-build-isolation --no-index ./src", env, tmp_path)
    (tmp_path / "k.cairn").write_text("pub fn pick(n:usize, x:ro<i32>[n], k:usize) -> i32 = x[k];\n")
    script = f"""
import numpy as np, cairn
assert cairn.__file__.startswith("{venv}"), cairn.__file__
assert str(cairn._find.cairn_binary()) == "{prefix}/bin/cairn"
assert str(cairn._find.runtime_library()) == "{prefix}/lib/libcairn.so"
print(cairn.build("k.cairn").pick(np.array([5, 6, 7], np.int32), 2))
print(cairn.exact_sum(np.array([1e16, 1.0, -1e16])))
"""
    venv_env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
    assert sh(f"{venv}/bin/python -c '{script}'", venv_env, tmp_path) == "7\n1.0\n"


def test_make_install_puts_the_package_where_its_python_looks(tmp_path):
    """make install PYTHON=VENV/bin/python PREFIX=VENV: the package lands in the venv's
    site-packages (asked of that interpreter), imported with no PYTHONPATH."""
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, timeout=600)
    r = subprocess.run(["make", "-s", "install", f"PREFIX={venv}", f"PYTHON={venv}/bin/python",
                        f"BIN={BIN}", f"OBJ={pathlib.Path(TBIN).parent}", f"CC={CC}",
                        f"SAN={SAN}"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    out = subprocess.run([f"{venv}/bin/python", "-c", "import cairn; print(cairn.__file__); "
                          "print(cairn._find.runtime_library())"], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                         timeout=600)
    assert out.returncode == 0, out.stderr
    site = subprocess.run([f"{venv}/bin/python", "-c", "import sysconfig; "
                           "print(sysconfig.get_path('purelib'))"], capture_output=True,
                          text=True, timeout=600).stdout.strip()
    assert out.stdout.splitlines() == [f"{site}/cairn/__init__.py", f"{venv}/lib/libcairn.so"]


def test_the_installed_cairn_builds_runs_and_links_a_library(prefix, env, tmp_path):
    assert sh("command -v cairn", env, tmp_path).strip() == f"{prefix}/bin/cairn"
    (tmp_path / "k.cairn").write_text(
        "pub fn twice(n:usize, x:rw<i32>[n]) { for i in 0..n { x[i] = 2 * x[i]; } }\n"
        "fn main(k:i32) -> i32 { return k + 1; }\n")
    r = subprocess.run(["cairn", "run", "k.cairn", "--", "k=41"], env=env, cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 42, r.stderr
    sh("cairn build --lib k.cairn", env, tmp_path)
    (tmp_path / "use.c").write_text('#include "libk.h"\nint main(void) { int32_t v[2] = {3, 4};\n'
                                    '  return k_twice(2, v, 2) || v[0] != 6 || v[1] != 8; }\n')
    sh("cc use.c -I. libk.a -lm -pthread -lcrypto -lcjson -o use && ./use", env, tmp_path)


def test_python_uses_the_installed_package_binary_and_runtime(prefix, env, tmp_path):
    (tmp_path / "k.cairn").write_text("pub fn pick(n:usize, x:ro<i32>[n], k:usize) -> i32 = x[k];\n")
    script = f"""
import numpy as np, cairn
assert cairn.__file__.startswith("{prefix}"), cairn.__file__
assert str(cairn._find.cairn_binary()) == "{prefix}/bin/cairn"
assert str(cairn._find.runtime_library()) == "{prefix}/lib/libcairn.so"
k = cairn.build("k.cairn")
assert k.pick(np.array([5, 6, 7], np.int32), 2) == 7
try:
    k.pick(np.array([5, 6, 7], np.int32), 3)
except cairn.TrapError as e:
    print(e)
print(cairn.exact_sum(np.array([1e16, 1.0, -1e16])))
"""
    out = sh(f"/usr/bin/python3 -c '{script}'", env, tmp_path)
    assert out == "index 3 out of bounds for extent 3 at k.cairn:1:54\n1.0\n"


def test_man_pages_render_every_command(prefix, env, tmp_path):
    if not shutil.which("man"):
        pytest.skip("man is not installed")
    page = sh(f"MANWIDTH=100 man -l {prefix}/share/man/man1/cairn.1", env, tmp_path)
    for command in ("CHECK", "EXPLAIN", "BUILD", "RUN", "VERIFY", "PREDICT"):
        assert f"CAIRN {command}" in page
    assert "usage: cairn build FILE" in page and "--lib" in page
    farm = sh(f"MANWIDTH=100 man -l {prefix}/share/man/man1/cairn-farm.1", env, tmp_path)
    assert "CAIRN-FARM SERVE" in farm


def test_bash_completes_commands_and_flags(prefix, env, tmp_path):
    completion = prefix / "share/bash-completion/completions/cairn"
    out = sh(f"bash -c 'source {completion}; COMP_WORDS=(cairn bu); COMP_CWORD=1; "
             f"_cairn_complete; echo ${{COMPREPLY[@]}}; COMP_WORDS=(cairn build --l); "
             f"COMP_CWORD=2; _cairn_complete; echo ${{COMPREPLY[@]}}'", env, tmp_path)
    assert out.splitlines() == ["build", "--lib"]
