#!/bin/sh
# bench_verify.sh: `cairn verify` over every function of examples/, on one core (taskset
# when present), with the default limits (--budget 40000000, --unwind 8). Prints each
# property's verdict and time, the time per program, and the total CPU and wall time
# against the target: under 60 s in total. Uses CAIRN_BIN (the folder holding cairn).
set -eu
cd "$(dirname "$0")/../.."
BIN=${CAIRN_BIN:-bin}
OUT=build/bench/verify
rm -rf "$OUT" && mkdir -p "$OUT"
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c 0"
/usr/bin/python3 - "$BIN/cairn" "$OUT" "$PIN" <<'PY'
import json, os, pathlib, resource, subprocess, sys, time
cairn, out, pin = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3].split()
total_wall, rows = 0.0, []
cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
for prog in sorted(pathlib.Path("examples").glob("*.cairn")):
    t0 = time.monotonic()
    r = subprocess.run(pin + [cairn, "verify", str(prog), "--json", "--cex-dir", str(out / prog.stem)],
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    total_wall += wall
    props = [json.loads(l) for l in r.stdout.splitlines() if l.strip()]
    counts = {}
    for p in props:
        counts[p["verdict"]] = counts.get(p["verdict"], 0) + 1
        print(f"  {p['function']:>14}: {p['title']} at {p['at'].split('/')[-1]}: {p['verdict']} ({p['seconds']:.2f} s)")
    print(f"{prog.name}: exit {r.returncode}, {len(props)} properties {counts}, {wall:.2f} s wall")
    rows += props
cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
secs = sorted(p["seconds"] for p in rows)
mean = sum(secs) / len(secs) if secs else 0
print(f"verify examples/: {len(rows)} properties, {total_wall:.1f} s wall, {cpu:.1f} s CPU "
      f"(target: under 60 s); per property mean {mean:.2f} s, median {secs[len(secs) // 2] if secs else 0:.2f} s, "
      f"max {secs[-1] if secs else 0:.2f} s")
PY
