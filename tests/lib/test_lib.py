"""lib/, what cairn, cairn-farm and cairn-agent share, checked through tests/c/lib_check.c
against independent models: Python's hashlib and bytes.hex, the file system as Python
sees it, and subprocess."""
import hashlib
import os
import pathlib
import subprocess
import time

import pytest

from cairntest import harness, run

CHECK = harness("lib_check")


def lib(*args, timeout=60):
    return run([CHECK, *args], timeout=timeout)


@pytest.mark.parametrize("text", ["", "a", "cairn \x01\x7f", "0123456789abcdef" * 16])
def test_hex_encode(text):
    r = lib("hex", text)
    assert r.returncode == 0 and r.stdout == text.encode().hex() + "\n"


# Sizes around SHA-256's 64-byte blocks and its 56-byte padding edge, and past the
# file reader's 64 KiB pieces.
@pytest.mark.parametrize("size", [0, 1, 55, 56, 63, 64, 65, 4096, 65535, 65536, 65537, 1 << 20])
def test_sha256_of_files_and_bytes(tmp_path, size):
    data = hashlib.shake_256(str(size).encode()).digest(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    r = lib("sha256", path)
    want = hashlib.sha256(data).hexdigest()
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [want, str(size), want, str(size), "1"]


def test_sha256_of_a_missing_file_is_an_error(tmp_path):
    r = lib("sha256", tmp_path / "nope")
    assert r.returncode == 1 and "cannot open" in r.stderr and "nope" in r.stderr


def test_read_keeps_every_byte(tmp_path):
    data = bytes(range(256)) * 300  # NULs included, past one 4 KiB growth step
    path = tmp_path / "bin"
    path.write_bytes(data)
    r = subprocess.run([CHECK, "read", path], capture_output=True)
    assert r.returncode == 0 and r.stdout == data


def test_atomic_write_replaces_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    assert lib("write", path, "new text").returncode == 0
    assert path.read_text() == "new text"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_atomic_write_into_a_missing_folder_fails_cleanly(tmp_path):
    r = lib("write", tmp_path / "no" / "out", "x")
    assert r.returncode == 1 and "cannot create" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_threads_writing_one_file_never_mix(tmp_path):
    path = tmp_path / "shared"
    assert lib("race", path, "8").returncode == 0
    assert path.read_text() in {f"writer {i}\n" for i in range(8)}
    assert [p.name for p in tmp_path.iterdir()] == ["shared"]  # every temporary renamed


def test_mkdirs_makes_every_level_and_accepts_existing(tmp_path):
    deep = tmp_path / "a" / "b" / "c"
    assert lib("mkdirs", deep).returncode == 0 and deep.is_dir()
    assert lib("mkdirs", deep).returncode == 0
    assert lib("mkdirs", str(tmp_path / "x") + "//y/").returncode == 0
    assert (tmp_path / "x" / "y").is_dir()
    (tmp_path / "file").write_text("")
    r = lib("mkdirs", tmp_path / "file" / "sub")
    assert r.returncode == 1 and "cannot create" in r.stderr


def test_remove_tree_does_not_follow_links(tmp_path):
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "precious").write_text("x")
    tree = tmp_path / "tree"
    (tree / "a" / "b").mkdir(parents=True)
    (tree / "a" / "b" / "f").write_text("y")
    (tree / "link").symlink_to(keep)
    assert lib("rmtree", tree).returncode == 0
    assert not tree.exists() and (keep / "precious").read_text() == "x"
    assert lib("rmtree", tmp_path / "never-there").returncode == 0


def test_remove_tree_reports_what_it_could_not_remove(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root removes entries of a read-only folder")
    tree = tmp_path / "tree"
    (tree / "locked").mkdir(parents=True)
    (tree / "locked" / "f").write_text("")
    (tree / "locked").chmod(0o500)
    try:
        assert lib("rmtree", tree).returncode == 1
    finally:
        (tree / "locked").chmod(0o700)


@pytest.mark.parametrize("value,lo,hi,want", [
    ("7", 0, 10, "1 7"), ("-3", -5, 5, "1 -3"), ("10", 0, 10, "1 10"),
    ("11", 0, 10, "-1 0"), ("1.5", 0, 10, "-1 0"), ("\"7\"", 0, 10, "-1 0"),
    ("1e300", 0, 1e9, "-1 0"), ("null", 0, 10, "-1 0"),
])
def test_json_int_takes_only_whole_numbers_in_range(tmp_path, value, lo, hi, want):
    path = tmp_path / "j.json"
    path.write_text('{"k": %s}' % value)
    r = lib("json", path, "k", str(lo), str(hi))
    assert r.returncode == 0 and r.stdout.strip() == want
    absent = lib("json", path, "other", "0", "1")
    assert absent.stdout.strip() == "0 0"


def test_json_file_that_is_not_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"k": ')
    r = lib("json", path, "k", "0", "1")
    assert r.returncode == 1 and "not valid JSON" in r.stderr


def test_output_captures_stdout_and_stderr_and_the_status(tmp_path):
    script = "printf 'out\\n'; printf 'err\\n' >&2; exit 3"
    r = lib("output", "/bin/sh", "-c", script)
    assert r.returncode == 0
    status, text = r.stdout.split("\n", 1)
    assert int(status) == 3 and sorted(text.splitlines()) == ["err", "out"]
    big = lib("output", "/bin/sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x")
    assert big.stdout.split("\n", 1) == ["0", "x" * 200000]
    missing = lib("output", str(tmp_path / "no-such-program"))
    status, text = missing.stdout.split("\n", 1)
    assert int(status) == 127 and "cannot run" in text


def test_watch_stops_a_child_past_its_time_with_its_whole_group(tmp_path):
    pid_file = tmp_path / "grandchild"
    # The child starts a grandchild in its group and waits: the timeout kills both. The
    # bound on the time only tells a kill from waiting out the 600 s sleep (not a latency:
    # at load 60 a 0.5 s timeout may take seconds to act).
    script = f"sleep 600 & echo $! > {pid_file}; wait"
    start = time.monotonic()
    r = lib("watch", "0.5", "/bin/sh", "-c", script)
    elapsed = time.monotonic() - start
    assert r.returncode == 0 and r.stdout.strip() == "-2"  # PROC_TIMEOUT
    assert elapsed < 300, f"{elapsed:.0f} s: the child's group was waited for, not killed"
    grandchild = int(pid_file.read_text())
    give_up = time.monotonic() + 120  # killed; reaped by init after (a guard only)
    while True:
        stat = pathlib.Path(f"/proc/{grandchild}/stat")
        if not stat.exists() or stat.read_text().split()[2] == "Z":
            break
        if time.monotonic() > give_up:
            pytest.fail(f"grandchild {grandchild} still running")
        time.sleep(0.05)


def test_watch_returns_exit_status_and_signal():
    assert lib("watch", "0", "/bin/sh", "-c", "exit 5").stdout.strip() == "5"
    assert lib("watch", "0", "/bin/sh", "-c", "kill -9 $$").stdout.strip() == str(128 + 9)
