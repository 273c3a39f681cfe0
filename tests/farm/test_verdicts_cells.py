"""Device cells per target across machines: a matrix naming targets gives one device and
one emulated cell per target; a device cell goes only to an agent whose GPU has that
compute capability (the stand-in nvidia-smi names an H200: sm_90), an emulated cell for a
target builds with --target sm_XX --emulate, and compare judges the cells together."""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, Farm, wait_for  # noqa: E402
from farmlib import AGENT_IDLE_S  # noqa: E402

GPU_PATH = {"PATH": f"{HERE / 'fake_gpu'}:{os.environ['PATH']}"}
NO_GPU_PATH = {"PATH": "/usr/bin:/bin"}


def test_device_cells_go_to_the_gpu_of_their_target(tmp_path):
    with Farm(tmp_path, lease=15) as farm:
        farm.agent("cpu-only", env=NO_GPU_PATH, idle=AGENT_IDLE_S)
        farm.agent("h200", env=GPU_PATH, idle=AGENT_IDLE_S)
        run = farm.submit(HERE / "cases", {"compilers": ["gcc"], "modes": ["emulated", "device"],
                                           "targets": ["sm_90", "sm_120"]})

        def three_done():
            jobs = farm.run_view(run)["jobs"]
            return sum(j["state"] == "done" for j in jobs) == 3 and jobs
        jobs = {j["cell_id"]: j for j in wait_for(three_done, 90, "three cells")}
        assert set(jobs) == {"gcc-none-emulated-sm_90", "gcc-none-emulated-sm_120",
                             "gcc-none-device-sm_90", "gcc-none-device-sm_120"}
        assert jobs["gcc-none-device-sm_90"]["agent"] == "h200"
        assert jobs["gcc-none-device-sm_120"]["state"] == "queued"   # no sm_120 GPU here
        farm.cli("cancel", run)
        status, results = farm.request("GET", f"/api/v1/runs/{run}/results")
        by_cell = {r["cell_id"]: r for r in results}
        for cell, target, emulate in (("gcc-none-device-sm_90", "sm_90", False),
                                      ("gcc-none-emulated-sm_120", "sm_120", True)):
            receipt = json.loads(farm.filed_file(by_cell[cell]["evidence"],
                                                 "examples/fixed.cairn/receipt.json"))
            assert (receipt["target"], receipt["emulate"]) == (target, emulate), cell
            assert by_cell[cell]["predicate"]["cell"]["target"] == target
        # The predicate carries the in-toto test-result fields (docs/farm.md).
        pred = by_cell["gcc-none-device-sm_90"]["predicate"]
        assert pred["result"] == "PASSED" and pred["failedTests"] == [] == pred["warnedTests"]
        assert sorted(pred["passedTests"]) == ["examples/fixed.cairn", "examples/plain.cairn",
                                               "examples/unordered.cairn"]
        folder = by_cell["gcc-none-device-sm_90"]["evidence"]
        assert {d["name"]: d["digest"]["sha256"] for d in pred["configuration"]} == \
            {n: hashlib.sha256(farm.filed_file(folder, n)).hexdigest()
             for n in (f"examples/{c}.cairn/receipt.json" for c in ("fixed", "plain", "unordered"))}
        r = farm.cli("compare", run, "--json")
        verdicts = {c["case"]: c["verdict"] for c in json.loads(r.stdout)["cases"]}
        assert verdicts == {"examples/fixed.cairn": "identical",
                            "examples/plain.cairn": "identical",
                            "examples/unordered.cairn": "identical"}   # one compiler: same bits
        assert r.returncode == 0


def test_a_target_must_be_sm_and_digits(tmp_path):
    with Farm(tmp_path) as farm:
        mpath = tmp_path / "m.json"
        mpath.write_text(json.dumps({"modes": ["device"], "targets": ["sm_9x"]}))
        r = farm.cli("submit", "--matrix", mpath, HERE / "cases")
        assert r.returncode != 0 and "sm_ and two or three digits" in r.stderr


def test_agents_measure_bounds_with_the_checker(tmp_path):
    """cairn-agent --checker tests/gpu/gpucheck.py: the device and emulated cells of an
    unordered sum differ, each measured within its bound (by hand: the emulated fold errs by
    2^-52 of a bound gamma_2 * (1 + 2^-52), u = 2^-53; the device is exact); a device that
    changes a term no contract names differs where the bits are fixed."""
    from fractions import Fraction
    cases = HERE / "cases_device"
    env = dict(GPU_PATH, GPU_CONTRACTS=str(cases / "contracts.json"))
    checker = HERE.parent / "gpu" / "gpucheck.py"
    with Farm(tmp_path, lease=15) as farm:
        farm.agent("h200", "--checker", checker, env=env, idle=AGENT_IDLE_S)
        run = farm.submit(cases, {"compilers": ["gcc"], "modes": ["emulated", "device"],
                                  "targets": ["sm_90"]})
        farm.wait_run(run, 60)
        r = farm.cli("compare", run, "--json")
        rows = {c["case"]: c for c in json.loads(r.stdout)["cases"]}
        assert r.returncode == 1
        assert rows["examples/sum.cairn"]["verdict"] == "within-bound"
        u = Fraction(1, 2 ** 53)
        expect = 2 * u / (2 * u / (1 - 2 * u) * (1 + 2 * u))
        assert abs(Fraction(rows["examples/sum.cairn"]["error_over_bound"]) - expect) < \
            Fraction(1, 10 ** 12)
        assert rows["examples/terms.cairn"]["verdict"] == "differs-where-fixed"
