#!/usr/bin/env python3
"""Digests of what cairn makes from every example and device program, so that a change
meant to leave users' results alone (moving files, a back-end table) can prove it did.

usage: example_digests.py record|check [--cairn BIN] [--file JSON]

For each program (examples/*.cairn, tests/device/programs/*.cairn) it records:
- the SHA-256 of every generated file: host C, emulated C, and C plus CUDA for sm_90
  (`--emit-c DIR --emit-only`: no compiler runs, so these hold on any machine);
- for programs with a main, the build receipt's SHA-256 (a gcc build; it names gcc's
  version, so it is compared only where gcc's version is the recorded one) and the
  observation lines of a run (name, type, count, sha256 of the raw bits).

`record` writes the JSON (tests/build/example_digests.json); `check` prints every
difference and exits 1 when there is one. tests/build/test_example_digests.py runs
`check` in `make test`. Programs are copied into a scratch folder and built from there
under fixed relative names, so the receipts do not depend on where the tree lives."""
import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_FILE = ROOT / "tests" / "build" / "example_digests.json"
MODES = {"host": [], "emulate": ["--emulate"], "sm_90": ["--target", "sm_90"]}
# Observations whose bits the language leaves to the order of arrival (atomic float adds):
# their digests differ from run to run, so only their name, type and count are kept.
UNORDERED = {"tests/device/programs/atomics.cairn": {"sum_f32", "sum_f64", "sub_device"}}


def programs():
    found = sorted(ROOT.glob("examples/*.cairn")) + sorted(ROOT.glob("tests/device/programs/*.cairn"))
    return [p.relative_to(ROOT).as_posix() for p in found]


def sha(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def gcc_version():
    out = subprocess.run(["gcc", "-dumpfullversion"], capture_output=True, text=True)
    return out.stdout.strip()


def emitted(cairn, prog, work, mode):
    out = work / f"emit-{mode}"
    cmd = [cairn, "build", prog, "--emit-c", str(out), "--emit-only", "-o", "prog", *MODES[mode]]
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if r.returncode != 0:
        return {"status": r.returncode}
    return {f.name: sha(f) for f in sorted(out.iterdir())}


def observation(line, unordered):
    obs = json.loads(line)
    if obs["name"] in unordered:
        obs["sha256"] = "unordered"
    return json.dumps(obs, sort_keys=True)


def built(cairn, prog, work, env, unordered):
    r = subprocess.run([cairn, "build", prog, "-o", "prog", "--cc", "gcc"], cwd=work,
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        return None, None
    receipt = sha(work / "prog.receipt.json")
    log = work / "obs.jsonl"
    log.unlink(missing_ok=True)
    run = subprocess.run([cairn, "run", prog, "--cc", "gcc", "--observe", str(log)], cwd=work,
                         capture_output=True, text=True, env=env, timeout=600)
    lines = log.read_text().splitlines() if log.exists() else []
    lines = [observation(line, unordered) for line in lines]
    return receipt, {"exit": run.returncode, "observations": lines}


def digest_one(cairn, rel, scratch, env):
    work = scratch / rel.replace("/", "_")
    work.mkdir()
    shutil.copy(ROOT / rel, work / pathlib.Path(rel).name)
    prog = pathlib.Path(rel).name
    entry = {"emit": {m: emitted(cairn, prog, work, m) for m in MODES}}
    if "fn main(" in (ROOT / rel).read_text():
        entry["receipt"], entry["run"] = built(cairn, prog, work, env, UNORDERED.get(rel, set()))
    return entry


def digest_all(cairn):
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as tmp:
        env["CAIRN_CACHE"] = str(pathlib.Path(tmp) / "cache")
        scratch = pathlib.Path(tmp) / "work"
        scratch.mkdir()
        return {"gcc": gcc_version(),
                "programs": {rel: digest_one(cairn, rel, scratch, env) for rel in programs()}}


def differences(want, have):
    diffs = []
    same_gcc = want["gcc"] == have["gcc"]
    for rel in sorted(set(want["programs"]) | set(have["programs"])):
        w, h = want["programs"].get(rel), have["programs"].get(rel)
        if w is None or h is None:
            diffs.append(f"{rel}: {'new' if w is None else 'gone'} (record again if meant)")
            continue
        for mode in MODES:
            if w["emit"][mode] != h["emit"][mode]:
                diffs.append(f"{rel}: generated code for {mode} differs: {h['emit'][mode]}")
        if w.get("run") != h.get("run"):
            diffs.append(f"{rel}: the run differs: {h.get('run')}")
        if same_gcc and w.get("receipt") != h.get("receipt"):
            diffs.append(f"{rel}: the receipt differs")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["record", "check"])
    ap.add_argument("--cairn", default=str(ROOT / "bin" / "cairn"))
    ap.add_argument("--file", default=str(DEFAULT_FILE))
    a = ap.parse_args()
    have = digest_all(a.cairn)
    if a.mode == "record":
        pathlib.Path(a.file).write_text(json.dumps(have, indent=1, sort_keys=True) + "\n")
        print(f"example_digests: recorded {len(have['programs'])} programs in {a.file}")
        return 0
    want = json.loads(pathlib.Path(a.file).read_text())
    diffs = differences(want, have)
    for d in diffs:
        print(d)
    if want["gcc"] != have["gcc"]:
        print(f"example_digests: receipts not compared (recorded with gcc {want['gcc']}, "
              f"this machine has {have['gcc']})")
    print(f"example_digests: {len(have['programs'])} programs, {len(diffs)} differences")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
