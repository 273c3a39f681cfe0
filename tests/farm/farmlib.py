"""Helpers for the farm tests: a coordinator and agents as real processes on loopback.

Every process started here is stopped by Farm.close() (the tests use it as a context
manager), so nothing outlives a test.
"""
import base64
import hashlib
import http.client
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cairntest import BIN, TBIN  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
FAKE_CAIRN = HERE / "fake_cairn.py"
PG_THROWAWAY = HERE / "pg_throwaway.sh"
FARM = BIN / "cairn-farm"
# The least time a test waits for a run to finish (Farm.wait_run): a guard only.
RUN_GUARD_S = 600
# An agent's --exit-when-idle where its exit decides nothing (Farm.close kills it): a
# guard only. A short one decided tests under load: an agent started before its run's
# submit, or waiting out a dead agent's lease, exited before the work came.
AGENT_IDLE_S = 600
# The coordinator built with its test pauses (farm/serve/pause.c; see Pauses).
FARM_PAUSES = TBIN / "cairn-farm-pauses"
AGENT = BIN / "cairn-agent"
ENROL = "enrol-token-for-tests-0123456789"
ADMIN = "admin-token-for-tests-0123456789"
ENROL_PROOF_TYPE = "application/vnd.cairn.enrol-proof+json"
RECEIPT = json.dumps({"cairn": "0.1.0", "numerics": {"main": [
    {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even", "sum": "exact"}]}}).encode()


def c_table(path, name):
    """The text of the static table NAME[] = {...}; in the C source at PATH (from the
    tree's root): tests read the coordinator's tables as text, not through its code."""
    text = (HERE.parents[1] / path).read_text()
    table = text[text.index(f"{name}[] = {{"):]
    return table[:table.index("};")]


def rss_mib(pid, field="VmRSS"):
    """The process's resident memory (VmRSS), or its peak (field="VmHWM"), in MiB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for process {pid}")


def connect_from(port, source="127.0.0.1", timeout=10):
    """A TCP connection to the coordinator on loopback from the address SOURCE (any of
    127.0.0.0/8 is this host: floods come from several addresses)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_answer(sock, limit=1 << 20):
    """(status, {header: value}, body) of one HTTP/1.1 answer on SOCK, or None when the
    coordinator closed without one (the socket's own timeout applies)."""
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode(errors="replace").split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
        length = min(int(headers.get("content-length", 0)), limit)
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return int(lines[0].split()[1]), headers, body
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds(pid):
    """The CPU time process PID has used, all its threads, user and system (/proc/PID/stat):
    the work it did, which other processes' load does not stretch as it does the wall
    clock."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_for(pred, timeout, what, step=0.05):
    end = time.time() + timeout
    while time.time() < end:
        value = pred()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Relay:
    """A TCP relay on loopback: each connection goes to the port in self.target at the
    time it is accepted (a load balancer that a test repoints), and every byte its
    clients sent is kept: a test reads what an agent asked for (claims()) instead of
    timing it."""

    def __init__(self, target):
        self.target, self.sent, self.lock = target, [], threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client):
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        with self.lock:
            self.sent.append(bytearray())
            kept = self.sent[-1]
        for src, dst, keep in ((client, upstream, kept), (upstream, client, None)):
            threading.Thread(target=self._pump, args=(src, dst, keep), daemon=True).start()

    def _pump(self, src, dst, kept):
        try:
            while data := src.recv(65536):
                if kept is not None:
                    with self.lock:
                        kept += data
                dst.sendall(data)
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def claims(self):
        """The wait_s of every claim the clients sent, connection by connection in order."""
        with self.lock:
            streams = [bytes(b) for b in self.sent]
        waits = []
        for data in streams:
            while b"\r\n\r\n" in data:
                head, _, rest = data.partition(b"\r\n\r\n")
                lines = head.decode(errors="replace").split("\r\n")
                length = next((int(v) for k, _, v in (l.partition(":") for l in lines[1:])
                               if k.strip().lower() == "content-length"), 0)
                if len(rest) < length:
                    break
                body, data = rest[:length], rest[length:]
                if lines[0].startswith("POST /api/v1/claim "):
                    waits.append(json.loads(body or b"{}").get("wait_s", 0))
        return waits

    def close(self):
        self.sock.close()


class Pauses:
    """The gates of a test build's pause points (farm/serve/pause.c), in FOLDER: while a
    point's gate is closed, every coordinator thread that reaches it waits there, and
    leaves a file saying it arrived; opening the gate lets them all go on. A test that
    needs threads to overlap makes them: close, start the one, wait for it to arrive, run
    the others, open."""

    def __init__(self, folder):
        self.folder = pathlib.Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def close(self, point):
        (self.folder / point).touch()

    def open(self, point):
        (self.folder / point).unlink(missing_ok=True)

    def arrived(self, point):
        """How many threads have reached POINT while its gate was closed, all told."""
        return len(list(self.folder.glob(f"{point}.reached.*")))

    def wait(self, point, count, timeout=120):
        """Until COUNT threads in all have reached POINT (a generous guard: it hung)."""
        wait_for(lambda: self.arrived(point) >= count, timeout,
                 f"{count} coordinator thread(s) at pause point {point}: hung?")


class ThrowawayPostgres:
    """A PostgreSQL server of its own (tests/farm/pg_throwaway.sh), one database per
    coordinator's store. Its folder is made directly under the system's temp folder:
    the server's user (not root) must be able to reach it, which pytest's private
    temp folders forbid."""

    def __init__(self):
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="cairn-pg-"))
        self.count = 0
        self.uri = self._script("start").strip()

    def _script(self, *args):
        return subprocess.run(["bash", str(PG_THROWAWAY), args[0], str(self.folder), *args[1:]],
                              check=True, capture_output=True, text=True, timeout=120).stdout

    def database(self):
        self.count += 1
        return self._script("createdb", f"farm{self.count}").strip()

    def stop(self):
        try:
            self._script("stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)


# Screenshots the dashboard's browser tests kept (build/test-artifacts/*.png), which the
# session lists at its end (conftest.py).
ARTIFACTS_KEPT = []

# The store every Farm gets: None (SQLite in its state folder) or a ThrowawayPostgres,
# set for the session by conftest.py's farm_store fixture.
POSTGRES = None


def store_config():
    """The "store" entry of a new coordinator's config: a fresh database, or SQLite."""
    return {"store": POSTGRES.database()} if POSTGRES else {}


class Farm:
    def __init__(self, tmp, lease=3.0, max_attempts=3, max_body=1 << 20, claim_wait=5,
                 store=None, pauses=None, env=None):
        self.tmp = pathlib.Path(tmp)
        self.pauses = pauses   # a Pauses: the coordinator is the test build that pauses
        self.env = env or {}   # more environment for the coordinator (LD_PRELOAD ...)
        self.state = self.tmp / "state"
        self.config = self.tmp / "farm.json"
        self.store = store if store is not None else store_config()
        self.config.write_text(json.dumps({
            "listen": "127.0.0.1:0", "enrol_token": ENROL, "admin_token": ADMIN,
            "lease_seconds": lease, "max_attempts": max_attempts,
            "max_body_bytes": max_body, "claim_wait_max_seconds": claim_wait, **self.store}))
        self.procs = []
        self.server = None
        self.url = None
        self.port = 0

    # --- the coordinator -------------------------------------------------------------
    def start(self):
        info = self.state / "serve.json"
        if info.exists():
            info.unlink()
        self.log = open(self.tmp / "farm.log", "a")
        env = {**os.environ, **self.env}
        if self.pauses:
            env["CAIRN_FARM_PAUSES"] = str(self.pauses.folder)
        self.server = subprocess.Popen(
            [FARM_PAUSES if self.pauses else FARM, "serve", "--state", self.state, "--config",
             self.config, "--listen", f"127.0.0.1:{self.port}"], stderr=self.log, env=env)
        wait_for(info.exists, 60, "serve.json: the coordinator never started?")
        self.url = json.loads(info.read_text())["url"]
        self.port = urllib.parse.urlparse(self.url).port
        return self

    def kill9(self):
        self.server.send_signal(signal.SIGKILL)
        self.server.wait(10)

    def stop_server(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.stop_server()
        pidfile = self.tmp / "pids"
        if pidfile.exists():   # fake programs left sleeping by killed agents
            for pid in pidfile.read_text().split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass

    # --- HTTP ------------------------------------------------------------------------
    def request(self, method, path, body=None, token=ADMIN, raw=None, timeout=30,
                headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = {"Content-Type": "application/json"}
        if token:
            h["Authorization"] = f"Bearer {token}"
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        text = resp.read()
        conn.close()
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return resp.status, parsed

    def run_view(self, run):
        status, view = self.request("GET", f"/api/v1/runs/{run}")
        assert status == 200, view
        return view

    def wait_run(self, run, timeout):
        """Until RUN's jobs are all done or failed. TIMEOUT is a guard against hanging,
        and never under RUN_GUARD_S: beside a CPU hog twelve fake jobs took over 120 s."""
        def finished():
            jobs = self.run_view(run)["jobs"]
            return all(j["state"] not in ("queued", "running") for j in jobs)
        wait_for(finished, max(timeout, RUN_GUARD_S), f"run {run} to finish: hung?", step=0.2)
        return self.run_view(run)

    # --- client verbs ----------------------------------------------------------------
    def cli(self, *args, timeout=60):
        return subprocess.run([str(FARM), *map(str, args), "--coordinator", self.url,
                               "--token", ADMIN], capture_output=True, text=True,
                              timeout=timeout)

    def submit(self, tree, matrix, *extra):
        mpath = self.tmp / f"matrix-{time.time_ns()}.json"
        mpath.write_text(json.dumps(matrix))
        r = self.cli("submit", "--matrix", mpath, *extra, tree)
        assert r.returncode == 0, r.stderr
        return int(r.stdout.split()[1].rstrip(":"))

    # --- agents ----------------------------------------------------------------------
    def keygen(self, name):
        key = self.tmp / f"{name}.key"
        if not key.exists():
            subprocess.run([AGENT, "keygen", key], check=True, capture_output=True, timeout=30)
        return key

    def agent(self, name, *extra, env=None, cairn=FAKE_CAIRN, sanitizers="none", idle=None,
              url=None):
        """An agent of this coordinator, reaching it at URL (a Relay's) if given."""
        key = self.keygen(name)
        args = [AGENT, "run", "--coordinator", url or self.url, "--token", ENROL, "--key", key,
                "--cairn", cairn, "--name", name, "--work", self.tmp / f"work-{name}",
                "--sanitizers", sanitizers, *extra]
        if idle:
            args += ["--exit-when-idle", str(idle)]
        full_env = dict(os.environ)
        full_env["FAKE_CAIRN_PIDFILE"] = str(self.tmp / "pids")
        full_env.update(env or {})
        log = open(self.tmp / f"agent-{name}.log", "a")
        p = subprocess.Popen([str(a) for a in args], stderr=log, env=full_env)
        p.name = name
        p.logpath = self.tmp / f"agent-{name}.log"
        self.procs.append(p)
        return p

    def filed(self):
        """The evidence path (evidence/<version>/<run>/<machine>/<cell>) of every filed
        bundle, from the coordinator's API: bundles are manifests in the store and their
        files blobs by content (docs/farm.md, "Evidence by content"), not folders."""
        status, st = self.request("GET", "/api/v1/status")
        assert status == 200, st
        return sorted(j["evidence"] for r in st["runs"] for j in self.run_view(r["id"])["jobs"]
                      if j["state"] == "done")

    def exported(self, dest=None):
        """Every run's bundles written out by `cairn-farm export` (which checks every file
        against its digest and verifies each bundle it wrote) under DEST (default
        TMP/export-N): the folders evidence/<version>/<run>/<machine>/<cell>, sorted."""
        if dest is None:
            dest = self.tmp / f"export-{time.time_ns()}"
        status, st = self.request("GET", "/api/v1/status")
        assert status == 200, st
        for run in st["runs"]:
            r = self.cli("export", run["id"], dest, timeout=300)
            assert r.returncode == 0, r.stdout + r.stderr
        root = pathlib.Path(dest) / "evidence"
        return sorted(p for p in root.glob("*/*/*/*") if p.is_dir()) if root.exists() else []

    def blobs(self):
        """Every blob file in the state folder (blobs/aa/bb/SHA256)."""
        return sorted(p for p in (self.state / "blobs").glob("??/??/*") if p.is_file())

    def get_bytes(self, path, timeout=30):
        """(status, body bytes) of an anonymous GET PATH."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        conn.close()
        return resp.status, body

    def source_blobs(self):
        """The blob files of the runs' source archives."""
        status, st = self.request("GET", "/api/v1/status")
        assert status == 200, st
        shas = {r["source_sha"] for r in st["runs"]}
        return sorted(p for p in self.blobs() if p.name in shas)

    def filed_file(self, evidence, name):
        """A filed bundle's file NAME, as the dashboard serves it (bytes)."""
        status, body = self.get_bytes(f"/files/{evidence}/{name}")
        assert status == 200, (evidence, name, status, body[:200])
        return body


# The collector's lock on PostgreSQL (farm/db/db_pg.c, COLLECTOR_LOCK: "cairg").
COLLECTOR_LOCK = 0x6361697267


class CollectorLock:
    """Holds FARM's collector lock as another coordinator's collection would: an
    advisory lock on a psql session of its own (PostgreSQL), or an flock of
    STATE/farm.db-collector (SQLite). A context manager; released on leaving."""

    def __init__(self, farm):
        self.farm = farm
        self.psql = self.fd = None

    def __enter__(self):
        if "store" in self.farm.store:
            self.psql = subprocess.Popen(
                ["psql", "-qAtX", self.farm.store["store"]], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True)
            self.psql.stdin.write(f"SELECT pg_try_advisory_lock({COLLECTOR_LOCK});\n")
            self.psql.stdin.flush()
            assert self.psql.stdout.readline().strip() == "t"
        else:
            import fcntl
            self.fd = os.open(self.farm.state / "farm.db-collector", os.O_RDWR | os.O_CREAT,
                              0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return self

    def __exit__(self, *exc):
        if self.psql:
            self.psql.stdin.close()
            self.psql.wait(30)
        else:
            os.close(self.fd)


def enrol_request(farm, name, key, pub_key=None, proof_name=None, nonce=None,
                  proof=True, caps=None):
    """POSTs an enrolment of NAME with the public half of PUB_KEY (default KEY) and a
    proof of possession signed with KEY over a fresh nonce (or NONCE), naming PROOF_NAME
    (default NAME), signed here with the openssl command line. Returns (status, answer)."""
    pub = pathlib.Path(str(pub_key or key) + ".pub").read_text()
    caps = caps or {"compilers": {"gcc": {"version": "t", "sanitizers": []},
                                  "clang": {"version": "t", "sanitizers": []}},
                    "gpus": [], "labels": []}
    body = {"name": name, "public_key": pub, "capabilities": caps}
    if proof:
        if nonce is None:
            status, challenge = farm.request("POST", "/api/v1/agents/challenge", token=ENROL)
            assert status == 200, challenge
            nonce = challenge["nonce"]
        payload = json.dumps({"purpose": "cairn-farm enrol", "nonce": nonce,
                              "name": proof_name or name}).encode()
        body["proof"] = sign_envelope(key, payload, farm.tmp, ptype=ENROL_PROOF_TYPE)
    return farm.request("POST", "/api/v1/agents/enrol", body, token=ENROL)


def enrol(farm, name, key):
    status, answer = enrol_request(farm, name, key)
    assert status == 200, answer
    return answer["token"], answer["agent"]


def sign_envelope(key, payload: bytes, tmp, ptype="application/vnd.in-toto+json"):
    """A DSSE envelope signed with the openssl command line (independent of our C)."""
    pae = b"DSSEv1 %d %s %d " % (len(ptype), ptype.encode(), len(payload)) + payload
    pae_path, sig_path = pathlib.Path(tmp) / "pae.bin", pathlib.Path(tmp) / "sig.bin"
    pae_path.write_bytes(pae)
    subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", str(key), "-rawin",
                    "-in", str(pae_path), "-out", str(sig_path)], check=True, timeout=30)
    raw_pub = subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout", "-outform", "DER"],
                             check=True, capture_output=True, timeout=30).stdout[-32:]
    return {"payloadType": ptype, "payload": base64.b64encode(payload).decode(),
            "signatures": [{"keyid": hashlib.sha256(raw_pub).hexdigest(),
                            "sig": base64.b64encode(sig_path.read_bytes()).decode()}]}


def refile_predicate(farm, db, job, change, key):
    """What an older coordinator filed, planted in farm.db (an open sqlite3 connection DB):
    CHANGE(predicate) edits job JOB's signed statement, which KEY signs again, and the
    job's predicate, manifest envelope and bundle digest become the new bundle's (the
    store's predicate is checked against its signed bundle, so both must agree)."""
    manifest = json.loads(db.execute("SELECT manifest FROM jobs WHERE id=?",
                                     (job,)).fetchone()[0])
    st = json.loads(base64.b64decode(json.loads(manifest["envelope"])["payload"]))
    change(st["predicate"])
    manifest["envelope"] = json.dumps(sign_envelope(key, json.dumps(st).encode(), farm.tmp))
    db.execute("UPDATE jobs SET predicate=?, manifest=?, bundle_sha=? WHERE id=?",
               (json.dumps(st["predicate"]), json.dumps(manifest),
                hashlib.sha256(manifest["envelope"].encode()).hexdigest(), job))


def statement(job, machine, files, unordered=False):
    """An in-toto Statement about JOB with FILES ({name: bytes}) as subjects."""
    case = job["cases"][0]
    receipt = f"{case}/receipt.json"
    pred = {"run": job["run"], "job": job["job"], "attempt": job["attempt"],
            "source": {"sha256": job["source"]["sha256"]},
            "cairn_version": "0.1.0", "machine": {"name": machine},
            "cell": dict(job["cell"], id=job["cell_id"]),
            "cases": [{"case": case, "build_status": 0, "exit_status": 0,
                       "receipt": receipt if receipt in files else None,
                       "unordered": unordered, "observations": [], "checks": []}]}
    if receipt not in files:
        del pred["cases"][0]["receipt"]
    if "farm" in job:   # the farm this job is of (issue 24): the statement names it
        pred["farm"] = job["farm"]
    return {"_type": "https://in-toto.io/Statement/v1",
            "subject": [{"name": n, "digest": {"sha256": hashlib.sha256(b).hexdigest()}}
                        for n, b in files.items()],
            "predicateType": "https://cairn.dev/evidence/suite-cell/v1",
            "predicate": pred}


def upload_body(envelope, files):
    return {"envelope": envelope,
            "files": {n: base64.b64encode(b).decode() for n, b in files.items()}}


def claim(farm, token, wait=2):
    """Claims a job as the agent with TOKEN (it must get one within WAIT seconds)."""
    status, job = farm.request("POST", "/api/v1/claim", {"wait_s": wait}, token=token)
    assert status == 200, job
    return job


def signed_upload(farm, job, key, token, tmp, files=None, mutate=None, machine="x"):
    """Uploads a bundle for JOB with FILES (default: the case's receipt), signed with KEY;
    MUTATE(statement) may change the statement before signing. Returns (status, answer)."""
    files = files if files is not None else {f"{job['cases'][0]}/receipt.json": RECEIPT}
    st = statement(job, machine, files)
    if mutate:
        mutate(st)
    env = sign_envelope(key, json.dumps(st).encode(), tmp)
    return farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", upload_body(env, files),
                        token=token)


def one_filed_bundle(farm, tmp, files=None, mutate=None):
    """Enrols agent "x", submits a run of one job over tests/farm/cases_slow, claims it and
    files a bundle with FILES (default: its receipt); returns (run, job, the answer)."""
    key = farm.keygen("x")
    token, _ = enrol(farm, "x", key)
    run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
    job = claim(farm, token)
    status, answer = signed_upload(farm, job, key, token, tmp, files=files, mutate=mutate)
    assert status == 200, answer
    return run, job, answer
