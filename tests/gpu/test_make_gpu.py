"""make gpu (scripts/gpu.sh) on a bare host: it runs every device program (none dropped,
each with a driver where it has no main or no observation), needs no network and none of
the test packages (chromium, postgresql ...), and names in one line what it lacks: on
this machine, with nvcc and no GPU, it gets as far as the emulated half, the CUDA
checker's build and the signed bundle, and says that the GPU is what stops it."""
import json
import os
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cairntest import BIN, ROOT  # noqa: E402

GPU_SH = ROOT / "scripts" / "gpu.sh"
DRIVERS = ROOT / "tests" / "gpu" / "drivers"
FOLDERS = ("examples/*.cairn", "examples/*/*.cairn", "tests/gpu/programs/*.cairn",
           "tests/device/programs/*.cairn", "tests/tensor/programs/*.cairn")
# What a bare GPU host lacks: the test packages, the package manager, any network client.
ABSENT = re.compile(r"^(chromium.*|psql|postgres|pg_.*|initdb|apt|apt-get|aptitude|sudo|curl|wget"
                    r"|valgrind|clang-format|nvidia-smi|snap)$")


def listed():
    r = subprocess.run(["bash", GPU_SH, "--list"], capture_output=True, text=True, check=True,
                       timeout=60, env=dict(os.environ, GPU_PROGRAMS=""))
    return r.stdout.split()


def test_every_device_program_is_in_the_list():
    progs = listed()
    want = sorted(str(p.relative_to(ROOT)) for pat in FOLDERS for p in ROOT.glob(pat))
    assert sorted(progs) == want
    for name in ("examples/tensor/tile32.cairn", "examples/tensor/tile64.cairn",
                 "tests/device/programs/trap_lane.cairn", "tests/tensor/programs/wmma_tile.cairn",
                 "tests/tensor/programs/mma_sync_swizzled.cairn"):
        assert name in progs


def test_each_program_observes_through_its_own_main_or_a_driver():
    for prog in listed():
        text = (ROOT / prog).read_text()
        driver = DRIVERS / prog
        if driver.exists():
            assert "fn main" not in text, prog
            assert "fn main" in driver.read_text() and "observe(" in driver.read_text()
        else:
            assert "fn main" in text and "observe(" in text, prog
    for driver in DRIVERS.rglob("*.cairn"):          # no driver for a program that is gone
        assert (ROOT / driver.relative_to(DRIVERS)).exists(), driver


def bare_path(tmp):
    """A PATH holding this machine's commands except ABSENT, and an apt-get, sudo, curl and
    wget that record that they were called; then the CUDA toolkit's folder (nvcc finds
    its own files beside itself, so it is not linked)."""
    bare = tmp / "bare-bin"
    bare.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        for f in sorted(pathlib.Path(folder).glob("*")) if pathlib.Path(folder).is_dir() else []:
            if not ABSENT.match(f.name) and not (bare / f.name).exists():
                (bare / f.name).symlink_to(f)
    for name in ("apt-get", "sudo", "curl", "wget"):
        (bare / name).write_text(f"#!/bin/sh\necho {name} \"$@\" >>{tmp / 'called.log'}\nexit 1\n")
        (bare / name).chmod(0o755)
    return f"{bare}:/usr/local/cuda/bin"


def isolated():
    """unshare -rn (no network at all) where this machine allows it, else nothing."""
    ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=30)
    return ["unshare", "-rn"] if ok.returncode == 0 else []


def make_gpu(tmp, progs, **extra):
    env = dict(os.environ, PATH=bare_path(tmp), GPU_PROGRAMS=progs, GPU_OUT=str(tmp / "out"),
               GPU_KEY=str(tmp / "key" / "gpu.key"), GPU_MACHINE="bare-host",
               GPU_BUILD_TIMEOUT="3000", GPU_RUN_TIMEOUT="600", **extra)
    env.pop("CAIRN_GPU_STANDIN", None)
    return subprocess.run([*isolated(), "make", "--no-print-directory", "gpu", f"BIN={BIN}"],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=3600)


