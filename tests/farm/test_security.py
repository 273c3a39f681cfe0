"""Issue 15, the farm under attack: each test is a hostile agent's or an anonymous
client's move that once crashed, locked out or corrupted the coordinator. Bundles are
signed here with the openssl command line (farmlib), independently of the C code."""
import hashlib
import html
import json
import os
import re
import sqlite3
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, Farm, enrol, sign_envelope, statement, upload_body  # noqa: E402

RECEIPT = json.dumps({"cairn": "0.1.0", "numerics": {"main": [
    {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even", "sum": "exact"}]}}).encode()


def claim(farm, token):
    status, job = farm.request("POST", "/api/v1/claim", {"wait_s": 2}, token=token)
    assert status == 200, job
    return job


def signed_upload(farm, job, key, token, tmp, files=None, mutate=None, machine="x"):
    """Uploads a bundle for JOB; MUTATE(statement) may change the statement before signing."""
    files = files if files is not None else {f"{job['cases'][0]}/receipt.json": RECEIPT}
    st = statement(job, machine, files)
    if mutate:
        mutate(st)
    env = sign_envelope(key, json.dumps(st).encode(), tmp)
    return farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", upload_body(env, files),
                        token=token)


def model_cell_digest(observations):
    """compare.c's digest, written again from docs/farm.md: sha256 over one line per
    observation, "name type count sha256\\n", shown as its first 12 hex digits."""
    text = "".join(f"{o['name']} {o['type']} {o['count']:.0f} {o['sha256']}\n"
                   for o in observations)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# --- High 1: a filed bundle with a huge observation type must not crash compare ------

def test_compare_survives_a_filed_huge_observation_type(tmp_path):
    """A bundle filed (by an older coordinator, before uploads were bounded) with a 3 MB
    observation type: /runs/ID and `cairn-farm compare` must answer, with the digest the
    model gives, after a restart too. Before the fix compare.c hashed past its buffer."""
    with Farm(tmp_path, lease=60, max_body=8 << 20) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        status, answer = signed_upload(farm, job, key, token, tmp_path)
        assert status == 200, answer
        farm.stop_server()
        observations = [
            {"name": "y", "type": "t" * (3 << 20), "count": 1, "sha256": "ab" * 32},
            {"name": "z" * 300, "type": "f64[4]", "count": 4, "sha256": "cd" * 32}]
        db = sqlite3.connect(farm.state / "farm.db")
        pred = json.loads(db.execute("SELECT predicate FROM jobs WHERE id=?",
                                     (job["job"],)).fetchone()[0])
        pred["cases"][0]["observations"] = observations
        db.execute("UPDATE jobs SET predicate=? WHERE id=?", (json.dumps(pred), job["job"]))
        db.commit()
        db.close()
        farm.start()
        want = model_cell_digest(observations)
        status, page = farm.request("GET", f"/runs/{run}")
        assert status == 200
        cells = re.findall(r"<td><code>([^<]*)</code>", page.decode())
        assert [html.unescape(c) for c in cells] == [want], cells
        r = farm.cli("compare", run)
        assert want in r.stdout, (r.stdout, r.stderr)
        assert farm.server.poll() is None
