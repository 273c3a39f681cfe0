"""The host thread pool (runtime/cairn_pool.c) through tests/c/pool_harness.c.

Every index visited exactly once, worker ids in range and never shared by two concurrent
block calls (checked inside the harness with one in-use flag per id), nested regions run
serially on the asking worker, concurrent regions from several application threads,
n == 0, CAIRN_THREADS handling, no spinning while idle, and a clean exit from inside a
block.
"""
import os

import pytest

from cairntest import SAN, harness, run

REPS = 20 if SAN != "none" else 200      # sanitizers are 5-20x slower


def pool(*args, threads=None, timeout=120):
    env = {"CAIRN_THREADS": str(threads)} if threads is not None else {}
    if threads is None:
        env["CAIRN_THREADS"] = ""        # empty: the default width
    return run([harness("pool_harness"), *args], env=env, timeout=timeout)


def ok(res):
    assert res.returncode == 0 and res.stdout.startswith("ok"), res.stdout + res.stderr
    return dict(kv.split("=") for kv in res.stdout.split()[1:])


@pytest.mark.parametrize("threads", [1, 2, 3, 4, 7, 8, 16, 64])
def test_width_follows_cairn_threads(threads):
    res = pool("width", threads=threads)
    assert res.returncode == 0 and res.stdout.strip() == str(threads)


def test_default_width_is_the_cpus_we_may_use():
    res = pool("width")
    assert res.stdout.strip() == str(min(len(os.sched_getaffinity(0)), 64))


@pytest.mark.parametrize("bad", ["0", "65", "-1", "abc", "3x", "1e3", "99999999999999999999"])
def test_bad_cairn_threads_is_a_clear_error(bad):
    res = pool("width", threads=bad)
    assert res.returncode == 126   # CAIRN_EXIT_CANNOT_RUN: never taken for main's status
    assert f"error[E-THREADS]: CAIRN_THREADS='{bad}'" in res.stderr
    assert "help:" in res.stderr and res.stdout == ""


@pytest.mark.parametrize("threads", range(1, 17))
def test_every_index_once_and_ids_unique(threads):
    for n, grain in [(0, 0), (1, 0), (5, 1), (1000, 1), (1000, 0), (10007, 3), (4096, 4096),
                     (4097, 4096), (100000, 0)]:
        info = ok(pool("visit", n, grain, REPS if n <= 10007 else 5, threads=threads))
        assert info["width"] == str(threads)
        assert int(info["workers_seen"]) <= threads
        if n == 0:
            assert info["workers_seen"] == "0"      # n == 0 calls nothing at all


def test_work_spreads_over_workers():
    info = ok(pool("visit", 200000, 16, 20, threads=4))
    assert int(info["workers_seen"]) >= 2


@pytest.mark.parametrize("threads", [1, 2, 5, 16])
def test_nested_regions_run_serially_on_the_asking_worker(threads):
    ok(pool("nested", 300, 3, threads=threads))


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_regions_from_several_application_threads(threads):
    ok(pool("concurrent", 4, 700, REPS // 2, threads=threads))


def test_idle_pool_does_not_spin():
    info = ok(pool("idle", 400, threads=8))
    # Eight threads spinning for 400 ms would burn about 2800 ms of CPU time.
    assert float(info["idle_cpu_ms"]) < 100, info


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_exit_from_inside_a_block_is_clean(threads):
    res = pool("exit-inside", threads=threads, timeout=30)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("threads", [1, 4])
def test_regions_in_a_child_after_fork(threads):
    ok(pool("fork", 5000, threads=threads, timeout=60))


def test_harness_refuses_bad_usage():
    res = run([harness("pool_harness"), "nonsense"])
    assert res.returncode == 2 and "usage:" in res.stderr
