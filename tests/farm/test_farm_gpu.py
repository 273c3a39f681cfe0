"""GPU capabilities without a GPU: a stand-in nvidia-smi (tests/farm/fake_gpu) on PATH.
The probe must read the GPU, driver and CUDA version; device cells must go only to the
agent that has a GPU, built with --target from its compute capability."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import AGENT, FAKE_CAIRN, HERE, Farm  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

GPU_PATH = {"PATH": f"{HERE / 'fake_gpu'}:{os.environ['PATH']}"}
NO_GPU_PATH = {"PATH": "/usr/bin:/bin"}   # no nvidia-smi there (this machine has none)


def test_probe_reads_gpus_driver_and_cuda(tmp_path):
    env = dict(os.environ, **GPU_PATH)
    r = subprocess.run([AGENT, "probe", "--cairn", FAKE_CAIRN, "--sanitizers", "none",
                        "--labels", "gpu", "--work", tmp_path], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    caps = json.loads(r.stdout)
    assert caps["gpus"] == [{"name": "NVIDIA H200", "memory_mib": 143771, "compute_cap": "9.0",
                             "target": "sm_90", "driver": "550.54.15"}]
    assert caps["driver"] == "550.54.15" and caps["cuda"] == "12.4"
    assert "gpu" in caps["labels"] and caps["cairn"] == "0.1.0"
    assert set(caps["compilers"]) <= {"gcc", "clang"} and caps["compilers"]


def test_device_cells_go_to_the_gpu_agent(tmp_path):
    with Farm(tmp_path, lease=15) as farm:
        farm.agent("cpu-only", env=NO_GPU_PATH, idle=AGENT_IDLE_S)
        farm.agent("gpu-host", env=GPU_PATH, idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"],
                                                "modes": ["emulated", "device"]})
        view = farm.wait_run(run, 60)
        by_mode = {j["cell"]["mode"]: j for j in view["jobs"]}
        assert by_mode["device"]["state"] == "done"
        assert by_mode["device"]["agent"] == "gpu-host"
        status, results = farm.request("GET", f"/api/v1/runs/{run}/results")
        device = [r for r in results if r["predicate"]["cell"]["mode"] == "device"][0]
        machine = device["predicate"]["machine"]
        assert machine["gpus"][0]["name"] == "NVIDIA H200" and machine["cuda"] == "12.4"
        receipt = json.loads(farm.filed_file(device["evidence"], "examples/one.cairn/receipt.json"))
        assert receipt["target"] == "sm_90" and receipt["emulate"] is False
        emulated = [r for r in results if r["predicate"]["cell"]["mode"] == "emulated"][0]
        receipt = json.loads(farm.filed_file(emulated["evidence"],
                                             "examples/one.cairn/receipt.json"))
        assert receipt["target"] == "host" and receipt["emulate"] is True
