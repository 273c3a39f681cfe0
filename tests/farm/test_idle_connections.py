"""Issue 17: thousands of idle connections cost the coordinator no thread each.

"Idle" here means what a large fleet leaves open, from agents that have shown their
token (anonymous connections waiting for headers are capped and timed out on purpose,
see test_security.py): first 5,000 long-polling claims that find nothing to do, then the
same 5,000 connections kept alive between requests. They come from an agent whose
capabilities fit no job, over ten loopback addresses. While they are open, 50 simulated
agents (`cairn-agent loadgen`) work through 1,000 jobs at full rate: every job must be
filed and the coordinator's thread count (from /proc/PID/status) stay at its two pools
plus a few; then every idle connection answers its next request. A server with a thread
per connection fails the thread count (over 5,000 threads) at the first check.

Nothing here depends on the machine's speed: the waits are guards against hanging
(HANG_S; a failure says the answers never came), never a rate. The figures (claim
latency inside the coordinator and at the agents, how long the answers took) are
printed; throughput with a large fleet connected is tests/bench/bench_farm.sh's, in
`make bench`. Here at load 22 (`make test-loaded`) 5,000 claims took 17-27 s to be
answered after they were sent, and 0.3-1 s on a quiet machine: the 30 s this test
once allowed was a rate.
"""
import collections
import json
import os
import pathlib
import re
import resource
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import (AGENT, ENROL, HERE, Farm, Pauses, connect_from,  # noqa: E402
                     enrol_request, read_answer)
from cairntest import SAN  # noqa: E402

IDLE = 5000
ADDRESSES = [f"127.0.0.{i}" for i in range(2, 12)]   # 500 connections from each
HTTP_THREADS, WORK_THREADS, PAGE_THREADS = 4, 8, 2
# Beside the three pools: main, reaper, waker, reporter, and slack (the group commit
# runs on the filing threads).
THREAD_LIMIT = HTTP_THREADS + WORK_THREADS + PAGE_THREADS + 7
WAIT_S = 4.0
JOBS, AGENTS = 1000, 50
# Every wait for answers, and for the simulated agents: a guard against hanging only.
HANG_S = 600 if SAN == "none" else 1800
# The idle connections wait between the steps for as long as the simulated agents take:
# over the default idle_timeout_seconds (120 s) at load 14, when the coordinator may
# close them (docs/farm.md, "Connections"). Here it never does.
IDLE_TIMEOUT_S = 4 * HANG_S


