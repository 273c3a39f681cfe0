"""Issue 24 (Medium, Low, Info): the coordinators' shared state. Acknowledged evidence is
never removed across coordinators, the state folder and its files are not anyone's to
change, and a coordinator joins only its own farm's database. Each test drives real
coordinators over HTTP (PostgreSQL's locks stand in for a stalled peer or a slow
database) and failed on the coordinator this issue started from."""
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402
from farmlib import (HERE, RECEIPT, Farm, claim, enrol, enrol_request, sign_envelope,  # noqa: E402
                     statement, upload_body, wait_for)
from test_multi_coordinator import two_coordinators  # noqa: E402


class SqlSession:
    """A psql session on the store, holding a transaction open (a stalled peer's row, a
    slow commit) until close() rolls it back."""

    def __init__(self, uri):
        self.p = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", uri],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.run("\\o /dev/null")   # query results out of the way; \echo still answers

    def run(self, sql):
        self.p.stdin.write(sql + "\n")
        self.p.stdin.flush()

    def sync(self):
        """Returns once every statement sent so far has run (its locks are held)."""
        self.run("\\echo synced")
        line = self.p.stdout.readline()
        assert line.strip() == "synced", (line, self.p.stderr.read() if self.p.poll() else "")

    def close(self):
        self.run("ROLLBACK;")
        self.p.stdin.close()
        self.p.wait(30)


def bundle_for(farm, job, key, tmp, text):
    """An upload body for JOB whose run log says TEXT (so two bundles differ)."""
    case = job["cases"][0]
    files = {f"{case}/receipt.json": RECEIPT, f"{case}/run.log": text.encode()}
    env = sign_envelope(key, json.dumps(statement(job, "x", files)).encode(), tmp)
    return upload_body(env, files)


def coordinator_id(farm):
    return f"{socket.gethostname()}-{farm.server.pid}"


def blob_of(farm, data):
    """Where the blob of DATA lives in FARM's state folder."""
    sha = hashlib.sha256(data).hexdigest()
    return farm.state / "blobs" / sha[:2] / sha[2:4] / sha


def verify_acknowledged(farm, answer, tmp):
    """The acknowledged bundle ANSWER names is there whole: exported with every file
    checked against its digest, and verified."""
    status, results = farm.request("GET", f"/api/v1/runs/{answer['evidence'].split('/')[2]}/results")
    assert status == 200
    folder = [d for d in farm.exported(tmp) if str(d).endswith(answer["evidence"])]
    assert folder, f"the acknowledged bundle {answer['evidence']} cannot be exported"
    bundle = (folder[0] / "bundle.dsse.json").read_bytes()
    assert hashlib.sha256(bundle).hexdigest() == answer["bundle_sha256"]


@pytest.mark.parametrize("presence", ["stale", "fresh"])
def test_an_acknowledged_bundle_keeps_its_files_across_coordinators(tmp_path, presence):
    """Two bundles for one job at once, one to each coordinator, A's commit held up by a
    lock on the job's row (a slow database): A has written its blobs and waits; B's upload
    comes meanwhile. Exactly one is acknowledged, A's (B's is refused, filing_busy), and
    every file of it is there. Before issue 24: with A's sign of life stale (its row
    locked too, as a stalled coordinator's would be), B took A for dead, replaced A's
    folder, and its failed commit then removed the final folder, so A's acknowledged
    bundle had none; with it fresh, B answered 500 "cannot rename ...: Success". Files
    are blobs by content now, which no filing removes: the reservation still decides
    who may commit."""
    with two_coordinators(tmp_path) as (a, b):
        key = a.keygen("x")
        token, _ = enrol(a, "x", key)
        a.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(a, token)
        bodies = [bundle_for(a, job, key, tmp_path, f"upload {i}\n") for i in range(2)]
        sql = SqlSession(a.store["store"])
        sql.run("BEGIN;")
        sql.run(f"SELECT 1 FROM jobs WHERE id={job['job']} FOR UPDATE;")
        if presence == "stale":
            sql.run(f"SELECT 1 FROM coordinators WHERE id='{coordinator_id(a)}' FOR UPDATE;")
        sql.sync()
        locked = time.time()
        answers = {}

        def upload(farm, body):
            answers[farm.port] = farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle",
                                              body, token=token, timeout=60)
        to_a = threading.Thread(target=upload, args=(a, bodies[0]))
        to_a.start()
        try:
            wait_for(lambda: blob_of(a, b"upload 0\n").exists(), 15,
                     "A's blobs written, its commit waiting")
            if presence == "stale":   # A's sign of life (renewed every 200 ms) goes stale
                time.sleep(max(0.0, locked + 3.5 - time.time()))
            to_b = threading.Thread(target=upload, args=(b, bodies[1]))
            to_b.start()
            # B is answered while A's commit is still held (its reservation decides, not
            # the lock): waited for, not slept on (a guard: B hung on A's lock)
            to_b.join(300)
            assert not to_b.is_alive(), "B's upload hung while A's commit was held"
        finally:
            sql.close()
        to_a.join(60)
        to_b.join(60)
        acked = [answer for status, answer in answers.values() if status == 200]
        assert len(acked) == 1, answers
        assert answers[a.port][0] == 200, answers
        status_b, answer_b = answers[b.port]
        assert (status_b, answer_b["code"]) == (409, "filing_busy"), answer_b
        verify_acknowledged(b, acked[0], tmp_path / "export")
        assert a.filed_file(acked[0]["evidence"], f"{job['cases'][0]}/run.log") == b"upload 0\n"


