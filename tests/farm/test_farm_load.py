"""A small load test through the real API (the full one is tests/bench/bench_farm.sh):
simulated agents (`cairn-agent loadgen`) enrol, claim and upload signed bundles for every
job of a run; every job must be filed exactly once with no errors, and the coordinator's
memory must stay flat from one batch of jobs to the next (no growth per job). Figures are
printed, never asserted: the machine is shared."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import AGENT, ENROL, HERE, Farm  # noqa: E402
from cairntest import SAN  # noqa: E402


def rss_kib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def batch(farm, jobs, agents):
    run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"], "repeat": jobs})
    r = subprocess.run([AGENT, "loadgen", "--coordinator", farm.url, "--token", ENROL,
                        "--agents", str(agents), "--jobs", str(jobs)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["jobs"] == jobs and report["errors"] == 0, report
    # The rate ends at the last filing, before the idle agents' last long polls (1 s each).
    assert 0 < report["seconds"] <= report["wall_seconds"], report
    # jobs_per_s is jobs over seconds (printed to the millisecond: within its rounding)
    assert abs(report["jobs_per_s"] * report["seconds"] - jobs) <= \
        0.0005 * report["jobs_per_s"] + 0.05 * report["seconds"] + 0.01, report
    view = farm.run_view(run)
    assert all(j["state"] == "done" and j["attempt"] == 1 for j in view["jobs"])
    return report


def test_load_small(tmp_path):
    with Farm(tmp_path, lease=30) as farm:
        first = batch(farm, 200, 10)
        rss_first = rss_kib(farm.server.pid)
        second = batch(farm, 200, 10)
        rss_second = rss_kib(farm.server.pid)
        print(f"\nload: {first}\nload: {second}\nload: RSS {rss_first} -> {rss_second} KiB")
        assert len(farm.filed()) == 400
        # 200 more jobs may not cost more than 4 MiB (a leak of 20 KiB per job would).
        # Under a sanitizer the shadow memory and quarantine grow on their own.
        if SAN == "none":
            assert rss_second - rss_first < 4096, (rss_first, rss_second)
