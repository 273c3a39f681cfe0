#!/usr/bin/python3
"""Makes the state folders tests/farm/test_evidence_migrate.py migrates: what the
coordinator before issue 28 (commit 32f62cd, evidence in a folder per bundle) left after
real work, once with each store. Run it with that coordinator's binaries:

    git worktree add /tmp/base 32f62cd && make -C /tmp/base -j2 bin/cairn-farm bin/cairn-agent
    CAIRN_BIN=/tmp/base/bin /usr/bin/python3 tests/farm/legacy/make_legacy.py

It writes, next to itself, sqlite-state.tar.gz (the state folder with farm.db),
pg-state.tar.gz (the state folder of a PostgreSQL store) and pg.sql (that store's
pg_dump). In each: run 1 (tests/farm/cases, gcc and clang: two bundles of three cases, filed by an agent
with the fake cairn, raw observations included), run 2 (one job of cases_slow whose
bundle was acknowledged and the coordinator killed (-9) at once, so that its folder is
still in the journal, `unsettled`, not yet settled), source archives at
blobs/<2 hex>/<sha256>, and a folder no filed job points to
(evidence/0.1.0/9/ghost/gcc-none-emulated)."""
import glob
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
import farmlib  # noqa: E402
from farmlib import RECEIPT, Farm, claim, enrol, signed_upload  # noqa: E402


def make(kind):
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="cairn-legacy-"))
    pg = farmlib.ThrowawayPostgres() if kind == "pg" else None
    farmlib.POSTGRES = pg
    try:
        farm = Farm(tmp, lease=30).start()
        agent = farm.agent("old-box", idle=3)
        run1 = farm.submit(farmlib.HERE / "cases", {"compilers": ["gcc", "clang"]})
        farm.wait_run(run1, 120)
        agent.wait(30)
        farm.submit(farmlib.HERE / "cases_slow", {"compilers": ["gcc"]})
        key = farm.keygen("late")
        token, _ = enrol(farm, "late", key)
        job = claim(farm, token)
        files = {"examples/slow.cairn/receipt.json": RECEIPT,
                 "examples/slow.cairn/run.log": b"filed just before the kill\n"}
        status, answer = signed_upload(farm, job, key, token, tmp, files=files, machine="late")
        assert status == 200, answer
        farm.kill9()                        # within the journal's second: not settled
        farm.close()
        ghost = farm.state / "evidence" / "0.1.0" / "9" / "ghost" / "gcc-none-emulated"
        ghost.mkdir(parents=True)
        (ghost / "bundle.dsse.json").write_text("{}")
        assert glob.glob(str(farm.state / "blobs" / "??" / ("?" * 64)))
        out = HERE / f"{kind}-state.tar.gz"
        with tarfile.open(out, "w:gz") as tar:
            tar.add(farm.state, arcname="state")
        if pg:
            uri = farm.store["store"]
            dump = subprocess.run([sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_dump"))[-1],
                                   "--no-owner", "--no-privileges", uri],
                                  check=True, capture_output=True, text=True).stdout
            (HERE / "pg.sql").write_text(dump)
            rows = subprocess.run(["psql", "-X", "-At", uri, "-c",
                                   "SELECT COUNT(*) FROM unsettled"],
                                  check=True, capture_output=True, text=True).stdout
        else:
            import sqlite3
            with sqlite3.connect(farm.state / "farm.db") as c:
                rows = c.execute("SELECT COUNT(*) FROM unsettled").fetchone()[0]
        print(f"{out}: journal rows left: {rows}")
    finally:
        if pg:
            pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    for kind in ("sqlite", "pg"):
        make(kind)
