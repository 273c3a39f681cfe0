"""What the attack tests (test_security_anonymous.py and its kin) and the attack figures
(tests/bench/farm_attacks.py) do to a coordinator: raw requests a well-behaved client
cannot make, floods from several loopback addresses, readers that never read, and the
state (filed files, many runs, hostile bundles) the attacks need."""
import hashlib
import http.client
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import (ADMIN, HERE, RECEIPT, claim, connect_from, enrol,  # noqa: E402
                     one_filed_bundle, read_answer, signed_upload, wait_for)


def configure(farm, **settings):
    """Adds SETTINGS to FARM's config file (before it starts); returns FARM."""
    config = json.loads(farm.config.read_text())
    config.update(settings)
    farm.config.write_text(json.dumps(config))
    return farm


def send_get_with_body(port, path, framing, size, source="127.0.0.1", body=b""):
    """Opens a connection from SOURCE and sends GET PATH declaring a body of SIZE bytes
    (framing "length": Content-Length; "chunked": one chunk of SIZE), then BODY of it."""
    s = connect_from(port, source)
    head = (f"Content-Length: {size}" if framing == "length"
            else "Transfer-Encoding: chunked")
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: farm\r\n{head}\r\n\r\n".encode())
    if framing == "chunked":
        s.sendall(f"{size:x}\r\n".encode())
    if body:
        try:
            s.sendall(body)
        except OSError:
            pass   # answered and closed before taking it all
    return s



class Flood:
    """COUNT connections spread over ADDRESSES, each sending REQUEST and then THEN every
    DRIP seconds; a connection the coordinator closes is opened again, up to MAX_OPENS in
    all. Runs in a thread of its own (a round every TICK seconds) until stopped; entering
    waits until COUNT were opened (or, with WAIT_PEAK, are open at once)."""

    def __init__(self, port, count, addresses, request, drip=1.0, max_opens=20000, then=b"x",
                 tick=0.1, wait_peak=False):
        self.port, self.count, self.addresses, self.request = port, count, addresses, request
        self.drip, self.max_opens, self.then, self.tick = drip, max_opens, then, tick
        self.wait_peak = wait_peak
        self.socks, self.opened, self.closed_by_server, self.peak = [], 0, 0, 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def open_one(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((self.addresses[self.opened % len(self.addresses)], 0))
        s.connect_ex(("127.0.0.1", self.port))
        self.opened += 1
        self.socks.append([s, 0.0, False])

    def alive(self, entry):
        s = entry[0]
        try:
            while True:   # drain what the coordinator answered; b"" is its close
                if s.recv(65536) == b"":
                    raise ConnectionResetError
        except BlockingIOError:
            return True
        except OSError:
            pass
        s.close()
        self.closed_by_server += 1
        return False

    def run(self):
        while not self.stopping.is_set():
            self.socks = [e for e in self.socks if self.alive(e)]
            while len(self.socks) < self.count and self.opened < self.max_opens:
                self.open_one()
            self.peak = max(self.peak, len(self.socks))
            now = time.time()
            for entry in self.socks:
                if now - entry[1] >= self.drip:
                    try:
                        entry[0].send(self.then if entry[2] else self.request)
                        entry[1], entry[2] = now, True
                    except OSError:
                        pass
            time.sleep(self.tick)
        for s, _, _ in self.socks:
            s.close()

    def __enter__(self):
        self.thread.start()
        wait_for(lambda: (self.peak if self.wait_peak else self.opened) >= self.count, 30,
                 "the flood to open its connections")
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join(30)


def history_reader(farm, i, stop, served):
    """Asks for /history/examples/one.cairn from 127.0.0.(2 + I) until STOP is set,
    reading each answer; appends the seconds each 200 took to SERVED."""
    while not stop.is_set():
        try:
            started = time.time()
            s = connect_from(farm.port, f"127.0.0.{2 + i}", timeout=60)
            s.sendall(b"GET /history/examples/one.cairn HTTP/1.1\r\nHost: farm\r\n\r\n")
            answer = read_answer(s, limit=0)
            s.close()
            if answer and answer[0] == 200:
                served.append(time.time() - started)
        except OSError:
            pass


# How long a claim beside an attack may take before it counts as starved: a guard
# against hanging (a starved claim never gets an answer), never a latency a loaded
# machine could miss.
CLAIM_LIMIT_S = 60


def claims_answered(farm, token, seconds, limit):
    """Claims (wait_s 0) one after the other for SECONDS; returns [(status or error,
    seconds it took)], each given LIMIT seconds (then its status is the timeout error)."""
    results, end = [], time.time() + seconds
    while time.time() < end:
        started = time.time()
        try:
            status, _ = farm.request("POST", "/api/v1/claim", {"wait_s": 0}, token=token,
                                     timeout=limit)
        except (OSError, http.client.HTTPException) as e:
            status = type(e).__name__
        results.append((status, time.time() - started))
        time.sleep(0.3)
    return results



def filed_big_file(farm, tmp, size):
    """Files a bundle with a SIZE-byte raw file; returns (run, its /files path, its bytes)."""
    data = os.urandom(size)
    files = {"examples/one.cairn/receipt.json": RECEIPT, "examples/one.cairn/obs/big.0.bin": data}
    run, _, answer = one_filed_bundle(farm, tmp, files=files)
    return run, f"/files/{answer['evidence']}/examples/one.cairn/obs/big.0.bin", data


def never_read(port, paths, addresses, token=None):
    """Sends GET for each of PATHS (with TOKEN, if any) from ADDRESSES in turn and never
    reads an answer: each socket's receive buffer is made small, so the answers wait in
    the coordinator (or the kernel) rather than here."""
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    socks = []
    for i, path in enumerate(paths):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # before connecting
        s.settimeout(10)
        s.bind((addresses[i % len(addresses)], 0))
        s.connect(("127.0.0.1", port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: farm\r\n{auth}\r\n".encode())
        socks.append(s)
    return socks


def create_runs(farm, n):
    """N runs of one job each over one uploaded tree, through one kept-alive connection."""
    sha = hashlib.sha256(b"tree").hexdigest()
    assert farm.request("PUT", f"/api/v1/blobs/{sha}", raw=b"tree")[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", farm.port, timeout=60)
    body = json.dumps({"source": sha, "matrix": {"compilers": ["gcc"]},
                       "cases": ["examples/one.cairn"]})
    for _ in range(n):
        conn.request("POST", "/api/v1/runs", body=body,
                     headers={"Authorization": f"Bearer {ADMIN}"})
        r = conn.getresponse()
        r.read()
        assert r.status == 201
    conn.close()



def like_named_run(farm, tmp, n):
    """A run of two cells (gcc, clang), each filing N observations all named "x"; its id."""
    key = farm.keygen("x")
    token, _ = enrol(farm, "x", key)
    run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"]})
    for _ in range(2):
        job = claim(farm, token)
        status, answer = signed_upload(farm, job, key, token, tmp, mutate=lambda st: st[
            "predicate"]["cases"][0].update(observations=like_named(n)))
        assert status == 200, answer
    return run


def like_named(n):
    return [{"name": "x", "type": "f64", "count": 1, "sha256": f"{i:064x}"} for i in range(n)]


