"""cairn-farm serve's config file: every count and every span of seconds is read within its
range and refused otherwise (exit 2, naming the key and the range), never cast unchecked:
1e300 as max_body_bytes or max_attempts once reached a C cast (undefined behaviour)."""
import json

import pytest

from cairntest import BIN, run

BASE = {"listen": "127.0.0.1:0", "enrol_token": "e" * 20, "admin_token": "a" * 20}


def serve(tmp_path, **keys):
    cfg = tmp_path / "farm.json"
    cfg.write_text(json.dumps({**BASE, **keys}))
    return run([BIN / "cairn-farm", "serve", "--state", tmp_path / "state", "--config", cfg,
                "--check-config"], timeout=30)


@pytest.mark.parametrize("key,value,words", [
    ("max_body_bytes", 1e300, "[1024, 1000000000000]"),
    ("max_body_bytes", 100, "[1024, "),
    ("max_attempts", 1e300, "\"max_attempts\" must be an integer in [1, 1000]"),
    ("max_attempts", 0, "\"max_attempts\" must be an integer"),
    ("max_attempts", 2.5, "\"max_attempts\" must be an integer"),
    ("work_threads", "8", "\"work_threads\" must be an integer"),
    ("lease_seconds", 0, "\"lease_seconds\" must be a number of seconds"),
    ("lease_seconds", 1e300, "\"lease_seconds\" must be a number of seconds"),
    ("header_timeout_seconds", -1, "\"header_timeout_seconds\""),
    ("claim_wait_max_seconds", 1e9, "\"claim_wait_max_seconds\""),
])
def test_out_of_range_keys_are_refused_by_name(tmp_path, key, value, words):
    r = serve(tmp_path, **{key: value})
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert words in r.stderr, r.stderr


def test_keys_in_range_are_accepted(tmp_path):
    r = serve(tmp_path, max_body_bytes=1 << 20, max_attempts=5, lease_seconds=0.5,
              claim_wait_max_seconds=0, work_threads=2)
    assert r.returncode == 0, r.stderr
