"""Helpers for the device tests: build a device program in this matrix cell, run it at a
pool width with every observation's digest and raw bits written, and decode them.

A program built for the host target runs its device work emulated (docs/devices.md):
device parallel regions on the pool, each block's threads phase by phase."""
import json
import pathlib
import shutil
import struct

import pytest

from cairntest import BIN, ROOT, cairn_cell_flags, find_nvcc, run  # noqa: F401 (re-exported)

PROGRAMS = ROOT / "tests" / "device" / "programs"
FORMATS = {"f32": "f", "f64": "d", "i8": "b", "u8": "B", "i16": "h", "u16": "H", "i32": "i",
           "u32": "I", "i64": "q", "u64": "Q", "f16": "H", "bf16": "H", "f8e5m2": "B",
           "f8e4m3": "B", "usize": "Q", "bool": "?"}


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


# A device lane's NaN (docs/devices.md, "NaN bits") and how to read NaNs from raw bits.
DEVICE_NAN = {"f32": 0x7fffffff, "f64": 0xfff8000000000000}
_BITS = {"f32": ("I", 0x7f800000, 0x7fffffff), "f64": ("Q", 0x7ff0000000000000, 2 ** 63 - 1),
         "f16": ("H", 0x7c00, 0x7fff), "bf16": ("H", 0x7f80, 0x7fff)}


def same_or_device_nan(obs, dev, ref):
    """dev's bits equal ref's, except where ref (host code) holds a NaN: there an f32 or f64
    in a device lane is the device's NaN, and a storage float converted from one is a NaN
    (its bits fixed by that NaN). Returns the first element that breaks this, or None."""
    typ, count, _, draw = obs[dev]
    if typ not in _BITS:
        return None if obs[dev][:3] == obs[ref][:3] else 0
    fmt, inf, mag = _BITS[typ]
    d = struct.unpack(f"<{count}{fmt}", draw)
    r = struct.unpack(f"<{count}{fmt}", obs[ref][3])
    for k, (x, y) in enumerate(zip(d, r)):
        if (y & mag) > inf:  # the host's result is a NaN
            if typ in DEVICE_NAN and x != DEVICE_NAN[typ]:
                return k
            if (x & mag) <= inf:
                return k
        elif x != y:
            return k
    return None
