"""Seeing values: `cairn run --show`, `--observe-file`, `cairn show` and `cairn diff`, end
to end. The values are held to Python (its own left-to-right float sum and exact
fractions for examples/exact_dot.cairn, struct and numpy for the rest); the observation
file is read and written here by a reader and a writer made from docs/tools.md's
description alone, so the format is what the page says. lib/obs.h's decoding itself is
tested exhaustively in tests/lib/test_obs.py."""
import hashlib
import json
import pathlib
import re
import struct
import sys
from fractions import Fraction

import numpy as np
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import EXAMPLES, cairn  # noqa: E402
from cairntest import cairn_cell_flags  # noqa: E402

MAGIC = b"CAIRN-OBSERVATIONS 1\n"
TYPES = {"f64": "<d", "f32": "<f", "f16": "<e", "i32": "<i", "u8": "<B", "i64": "<q",
         "bool": "<B", "bf16": "<H", "f8e4m3": "<B", "u64": "<Q", "usize": "<Q", "i8": "<b"}


def read_obs_file(path):
    """[(line dict, bits)] of an observation file, as docs/tools.md describes it."""
    data = pathlib.Path(path).read_bytes()
    assert data.startswith(MAGIC)
    pos, out = len(MAGIC), []
    while pos < len(data):
        nl = data.index(b"\n", pos)
        line = json.loads(data[pos:nl])
        size = line["count"] * struct.calcsize(TYPES[line["type"]])
        bits = data[nl + 1:nl + 1 + size]
        assert data[nl + 1 + size:nl + 2 + size] == b"\n"
        assert hashlib.sha256(bits).hexdigest() == line["sha256"]
        out.append((line, bits))
        pos = nl + 2 + size
    return out


def write_obs_file(path, items):
    """An observation file from [(name, type, bits)]."""
    out = bytearray(MAGIC)
    for name, typ, bits in items:
        count = len(bits) // struct.calcsize(TYPES[typ])
        line = {"name": name, "type": typ, "count": count,
                "sha256": hashlib.sha256(bits).hexdigest()}
        out += json.dumps(line, separators=(",", ":")).encode() + b"\n" + bits + b"\n"
    pathlib.Path(path).write_bytes(bytes(out))
    return path


def pack(typ, values):
    return b"".join(struct.pack(TYPES[typ], v) for v in values)


def exact_dot_model():
    """x, the exact sum and the left-to-right sum of examples/exact_dot.cairn, in Python:
    its floats are IEEE doubles rounded to nearest, so a plain loop is the ordered fold."""
    n = 70000
    x = [(float(i % 1000) - 499.5) * 1000000000000.0 + 1.0 for i in range(n)]
    y = [1.0 + float(i % 7) * 0.125 for i in range(n)]
    products = [a * b for a, b in zip(x, y)]
    ordered = 0.0
    for p in products:
        ordered += p
    exact = float(sum(Fraction(p) for p in products))   # one rounding of the exact sum
    return x, exact, ordered


def hexbits(v):
    return "0x" + struct.pack(">d", v).hex()


