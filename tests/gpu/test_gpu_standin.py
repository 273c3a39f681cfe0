"""make gpu (scripts/gpu.sh) without a GPU: a stand-in nvidia-smi (tests/farm/fake_gpu)
names an H200, and a stand-in device runner moves results within the bound, beyond it
and where the bits are fixed. Each verdict must fire, the bundle must verify with the
plain openssl command line, and without any GPU make gpu must say so and exit 0.

The programs are the farm's stand-in cairn programs (tests/farm/fake_cairn.py): sum
observes its terms x = [1, 2^-53, 2^-53] and the total its emulation folds in order,
1 + 2^-53 + 2^-53 -> 1.0 (each add ties to even). By hand: the exact sum is 1 + 2^-52,
the bound of an unordered sum of 3 terms is gamma_2 * sum|x| = 2u/(1-2u) * (1 + 2^-52)
with u = 2^-53, so
    emulated 1.0:            error 2^-52,         ratio (1-2^-52)/(1+2^-52) < 1
    device 1 ulp up:         1 + 2^-52, exact,    ratio 0
    device 1 ulp down:       1 - 2^-53, error 3 * 2^-53, ratio 1.5 (1-2^-52)/(1+2^-52) > 1
"""
import json
import os
import pathlib
import struct
import subprocess
import sys
from fractions import Fraction

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cairntest import BIN, ROOT  # noqa: E402

FAKE = ROOT / "tests" / "farm"
U = Fraction(1, 2 ** 53)
GAMMA2_MAG = 2 * U / (1 - 2 * U) * (1 + 2 * U)

PROGRAMS = {
    "examples/sum.cairn": "//! unordered\n//! observe x 1,%r,%r\n//! observe total 1.0\n"
                          % (2.0 ** -53, 2.0 ** -53),
    "examples/fixed.cairn": "//! observe y 0.1,0.2\n",
    "examples/quiet.cairn": "// observes nothing\n",
}


def make_gpu(tmp, perturb="", gpu=True, standin=True):
    src = tmp / "src"
    for name, text in PROGRAMS.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text)
    (src / "contracts.json").write_text(json.dumps(
        {"examples/sum.cairn": {"total": {"kind": "sum", "terms": "x", "type": "f64"}}}))
    path = f"{FAKE / 'fake_gpu'}:/usr/bin:/bin" if gpu else "/usr/bin:/bin"
    env = dict(os.environ, PATH=path, BIN=str(BIN), CAIRN=str(FAKE / "fake_cairn.py"),
               GPU_SRC=str(src), GPU_CONTRACTS=str(src / "contracts.json"),
               GPU_PROGRAMS=" ".join(PROGRAMS), GPU_OUT=str(tmp / "out"),
               GPU_KEY=str(tmp / "key" / "gpu.key"), GPU_MACHINE="standin-h200",
               FAKE_GPU_PERTURB=perturb)
    if standin:
        env["CAIRN_GPU_STANDIN"] = str(FAKE / "fake_gpu" / "device-runner")
    r = subprocess.run(["bash", ROOT / "scripts" / "gpu.sh"], capture_output=True, text=True,
                       env=env, timeout=300)
    out = tmp / "out"
    verdicts = json.loads((out / "verdicts.json").read_text())
    return r, {c["case"]: c for c in verdicts["cases"]}, out


def ratio_of(row):
    return Fraction(row["error_over_bound"])