def test_make_gpu_on_a_bare_host_without_a_gpu(tmp_path):
    progs = "tests/gpu/programs/device_sum.cairn examples/tensor/tile32.cairn " \
            "tests/device/programs/trap_lane.cairn"
    r = make_gpu(tmp_path, progs)
    out = tmp_path / "out"
    assert r.returncode == 0, r.stdout + r.stderr
    missing = [line for line in r.stdout.splitlines() if line.startswith("make gpu: missing:")]
    assert missing == ["make gpu: missing: an NVIDIA driver and GPU (no nvidia-smi): "
                       "it stops before the device half"]
    assert not (tmp_path / "called.log").exists()       # no package manager, no download
    rows = {c["case"]: c["verdict"] for c in json.loads((out / "verdicts.json").read_text())["cases"]}
    assert set(rows) == set(progs.split()) and set(rows.values()) == {"identical"}, rows
    trap = json.loads((out / "results.json").read_text())[0]["predicate"]["cases"]
    trap = [c for c in trap if c["case"].endswith("trap_lane.cairn")][0]
    assert {"name": "traps_as_expected", "ok": True} in trap["checks"]
    machine = (out / "machine.txt").read_text()
    assert "toolkit: " in machine and "gpu: none" in machine
    steps = dict(line.split("\t")[:2] for line in (out / "steps.tsv").read_text().splitlines())
    assert all(steps[f"build emulated {p}"] == "ok" for p in progs.split())
    assert steps["run emulated tests/device/programs/trap_lane.cairn"] == "exit 134"
    summary = (out / "summary.txt").read_text()
    assert "missing: an NVIDIA driver and GPU" in summary and "verdicts: identical 3" in summary
    assert (out / "enclose_check_cuda").exists()         # the CUDA checker built for sm_90
    assert (out / "bundle" / "bundle.dsse.json").exists()
    assert "bundle: " in r.stdout


def test_make_gpu_names_a_missing_toolkit_in_one_line(tmp_path):
    r = subprocess.run(["bash", GPU_SH], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, PATH=bare_path(tmp_path), BIN=str(BIN),
                                GPU_NVCC=str(tmp_path / "no-nvcc"),
                                GPU_PROGRAMS="tests/gpu/programs/device_sum.cairn",
                                GPU_OUT=str(tmp_path / "out"), GPU_KEY=str(tmp_path / "k" / "k")))
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("make gpu: missing: nvcc (a CUDA toolkit: not on PATH or in /usr/local/cuda/bin); "
            "an NVIDIA driver and GPU (no nvidia-smi): it stops before the device half") in r.stdout


def fake_nvcc(tmp, release):
    nvcc = tmp / "nvcc"
    nvcc.write_text(f"#!/bin/sh\necho 'Cuda compilation tools, release {release}, V{release}.1'\n")
    nvcc.chmod(0o755)
    return str(nvcc)


def test_make_gpu_warns_when_the_driver_is_older_than_the_toolkit(tmp_path):
    """The stand-in nvidia-smi's driver 550.54.15 runs CUDA 12.4: a 13.0 toolkit needs a
    newer one, and so does 12.10 (compared as versions: as text 12.10 sorts before 12.4);
    a 12.2 or 12.4 toolkit does not."""
    fake = ROOT / "tests" / "farm" / "fake_gpu"
    said = {}
    for release in ("13.0", "12.10", "12.4", "12.2"):
        r = subprocess.run(["bash", GPU_SH], capture_output=True, text=True, timeout=600,
                           env=dict(os.environ, PATH=f"{fake}:/usr/bin:/bin", BIN=str(BIN),
                                    GPU_NVCC=fake_nvcc(tmp_path, release),
                                    CAIRN_GPU_STANDIN=str(fake / "device-runner"),
                                    GPU_PROGRAMS="tests/gpu/programs/device_sum.cairn",
                                    GPU_OUT=str(tmp_path / "out"), GPU_KEY=str(tmp_path / "k" / "k")))
        assert r.returncode == 0, r.stdout + r.stderr
        said[release] = [line for line in r.stdout.splitlines() if "warning" in line]
        assert f"toolkit: {release} " in (tmp_path / "out" / "machine.txt").read_text()
    assert said["13.0"] == ["make gpu: warning: the driver (550.54.15, CUDA 12.4) is older than "
                            "the toolkit (CUDA 13.0) needs: device programs may not launch "
                            "(cudaErrorInsufficientDriver)"]
    assert len(said["12.10"]) == 1 and "(CUDA 12.10) needs" in said["12.10"][0]
    assert said["12.4"] == [] and said["12.2"] == []


def test_make_gpu_without_a_compiler_stops_at_once(tmp_path):
    r = subprocess.run(["bash", GPU_SH], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, BIN=str(BIN), CC="no-such-cc",
                                GPU_OUT=str(tmp_path / "out")))
    assert r.returncode == 2
    assert r.stdout.strip() == "make gpu: missing: no-such-cc (nothing can run without them)"
