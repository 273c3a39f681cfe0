"""Issue 39, item 7: migrating a legacy bundle trusts nothing filed beside it. The bundle
must be the one its job's row filed (jobs.bundle_sha) and the key beside it the one its
agent enrolled, with a live upload's checks of the statement. Before: a bundle re-signed
with a key planted beside it (its statement changed at will) verified under that key and
was migrated as the job's evidence."""
import base64
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from farmlib import AGENT, sign_envelope  # noqa: E402
from test_evidence_migrate import OLD_RUN1, legacy_farm  # noqa: E402


def test_a_legacy_bundle_resigned_with_a_planted_key_is_not_migrated(tmp_path, farm_store):
    farm = legacy_farm(tmp_path, farm_store)
    victim = farm.state / sorted(OLD_RUN1)[1]
    env = json.loads((victim / "bundle.dsse.json").read_text())
    st = json.loads(base64.b64decode(env["payload"]))
    st["predicate"]["labels"] = {"forged": "yes"}
    key = tmp_path / "planted.key"
    subprocess.run([AGENT, "keygen", key], check=True, capture_output=True, timeout=30)
    forged = sign_envelope(key, json.dumps(st).encode(), tmp_path)
    (victim / "bundle.dsse.json").write_text(json.dumps(forged))
    pub = subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout"], check=True,
                         capture_output=True, timeout=30).stdout
    (victim / "agent.pub.pem").write_bytes(pub)
    with farm:
        log = (tmp_path / "farm.log").read_text()
        rel = sorted(OLD_RUN1)[1]
        assert f"{rel}: the bundle is not the one job" in log, log
        status, _ = farm.get_bytes(f"/files/{rel}/bundle.dsse.json")
        assert status == 404
        assert victim.is_dir()   # left for someone to look at
        other = sorted(OLD_RUN1)[0]
        assert farm.get_bytes(f"/files/{other}/bundle.dsse.json")[0] == 200
