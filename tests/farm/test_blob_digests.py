"""Issue 39, item 7: a blob of the right size is not trusted for its size. A same-named
PUT replaces a stored archive with one bit flipped; a blob is moved into its name (a
stopped collection's trash put back, a legacy source archive moved to the fan-out) only
when it hashes to that name. Before: the PUT answered 200 and kept the damaged bytes,
and both moves put damaged bytes under the name of the right ones."""
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, Farm, one_filed_bundle  # noqa: E402
from test_evidence_migrate import legacy_farm  # noqa: E402


def flip(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


def test_a_put_replaces_a_damaged_blob_of_the_right_size(tmp_path):
    with Farm(tmp_path) as farm:
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        [blob] = farm.source_blobs()
        good = blob.read_bytes()
        flip(blob)
        status, answer = farm.request("PUT", f"/api/v1/blobs/{blob.name}", raw=good,
                                      headers={"Content-Type": "application/octet-stream"})
        assert status == 200, answer
        assert hashlib.sha256(blob.read_bytes()).hexdigest() == blob.name


def test_a_damaged_blob_in_trash_is_not_put_back(tmp_path):
    """A collection stopped after it moved a named blob to trash/ (the trash name is the
    digest, a dash and 16 hex digits) is undone at start: a copy that no longer hashes to
    its name is removed, named in the log, not put back as the real blob."""
    farm = Farm(tmp_path)
    with farm:
        one_filed_bundle(farm, tmp_path, files={"examples/slow.cairn/run.log": b"a log\n"})
    sha = hashlib.sha256(b"a log\n").hexdigest()
    blob = farm.state / "blobs" / sha[:2] / sha[2:4] / sha
    trashed = farm.state / "trash" / f"{sha}-0123456789abcdef"
    os.rename(blob, trashed)
    flip(trashed)
    with farm:
        log = (tmp_path / "farm.log").read_text()
        assert f"trash/{trashed.name} does not hash to its name: removed" in log, log
        assert not blob.exists() or hashlib.sha256(blob.read_bytes()).hexdigest() == sha


def test_a_damaged_legacy_source_archive_is_not_moved_into_its_name(tmp_path, farm_store):
    farm = legacy_farm(tmp_path, farm_store)
    src = sorted(p for p in (farm.state / "blobs").glob("??/*") if p.is_file())[0]
    flip(src)
    with farm:
        log = (tmp_path / "farm.log").read_text()
        assert f"blobs/{src.name[:2]}/{src.name} does not hash to its name: left" in log, log
        assert not (farm.state / "blobs" / src.name[:2] / src.name[2:4] / src.name).exists()
        assert src.exists()   # left for someone to look at