@pytest.fixture(scope="module")
def exact_dot(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("exact_dot")
    r = cairn("run", EXAMPLES / "exact_dot.cairn", *cairn_cell_flags(), "--show",
              "--observe-file", tmp / "all.obs", "--observe-raw", tmp / "raw")
    assert r.returncode == 0, r.stderr
    return r.stdout, tmp


def test_exact_dot_shows_the_exact_and_ordered_sums_differ(exact_dot):
    out, _ = exact_dot
    x, exact, ordered = exact_dot_model()
    assert exact == 96250.0 and ordered != exact     # the example's point
    lines = out.splitlines()
    assert lines[3] == f"exact    f64  {exact!r}  ({hexbits(exact)})"
    assert lines[4] == f"ordered  f64  {ordered!r}  ({hexbits(ordered)})"
    assert lines[0] == (f"x        f64[70000]  min {min(x)!r}  max {max(x)!r}  NaN 0  inf 0")
    assert lines[1] == "         first " + ", ".join(map(repr, x[:3]))
    assert lines[2] == "         last  " + ", ".join(map(repr, x[-3:]))
    assert len(lines) == 5


def test_observation_file_and_raw_folder_hold_the_same_bits(exact_dot):
    _, tmp = exact_dot
    items = read_obs_file(tmp / "all.obs")
    index = [json.loads(line) for line in (tmp / "raw" / "index.jsonl").read_text().splitlines()]
    assert [i[0]["name"] for i in items] == ["x", "exact", "ordered"]
    for (line, bits), entry in zip(items, index):
        assert {**line, "file": entry["file"]} == entry
        assert (tmp / "raw" / entry["file"]).read_bytes() == bits
    x, exact, ordered = exact_dot_model()
    assert items[0][1] == pack("f64", x)
    assert items[1][1] == pack("f64", [exact]) and items[2][1] == pack("f64", [ordered])
    # cairn show prints a file and a folder alike, and as run --show did
    shown_file = cairn("show", tmp / "all.obs")
    shown_dir = cairn("show", tmp / "raw")
    assert shown_file.returncode == shown_dir.returncode == 0
    assert shown_file.stdout == shown_dir.stdout == exact_dot[0]
    assert cairn("diff", tmp / "all.obs", tmp / "raw").returncode == 0


def test_exact_sum_is_identical_at_every_pool_width(exact_dot, tmp_path):
    _, tmp = exact_dot
    one = tmp_path / "one.obs"
    r = cairn("run", EXAMPLES / "exact_dot.cairn", *cairn_cell_flags(), "--observe-file", one,
              env={"CAIRN_THREADS": "1"})
    assert r.returncode == 0 and r.stdout == "", r.stderr
    d = cairn("diff", one, tmp / "all.obs")
    assert d.returncode == 0, d.stdout
    assert d.stdout.splitlines() == ["x        f64[70000]  identical", "exact    f64  identical",
                                     "ordered  f64  identical",
                                     "3 observations: 3 identical, 0 differ"]


STORAGE = """fn main() -> i32 {
  buffer h:f16[8] = zeroed;
  buffer b:bf16[2] = zeroed;
  buffer q:i8[3] = zeroed;
  for i in 0..8 { h[i] = f16(f32(i) * 0.1 - 0.3); }
  b[0] = bf16(3.14159);
  b[1] = from_bits[bf16](0xff80);
  q[0] = quantize[i8](-1000.0, 1.0);
  q[2] = quantize[i8](2.5, 1.0);
  let e = f8e4m3(448.0);
  let flag = f32(h[0]) < f32(h[1]);
  observe("h", h);
  observe("b", b);
  observe("q", q);
  observe("e", e);
  observe("flag", flag);
  let big:u64 = 18446744073709551615;
  observe("big", big);
  return 0;
}
"""


def test_show_decodes_every_kind(tmp_path):
    src = tmp_path / "kinds.cairn"
    src.write_text(STORAGE)
    r = cairn("run", src, *cairn_cell_flags(), "--show", "--observe-file", tmp_path / "k.obs")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    h = np.array([np.float16(np.float32(i) * np.float32(0.1) - np.float32(0.3)) for i in range(8)])
    assert (read_obs_file(tmp_path / "k.obs")[0][1]) == h.astype("<f2").tobytes()
    hs = [str(v) for v in h]
    assert lines[0] == (f"h     f16[8]  min {str(min(h))}  max {str(max(h))}  NaN 0  inf 0")
    assert lines[1] == "      first " + ", ".join(hs[:3])
    assert lines[2] == "      last  " + ", ".join(hs[-3:])
    assert lines[3] == "b     bf16[2]  min -inf  max 3.14  NaN 0  inf 1"   # shortest in bf16
    assert lines[4] == "      elements 3.14, -inf"
    assert lines[5] == "q     i8[3]  min -128  max 2"
    assert lines[6] == "      elements -128, 0, 2"      # 2.5 ties to even
    assert lines[7] == "e     f8e4m3  450.0  (0x7e)"   # 448: 450 is the shortest that reads back
    assert lines[8] == "flag  bool  true"
    assert lines[9] == "big   u64  18446744073709551615"


def run_diff(a, b, *flags):
    r = cairn("diff", *flags, a, b)
    return r.returncode, r.stdout.splitlines(), r.stderr


def test_diff_reports_counts_first_and_largest_ulps(tmp_path):
    base = [1.0, 2.0, 3.0, 0.0, float("nan"), 5.0, 6.0, 7.0]
    other = list(base)
    up = lambda v, k: struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0] + k))[0]
    other[1] = up(2.0, 1)          # 1 ULP
    other[3] = -0.0                # different bits, 0 ULP
    other[6] = up(6.0, 5)          # 5 ULP: the largest
    a = write_obs_file(tmp_path / "a.obs", [("y", "f32", pack("f32", base)),
                                            ("s", "f64", pack("f64", [1.0])),
                                            ("n", "i32", pack("i32", [5, 7])),
                                            ("gone", "u8", b"\x01")])
    b = write_obs_file(tmp_path / "b.obs", [("y", "f32", pack("f32", other)),
                                            ("s", "f64", pack("f64", [float("nan")])),
                                            ("n", "i32", pack("i32", [5, -7])),
                                            ("new", "u8", b"\x02")])
    rc, lines, err = run_diff(a, b)
    assert rc == 1, err
    assert lines[0] == ("y     f32[8]  differs in 3 of 8 elements; first [1]: 2.0 (0x40000000) vs "
                        f"{str(np.float32(other[1]))} (0x40000001), 1 ULP; largest 5 ULP at [6]")
    assert lines[1] == ("s     f64  differs: 1.0 (0x3ff0000000000000) in A, nan (0x7ff8000000000000) "
                        "in B, no ULP distance (a NaN and a number)")
    assert lines[2] == ("n     i32[2]  differs in 1 of 2 elements; first [1]: 7 (0x00000007) vs -7 "
                        "(0xfffffff9), 14 ULP")
    assert lines[3] == "gone  only in A (u8[1])"
    assert lines[4] == "new   only in B (u8[1])"
    assert lines[5] == ("5 observations: 0 identical, 3 differ, 1 only in A, 1 only in B; "
                        "largest distance: a NaN against a number (s)")
    rc, lines, _ = run_diff(a, b, "--quiet")
    assert rc == 1 and lines == []
    rc, lines, _ = run_diff(a, a, "-q")
    assert rc == 0 and lines == []


