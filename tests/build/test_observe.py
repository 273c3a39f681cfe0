"""cairn_observe (runtime/cairn_observe.c) against an independent model: struct + hashlib.

Built straight from the runtime sources with this cell's compiler and sanitizer, so the
test needs no front end. Checks the exact JSON line shape the farm relies on, the raw
dumps, thread safety (8 threads x 50 observations, no torn lines), and silence when
neither variable is set."""
import hashlib
import json
import pathlib
import struct

import pytest

from cairntest import CC, ROOT, SAN, run

SAN_FLAGS = {"none": [], "asan": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all"],
             "tsan": ["-fsanitize=thread"]}[SAN]


@pytest.fixture(scope="module")
def observer(tmp_path_factory):
    out = tmp_path_factory.mktemp("obs") / "observe_threads"
    rt = ROOT / "runtime"
    run([CC, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off",
         "-fno-fast-math", *SAN_FLAGS, f"-I{rt}", ROOT / "tests/build/observe_threads.c",
         rt / "cairn_observe.c", rt / "cairn_trap.c", "-o", out, "-pthread", "-lcrypto",
         "-lcjson"], check=True)
    return out


def expected_lines():
    lines = [("scalar", "f32", struct.pack("<f", 1.5), 1), ("empty", "f64", b"", 0)]
    for t in range(8):
        data = struct.pack(f"<{t + 1}d", *[t * 10.0 + j for j in range(t + 1)])
        lines += [(f"thread{t}", "f64", data, t + 1)] * 50
    return lines


def test_log_lines_match_model(observer, tmp_path):
    log = tmp_path / "obs.jsonl"
    raw = tmp_path / "raw"
    raw.mkdir()
    run([observer], env={"CAIRN_OBSERVE": str(log), "CAIRN_OBSERVE_RAW": str(raw)}, check=True)
    text = log.read_text()
    assert text.endswith("\n")
    got = [json.loads(line) for line in text.splitlines()]
    want = expected_lines()
    assert len(got) == len(want)
    # Same multiset of lines; threads interleave in any order.
    key = lambda d: (d["name"], d["type"], d["count"], d["sha256"])
    assert sorted(map(key, got)) == sorted(
        (n, t, c, hashlib.sha256(b).hexdigest()) for n, t, b, c in want)
    for line in text.splitlines():  # exact shape and key order the farm parses
        d = json.loads(line)
        assert list(d) == ["name", "type", "count", "sha256"]
        assert line == json.dumps(d, separators=(",", ":"))
    # Raw dumps: one per observation, numbered 0.. in log order, holding the bits, and
    # index.jsonl: the log's lines in the same order, each naming its file.
    bins = sorted(raw.glob("*.bin"))
    assert len(bins) == len(want) and sorted(p.name for p in raw.iterdir()) == sorted(
        [p.name for p in bins] + ["index.jsonl"])
    index = [json.loads(line) for line in (raw / "index.jsonl").read_text().splitlines()]
    assert len(index) == len(got)
    for seq, (d, entry) in enumerate(zip(got, index)):
        blob = (raw / f"{d['name']}.{seq}.bin").read_bytes()
        assert hashlib.sha256(blob).hexdigest() == d["sha256"]
        assert entry == {**d, "file": f"{d['name']}.{seq}.bin"}
        assert list(entry) == ["name", "type", "count", "sha256", "file"]


def test_raw_index_starts_afresh_with_each_process(observer, tmp_path):
    """A second process into the same folder overwrites NAME.SEQ.bin from SEQ 0 on, so
    its index must not keep the first process's lines."""
    raw = tmp_path / "raw"
    raw.mkdir()
    (raw / "index.jsonl").write_text('{"stale": true}\n' * 1000)
    for _ in range(2):
        run([observer], env={"CAIRN_OBSERVE_RAW": str(raw)}, check=True)
        lines = (raw / "index.jsonl").read_text().splitlines()
        assert len(lines) == len(expected_lines()) and "stale" not in lines[0]


def test_silent_without_variables(observer, tmp_path):
    result = run([observer], env={"CAIRN_OBSERVE": "", "CAIRN_OBSERVE_RAW": ""}, check=True)
    assert result.stdout == "" and result.stderr == ""


def test_unwritable_log_traps(observer, tmp_path):
    result = run([observer], env={"CAIRN_OBSERVE": str(tmp_path / "missing" / "x.jsonl")})
    assert result.returncode != 0
    assert "trap: observe: cannot append to the CAIRN_OBSERVE log" in result.stderr
