#!/usr/bin/python3
"""A stand-in for `cairn build`/`cairn --version` that the farm tests drive.

It reads directives from the case file, lines of the form `//! DIRECTIVE ...`:
    //! observe NAME V1,V2,...   an f64 observation of these values
    //! observe-cc NAME          an observation whose bits depend on --cc (gcc vs clang)
    //! observe-device NAME E D  an f64 observation: E when emulated or on the host, D in a
                                 device build (--target sm_XX without --emulate); E and D
                                 may be lists (1,2,nan), of one length
    //! observe-later NAME N     an f64 observation: 1.0 for this case's first N builds
                                 counted in $FAKE_CAIRN_COUNTER (a file), then 1.0 with gcc
                                 and 1.0000000000000002 with clang (a verdict that changes
                                 with nothing else changed: flaky)
    //! silent                   the program writes nothing to its log
    //! unordered                the receipt lists an operation with "order": "unordered"
    //! bound NAME RATIO [WORDS]  the run reports NAME measured at RATIO of its contract's
                                 bound (WORDS: the promise it names)
    //! check NAME ok|fail       the run reports a contract check NAME that held or failed
    //! exit N                   the program returns N
    //! sleep S                  the program sleeps S seconds first (for kill tests)
    //! trap                     the program traps (message on stderr, exit 1)
    //! observe-long NAME PAD    an observation line padded past PAD bytes (extra field)
    //! observe-name-of N        an observation whose name is N bytes long
    //! raw-big NAME BYTES       a raw observation file of BYTES bytes (zeros)
    //! raw-random NAME BYTES    a raw observation file of BYTES random bytes (new each run)
    //! build-fail               `cairn build` fails
The program also sleeps $FAKE_CAIRN_SLEEP seconds and appends its pid to
$FAKE_CAIRN_PIDFILE when those are set (the kill and cancel tests use them).
It writes OUT (a small Python program) and OUT.receipt.json the way the real cairn does,
and the program honours CAIRN_OBSERVE / CAIRN_OBSERVE_RAW like the real runtime.
"""
import hashlib
import json
import os
import struct
import sys

VERSION = "0.1.0"

PROGRAM = r'''#!/usr/bin/python3
import hashlib, json, os, sys, time
spec = json.loads(%r)
if os.environ.get("FAKE_CAIRN_PIDFILE"):
    with open(os.environ["FAKE_CAIRN_PIDFILE"], "a") as f:
        f.write("%%d\n" %% os.getpid())
time.sleep(spec["sleep"] + float(os.environ.get("FAKE_CAIRN_SLEEP", "0")))
log, raw = os.environ.get("CAIRN_OBSERVE"), os.environ.get("CAIRN_OBSERVE_RAW")
for seq, (name, hexbits) in enumerate(spec["observations"]):
    bits = bytes.fromhex(hexbits)
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"name": name, "type": "f64", "count": len(bits) // 8,
                                "sha256": hashlib.sha256(bits).hexdigest()}) + "\n")
    if raw:
        with open(os.path.join(raw, "%%s.%%d.bin" %% (name, seq)), "wb") as f:
            f.write(bits)
for name, pad in spec["long_lines"]:
    bits = b"\x00" * 8
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"name": name, "type": "f64", "count": 1, "note": "n" * pad,
                                "sha256": hashlib.sha256(bits).hexdigest()}) + "\n")
    if raw:
        with open(os.path.join(raw, "%%s.long.bin" %% name[:100]), "wb") as f:
            f.write(bits)
for name, size, random in spec["raw_big"]:
    if raw:
        with open(os.path.join(raw, "%%s.big.bin" %% name), "wb") as f:
            f.write(os.urandom(size)) if random else f.truncate(size)
for name, ratio, promise in spec["bounds"]:
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"bound": name, "ratio": ratio, "ok": ratio <= 1,
                                "promise": promise}) + "\n")
for name, ok in spec["checks"]:
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"check": name, "ok": ok}) + "\n")
if spec["trap"]:
    sys.stderr.write("trap: %%s:1:1: integer overflow\n" %% spec["source"])
    sys.exit(1)
if not spec["silent"]:
    print("fake program done")
sys.exit(spec["exit"])
'''


def parse_args(argv):
    opts = {"cc": "gcc", "sanitize": None, "emulate": False, "target": "host", "out": None}
    src, i = None, 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "--cc", "--sanitize", "--target"):
            opts[{"-o": "out", "--cc": "cc", "--sanitize": "sanitize", "--target": "target"}[a]] = argv[i + 1]
            i += 2
            continue
        if a == "--emulate":
            opts["emulate"] = True
        else:
            src = a
        i += 1
    return src, opts


