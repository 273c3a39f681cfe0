"""Helpers for the device tests: build a device program in this matrix cell, run it at a
pool width with every observation's digest and raw bits written, and decode them.

A program built for the host target runs its device work emulated (docs/devices.md):
device parallel regions on the pool, each block's threads phase by phase."""
import json
import os
import pathlib
import shutil
import struct

import pytest

from cairntest import BIN, ROOT, cairn_cell_flags, run

PROGRAMS = ROOT / "tests" / "device" / "programs"
FORMATS = {"f32": "f", "f64": "d", "i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i",
           "u32": "I", "i64": "q", "u64": "Q", "f16": "H", "bf16": "H", "f8e5m2": "B",
           "f8e4m3": "B", "usize": "Q", "bool": "?"}


def find_nvcc():
    """nvcc on PATH or in the toolkit's usual folder, else None."""
    for path in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if path and os.access(path, os.X_OK):
            return path
    return None


def has_gpu():
    """Whether nvidia-smi lists a GPU here."""
    probe = shutil.which("nvidia-smi")
    return bool(probe) and run([probe, "-L"]).returncode == 0


def build(src, out, *flags):
    """cairn build SRC -o OUT in this cell; returns OUT (a pathlib.Path)."""
    res = run([BIN / "cairn", "build", src, "-o", out, *cairn_cell_flags(), *flags], timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return pathlib.Path(out)


def observe(exe, folder, width):
    """Runs exe at CAIRN_THREADS=width; returns {name: (type, count, sha256, raw bytes)}."""
    folder = pathlib.Path(folder)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    log = folder / "observe.log"
    res = run([exe], env={"CAIRN_THREADS": str(width), "CAIRN_OBSERVE": str(log),
                          "CAIRN_OBSERVE_RAW": str(folder)}, timeout=300)
    assert res.returncode == 0, f"{exe} at width {width}: exit {res.returncode}\n{res.stderr}"
    seen = {}
    for seq, line in enumerate(log.read_text().splitlines()):
        o = json.loads(line)
        raw = (folder / f"{o['name']}.{seq}.bin").read_bytes()
        seen[o["name"]] = (o["type"], o["count"], o["sha256"], raw)
    return seen


def values(obs, name):
    """The observation's elements as Python numbers (storage floats as their bits)."""
    typ, count, _, raw = obs[name]
    return list(struct.unpack(f"<{count}{FORMATS[typ]}", raw))


def pairs(obs):
    """(dev_X, ref_X) names: every dev_ observation has its host reference."""
    devs = sorted(n for n in obs if n.startswith("dev_"))
    assert devs, "the program observes no dev_ values"
    for d in devs:
        assert "ref_" + d[4:] in obs, f"{d} has no ref_{d[4:]}"
    return [(d, "ref_" + d[4:]) for d in devs]


def accepted(src):
    """Skips a program the checker still defers (E-UNSUPPORTED "not supported yet": a
    construct whose checker rules have not landed); any other refusal fails."""
    res = run([BIN / "cairn", "check", src])
    if res.returncode != 0 and "E-UNSUPPORTED" in res.stderr and "not supported yet" in res.stderr:
        pytest.skip(f"{src.name}: the checker does not accept it yet:\n{res.stderr}")
