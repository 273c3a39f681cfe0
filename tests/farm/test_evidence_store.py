"""Issue 28: evidence stored by content. Every file is one blob named by its SHA-256
(blobs/aa/bb/SHA), written whole or not at all and stored once however many bundles name
it; a bundle is a manifest in the store. `cairn-farm export` writes the folder layout back
out for the offline verifiers, and `cairn-farm gc` collects what nothing names, safely
while agents upload (tests/farm/test_security_state.py holds it to a filing stalled at
another coordinator)."""
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import (FARM, HERE, RECEIPT, CollectorLock, Farm, Pauses, claim,  # noqa: E402
                     enrol, sign_envelope, statement, upload_body)
from farmlib import AGENT_IDLE_S  # noqa: E402

VERIFY_OPENSSL = HERE.parent.parent / "farm" / "verify_openssl.sh"


def digests_named(farm, folders):
    """{digest: how many files name it} over exported bundle FOLDERS (the envelope apart)."""
    named = {}
    for d in folders:
        for f in d.rglob("*"):
            if f.is_file() and f.name != "bundle.dsse.json":
                sha = hashlib.sha256(f.read_bytes()).hexdigest()
                named[sha] = named.get(sha, 0) + 1
    return named


def test_files_many_bundles_name_are_stored_once(tmp_path):
    """Two runs of three cases over gcc and clang, each cell three times: the run logs and
    raw observations every cell shares, and each agent's key, are one blob each; every
    blob holds exactly the bytes its name is the digest of, and nothing else is there."""
    with Farm(tmp_path, lease=30) as farm:
        # The agent after the submits: one that starts first may go idle (4 s) while a
        # submit is slow on a loaded machine, and leave the runs unfinished.
        runs = [farm.submit(HERE / "cases", {"compilers": ["gcc", "clang"], "repeat": 3})
                for _ in range(2)]
        farm.agent("box", idle=AGENT_IDLE_S)
        for run in runs:
            farm.wait_run(run, 120)
        folders = farm.exported(tmp_path / "export")
        assert len(folders) == 12
        named = digests_named(farm, folders)
        blobs = {b.name: b for b in farm.blobs()}
        sources = {b.name for b in farm.source_blobs()}
        assert set(blobs) - sources == set(named)       # each named file, once
        assert sum(named.values()) > 3 * len(named)     # and many bundles name the same
        log = hashlib.sha256(b"fake program done\n").hexdigest()
        assert named[log] == 12 * 3 and log in blobs
        for name, blob in blobs.items():
            assert hashlib.sha256(blob.read_bytes()).hexdigest() == name
            assert blob.stat().st_nlink == 1 and oct(blob.stat().st_mode & 0o777) == "0o644"
        assert list((farm.state / "tmp").iterdir()) == []
        assert not (farm.state / "evidence").exists() or \
            not any((farm.state / "evidence").iterdir())


def test_export_writes_the_folder_layout_that_openssl_verifies(tmp_path):
    """An exported run is the folder layout of docs/farm.md, "Verifying with openssl":
    cairn-farm verify, farm/verify_openssl.sh and sha256sum -c check each bundle; an
    export of a run the coordinator does not have fails."""
    with Farm(tmp_path, lease=30) as farm:
        run = farm.submit(HERE / "cases", {"compilers": ["gcc", "clang"]})
        farm.agent("box", idle=3)   # after the submit, as above
        farm.wait_run(run, 90)
        r = farm.cli("export", run, tmp_path / "out")
        assert r.returncode == 0 and "2 bundle(s)" in r.stdout and "each verified" in r.stdout, \
            r.stdout + r.stderr
        folders = sorted((tmp_path / "out" / "evidence").glob("*/*/*/*"))
        assert [str(f.relative_to(tmp_path / "out")) for f in folders] == farm.filed()
        for d in folders:
            bundle, pub = d / "bundle.dsse.json", d / "agent.pub.pem"
            ok = subprocess.run([FARM, "verify", bundle, "--key", pub], capture_output=True,
                                text=True, timeout=30)
            assert ok.returncode == 0 and "verified" in ok.stdout, ok.stderr
            r = subprocess.run(["bash", VERIFY_OPENSSL, bundle, pub], capture_output=True,
                               text=True, timeout=30, cwd=tmp_path)
            assert "Signature Verified Successfully" in r.stdout, r.stdout + r.stderr
            env = json.loads(bundle.read_text())
            payload = json.loads(subprocess.run(
                ["openssl", "base64", "-d", "-A"], input=env["payload"].encode(),
                capture_output=True, check=True, timeout=30).stdout)
            lines = "".join(f"{s['digest']['sha256']}  {s['name']}\n" for s in payload["subject"])
            r = subprocess.run(["sha256sum", "-c"], input=lines, capture_output=True, text=True,
                               cwd=d, timeout=30)
            assert r.returncode == 0 and "FAILED" not in r.stdout, r.stdout + r.stderr
        assert farm.cli("export", 99, tmp_path / "none").returncode == 1
        assert farm.cli("export", run).returncode == 2         # no folder given


