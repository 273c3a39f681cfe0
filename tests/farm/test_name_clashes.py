"""Issue 39, item 7: names that make one path both a file and a folder are refused at
upload (422 path_clash), and `cairn-farm export` exports each bundle on its own, naming
the one it cannot export and still writing the others. Before: `run.log` with
`run.log/x`, and `agent.pub.pem/x`, were filed (200), and one bundle that could not be
exported ended the export of its whole run."""
import hashlib
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, RECEIPT, Farm, claim, enrol, signed_upload  # noqa: E402


@pytest.mark.parametrize("names", [
    ["{case}/run.log", "{case}/run.log/x"],
    ["{case}/run.log/x", "{case}/run.log"],   # the folder's name first
    ["{case}/receipt.json", "agent.pub.pem/x"],
    ["{case}/receipt.json", "bundle.dsse.json/x/y"],
])
def test_a_name_both_file_and_folder_is_refused(tmp_path, names):
    with Farm(tmp_path) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        files = {n.format(case=job["cases"][0]): RECEIPT for n in names}
        status, answer = signed_upload(farm, job, key, token, tmp_path, files=files)
        assert (status, answer.get("code")) == (422, "path_clash"), answer
        # the same job with names that clash with nothing is filed
        files = {f"{job['cases'][0]}/run.log": b"log\n"}
        status, answer = signed_upload(farm, job, key, token, tmp_path, files=files)
        assert status == 200, answer


def test_export_carries_on_past_a_bundle_it_cannot_export(tmp_path):
    """Two bundles of one run; the first the run's results list has a blob damaged in
    place (only it names that blob). The export names that job, exits 1, and still
    writes and verifies the other."""
    with Farm(tmp_path) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"]})
        logs = {}
        for _ in range(2):
            job = claim(farm, token)
            logs[job["job"]] = f"the log of job {job['job']} only\n".encode()
            files = {f"{job['cases'][0]}/run.log": logs[job["job"]]}
            status, answer = signed_upload(farm, job, key, token, tmp_path, files=files)
            assert status == 200, answer
        status, results = farm.request("GET", f"/api/v1/runs/{run}/results")
        assert status == 200 and len(results) == 2, results
        first, second = results[0], results[1]
        sha = hashlib.sha256(logs[first["job"]]).hexdigest()
        blob = farm.state / "blobs" / sha[:2] / sha[2:4] / sha
        data = bytearray(blob.read_bytes())
        data[0] ^= 1
        blob.write_bytes(bytes(data))
        dest = tmp_path / "export"
        r = farm.cli("export", str(run), dest)
        assert r.returncode == 1, r.stdout + r.stderr
        assert f"job {first['job']} not exported" in r.stderr, r.stderr
        assert "1 of 2 bundle(s) not exported" in r.stderr, r.stderr
        good = dest / second["evidence"]
        assert (good / "bundle.dsse.json").is_file(), r.stderr
        assert (good / "agent.pub.pem").is_file(), r.stderr
        case = json.loads((good / "bundle.dsse.json").read_text())["payload"]
        assert case   # export verified what it wrote; the other's log is there whole:
        assert sorted(p.read_bytes() for p in good.rglob("run.log")) == [logs[second["job"]]]
        assert not (dest / first["evidence"] / "agent.pub.pem").exists()
