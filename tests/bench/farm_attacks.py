#!/usr/bin/python3
"""farm_attacks.py: the figures behind issue 24's High items, for any build of the farm:
each attack against a fresh coordinator on loopback, with the coordinator's memory
(resident, and its peak) and the latencies an agent or an admin sees meanwhile.

    CAIRN_BIN=/path/to/bin /usr/bin/python3 tests/bench/farm_attacks.py [ATTACK ...]

ATTACKs (default: all):
  bodies    8 anonymous GETs with 60 MiB bodies (Content-Length or chunked), sent whole
  trickle   1,100 anonymous GETs declaring Content-Length: 100000, fed a byte a second,
            from 11 addresses, while an agent claims (wait_s 0) every 0.3 s for 8 s
  readers   64 anonymous GETs of a 16 MiB filed file, never read, from 4 addresses
  pages     32 anonymous clients on /history/CASE with 1,000 runs while an admin
            creates a run and an agent claims, files and is acknowledged
  compare   two cells filing 4,096 like-named observations each: the run's page
Prints one line per attack. Run it with the build before a change and after it, back to
back, on the same machine (the figures move with its load, which it prints)."""
import os
import pathlib
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "farm"))
sys.path.insert(0, str(HERE.parent))
from attacklib import (Flood, claims_answered, configure, create_runs, filed_big_file,  # noqa: E402
                       history_reader, like_named_run, never_read, send_get_with_body)
from farmlib import Farm, claim, enrol, read_answer, rss_mib, signed_upload  # noqa: E402


def load():
    return f"load {os.getloadavg()[0]:.1f}"


def bodies(tmp):
    with Farm(tmp, max_body=64 << 20) as farm:
        start = rss_mib(farm.server.pid)
        size, block = 60 << 20, b"x" * (1 << 20)

        def one(i):
            s = send_get_with_body(farm.port, "/", "length" if i % 2 else "chunked", size,
                                   f"127.0.0.{2 + i}")
            s.settimeout(60)
            try:
                for _ in range(size // len(block)):
                    s.sendall(block)
            except OSError:
                pass
            read_answer(s)
            s.close()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(f"bodies: RSS {start:.0f} MiB at start, peak {rss_mib(farm.server.pid, 'VmHWM'):.0f}"
              f" MiB after eight 60 MiB anonymous bodies; {load()}", flush=True)


def trickle(tmp):
    with Farm(tmp) as farm:
        token, _ = enrol(farm, "agent", farm.keygen("agent"))
        request = b"GET / HTTP/1.1\r\nHost: farm\r\nContent-Length: 100000\r\n\r\n"
        addresses = [f"127.0.0.{i}" for i in range(2, 13)]
        with Flood(farm.port, 1100, addresses, request, max_opens=8000) as flood:
            results = claims_answered(farm, token, 8, 5)
        took = sorted(t for _, t in results)
        answered = sum(1 for s, t in results if s == 204 and t < 5)
        print(f"trickle: {answered} of {len(results)} claims answered within 5 s, median "
              f"{took[len(took) // 2] * 1000:.1f} ms, max {took[-1] * 1000:.0f} ms; "
              f"{flood.opened} connections opened, {flood.closed_by_server} closed by the "
              f"coordinator; RSS {rss_mib(farm.server.pid):.0f} MiB; {load()}", flush=True)


def readers(tmp):
    with Farm(tmp, max_body=64 << 20) as farm:
        _, path, _ = filed_big_file(farm, tmp, 16 << 20)
        start = rss_mib(farm.server.pid)
        socks = never_read(farm.port, [path] * 64, [f"127.0.0.{i}" for i in range(2, 6)])
        time.sleep(5)
        now = rss_mib(farm.server.pid)
        for s in socks:
            s.close()
        print(f"readers: RSS {start:.0f} MiB before, {now:.0f} MiB with 64 unread 16 MiB "
              f"answers; {load()}", flush=True)


def pages(tmp):
    with configure(Farm(tmp, lease=60), sync="process") as farm:
        create_runs(farm, 1000)
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        stop, served = threading.Event(), []
        threads = [threading.Thread(target=history_reader, args=(farm, i, stop, served),
                                    daemon=True) for i in range(32)]
        for t in threads:
            t.start()
        time.sleep(3)
        started = time.time()
        create_runs(farm, 1)
        run_s = time.time() - started
        started = time.time()
        job = claim(farm, token, wait=30)
        status, _ = signed_upload(farm, job, key, token, tmp)
        upload_s = time.time() - started
        stop.set()
        for t in threads:
            t.join(120)
        served.sort()
        median = served[len(served) // 2] if served else float("nan")
        print(f"pages: beside 32 /history readers (1,000 runs) a run created in {run_s:.2f} s,"
              f" a job claimed and filed in {upload_s:.2f} s (status {status}); "
              f"{len(served)} pages served, median {median:.2f} s; {load()}", flush=True)


def compare(tmp):
    with Farm(tmp, lease=60, max_body=8 << 20) as farm:
        run = like_named_run(farm, tmp, 4096)
        started = time.time()
        try:
            status, _ = farm.request("GET", f"/runs/{run}", token=None, timeout=120)
        except OSError:
            status = "no answer"
        print(f"compare: /runs/{run} with 2 x 4,096 like-named observations: {status} in "
              f"{time.time() - started:.2f} s (gave up at 120 s); {load()}", flush=True)


ATTACKS = {"bodies": bodies, "trickle": trickle, "readers": readers, "pages": pages,
           "compare": compare}

if __name__ == "__main__":
    print(f"farm_attacks: {os.environ.get('CAIRN_BIN', 'bin')}", flush=True)
    for name in sys.argv[1:] or list(ATTACKS):
        with tempfile.TemporaryDirectory(prefix=f"farm-attack-{name}-") as tmp:
            ATTACKS[name](pathlib.Path(tmp))