def presigned(farm, key, token, tmp, jobs):
    """An upload body per claimed job, each with a run log of its own (a new blob)."""
    out = []
    for job in jobs:
        case = job["cases"][0]
        files = {f"{case}/receipt.json": RECEIPT,
                 f"{case}/run.log": f"job {job['job']} ran alone\n".encode()}
        env = sign_envelope(key, json.dumps(statement(job, "x", files)).encode(), tmp)
        out.append((job, files, upload_body(env, files)))
    return out


# The interleavings the collector must survive, one round of uploads each (pause points
# of the test build, farm/serve/pause.c): a collection has read the references and moved
# nothing yet (the uploads commit manifests it has not read: its second reading must put
# their blobs back); it has moved the unnamed blobs into trash/ (the uploads find theirs
# gone and write them again); the filings have stored or found their blobs and wait
# before their rows commit (a whole collection runs while only their pins name them).
ROUNDS = ["gc-read", "gc-trashed", "filing-stored", "gc-read", "gc-trashed"]
PER_ROUND = 8


def test_gc_while_agents_upload_keeps_every_acknowledged_file(tmp_path):
    """Forty uploads from eight threads, every one overlapping a collection at a point
    the test build's pauses hold (ROUNDS): the collection waits for the uploads, or the
    uploads for the collection, so the interleaving happens on any machine at any load.
    Before each upload the blob of its new log is planted in the store unnamed (what a
    filing that failed after writing leaves), so uploads find their files already there
    while the collector takes unnamed blobs: every acknowledged bundle keeps every file (an
    export checks each against its digest and verifies the bundle), the planted blobs of
    bundles never uploaded are gone, and a blob a stopped collection left in trash/ goes
    back at the next start when something names it."""
    pauses = Pauses(tmp_path / "pauses")
    farm = Farm(tmp_path, lease=600, pauses=pauses)
    # Threads in the work pool for a collection beside a round of filings held at a pause.
    farm.config.write_text(json.dumps({**json.loads(farm.config.read_text()),
                                       "work_threads": PER_ROUND + 4}))
    with farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"], "repeat": 44})
        jobs = [claim(farm, token) for _ in range(44)]
        bodies = presigned(farm, key, token, tmp_path, jobs)
        state = farm.state

        def blob_path(data):
            sha = hashlib.sha256(data).hexdigest()
            return state / "blobs" / sha[:2] / sha[2:4] / sha

        def plant(data):
            path = blob_path(data)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            return path

        def log_of(item):
            job, files, _ = item
            return files[f"{job['cases'][0]}/run.log"]

        def upload(item):
            job, _, body = item
            return farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", body, token=token,
                                timeout=300)

        def collect(out):
            r = farm.cli("gc", timeout=300)
            out.append(r)

        answers = []
        for n, point in enumerate(ROUNDS):
            batch = bodies[n * PER_ROUND:(n + 1) * PER_ROUND]
            planted = [plant(log_of(item)) for item in batch]
            before = pauses.arrived(point)
            pauses.close(point)
            if point == "filing-stored":
                # The filings wait with their blobs found; a whole collection runs.
                with concurrent.futures.ThreadPoolExecutor(PER_ROUND) as pool:
                    futures = [pool.submit(upload, item) for item in batch]
                    pauses.wait(point, before + PER_ROUND)
                    r = farm.cli("gc", timeout=300)
                    assert r.returncode == 0, r.stderr
                    assert all(p.read_bytes() == log_of(item) for p, item in zip(planted, batch)), \
                        "a collection took the blob a filing in progress had pinned"
                    assert not any(f.done() for f in futures)
                    pauses.open(point)
                    got = [f.result() for f in futures]
            else:
                # The collection waits at POINT while every upload of the round goes in.
                result = []
                collector = threading.Thread(target=collect, args=(result,))
                collector.start()
                try:
                    pauses.wait(point, before + 1)
                    if point == "gc-trashed":
                        assert not any(p.exists() for p in planted), "the collection took none"
                    with concurrent.futures.ThreadPoolExecutor(PER_ROUND) as pool:
                        got = list(pool.map(upload, batch))
                    assert collector.is_alive()   # the uploads overlapped the collection
                finally:
                    pauses.open(point)
                    collector.join(300)
                assert result and result[0].returncode == 0, result
                if point == "gc-read":   # it moved the uploads' blobs, then put them back
                    put_back = int(re.search(r"(\d+) put back", result[0].stdout).group(1))
                    assert put_back >= PER_ROUND, result[0].stdout
            assert [status for status, _ in got] == [200] * PER_ROUND, got
            for item in batch:   # every acknowledged file is there, by content
                assert blob_path(log_of(item)).read_bytes() == log_of(item)
            answers += got
        assert len(answers) == 40
        unsent = [plant(files[f"{job['cases'][0]}/run.log"]) for job, files, _ in bodies[40:]]
        assert farm.cli("gc").returncode == 0
        assert not any(p.exists() for p in unsent)
        folders = farm.exported(tmp_path / "export")   # every file checked, every bundle verified
        assert len(folders) == 40
        for (job, files, _), (status, answer) in zip(bodies, answers):
            folder = tmp_path / "export" / answer["evidence"]
            assert (folder / f"{job['cases'][0]}/run.log").read_bytes() == \
                files[f"{job['cases'][0]}/run.log"]
        # A collection stopped between taking a blob and settling it: put back at start.
        victim = sorted(b for b in farm.blobs() if b.name not in
                        {s.name for s in farm.source_blobs()})[0]
        trash = state / "trash"
        victim.rename(trash / f"{victim.name}-0123456789abcdef")
        junk = trash / f"{'0' * 64}-0123456789abcdef"
        junk.write_bytes(b"nobody names this")
        farm.stop_server()
        farm.start()
        assert victim.exists() and not junk.exists()
        assert "put back 1 blob(s) a stopped collection had taken" in \
            (tmp_path / "farm.log").read_text()
        farm.exported(tmp_path / "export-again")


