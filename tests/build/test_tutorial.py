"""docs/tutorial.md cannot rot: every file it shows (```cairn file=NAME and ```python
file=NAME blocks) is written, and every command of its ```console blocks is run in order
in a fresh folder, with its output (stdout and stderr, as a terminal shows them)
compared with what the page prints, line for line. Only verify's timings, "(0.02 s)",
are not compared. A block that builds for a CUDA target is skipped where nvcc is not
installed (it needs no GPU). The page must keep the steps the tutorial promises, the
cooperative kernels (a layer norm, a transpose) among them, each compared with NumPy."""
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from cairntest import BIN, ROOT, TBIN

PAGE = ROOT / "docs" / "tutorial.md"
FENCE = re.compile(r"^```(\w+)(?: file=(\S+))?\n(.*?)^```$", re.M | re.S)


def blocks():
    return [(kind, name, body) for kind, name, body in FENCE.findall(PAGE.read_text())]


def commands(body):
    """[(command, expected output)] of a console block."""
    out = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append([line[2:], []])
        else:
            assert out, f"output before any command in:\n{body}"
            out[-1][1].append(line)
    return [(cmd, "\n".join(lines)) for cmd, lines in out]


def timeless(text):
    return re.sub(r"\(\d+\.\d+ s\)", "(T s)", text).rstrip()


def has_nvcc():
    return bool(shutil.which("nvcc") or os.access("/usr/local/cuda/bin/nvcc", os.X_OK) or
                (os.environ.get("CUDA_HOME") and
                 os.access(os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc"), os.X_OK)))


def test_the_page_keeps_its_steps():
    text = PAGE.read_text()
    files = {name: body for kind, name, body in blocks() if name}
    cmds = [c for kind, _, body in blocks() if kind == "console" for c, _ in commands(body)]
    assert any("--show" in c for c in cmds)                                  # the first value
    assert "ro<f16>" in files["softmax.cairn"] and "f32(x[i])" in files["softmax.cairn"]
    assert any("--emulate" in c and "--target sm_90" in c for c in cmds)     # emulated
    assert any("--target sm_90" in c and "--emulate" not in c for c in cmds)  # built by nvcc
    assert "derive grad" in files["fit.cairn"]
    assert any(c.startswith("cairn verify") for c in cmds) and "requires" in files["mean.cairn"]
    assert "cairn.build" in files["call.py"] and any(c == "python3 call.py" for c in cmds)
    assert "tests/build/test_tutorial.py" in text
    # cooperative kernels: a row-wise one and a 2-D one, each run emulated against numpy
    assert "reduce + warp" in files["layernorm.cairn"] and "blocks" in files["layernorm.cairn"]
    assert "barrier" in files["transpose.cairn"] and "shared" in files["transpose.cairn"]
    for name, numpy in (("layernorm.cairn", "np.allclose"), ("transpose.cairn", ".T")):
        run = [c for c in cmds if c.startswith(f"cairn run {name}") and "--emulate" in c]
        assert run and any(numpy in c for c in cmds[cmds.index(run[0]):]), name


def test_every_command_prints_what_the_page_says(tmp_path):
    env = {"PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin", "HOME": str(tmp_path),
           "LANG": "C.UTF-8", "CAIRN": str(BIN / "cairn"), "PYTHONPATH": str(ROOT / "python"),
           "CAIRN_RUNTIME_LIB": str(pathlib.Path(TBIN).parent / "libcairn.so"),
           "CAIRN_CACHE": str(tmp_path / "cache")}
    if os.environ.get("CUDA_HOME"):
        env["CUDA_HOME"] = os.environ["CUDA_HOME"]
    work = tmp_path / "work"
    work.mkdir()
    status, ran = 0, 0
    for kind, name, body in blocks():
        if name:
            (work / name).write_text(body)
            continue
        if kind != "console":
            continue
        if re.search(r"--target sm_\d+(?![^\n]*--emulate)", body) and not has_nvcc():
            continue  # a CUDA build: needs nvcc (not a GPU)
        for cmd, want in commands(body):
            if cmd == "echo $?":
                got = str(status)
            else:
                r = subprocess.run(["/bin/bash", "-c", cmd], cwd=work, env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
                got, status = r.stdout, r.returncode if r.returncode >= 0 else 128 - r.returncode
            ran += 1
            assert timeless(got) == timeless(want), f"$ {cmd}\n--- got:\n{got}\n--- the page says:\n{want}"
    assert ran >= 15
