"""cairn-farm serve's config file: every count and every span of seconds is read within its
range and refused otherwise (exit 2, naming the key and the range), never cast unchecked:
1e300 as max_body_bytes or max_attempts once reached a C cast (undefined behaviour).
Every bound is one row of BOUNDS in farm/serve/config.c; the rows are read from the source
as text and each is held at both ends of its range, and its default to what `serve --help`
and docs/farm.md tell users."""
import json
import pathlib
import re

import pytest

from cairntest import BIN, run
from farmlib import c_table

ROOT = pathlib.Path(__file__).resolve().parents[2]

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


def number(text):
    """A C constant of the table: 1e12, 0.001, 300, 64L << 20."""
    if "<<" in text:
        a, b = text.split("<<")
        return int(a.strip().rstrip("L")) << int(b)
    return float(text)


def bounds_table():
    """[(kind, key, default, lo, hi)] from BOUNDS in farm/serve/config.c."""
    table = c_table("farm/serve/config.c", "BOUNDS")
    rows = re.findall(r"(COUNT|SECONDS)\((\w+), ([^,]+), ([^,]+), ([^)]+)\)", table)
    assert len(rows) >= 13, rows
    return [(kind, key, number(d), number(lo), number(hi)) for kind, key, d, lo, hi in rows]


BOUNDS = bounds_table()


def help_example():
    """The config example `cairn-farm serve --help` prints, as JSON."""
    out = run([BIN / "cairn-farm", "serve", "--help"], timeout=30).stdout
    text = out[out.index("FILE is JSON:") + len("FILE is JSON:"):]
    return json.loads(text[:text.index("}") + 1])


def docs_defaults():
    """{key: default} from the configuration table of docs/farm.md."""
    doc = (ROOT / "docs" / "farm.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| .* \| ([^|]+) \|$", doc, re.M)
    out = {}
    for key, value in rows:
        value = value.strip()
        if re.fullmatch(r"\d+ MiB", value):
            out[key] = int(value.split()[0]) << 20
        elif re.fullmatch(r"[\d.]+", value):
            out[key] = float(value)
    return out


def test_every_bound_has_its_default_in_help_and_docs():
    example, documented = help_example(), docs_defaults()
    for _, key, default, lo, hi in BOUNDS:
        assert lo <= default <= hi, key
        assert example.get(key) == default, (key, example.get(key), default)
        assert documented.get(key) == default, (key, documented.get(key), default)


def docs_value(text):
    """A bound as docs/farm.md writes it: 1024, 0.001, 10^12, 64 MiB."""
    text = text.strip()
    if text.endswith(" MiB"):
        return float(int(text.split()[0]) << 20)
    if "^" in text:
        base, power = text.split("^")
        return float(int(base) ** int(power))
    return float(text)


def docs_ranges():
    """{key: (lo, hi)} from the range column of docs/farm.md's configuration table."""
    doc = (ROOT / "docs" / "farm.md").read_text()
    rows = re.findall(r"^\| `(\w+)` \| .* \| \[([^],]+), ([^]]+)\] \| [^|]+ \|$", doc, re.M)
    return {key: (docs_value(lo), docs_value(hi)) for key, lo, hi in rows}


def test_every_bound_has_its_range_in_docs():
    """docs/farm.md lists every limit with its range, the one BOUNDS holds."""
    ranges = docs_ranges()
    for _, key, _, lo, hi in BOUNDS:
        assert ranges.get(key) == (lo, hi), (key, ranges.get(key), (lo, hi))
    assert set(ranges) == {b[1] for b in BOUNDS}


@pytest.mark.parametrize("kind,key,default,lo,hi", BOUNDS, ids=[b[1] for b in BOUNDS])
def test_every_bound_holds_at_both_ends(tmp_path, kind, key, default, lo, hi):
    for value in (lo, hi):
        r = serve(tmp_path, **{key: int(value) if kind == "COUNT" else value})
        assert r.returncode == 0, (key, value, r.stderr)
    if kind == "COUNT":
        words = f'"{key}" must be an integer in [{lo:.0f}, {hi:.0f}]'
        outside = [lo - 1, hi + 1, lo + 0.5]
    else:
        words = f'"{key}" must be a number of seconds in [{lo:g}, {hi:g}]'
        outside = [lo / 2 if lo > 0 else -0.001, hi * 1.5]
    for value in outside:
        r = serve(tmp_path, **{key: value})
        assert r.returncode == 2 and words in r.stderr, (key, value, r.returncode, r.stderr)