def build(argv):
    src, o = parse_args(argv)
    text = open(src).read()
    spec = {"sleep": 0.0, "observations": [], "exit": 0, "trap": False, "source": src,
            "bounds": [], "checks": [], "long_lines": [], "raw_big": [], "silent": False}
    unordered = False
    for line in text.splitlines():
        if not line.startswith("//! "):
            continue
        words = line[4:].split()
        if words[0] == "observe":
            vals = [float(v) for v in words[2].split(",")]
            spec["observations"].append((words[1], struct.pack("<%dd" % len(vals), *vals).hex()))
        elif words[0] == "observe-device":
            device = o["target"] != "host" and not o["emulate"]
            vals = [float(v) for v in (words[3] if device else words[2]).split(",")]
            spec["observations"].append((words[1], struct.pack("<%dd" % len(vals), *vals).hex()))
        elif words[0] == "observe-later":
            val = 1.0
            if os.environ.get("FAKE_CAIRN_COUNTER"):
                counter = os.environ["FAKE_CAIRN_COUNTER"]
                seen = int(open(counter).read() or 0) if os.path.exists(counter) else 0
                with open(counter, "w") as f:
                    f.write(str(seen + 1))
                if seen >= int(words[2]) and o["cc"] != "gcc":
                    val = 1.0 + 2.0 ** -52
            spec["observations"].append((words[1], struct.pack("<d", val).hex()))
        elif words[0] == "silent":
            spec["silent"] = True
        elif words[0] == "observe-cc":
            val = 1.0 if o["cc"] == "gcc" else 1.0 + 2.0 ** -52
            spec["observations"].append((words[1], struct.pack("<d", val).hex()))
        elif words[0] == "bound":
            spec["bounds"].append((words[1], float(words[2]),
                                   " ".join(words[3:]) or "the fake contract's bound"))
        elif words[0] == "observe-long":       # observe-long NAME PAD: a line of PAD+ bytes
            spec["long_lines"].append((words[1], int(words[2])))
        elif words[0] == "observe-name-of":    # observe-name-of N: a name of N bytes
            spec["long_lines"].append(("n" * int(words[1]), 0))
        elif words[0] in ("raw-big", "raw-random"):  # NAME BYTES: a raw file of BYTES
            spec["raw_big"].append((words[1], int(words[2]), words[0] == "raw-random"))
        elif words[0] == "check":
            spec["checks"].append((words[1], words[2] == "ok"))
        elif words[0] == "unordered":
            unordered = True
        elif words[0] == "exit":
            spec["exit"] = int(words[1])
        elif words[0] == "sleep":
            spec["sleep"] = float(words[1])
        elif words[0] == "trap":
            spec["trap"] = True
        elif words[0] == "build-fail":
            sys.stderr.write("%s:1:1: error[E-FAKE]: build refused\n" % src)
            return 1
    with open(o["out"], "w") as f:
        f.write(PROGRAM % json.dumps(spec))
    os.chmod(o["out"], 0o755)
    entry = {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even", "sum": "exact"}
    numerics = {"main": [entry]}
    if unordered:
        numerics["main"].append({"op": "atomic_add_unordered", "from": "f64", "to": "f64",
                                 "rounding": "nearest-even", "order": "unordered"})
    receipt = {
        "cairn": VERSION,
        "source": {"path": src, "sha256": hashlib.sha256(text.encode()).hexdigest()},
        "output": {"path": o["out"], "sha256": hashlib.sha256(open(o["out"], "rb").read()).hexdigest()},
        "target": o["target"], "emulate": o["emulate"],
        "compiler": {"name": o["cc"], "version": "fake", "flags": argv},
        "sanitizers": o["sanitize"].split(",") if o["sanitize"] else [],
        "numerics": numerics,
    }
    with open(o["out"] + ".receipt.json", "w") as f:
        json.dump(receipt, f, indent=2, sort_keys=True)
    return 0


def main():
    if sys.argv[1:2] == ["--version"]:
        print("cairn " + VERSION)
        return 0
    if sys.argv[1:3] == ["build", "--help"]:
        print("usage: cairn build FILE [-o OUT] [--emulate] [--cc gcc|clang] [--sanitize S]")
        return 0
    if sys.argv[1:2] == ["build"]:
        return build(sys.argv[2:])
    sys.stderr.write("fake cairn: only --version and build\n")
    return 2


if __name__ == "__main__":
    sys.exit(main())
