"""Issue 39, item 12: a state folder that cannot be written (a full disk: a small tmpfs;
an immutable folder: chattr +i) is a store failure, answered 5xx naming the disk's
error, which the agent retries; once the disk is writable again the same upload is
filed. Before: with SQLite the filing's reservation failed to be written and was
answered 409 filing_busy, "another coordinator is filing job N's bundle right now", a
refusal that named a coordinator that does not exist. Needs root (mount, chattr)."""
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import Farm, claim, enrol, sign_envelope, statement, upload_body, HERE  # noqa: E402

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a tmpfs (needs root)")


def fill(folder):
    """Writes FOLDER's file system full (to its last block); returns the filler's path."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        for chunk in (1 << 20, 4096, 1):
            try:
                while os.write(fd, b"\0" * chunk) == chunk:
                    pass
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def freeze(folder, on):
    """chattr +i (ON) or -i on FOLDER and everything in it."""
    subprocess.run(["chattr", "-R", "+i" if on else "-i", str(folder)], check=True)


@pytest.fixture
def small_state(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0700", "tmpfs", str(state)], check=True)
    try:
        yield state
    finally:
        subprocess.run(["chattr", "-R", "-i", str(state)], check=False)
        subprocess.run(["umount", "-l", str(state)], check=False)


@pytest.mark.parametrize("fault", ["full", "immutable"])
def test_an_unwritable_state_folder_is_a_5xx_naming_the_disk_error(tmp_path, small_state, fault):
    with Farm(tmp_path, max_body=16 << 20) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        # many files: the filing's reservation (their digests) grows the database too
        files = {f"{job['cases'][0]}/f{i}": b"%d\n" % i for i in range(5000)}
        env = sign_envelope(key, json.dumps(statement(job, "x", files)).encode(),
                            tmp_path)
        body = upload_body(env, files)
        path = f"/api/v1/jobs/{job['job']}/bundle"
        filler = fill(small_state) if fault == "full" else None
        if fault == "immutable":
            freeze(small_state, True)
        try:
            status, answer = farm.request("POST", path, body, token=token)
        finally:
            if filler:
                filler.unlink()
            else:
                freeze(small_state, False)
        assert status >= 500, answer
        assert answer["code"] in ("store_unavailable", "internal"), answer
        disk_words = ("full", "No space", "readonly", "read-only", "Operation not permitted",
                      "disk I/O", "denied")
        assert any(w in answer["error"] for w in disk_words), answer
        status, answer = farm.request("POST", path, body, token=token)
        assert status == 200, answer
