"""Issue 39: budgets an attacker must not get past. A comparison's max_decode_bytes is
charged for every read, and a blob of another size than its observation declares is never
read; an unfinished run is not compared again for each view of its page."""
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import HERE, RECEIPT, Farm, claim, enrol, signed_upload  # noqa: E402

MiB = 1 << 20


def bytes_read(pid):
    """What process PID has read so far (read and pread, files and sockets alike)."""
    for line in open(f"/proc/{pid}/io"):
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar")


def observations_of(files, declared):
    """A mutate for signed_upload: the case observes DECLARED [(name, type, count,
    sha256)]."""
    def mutate(st):
        st["predicate"]["cases"][0]["observations"] = [
            {"name": n, "type": t, "count": c, "sha256": sha} for n, t, c, sha in declared]
    return mutate


def test_a_blob_of_another_size_is_never_read_by_the_comparison(tmp_path):
    """One 1 MiB blob named by 64 observations, each declared one element longer: the
    run's comparison reads none of it (before: all of it 64 times, charged nothing
    against the 8 MiB max_decode_bytes, so 64 MiB, and 32 GiB with 8 MiB and 4,096)."""
    farm = Farm(tmp_path, lease=60, max_body=16 * MiB)
    cfg = json.loads(farm.config.read_text())
    farm.config.write_text(json.dumps(dict(cfg, max_decode_bytes=8 * MiB)))
    with farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        case = job["cases"][0]
        raw = os.urandom(MiB)
        sha = hashlib.sha256(raw).hexdigest()
        files = {f"{case}/receipt.json": RECEIPT, f"{case}/obs/raw.bin": raw}
        declared = [(f"o{i}", "u8", MiB + 1, sha) for i in range(64)]
        before = bytes_read(farm.server.pid)
        status, answer = signed_upload(farm, job, key, token, tmp_path, files=files,
                                       mutate=observations_of(files, declared))
        assert status == 200, answer
        farm.wait_run(run, 60)
        status, _ = farm.get_bytes(f"/runs/{run}")      # compared now, or read stored
        assert status == 200
        read = bytes_read(farm.server.pid) - before
        print(f"\ndecode: the coordinator read {read} bytes for one 1 MiB blob named 64 times")
        assert read < 16 * MiB, read       # the upload itself, base64: about 1.4 MiB


def test_an_unfinished_run_is_compared_once_per_change_not_per_view(tmp_path):
    """A run with one of its two jobs filed: three views of its page compare it once; a
    change (the second job claimed) makes the next view compare it again. Before, each
    view compared the run anew (two views that disconnect held both page threads)."""
    with Farm(tmp_path, lease=60) as farm:
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        run = farm.submit(HERE / "cases_slow", {"compilers": ["gcc", "clang"]})
        job = claim(farm, token)
        assert signed_upload(farm, job, key, token, tmp_path)[0] == 200

        def compared():
            return (tmp_path / "farm.log").read_text().count(
                f"compared unfinished run {run} for a page")
        for _ in range(3):
            assert farm.get_bytes(f"/runs/{run}")[0] == 200
        assert compared() == 1
        claim(farm, token)
        assert farm.get_bytes(f"/runs/{run}")[0] == 200
        assert farm.get_bytes(f"/runs/{run}/plot.svg")[0] == 200
        assert compared() == 2


def post(farm, path, body, token):
    """POSTs raw BODY bytes to PATH with TOKEN: (status, code)."""
    status, answer = farm.request("POST", path, raw=body, token=token)
    return status, answer.get("code") if isinstance(answer, dict) else answer


def peak_rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_json_amplification_is_refused_before_the_parse(tmp_path):
    """A claim, a heartbeat and an enrolment of a few hundred kilobytes get 413 from their
    declared length (before, any body up to max_body_bytes was parsed); an upload of
    8 MiB of [0,0,...] (4 million values) gets 413 max_json_values before cJSON builds
    its 256 MiB of nodes, and the coordinator's peak memory does not grow by them."""
    with Farm(tmp_path, lease=60, max_body=16 * MiB) as farm:
        from farmlib import ENROL
        key = farm.keygen("x")
        token, _ = enrol(farm, "x", key)
        farm.submit(HERE / "cases_slow", {"compilers": ["gcc"]})
        job = claim(farm, token)
        zeros = b'{"wait_s": 0, "x": [' + b"0," * (150 << 10) + b'0]}'     # 300 KiB
        assert post(farm, "/api/v1/claim", zeros, token) == (413, "too_large")
        assert post(farm, f"/api/v1/jobs/{job['job']}/heartbeat", zeros, token) == \
            (413, "too_large")
        assert post(farm, "/api/v1/agents/challenge", zeros, ENROL) == (413, "too_large")
        assert post(farm, "/api/v1/agents/enrol", b'{"x": [' + b"0," * (200 << 10) + b'0]}',
                    ENROL) == (413, "too_large")
        before = peak_rss_mib(farm.server.pid)
        flood = b'{"envelope": [' + b"0," * (4 << 20) + b'0]}'               # 8 MiB
        status, answer = farm.request("POST", f"/api/v1/jobs/{job['job']}/bundle", raw=flood,
                                      token=token)
        assert (status, answer["code"]) == (413, "too_large"), answer
        assert "max_json_values" in answer["error"], answer
        grew = peak_rss_mib(farm.server.pid) - before
        print(f"\njson: peak memory grew {grew:.0f} MiB for an 8 MiB body of 4 million values")
        assert grew < 64, grew
        assert farm.request("POST", f"/api/v1/jobs/{job['job']}/heartbeat", {},
                            token=token)[0] == 200