def test_one_collection_at_a_time_in_the_farm(tmp_path):
    """Issue 39, item 1: while another collection holds the farm's collector lock (the
    test holds it as a second coordinator's collector would, between trashing a blob and
    settling it), a collection here is refused with 409 gc_running and a coordinator's
    start leaves trash/ alone: before, either settled the other's trash/ with its own
    references and removed blobs an upload had just named. Released, the next collection
    settles it."""
    with Farm(tmp_path) as farm:
        trash = farm.state / "trash"
        taken = trash / f"{'1' * 64}-0123456789abcdef"    # the other collector's, unsettled
        with CollectorLock(farm):
            taken.write_bytes(b"another collector's, mid-collection")
            status, answer = farm.request("POST", "/api/v1/gc")
            assert (status, answer["code"]) == (409, "gc_running"), answer
            r = farm.cli("gc")
            assert r.returncode == 1 and "another collection is running" in r.stderr, r.stderr
            farm.stop_server()
            farm.start()
            assert taken.exists()
            assert "trash/ not settled at start" in (tmp_path / "farm.log").read_text()
        r = farm.cli("gc")
        assert r.returncode == 0, r.stderr
        assert not taken.exists()


def test_a_blob_damaged_in_place_is_neither_served_nor_kept(tmp_path):
    """A filed run log with one bit flipped in the store: /files/ never gives all of it
    (the answer is cut before its last piece, the damage logged); a new bundle naming the
    same bytes replaces the damaged blob, and both bundles export and verify. Before, the
    flipped bytes were served with 200, and the new bundle was acknowledged over the
    damaged blob (checked by size alone) and did not verify."""
    import http.client
    with Farm(tmp_path, lease=600, max_body=8 << 20) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"], "repeat": 2})
        jobs = [claim(farm, token) for _ in range(2)]
        log = b"the same log in both bundles\n" * 40000          # about 1.1 MiB
        sha = hashlib.sha256(log).hexdigest()
        answers = []
        for job in jobs[:1]:
            files = {f"{job['cases'][0]}/receipt.json": RECEIPT, f"{job['cases'][0]}/run.log": log}
            env = sign_envelope(key, json.dumps(statement(job, "x", files)).encode(), tmp_path)
            answers.append(farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle",
                                        upload_body(env, files), token=token))
        assert answers[0][0] == 200, answers
        blob = farm.state / "blobs" / sha[:2] / sha[2:4] / sha
        damaged = bytearray(blob.read_bytes())
        damaged[-3] ^= 0x01
        blob.write_bytes(bytes(damaged))
        name = f"/files/{answers[0][1]['evidence']}/{jobs[0]['cases'][0]}/run.log"
        try:
            status, body = farm.get_bytes(name)
            assert status != 200 or hashlib.sha256(body).hexdigest() == sha, "served damaged"
        except (http.client.IncompleteRead, ConnectionError):
            pass                                            # cut before its last piece
        assert f"blob {sha} is damaged" in (tmp_path / "farm.log").read_text()
        job = jobs[1]
        files = {f"{job['cases'][0]}/receipt.json": RECEIPT, f"{job['cases'][0]}/run.log": log}
        env = sign_envelope(key, json.dumps(statement(job, "x", files)).encode(), tmp_path)
        status, answer = farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle",
                                      upload_body(env, files), token=token)
        assert status == 200, answer
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha
        assert "was damaged in the store: replaced" in (tmp_path / "farm.log").read_text()
        assert len(farm.exported(tmp_path / "export")) == 2     # each file checked, verified
