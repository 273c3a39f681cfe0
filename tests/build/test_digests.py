"""Observation digests of programs whose bits the language fixes are the same under gcc
and clang and at every pool width, and equal the Python models' digests written in the
golden programs. The quick form runs widths 1, 2, 3, 8 and 16; `make matrix` runs 1..16."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import GOLDEN_RUN, build, expectations, read_log, run_exe

PROGRAMS = ["observe_exact_sum", "observe_storage"]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    d = tmp_path_factory.mktemp("digests")
    out = {}
    for name in PROGRAMS:
        for cc in ["gcc", "clang"]:
            exe = d / f"{name}-{cc}"
            build(GOLDEN_RUN / f"{name}.cairn", exe, "--cc", cc, cell=False)
            out[name, cc] = exe
    return out


def observed(exe, threads, tmp_path):
    log = tmp_path / f"{exe.name}-{threads}.jsonl"
    result = run_exe(exe, env={"CAIRN_OBSERVE": str(log), "CAIRN_THREADS": str(threads)})
    assert result.returncode == 0, result.stderr
    return read_log(log)


@pytest.mark.parametrize("name", PROGRAMS)
@pytest.mark.parametrize("cc", ["gcc", "clang"])
@pytest.mark.parametrize("threads", [1, 2, 3, 8, 16])
def test_digests_fixed(builds, name, cc, threads, tmp_path):
    want = expectations(GOLDEN_RUN / f"{name}.cairn")["observe"]
    assert observed(builds[name, cc], threads, tmp_path) == want


@pytest.mark.matrix
@pytest.mark.parametrize("name", PROGRAMS)
def test_digests_every_width(builds, name, tmp_path):
    want = expectations(GOLDEN_RUN / f"{name}.cairn")["observe"]
    for cc in ["gcc", "clang"]:
        for threads in range(1, 17):
            assert observed(builds[name, cc], threads, tmp_path) == want, (cc, threads)