def threads_of(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError("no Threads line")


class ThreadSampler:
    """Samples the coordinator's thread count every 50 ms until stopped; keeps the peak."""

    def __init__(self, pid):
        self.pid, self.peak, self.samples = pid, 0, 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stopping.is_set():
            self.peak = max(self.peak, threads_of(self.pid))
            self.samples += 1
            time.sleep(0.05)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join(5)


def claim_request(token, wait_s):
    body = json.dumps({"wait_s": wait_s}).encode()
    return (f"POST /api/v1/claim HTTP/1.1\r\nHost: farm\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode() + body


class Idle:
    """COUNT keep-alive connections to PORT, spread over ADDRESSES, each carrying one
    request at a time; answers are read with a selector and parsed as HTTP/1.1."""

    def __init__(self, port, count):
        self.socks = []
        for i in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((ADDRESSES[i % len(ADDRESSES)], 0))
            self.socks.append(s)
        self.port = port
        self.answered = {}   # each connection's last answer, when it came

    def send(self, request):
        """Connects (first time) and sends REQUEST on every connection; self.sent holds
        when each went, read before it went: a time read after sendall() could come any
        time later on a loaded machine (70 ms on one core beside a hog), and a long poll
        then looked answered before its wait ran out."""
        self.sent = {}
        for s in self.socks:
            if s.getblocking():
                s.connect(("127.0.0.1", self.port))
                s.setblocking(False)
            self.sent[s] = time.monotonic()
            s.sendall(request)

    def answers(self, timeout):
        """Reads one answer from every connection, and returns only then: [(status,
        time.monotonic() it came)], in no order. A connection the coordinator closed
        instead of answering fails the test, once every other connection has answered or
        closed too, with what tells why (see closed_report)."""
        started = time.monotonic()
        sel = selectors.DefaultSelector()
        bufs = {}
        for s in self.socks:
            sel.register(s, selectors.EVENT_READ)
            bufs[s] = b""
        got, self.closed = [], {}   # closed: each connection closed unanswered, and when
        self.waited = {}   # each connection's time from its request sent to its answer
        while len(got) + len(self.closed) < len(self.socks):
            left = started + timeout - time.monotonic()
            assert left > 0, \
                f"only {len(got)} of {len(self.socks)} answers in {timeout} s: the rest hung"
            for key, _ in sel.select(timeout=left):
                s = key.fileobj
                try:
                    data = s.recv(65536)
                except ConnectionError as e:
                    data, bufs[s] = b"", bufs[s] + f" [{e!r}]".encode()
                if not data:
                    self.closed[s] = (time.monotonic(), bufs[s])
                    sel.unregister(s)
                    continue
                bufs[s] += data
                head, sep, body = bufs[s].partition(b"\r\n\r\n")
                if not sep:
                    continue
                lines = head.decode().split("\r\n")
                length = next((int(v) for k, _, v in (line.partition(": ") for line in lines[1:])
                               if k.lower() == "content-length"), 0)
                if len(body) >= length:
                    got.append((int(lines[0].split()[1]), time.monotonic()))
                    self.waited[s] = got[-1][1] - self.sent[s]
                    self.answered[s] = got[-1][1]
                    sel.unregister(s)
        sel.close()
        return got

    def closed_report(self, got, farm):
        """What tells why connections were closed unanswered: which (source address and
        port), when against their request and their last answer, what the others got, and
        the coordinator's log lines that are not one request's."""
        lines = [f"{len(self.closed)} of {len(self.socks)} connections closed unanswered "
                 f"(the others: {sorted(collections.Counter(st for st, _ in got).items())})"]
        for s, (when, partial) in sorted(self.closed.items(), key=lambda c: c[1][0])[:20]:
            last = self.answered.get(s)
            lines.append(f"  {s.getsockname()}: closed {when - self.sent[s]:.3f} s after its "
                         f"request, {when - last if last else float('nan'):.3f} s after its "
                         f"last answer; read before: {partial[:200]!r}")
        log = (farm.tmp / "farm.log").read_text(errors="replace").splitlines()
        other = [line for line in log if not re.match(r"farm: [A-Z]+ /\S* -> \d+ \(", line)]
        lines.append(f"farm.log: {len(log)} lines, {len(other)} not a request's:")
        lines += ["  " + line for line in other[-60:]]
        refusals = [line for line in log if re.search(r" -> [45]\d\d \(", line)]
        lines.append(f"farm.log: {len(refusals)} refusals, the last:")
        lines += ["  " + line for line in refusals[-20:]]
        return "\n".join(lines)

    def close(self):
        for s in self.socks:
            s.close()


@pytest.fixture
def nofile():
    """Raises this process's descriptor limit for the idle connections (the coordinator
    raises its own to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = IDLE + 1000
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"the file descriptor hard limit {hard} is under {need}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def start_farm(tmp_path):
    farm = Farm(tmp_path, lease=30, claim_wait=30)
    config = json.loads(farm.config.read_text())
    # Space for the idle connections. The anonymous caps go up too: 5,000 connections
    # opened in a burst are anonymous until the coordinator reads their first headers,
    # and test_security.py holds those caps at their defaults. So do the caps per agent:
    # the idle connections all show one agent's token here, where a fleet would show one
    # each. Nor does the idle timeout decide anything here (IDLE_TIMEOUT_S).
    config.update(http_threads=HTTP_THREADS, work_threads=WORK_THREADS,
                  page_threads=PAGE_THREADS,
                  max_connections=IDLE + 500, max_connections_per_address=1000,
                  max_anonymous=IDLE + 500, max_anonymous_per_address=1000,
                  max_connections_per_agent=IDLE + 500, max_claims_per_agent=IDLE,
                  idle_timeout_seconds=IDLE_TIMEOUT_S)
    farm.config.write_text(json.dumps(config))
    os.environ["CAIRN_FARM_LOG_ALL"] = "1"   # every request's time, in farm.log
    try:
        return farm.start()
    finally:
        del os.environ["CAIRN_FARM_LOG_ALL"]


def served_claims_ms(farm):
    """The time inside the coordinator of every claim answered with a job."""
    log = (farm.tmp / "farm.log").read_text()
    return sorted(float(ms) for ms in
                  re.findall(r"POST /api/v1/claim -> 200 \(([0-9.]+) ms\)", log))



def enrol_idle(farm):
    """Enrols agent "idle", whose one compiler (tcc) no job asks for, so that its claims
    wait; returns the enrolment's answer (its token)."""
    caps = {"compilers": {"tcc": {"version": "t", "sanitizers": []}}, "gpus": [], "labels": []}
    status, answer = enrol_request(farm, "idle", farm.keygen("idle"), caps=caps)
    assert status == 200, answer
    return answer

def test_idle_connections_hold_no_threads(tmp_path, nofile):
    farm = start_farm(tmp_path)
    idle = None
    try:
        answer = enrol_idle(farm)
        pid = farm.server.pid

        # 1. 5,000 long polls that find nothing: parked, each answered 204 at its deadline,
        # the threads sampled from the first sent to the last answered.
        idle = Idle(farm.port, IDLE)
        with ThreadSampler(pid) as parked:
            t0 = time.monotonic()
            idle.send(claim_request(answer["token"], WAIT_S))
            t1 = time.monotonic()
            answers = idle.answers(timeout=WAIT_S + HANG_S)
        assert not idle.closed, idle.closed_report(answers, farm)
        assert len(answers) == IDLE, f"{len(answers)} of {IDLE} long polls answered"
        assert parked.peak <= THREAD_LIMIT, \
            f"{parked.peak} threads with {IDLE} long polls parked (a thread each?)"
        assert all(status == 204 for status, _ in answers), answers[:5]
        first, last = min(t for _, t in answers), max(t for _, t in answers)
        print(f"\n{IDLE} long polls: sent in {t1 - t0:.1f} s, at most {parked.peak} threads "
              f"while parked, answered {first - t0:.2f}..{last - t0:.2f} s after the first")
        # None before its WAIT_S ran out (counted from its own request).
        assert min(idle.waited.values()) >= WAIT_S - 0.05, \
            f"a long poll answered {min(idle.waited.values()):.2f} s after it was sent"

        # 2. The same connections kept alive and silent while 50 agents work.
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"],
                                                "repeat": JOBS // 2})
        with ThreadSampler(pid) as sampler:
            r = subprocess.run([AGENT, "loadgen", "--coordinator", farm.url, "--token", ENROL,
                                "--agents", str(AGENTS), "--jobs", str(JOBS)],
                               capture_output=True, text=True, timeout=HANG_S)
        assert r.returncode == 0, r.stdout + r.stderr
        report = json.loads(r.stdout)
        served = served_claims_ms(farm)
        served_p99 = served[int(0.99 * (len(served) - 1))]
        print(f"loadgen beside {IDLE} idle connections: {report}; claims inside the "
              f"coordinator: p99 {served_p99:.1f} ms; threads at most {sampler.peak} "
              f"({sampler.samples} samples); load {os.getloadavg()[0]:.1f}")
        assert report["jobs"] == JOBS and report["errors"] == 0, report
        assert sampler.peak <= THREAD_LIMIT, sampler.peak
        assert len(served) == JOBS, len(served)
        view = farm.run_view(run)
        assert all(j["state"] == "done" for j in view["jobs"])
        assert len(farm.filed()) == JOBS

        # 3. Every idle connection is still open and answers its next request.
        t0 = time.monotonic()
        idle.send(claim_request(answer["token"], 0))
        answers = idle.answers(timeout=HANG_S)
        assert not idle.closed, idle.closed_report(answers, farm)
        assert len(answers) == IDLE, f"{len(answers)} of {IDLE} claims answered"
        assert all(status == 204 for status, _ in answers), answers[:5]
        print(f"{IDLE} claims answered {max(t for _, t in answers) - t0:.1f} s after the first "
              f"was sent; load {os.getloadavg()[0]:.1f}")
        assert farm.server.poll() is None
    finally:
        if idle:
            idle.close()
        farm.close()


def test_a_request_that_came_is_answered_however_late_it_is_read(tmp_path):
    """A connection with a token is closed idle_timeout_seconds after its answer unless
    its next request has come: one whose request came while the coordinator's threads
    were too busy to read it is answered. libmicrohttpd's own inactivity timeout closed
    such connections (1,305 of 5,000 at once at load 14, 24 s after their requests
    came): the CI failure of test_idle_connections_hold_no_threads. The interleaving is
    driven, not waited for: the reaper is held until every deadline has passed, and the
    one HTTP thread while a request comes, so the sweep that closes the idle connection C
    provably looks at A with its deadline gone and its request unread."""
    pauses = Pauses(tmp_path / "pauses")
    farm = Farm(tmp_path, pauses=pauses)
    config = json.loads(farm.config.read_text())
    config.update(http_threads=1, idle_timeout_seconds=1)
    farm.config.write_text(json.dumps(config))
    with farm:
        answer = enrol_idle(farm)
        claim = claim_request(answer["token"], 0)
        a, c, b = (connect_from(farm.port, "127.0.0.2", timeout=HANG_S) for _ in range(3))
        pauses.close("reaping")
        pauses.wait("reaping", 1)              # no deadline is swept from here on
        for s in (a, c):                     # A's answer first: its deadline is the earlier
            s.sendall(claim)
            assert read_answer(s)[0] == 204
        pauses.close("claim")
        b.sendall(claim)
        pauses.wait("claim", 1)              # the only HTTP thread is held: C and A are idle
        held = time.monotonic()
        a.sendall(claim)                     # A's next request comes, and is not read
        time.sleep(1.5)                      # at least: every deadline has passed by now
        assert time.monotonic() - held > 1.0
        pauses.open("reaping")
        assert read_answer(c) is None, "the idle connection C was not closed"
        pauses.open("claim")
        assert read_answer(b)[0] == 204
        got = read_answer(a)
        assert got is not None, "A's request came in time, and its connection was closed"
        assert got[0] == 204, got


# libmicrohttpd's epoll loop (its function MHD_epoll, in 0.9.75 and its master of 2025)
# takes at most MAX_EVENTS (128) events from one epoll_wait, and calls it again while a
# call returned exactly 128: with the timeout it worked out before the first call, when
# no connection was ready yet. With its inactivity timeout off that is -1, forever, and
# the connections whose events it took wait unprocessed until some other event comes
# to that thread (before, up to its 120 s timeout: 256 of 5,000 answers missing after
# 30 s). BURST requests, ready at once, are two whole calls' worth; the coordinator
# polls with poll(2) now (server.c). On epoll this failed with 128, 256 and 384, never
# with 255 or 257.
MHD_MAX_EVENTS = 128
BURST = 2 * MHD_MAX_EVENTS


def test_a_burst_of_requests_that_fills_whole_event_batches_is_answered(tmp_path):
    """The 'only 4744 of 5000 answers' of test_idle_connections_hold_no_threads, made
    to happen: BURST idle connections with a token, on the coordinator's one HTTP
    thread, each send their next request while the coordinator is stopped (SIGSTOP), so
    that all BURST are ready at once when it goes on (SIGCONT). Every one is answered;
    none is left waiting for an event that never comes (HANG_S is a guard: they hung)."""
    farm = Farm(tmp_path)
    config = json.loads(farm.config.read_text())
    config.update(http_threads=1, max_anonymous=BURST + 50, max_anonymous_per_address=BURST,
                  max_connections_per_agent=BURST + 50, idle_timeout_seconds=IDLE_TIMEOUT_S)
    farm.config.write_text(json.dumps(config))
    idle = None
    with farm:
        answer = enrol_idle(farm)
        claim = claim_request(answer["token"], 0)
        idle = Idle(farm.port, BURST)
        try:
            idle.send(claim)                     # each shows the token: idle, trusted
            answers = idle.answers(timeout=HANG_S)
            assert not idle.closed and all(st == 204 for st, _ in answers), answers[:5]
            os.kill(farm.server.pid, signal.SIGSTOP)
            try:
                idle.send(claim)                 # all in the sockets before it reads one
            finally:
                os.kill(farm.server.pid, signal.SIGCONT)
            answers = idle.answers(timeout=HANG_S)
            assert not idle.closed, idle.closed_report(answers, farm)
            assert len(answers) == BURST and all(st == 204 for st, _ in answers), answers[:5]
        finally:
            idle.close()