def test_diff_pairs_repeated_names_by_occurrence_and_checks_shapes(tmp_path):
    a = write_obs_file(tmp_path / "a.obs", [("t", "f64", pack("f64", [1.0])),
                                            ("t", "f64", pack("f64", [2.0])),
                                            ("v", "f64", pack("f64", [1.0, 2.0]))])
    b = write_obs_file(tmp_path / "b.obs", [("v", "f32", pack("f32", [1.0, 2.0])),
                                            ("t", "f64", pack("f64", [1.0])),
                                            ("t", "f64", pack("f64", [2.0]))])
    rc, lines, _ = run_diff(a, b)
    assert rc == 1
    assert lines == ["t  f64  identical", "t  f64  identical",
                     "v  differs: f64[2] in A, f32[2] in B",
                     "3 observations: 2 identical, 1 differ"]
    # -0.0 against +0.0: different bits, no distance to speak of
    z = write_obs_file(tmp_path / "z.obs", [("z", "f64", pack("f64", [0.0]))])
    nz = write_obs_file(tmp_path / "nz.obs", [("z", "f64", pack("f64", [-0.0]))])
    rc, lines, _ = run_diff(z, nz)
    assert rc == 1 and lines[0].endswith("in B, 0 ULP") and "-0.0 (0x8000000000000000)" in lines[0]


@pytest.mark.parametrize("corrupt,message", [
    (lambda p: p.write_bytes(b"not an observation file\n"), "is not an observation file"),
    (lambda p: p.write_bytes(p.read_bytes()[:-5]), "ends inside its"),
    (lambda p: p.write_bytes(p.read_bytes().replace(b'"f64"', b'"f65"')), "no known type"),
    (lambda p: p.write_bytes(p.read_bytes()[:-2] + bytes([p.read_bytes()[-2] ^ 1]) + b"\n"),
     "do not match its sha256"),
    (lambda p: p.write_bytes(p.read_bytes().replace(b'"count":2', b'"count":-2')), "no element count"),
    (lambda p: p.write_bytes(p.read_bytes().replace(b'"count":2', b'"count":99999999999')),
     "ends inside"),
])
def test_a_damaged_file_is_refused_with_exit_2(tmp_path, corrupt, message):
    good = write_obs_file(tmp_path / "g.obs", [("v", "f64", pack("f64", [1.0, 2.0]))])
    bad = tmp_path / "bad.obs"
    bad.write_bytes(good.read_bytes())
    corrupt(bad)
    for argv in (["show", bad], ["diff", good, bad], ["diff", bad, good]):
        r = cairn(*argv)
        assert r.returncode == 2 and message in r.stderr, (argv, r.stderr)
        assert r.stderr.count("\n") == 1