def test_a_collection_while_a_filing_waits_keeps_its_blobs(tmp_path):
    """The collector at B while A's filing has written its blobs (new ones: nothing but
    A's reservation names them yet) and waits for its commit (the job's row locked): the
    blobs stay, A's upload is acknowledged, and the bundle is whole. Without the pins a
    reservation holds, the collection took them and the acknowledged bundle lost its
    log; a blob no one names (planted) goes."""
    with two_coordinators(tmp_path) as (a, b):
        key = a.keygen("x")
        token, _ = enrol(a, "x", key)
        a.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(a, token)
        body = bundle_for(a, job, key, tmp_path, "a log only this bundle has\n")
        stray = blob_of(a, b"nobody names me")
        stray.parent.mkdir(parents=True, exist_ok=True)
        stray.write_bytes(b"nobody names me")
        sql = SqlSession(a.store["store"])
        sql.run("BEGIN;")
        sql.run(f"SELECT 1 FROM jobs WHERE id={job['job']} FOR UPDATE;")
        sql.sync()
        answer = {}

        def upload():
            answer["a"] = a.request("POST", f"/api/v1/jobs/{job['job']}/bundle", body,
                                    token=token, timeout=60)
        to_a = threading.Thread(target=upload)
        to_a.start()
        try:
            log = blob_of(a, b"a log only this bundle has\n")
            wait_for(log.exists, 15, "A's blobs written, its commit waiting")
            r = b.cli("gc")
            assert r.returncode == 0, r.stderr
            assert log.exists(), "the collector took a blob a filing in progress wrote"
            assert not stray.exists(), "the collector kept a blob nothing names"
        finally:
            sql.close()
        to_a.join(60)
        status, acked = answer["a"]
        assert status == 200, acked
        verify_acknowledged(b, acked, tmp_path / "export")


# --- Medium 10: the state folder is the coordinator's own, and nothing leads out of it ---

