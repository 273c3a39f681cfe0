"""Every example observes what it computes (the farm compares observations; a case that
observes nothing is `no-evidence`), and the three that gained observe calls for it
observe the bits an independent model gives (struct + hashlib, no cairn)."""
import hashlib
import pathlib
import struct
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "build"))
from buildlib import EXAMPLES, build, read_log, run_exe  # noqa: E402


def sha(data):
    return hashlib.sha256(data).hexdigest()


def model_train():
    """train.cairn's loop in Python floats: the same f64 roundings in the same order
    (guess = w0*x0 + w1*x1 in written order, loss = (guess + bias - target)^2)."""
    w, x, bias = [0.0, 0.0], [1.0, 2.0], 0.0
    for _ in range(100):
        guess = 0.0
        for i in range(2):
            guess = guess + w[i] * x[i]
        r = guess + bias - 5.0
        d = 1.0 * (r + r)        # the seed times square's derivative, x + x
        dw = [0.0 + d * x[i] for i in range(2)]
        dbias = 0.0 + d
        w = [w[i] - 0.05 * dw[i] for i in range(2)]
        bias = bias - 0.05 * dbias
    guess = 0.0
    for i in range(2):
        guess = guess + w[i] * x[i]
    return w, bias, (guess + bias - 5.0) * (guess + bias - 5.0)


MODELS = {
    # x = [1e16, 1, -1e16]: the exact sum 1.0, the written-order fold 0.0.
    "parallel_sum": [("x", "f64", struct.pack("<3d", 1e16, 1.0, -1e16)),
                     ("exact", "f64", struct.pack("<d", 1.0)),
                     ("ordered", "f64", struct.pack("<d", 0.0))],
    # weights [0, 0.5, 1, 1.5] / 0.125 = [0, 4, 8, 12] in f8e4m3 (bias 7): 0x00, 0x48,
    # 0x50, 0x54; the dot 3.5 in f32; bf16 0.75 = 0x3f40.
    "storage_floats": [("packed", "f8e4m3", bytes([0x00, 0x48, 0x50, 0x54])),
                       ("dot", "f32", struct.pack("<f", 3.5)),
                       ("mean", "bf16", struct.pack("<H", 0x3F40))],
}


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.cairn")), ids=lambda p: p.stem)
def test_every_example_observes(path, tmp_path):
    exe = tmp_path / path.stem
    build(path, exe)
    log = tmp_path / "obs.jsonl"
    assert run_exe(exe, env={"CAIRN_OBSERVE": str(log)}).returncode == 0
    got = read_log(log)
    assert got, f"{path.name} observes nothing"
    if path.stem in MODELS:
        assert [(o["name"], o["type"], o["sha256"]) for o in got] == \
            [(n, t, sha(b)) for n, t, b in MODELS[path.stem]]


def test_train_observes_the_model_loop(tmp_path):
    exe = tmp_path / "train"
    build(EXAMPLES / "train.cairn", exe)
    log = tmp_path / "obs.jsonl"
    run_exe(exe, env={"CAIRN_OBSERVE": str(log)})
    w, bias, loss = model_train()
    got = {o["name"]: o["sha256"] for o in read_log(log)}
    assert got["w"] == sha(struct.pack("<2d", *w)) and got["bias"] == sha(struct.pack("<d", bias))
    assert got["loss"] == sha(struct.pack("<d", loss)) and loss <= 1e-9