def test_a_raw_folder_must_stay_inside_itself(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 8)
    line = {"name": "v", "type": "f64", "count": 1,
            "sha256": hashlib.sha256(b"\0" * 8).hexdigest(), "file": "../secret.bin"}
    (raw / "index.jsonl").write_text(json.dumps(line) + "\n")
    r = cairn("show", raw)
    assert r.returncode == 2 and "names no file in the folder" in r.stderr
    (tmp_path / "empty").mkdir()
    r = cairn("show", tmp_path / "empty")
    assert r.returncode == 2 and "has no index.jsonl" in r.stderr
    r = cairn("show", tmp_path / "missing")
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_show_all_and_usage(tmp_path):
    f = write_obs_file(tmp_path / "f.obs", [("v", "i32", pack("i32", [3, -1])),
                                            ("e", "f64", b"")])
    r = cairn("show", "--all", f)
    assert r.returncode == 0
    assert r.stdout.splitlines() == ["v  i32[2]  min -1  max 3", "   elements 3, -1",
                                     "   [0] 3  (0x00000003)", "   [1] -1  (0xffffffff)",
                                     "e  f64[0]  (no elements)"]
    two = cairn("show", f, f)
    assert two.returncode == 0 and two.stdout.count(f"{f}:\n") == 2
    assert cairn("show").returncode == 2 and cairn("show", "--frob", f).returncode == 2
    assert cairn("diff", f).returncode == 2 and cairn("diff", f, f, f).returncode == 2


def test_a_stale_raw_index_is_not_shown(tmp_path):
    """--observe-raw into a folder an earlier run used: a program that observes nothing
    shows nothing, not the earlier run's observations."""
    raw = tmp_path / "raw"
    assert cairn("run", EXAMPLES / "exact_dot.cairn", *cairn_cell_flags(), "--observe-raw",
                 raw).returncode == 0
    src = tmp_path / "quiet.cairn"
    src.write_text("fn main() -> i32 { return 0; }\n")
    r = cairn("run", src, *cairn_cell_flags(), "--observe-raw", raw, "--show")
    assert r.returncode == 0 and r.stdout == "(no observations)\n", r.stdout


def tools_md():
    from cairntest import ROOT
    return (ROOT / "docs" / "tools.md").read_text()


def test_the_documented_reader_reads_what_run_writes(exact_dot):
    """docs/tools.md's Python reader of the observation file, run as written."""
    _, tmp = exact_dot
    import textwrap
    code = re.search(r"```python\n(\s*import hashlib, json\n.*?)\n\s*```", tools_md(), re.S)[1]
    space = {}
    exec(textwrap.dedent(code), space)
    assert space["read"](tmp / "all.obs") == read_obs_file(tmp / "all.obs")


def test_the_documented_show_and_diff_outputs_are_real(exact_dot, tmp_path):
    out, _ = exact_dot
    doc = tools_md()
    shown = re.search(r"\$ cairn run examples/exact_dot.cairn --show\n(.*?)```", doc, re.S)[1]
    assert shown == out
    base = [1.0, 2.0, 3.0, 0.0, float("nan"), 5.0, 6.0, 7.0]
    other = list(base)
    step = lambda v, k: struct.unpack("<f", struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0] + k))[0]
    other[1], other[3], other[6] = step(2.0, 1), -0.0, step(6.0, 5)
    write_obs_file(tmp_path / "run1.obs", [("y", "f32", pack("f32", base)),
                                           ("s", "f64", pack("f64", [1.0])), ("gone", "u8", b"\x01")])
    write_obs_file(tmp_path / "run2.obs", [("y", "f32", pack("f32", other)),
                                           ("s", "f64", pack("f64", [float("nan")]))])
    r = cairn("diff", "run1.obs", "run2.obs", cwd=tmp_path)
    documented = re.search(r"\$ cairn diff run1.obs run2.obs\n(.*?)```", doc, re.S)[1]
    assert r.returncode == 1 and r.stdout == documented