def start_fails(farm):
    """Starts FARM's coordinator expecting a refusal: (exit status, stderr), or (None,
    stderr) when it started instead (and was stopped after 10 s)."""
    try:
        r = subprocess.run([farmlib.FARM, "serve", "--state", farm.state, "--config",
                            farm.config], capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired as e:
        return None, (e.stderr or b"").decode()
    return r.returncode, r.stderr


def farm_in(folder):
    folder.mkdir(parents=True, exist_ok=True)
    return Farm(folder)


@pytest.mark.parametrize("what", ["state", "evidence", "config"])
def test_a_state_folder_or_config_others_may_write_is_refused(tmp_path, what):
    """A state folder, its evidence/ or the config that anyone may write is refused at
    start, saying how to fix it (it started without a word)."""
    farm = Farm(tmp_path)
    (farm.state / "evidence").mkdir(parents=True)
    target = {"state": farm.state, "evidence": farm.state / "evidence",
              "config": farm.config}[what]
    target.chmod(0o777 if target.is_dir() else 0o666)
    try:
        status, err = start_fails(farm)
    finally:
        target.chmod(0o755 if target.is_dir() else 0o600)
    assert status == 2 and "chmod go-w" in err and str(target) in err, (status, err)


def test_an_evidence_link_out_of_the_state_folder_is_refused_at_start(tmp_path):
    """state/evidence as a symbolic link to a folder elsewhere: refused at start, and
    nothing there is touched (the reconcile walked through it and removed what no filed
    job pointed to)."""
    outside = tmp_path / "outside"
    keep = outside / "0.1.0" / "1" / "m" / "cell" / "precious.txt"
    keep.parent.mkdir(parents=True)
    keep.write_text("not the coordinator's")
    farm = farm_in(tmp_path / "farm")
    farm.state.mkdir(parents=True)
    (farm.state / "evidence").symlink_to(outside)
    status, err = start_fails(farm)
    assert keep.read_text() == "not the coordinator's"
    assert status == 2 and "symbolic link" in err, (status, err)


def test_links_under_the_state_folder_are_never_served(tmp_path):
    """A filed bundle's blobs replaced by a symbolic link and a hard link to a root-only
    file elsewhere, and a fan-out folder replaced by a symbolic link to a folder holding
    such a file under the blob's name: no GET of the bundle's files serves it (before
    issue 24 an evidence/ link served a root-only file to anyone), and names the bundle
    does not have are 404."""
    secret = tmp_path / "secret"
    secret.write_text("root only")
    secret.chmod(0o600)
    with farm_in(tmp_path / "farm") as farm:
        files = {"examples/slow.cairn/receipt.json": RECEIPT,
                 "examples/slow.cairn/run.log": b"soft\n", "examples/slow.cairn/b.log": b"hard\n",
                 "examples/slow.cairn/c.log": b"folder\n"}
        _, _, answer = farmlib.one_filed_bundle(farm, tmp_path, files=files)
        soft, hard, folder = (blob_of(farm, d) for d in (b"soft\n", b"hard\n", b"folder\n"))
        soft.unlink()
        soft.symlink_to(secret)
        hard.unlink()
        os.link(secret, hard)
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        os.link(secret, elsewhere / folder.name)
        subprocess.run(["rm", "-rf", str(folder.parent)], check=True)
        folder.parent.symlink_to(elsewhere)
        for name in ("run.log", "b.log", "c.log", "../../secret", "soft"):
            status, body = farm.get_bytes(f"/files/{answer['evidence']}/examples/slow.cairn/{name}")
            assert status in (404, 500) and b"root only" not in body, (name, status, body)
        status, body = farm.get_bytes(f"/files/{answer['evidence']}/examples/slow.cairn/x.log")
        assert status == 404
        status, _ = farm.request("GET", f"/files/{answer['evidence']}/bundle.dsse.json",
                                 token=None)
        assert status == 200


def test_a_link_planted_at_a_blob_is_not_followed(tmp_path):
    """A symbolic link planted where a blob goes (blobs/aa/bb/SHA, to a file elsewhere),
    and one planted as the fan-out folder of another: storing the blob replaces the link
    itself and leaves its target alone, and a linked folder is refused, its target left
    untouched (before issue 24 blobs were written under predictable names, following a
    link planted there)."""
    victim = tmp_path / "victim"
    victim.write_text("untouched")
    with farm_in(tmp_path / "farm") as farm:
        data = b"a source archive"
        blob = blob_of(farm, data)
        blob.parent.mkdir(parents=True)
        blob.symlink_to(victim)
        assert farm.request("PUT", f"/api/v1/blobs/{blob.name}", raw=data)[0] == 200
        assert victim.read_text() == "untouched"
        assert not blob.is_symlink() and blob.read_bytes() == data
        other = b"another archive"
        linked = blob_of(farm, other).parent
        linked.parent.mkdir(parents=True, exist_ok=True)
        aside = tmp_path / "aside"
        aside.mkdir()
        linked.symlink_to(aside)
        status, answer = farm.request("PUT", f"/api/v1/blobs/{blob_of(farm, other).name}",
                                      raw=other)
        assert status == 500 and "cannot" in answer["error"], answer
        assert list(aside.iterdir()) == [] and victim.read_text() == "untouched"


# --- Low 15: secrets on disk are the owner's, and the client verbs read tokens from files -

@pytest.mark.sqlite_only("farm.db is the SQLite store's file")
def test_the_database_is_created_readable_by_its_owner_only(tmp_path):
    """farm.db, its WAL and shared memory are created mode 0600 (farm.db was 0644:
    agents' token hashes and every predicate, readable by any user of the host)."""
    with Farm(tmp_path) as farm:
        for name in ("farm.db", "farm.db-wal", "farm.db-shm"):
            mode = (farm.state / name).stat().st_mode & 0o777
            assert mode & 0o077 == 0, (name, oct(mode))


def test_a_config_others_may_read_is_warned_about(tmp_path):
    """The config holds the tokens: one that others may read starts with a warning that
    says how to fix it (it was accepted silently)."""
    farm = Farm(tmp_path)
    farm.config.chmod(0o644)
    with farm:
        log = (tmp_path / "farm.log").read_text()
        assert "may be read by others" in log and f"chmod 600 {farm.config}" in log, log


def test_every_client_verb_takes_the_admin_token_from_a_file(tmp_path):
    """--token-file FILE on every client verb (the token was only --token, shown in the
    process list, or the environment); a file others may read is warned about."""
    with Farm(tmp_path) as farm:
        token_file = tmp_path / "admin-token"
        token_file.write_text(farmlib.ADMIN + "\n")
        token_file.chmod(0o600)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        for verb in (["status"], ["status", str(run)], ["compare", str(run)], ["cancel", str(run)]):
            r = subprocess.run([farmlib.FARM, *verb, "--coordinator", farm.url, "--token-file",
                                token_file], capture_output=True, text=True, timeout=60)
            assert r.returncode in (0, 1) and "401" not in r.stderr, (verb, r.stdout, r.stderr)
            assert "may be read by others" not in r.stderr
        tree = tmp_path / "tree"
        (tree / "examples").mkdir(parents=True)
        (tree / "examples" / "one.cairn").write_text("// one\n")
        r = subprocess.run([farmlib.FARM, "submit", tree, "--coordinator", farm.url,
                            "--token-file", token_file], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        r = subprocess.run([farmlib.FARM, "revoke", "1", "--coordinator", farm.url,
                            "--token-file", token_file], capture_output=True, text=True,
                           timeout=60)
        assert "401" not in r.stderr and "unknown argument" not in r.stderr, r.stderr
        token_file.chmod(0o644)
        r = subprocess.run([farmlib.FARM, "status", "--coordinator", farm.url, "--token-file",
                            token_file], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "may be read by others" in r.stderr, r.stderr


def test_an_agent_key_or_token_file_others_may_read_is_warned_about(tmp_path):
    """The agent's private key and its enrol token file, readable by others: the agent
    says so when it starts (it said nothing)."""
    with Farm(tmp_path) as farm:
        key = farm.keygen("w")
        key.chmod(0o644)
        token_file = tmp_path / "enrol-token"
        token_file.write_text(farmlib.ENROL + "\n")
        token_file.chmod(0o644)
        r = subprocess.run([farmlib.AGENT, "run", "--coordinator", farm.url, "--token-file",
                            token_file, "--key", key, "--cairn", farmlib.FAKE_CAIRN, "--name",
                            "w", "--work", tmp_path / "work", "--idle-exit", "1"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert f"{key} may be read by others" in r.stderr, r.stderr
        assert f"{token_file} may be read by others" in r.stderr, r.stderr


# --- Info 18: a coordinator joins only its own farm's database ---------------------------

def test_a_coordinator_with_other_tokens_does_not_join_the_farm(tmp_path):
    """A coordinator configured with other enrolment and admin tokens, pointed at a farm's
    store (the same PostgreSQL database, or the same state folder for SQLite): refused at
    start (it joined silently), unless told the tokens changed on purpose; the farm keeps
    its identity through that (agents learn it at enrolment and name it in statements)."""
    (tmp_path / "a").mkdir()
    with Farm(tmp_path / "a") as first:
        status, enrolled = enrol_request(first, "x", first.keygen("x"))
        assert status == 200, enrolled
    second = Farm(tmp_path / "a", store=first.store)
    config = json.loads(second.config.read_text())
    config.update(enrol_token="another-enrol-token-0123456789",
                  admin_token="another-admin-token-0123456789")
    second.config.write_text(json.dumps(config))
    status, err = start_fails(second)
    assert status not in (0, None) and "another farm" in err, (status, err)
    assert "--accept-new-tokens" in err, err
    assert len(enrolled.get("farm", "")) == 32, enrolled
    farmlib.ENROL, saved = "another-enrol-token-0123456789", farmlib.ENROL
    proc = subprocess.Popen([farmlib.FARM, "serve", "--state", second.state, "--config",
                             second.config, "--accept-new-tokens"], stderr=subprocess.DEVNULL)
    try:
        info = second.state / "serve.json"
        wait_for(lambda: info.exists() and json.loads(info.read_text())["pid"] == proc.pid, 20,
                 "the coordinator to start")
        second.url = json.loads(info.read_text())["url"]
        second.port = int(second.url.rsplit(":", 1)[1])
        status, again = enrol_request(second, "x", second.keygen("x"))
        assert status == 200 and again["farm"] == enrolled["farm"], again
    finally:
        farmlib.ENROL = saved
        proc.terminate()
        proc.wait(30)
