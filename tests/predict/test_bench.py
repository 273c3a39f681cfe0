"""cairn bench: one call of a function measured on this machine (wall and CPU time), from
a harness built with R calls and with none. What is tested is the harness, not the speed
(speed is measured in make bench: tests/bench/bench_predict.sh): it builds for every kind
of parameter, the calls really run (a trap in them is reported), and the figures are
there and consistent."""
import json
import pathlib
import re

import pytest

from cairntest import BIN, run

CAIRN = BIN / "cairn"
HERE = pathlib.Path(__file__).resolve().parent


def bench(*args, env=None):
    return run([CAIRN, "bench", *args], env=env, timeout=600)


def test_measures_a_call():
    r = bench(HERE / "kernels.cairn", "--function", "saxpy", "--size", "n=4096,a=2.5", "--repeat", "50",
              "--runs", "2", "--json", env={"CAIRN_THREADS": "1"})
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    assert m["function"] == "saxpy" and m["repeat"] == 50 and m["runs"] == 2 and m["threads"] == "1"
    assert m["sizes"] == {"n": 4096, "a": 2.5}
    assert m["wall_s"] > 0 and m["baseline_wall_s"] > 0  # best of the runs, with and without
    # per call: the difference over R, or 0 when the calls drown in the runs' noise
    assert m["wall_s_per_call"] == pytest.approx(max(0, (m["wall_s"] - m["baseline_wall_s"]) / 50))
    assert m["cpu_s_per_call"] >= 0


@pytest.mark.parametrize("function,sizes", [("dot", "n=1000"), ("exact_dot", "n=1000"), ("scale_dev", "n=64,s=0.5"),
                                            ("matmul", "m=8,n=8,k=8"), ("pack", "n=100,scale=0.25")])
def test_every_kind_of_parameter(function, sizes):
    """f64 and f32 results, host, @device (emulated) and storage-float views, 2-D extents."""
    r = bench(HERE / "kernels.cairn", "--function", function, "--size", sizes, "--repeat", "3", "--runs", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{function}: ") and "a call" in r.stdout


def test_a_trap_in_the_calls_is_reported(tmp_path):
    src = tmp_path / "trap.cairn"
    src.write_text("fn half(n:i32) -> i32 = 100 / (n - n);\nfn main() -> i32 { return 0; }\n")
    r = bench(src, "--function", "half", "--size", "n=3", "--repeat", "2", "--runs", "1")
    assert r.returncode == 1 and re.search(r"^cairn bench: error: the harness exited \d+: "
                                           r"trap: division by zero: 100 / 0 at \S+:1:25$", r.stderr, re.M), r.stderr


def test_usage():
    r = bench(HERE / "kernels.cairn", "--function", "dot")
    assert r.returncode == 2 and "parameter 'n' of dot needs a value: --size n=V" in r.stderr
    assert bench(HERE / "kernels.cairn", "--function", "nope", "--size", "n=1").returncode == 2
    assert bench(HERE / "kernels.cairn", "--size", "n=1").returncode == 2
    assert bench(HERE / "kernels.cairn", "--function", "dot", "--size", "n=1", "--fill", "many").returncode == 2
    assert run([CAIRN, "bench", "--help"]).stdout.startswith("usage: cairn bench FILE")
