"""Issue 39: the store under load and under faults. SQLite's WAL is checkpointed:
before, its checkpointing connection had never read the database, so every checkpoint
copied nothing, and the WAL grew without end (20.7 MB after 300 jobs, with farm.db at
4 KiB) and outlived the coordinator. A store that fails is not an absence: a heartbeat
or an upload the store could not answer gets 503 store_unavailable, which the agent
retries, never 404 "no job" or 409 "not leased", which it takes as final."""
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import (AGENT, ENROL, HERE, RECEIPT, Farm, claim, enrol,  # noqa: E402
                     signed_upload)

PAGE = 4096        # SQLite's default page size, which farm.db keeps
WAL_PAGES = 1000   # the wal_pages default (farm/serve/config.c, BOUNDS)


@pytest.mark.sqlite_only("measures farm.db's WAL")
def test_the_wal_stays_near_its_limit_while_2000_jobs_are_filed(tmp_path):
    """2,000 jobs claimed and filed by 16 simulated agents (cairn-agent loadgen): the WAL,
    sampled all along, never holds more than twice wal_pages of frames (a checkpoint
    runs every 200 ms, and the WAL starts over after each; before, it reached tens of
    megabytes), and after a SIGTERM there is none left."""
    with Farm(tmp_path, lease=60) as farm:
        wal = farm.state / "farm.db-wal"
        most, done = [0], threading.Event()

        def sample():
            while not done.wait(0.05):
                try:
                    most[0] = max(most[0], wal.stat().st_size)
                except FileNotFoundError:
                    pass
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            farm.submit(HERE / "cases_slow", {"compilers": ["gcc"], "repeat": 2000})
            r = subprocess.run([AGENT, "loadgen", "--coordinator", farm.url, "--token", ENROL,
                                "--agents", "16", "--jobs", "2000"],
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
        finally:
            done.set()
            sampler.join()
        print(f"\nwal: at most {most[0]} bytes while 2000 jobs were filed")
        assert len(farm.filed()) == 2000
        assert 0 < most[0] <= 2 * WAL_PAGES * (PAGE + 24) + 32, most[0]
        farm.stop_server()
        assert not wal.exists() or wal.stat().st_size == 0


def break_the_store(farm, broken):
    """Makes every statement on the jobs table fail (BROKEN) or work again: the table
    renamed away and back, in SQLite's file or the PostgreSQL database."""
    old, new = ("jobs", "jobs_away") if broken else ("jobs_away", "jobs")
    sql = f"ALTER TABLE {old} RENAME TO {new}"
    if "store" in farm.store:
        subprocess.run(["psql", "-qAtX", "-v", "ON_ERROR_STOP=1", farm.store["store"], "-c", sql],
                       check=True, capture_output=True, timeout=60)
    else:
        db = sqlite3.connect(farm.state / "farm.db", timeout=30)
        db.execute(sql)
        db.commit()
        db.close()


def test_a_store_that_fails_is_answered_503_not_an_absence(tmp_path):
    """A leased job while the store fails: its heartbeat and its upload get 503
    store_unavailable (before: 409 lease_lost and 404 not_found, which the agent takes as
    final, dropping good bundles and stopping jobs it still held); once the store is back,
    the same heartbeat and upload succeed."""
    with Farm(tmp_path, lease=60) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        beat = f"/api/v1/jobs/{job['job']}/heartbeat"
        assert farm.request("POST", beat, {}, token=token)[0] == 200
        break_the_store(farm, True)
        try:
            status, answer = farm.request("POST", beat, {}, token=token)
            assert (status, answer["code"]) == (503, "store_unavailable"), answer
            files = {f"{job['cases'][0]}/receipt.json": RECEIPT}
            status, answer = signed_upload(farm, job, key, token, tmp_path, files=files)
            assert (status, answer["code"]) == (503, "store_unavailable"), answer
        finally:
            break_the_store(farm, False)
        assert farm.request("POST", beat, {}, token=token)[0] == 200
        status, answer = signed_upload(farm, job, key, token, tmp_path, files=files)
        assert status == 200, answer
