"""Issue 39, item 12: damage in the database is detected, not served. A stored predicate
with a changed byte is checked against its signed bundle when it is read (/results gives
the signed one, and the log names the job); a collection is refused while a filed
manifest is not its signed bundle's (a changed digest there named another blob, and the
collector deleted the real one). Before: /results served the changed predicate, and gc
deleted the blob an acknowledged bundle names."""
import hashlib
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import Farm, one_filed_bundle  # noqa: E402

LOG = b"the only copy of this log\n"
FILES = {"examples/slow.cairn/run.log": LOG}


def sql(farm, statement, args=()):
    """Runs STATEMENT on FARM's store ($1 for ARGS[0]); the rows, for a SELECT."""
    uri = farm.store.get("store")
    if not uri:
        db = sqlite3.connect(farm.state / "farm.db", timeout=30)
        try:
            rows = db.execute(statement.replace("$1", "?"), args).fetchall()
            db.commit()
            return rows
        finally:
            db.close()
    text = statement.replace("$1", "'" + args[0].replace("'", "''") + "'") if args else statement
    out = subprocess.run(["psql", "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", uri, "-c", text],
                         check=True, capture_output=True, text=True, timeout=60).stdout
    return [(line,) for line in out.splitlines() if line]


def test_a_changed_stored_predicate_is_not_served(tmp_path):
    with Farm(tmp_path) as farm:
        run, job, _ = one_filed_bundle(farm, tmp_path, files=FILES)
        status, results = farm.request("GET", f"/api/v1/runs/{run}/results")
        assert status == 200, results
        signed = results[0]["predicate"]
        [(text,)] = sql(farm, f"SELECT predicate FROM jobs WHERE id={job['job']}")
        changed = json.loads(text)
        changed["cases"][0]["case"] += "x"   # one byte more
        sql(farm, f"UPDATE jobs SET predicate=$1 WHERE id={job['job']}", (json.dumps(changed),))
        status, results = farm.request("GET", f"/api/v1/runs/{run}/results")
        assert status == 200, results
        assert results[0]["predicate"] == signed
        assert "manifest" not in results[0]
        log = (tmp_path / "farm.log").read_text()
        assert f"job {job['job']}: the stored predicate differs from its signed bundle" in log, log


def test_a_collection_is_refused_while_a_manifest_is_not_its_bundles(tmp_path):
    with Farm(tmp_path) as farm:
        _, job, _ = one_filed_bundle(farm, tmp_path, files=FILES)
        real = hashlib.sha256(LOG).hexdigest()
        blob = farm.state / "blobs" / real[:2] / real[2:4] / real
        assert blob.exists()
        [(text,)] = sql(farm, f"SELECT manifest FROM jobs WHERE id={job['job']}")
        manifest = json.loads(text)
        name = "examples/slow.cairn/run.log"
        assert manifest["files"][name] == real
        manifest["files"][name] = hashlib.sha256(b"another blob").hexdigest()
        sql(farm, f"UPDATE jobs SET manifest=$1 WHERE id={job['job']}", (json.dumps(manifest),))
        status, answer = farm.request("POST", "/api/v1/gc")
        assert status >= 500, answer
        assert "do not match their signed bundles" in answer["error"], answer
        assert blob.read_bytes() == LOG
        # put right, the collection runs and keeps it
        manifest["files"][name] = real
        sql(farm, f"UPDATE jobs SET manifest=$1 WHERE id={job['job']}", (json.dumps(manifest),))
        status, answer = farm.request("POST", "/api/v1/gc")
        assert status == 200, answer
        assert blob.read_bytes() == LOG
