"""Issue 39: the store's upkeep under steady load. SQLite's WAL is checkpointed by the
reaper: before, its checkpointing connection had never read the database, so every
checkpoint copied nothing, and the WAL grew without end (20.7 MB after 300 jobs, with
farm.db at 4 KiB) and outlived the coordinator."""
import os
import subprocess
import sys
import threading

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import AGENT, ENROL, HERE, Farm  # noqa: E402

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