def test_a_device_within_the_bound(tmp_path):
    r, rows, out = make_gpu(tmp_path, "total:1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "GPU: NVIDIA H200, compute capability 90 (target sm_90)" in r.stdout
    assert rows["examples/sum.cairn"]["verdict"] == "within-bound"
    assert rows["examples/fixed.cairn"]["verdict"] == "identical"
    assert rows["examples/quiet.cairn"]["verdict"] == "no-evidence"
    # The worst cell is the emulation's in-order fold: error 2^-52 of the bound.
    expect = 2 * U / GAMMA2_MAG
    assert abs(ratio_of(rows["examples/sum.cairn"]) - expect) < Fraction(1, 10 ** 12)
    halves = json.loads((out / "results.json").read_text())
    device = [h for h in halves if h["cell_id"] == "device"][0]
    sums = [c for c in device["predicate"]["cases"] if c["case"] == "examples/sum.cairn"][0]
    assert sums["bounds"][0]["ratio"] == 0.0      # one ulp up is the exact sum
    receipt = json.loads((out / "device/examples/sum.cairn/prog.receipt.json").read_text())
    assert receipt["target"] == "sm_90"


def test_a_device_beyond_the_bound_violates_the_contract(tmp_path):
    r, rows, _ = make_gpu(tmp_path, "total:-1")
    assert r.returncode == 1
    row = rows["examples/sum.cairn"]
    assert row["verdict"] == "violates-contract" and "reduction" in row["promise"]
    expect = 3 * U / GAMMA2_MAG
    assert abs(ratio_of(row) - expect) < Fraction(1, 10 ** 12) and ratio_of(row) > 1
    assert "violates-contract" in r.stdout and "compare: FAILED" in r.stdout


def test_a_device_that_changes_fixed_bits_differs_where_fixed(tmp_path):
    r, rows, _ = make_gpu(tmp_path, "y:1")
    assert r.returncode == 1
    assert rows["examples/fixed.cairn"]["verdict"] == "differs-where-fixed"
    assert rows["examples/sum.cairn"]["verdict"] == "identical"


def test_the_bundle_verifies_with_openssl_and_names_each_verdict(tmp_path):
    r, rows, out = make_gpu(tmp_path, "total:1")
    bundle, pub = out / "bundle" / "bundle.dsse.json", out / "bundle" / "agent.pub.pem"
    ok = subprocess.run(["bash", ROOT / "farm" / "verify_openssl.sh", bundle, pub],
                        capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert ok.returncode == 0 and "Signature Verified Successfully" in ok.stdout, ok.stderr
    # The payload, decoded by openssl, carries the test-result fields and the verdicts.
    payload = subprocess.run(["openssl", "base64", "-d", "-A"],
                             input=json.loads(bundle.read_text())["payload"],
                             capture_output=True, text=True, check=True).stdout
    pred = json.loads(payload)["predicate"]
    assert pred["result"] == "WARNED"      # quiet.cairn observes nothing
    assert pred["passedTests"] == ["examples/fixed.cairn", "examples/sum.cairn"]
    assert pred["warnedTests"] == ["examples/quiet.cairn"] and pred["failedTests"] == []
    assert {c["case"]: c["verdict"] for c in pred["cases"]}["examples/sum.cairn"] == "within-bound"
    assert all(d["digest"]["sha256"] for d in pred["configuration"])
    subjects = {s["name"] for s in json.loads(payload)["subject"]}
    assert "device/examples/sum.cairn/receipt.json" in subjects
    assert "device/examples/sum.cairn/obs/total.1.bin" in subjects
    # A changed raw file no longer matches its subject.
    raw = out / "bundle" / "device/examples/sum.cairn/obs/total.1.bin"
    raw.write_bytes(b"\0" * 8)
    bad = subprocess.run([BIN / "cairn-farm", "verify", bundle, "--key", pub],
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 1 and "sha256" in bad.stderr


def test_without_a_gpu_it_says_so_and_runs_the_emulated_half(tmp_path):
    r, rows, out = make_gpu(tmp_path, gpu=False, standin=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no GPU here" in r.stdout and "only the emulated half ran" in r.stdout
    halves = [h["cell_id"] for h in json.loads((out / "results.json").read_text())]
    assert halves == ["emulated"]
    assert rows["examples/sum.cairn"]["verdict"] == "identical"
    assert not (ROOT / "evidence" / "0.1.0" / "gpu" / "standin-h200").exists()


# --- the real cairn on the suite's device program ---------------------------------------
DEVICE_SUM = "tests/gpu/programs/device_sum.cairn"


def model_terms():
    """device_sum.cairn's terms, computed in Python floats (each operation rounded once,
    as the program's f64 arithmetic is)."""
    return [(float(i % 97) - 48.0) * 0.001 + 1.0 / float(i + 1) for i in range(4096)]


def make_gpu_real(tmp, perturb):
    env = dict(os.environ, PATH=f"{FAKE / 'fake_gpu'}:/usr/bin:/bin", BIN=str(BIN),
               CAIRN=str(BIN / "cairn"), GPU_PROGRAMS=DEVICE_SUM, GPU_OUT=str(tmp / "out"),
               GPU_KEY=str(tmp / "key" / "gpu.key"), GPU_MACHINE="standin-h200",
               CAIRN_GPU_STANDIN=str(FAKE / "fake_gpu" / "device-runner"),
               FAKE_GPU_PERTURB=perturb)
    r = subprocess.run(["bash", ROOT / "scripts" / "gpu.sh"], capture_output=True, text=True,
                       env=env, timeout=600)
    out = tmp / "out"
    row = json.loads((out / "verdicts.json").read_text())["cases"][0]
    return r, row, out


def device_total(out):
    (v,) = struct.unpack("<d", (out / "device" / DEVICE_SUM / "raw" / "total.1.bin").read_bytes())
    return v


@pytest.mark.parametrize("perturb,verdict", [("", "identical"), ("total:1", "differs-where-fixed"),
                                             ("half:1", "differs-where-fixed")])
def test_the_device_program_through_the_stand_in(tmp_path, perturb, verdict):
    """device_sum.cairn's float total is the exact device sum: its bits are fixed (one ulp
    off differs where fixed) and it is held to the exact sum of the observed terms rounded
    once (its contract, measured in every cell)."""
    r, row, out = make_gpu_real(tmp_path, perturb)
    assert row["verdict"] == verdict, r.stdout + r.stderr
    assert r.returncode == (0 if verdict == "identical" else 1)
    if perturb == "half:1":
        return
    # The checker's verdict against one computed here: the exact sum of the model's terms
    # (Python fractions), rounded once to f64 (Fraction to float rounds correctly).
    terms = model_terms()
    raw = (out / "device" / DEVICE_SUM / "raw" / "x.0.bin").read_bytes()
    assert raw == struct.pack("<4096d", *terms)
    exact = float(sum((Fraction(t) for t in terms), Fraction(0)))
    device = [h for h in json.loads((out / "results.json").read_text())
              if h["cell_id"] == "device"][0]["predicate"]["cases"][0]["bounds"][0]
    assert device["ok"] == (device_total(out) == exact) == (verdict == "identical")


def test_the_device_suites_atomics_and_reductions(tmp_path):
    """tests/device/programs and the tensor-core multiply through make gpu with the
    stand-in: one ulp on each atomic_add_unordered bin and on every output of
    mma_unordered stays within their contracts (tests/gpu/contracts.json); one ulp on the
    device float sum differs where the bits are fixed (the exact sum), and one on the
    host's reference sum, which no contract names, differs where the bits are fixed. The
    emulated half meets every contract on its own."""
    progs = ("tests/device/programs/atomics.cairn tests/device/programs/reduce_device.cairn "
             "tests/gpu/programs/mma.cairn")
    env = dict(os.environ, PATH=f"{FAKE / 'fake_gpu'}:/usr/bin:/bin", BIN=str(BIN),
               CAIRN=str(BIN / "cairn"), GPU_PROGRAMS=progs, GPU_OUT=str(tmp_path / "out"),
               GPU_KEY=str(tmp_path / "key" / "gpu.key"),
               CAIRN_GPU_STANDIN=str(FAKE / "fake_gpu" / "device-runner"),
               FAKE_GPU_PERTURB="sum_f32:1,sum_f64:-1,dev_fsum:1,ref_fsum:1,c:-1")
    r = subprocess.run(["bash", ROOT / "scripts" / "gpu.sh"], capture_output=True, text=True,
                       env=env, timeout=600)
    out = tmp_path / "out"
    rows = {c["case"]: c for c in json.loads((out / "verdicts.json").read_text())["cases"]}
    assert rows["tests/device/programs/atomics.cairn"]["verdict"] == "within-bound", r.stdout
    assert rows["tests/gpu/programs/mma.cairn"]["verdict"] == "within-bound"
    reduce_row = rows["tests/device/programs/reduce_device.cairn"]
    assert reduce_row["verdict"] == "differs-where-fixed"  # the worst of its observations'
    verdicts = {o["observation"]: o["verdict"] for o in reduce_row["observations"]}
    assert verdicts["dev_fsum"] == "differs-where-fixed"  # fixed bits, and its contract broken
    assert verdicts["ref_fsum"] == "differs-where-fixed"
    assert r.returncode == 1
    emulated = [h for h in json.loads((out / "results.json").read_text())
                if h["cell_id"] == "emulated"][0]["predicate"]["cases"]
    measured = [b for c in emulated for b in c["bounds"]]
    assert {b["observation"] for b in measured} == {"sum_f32", "sum_f64", "sub_device",
                                                   "dev_fsum", "dev_dsum", "c"}
    assert all(b["ok"] and b["ratio"] <= 1 for b in measured), measured
