"""Every host example builds with this cell's compiler and sanitizer and returns 0, and
its receipt says what the spec says it must: the versions, digests, compiler and exact
flags, and each function's roundings (checked field by field)."""
import hashlib
import pathlib
import re
import struct
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import EXAMPLES, build, cairn, read_log, run_exe, sha256
from cairntest import CC, SANITIZE_FLAG

ARITH32 = {"op": "arith", "type": "f32", "rounding": "nearest-even"}
ARITH64 = {"op": "arith", "type": "f64", "rounding": "nearest-even"}
SUM_EXACT = {"op": "sum", "from": "f64", "to": "f64", "rounding": "nearest-even", "sum": "exact"}
SUM_ORDERED = dict(SUM_EXACT, sum="ordered")


def quantize(to):
    return {"op": "quantize", "from": "f32", "to": to, "rounding": "nearest-even", "saturate": True}


def convert(frm, to, **extra):
    return dict({"op": "convert", "from": frm, "to": to, "rounding": "nearest-even"}, **extra)


# Exact numerics per function; "main" of storage_floats is checked by inclusion below,
# since which compute type an untyped literal takes there is the front end's choice.
NUMERICS = {
    "storage_floats": {"pack": [quantize("f8e4m3")], "dot": [ARITH32],
                       "mean": [ARITH32, convert("f32", "bf16", overflow="inf")]},
    "parallel_sum": {"dot": [ARITH64, SUM_EXACT], "main": [ARITH64, SUM_ORDERED]},
    "exact_dot": {"dot_exact": [ARITH64, SUM_EXACT], "dot_ordered": [ARITH64, SUM_ORDERED],
                  "main": [convert("usize", "f64"), ARITH64]},
    "quantized_dot": {"quantize_all": [quantize("i8")], "qdot": [ARITH32],
                      "main": [convert("usize", "f32"), ARITH32]},
    "enclose": {"ordered": [ARITH64, SUM_ORDERED],
                "main": [{"op": "literal", "to": "f64", "rounding": "nearest-even"},
                         {"op": "matmul", "from": "f64", "to": "f64", "rounding": "outward", "sum": "exact"}]},
}


def host_examples():
    """Examples with a main that this cairn accepts (train.cairn waits for derive grad)."""
    found = []
    for path in sorted(EXAMPLES.glob("*.cairn")):
        if "fn main()" in path.read_text() and cairn("check", path).returncode == 0:
            found.append(path)
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("examples")
    return {p.stem: (p, out_dir / p.stem, build(p, out_dir / p.stem)) for p in host_examples()}


def test_every_numerics_example_is_host_buildable(built):
    assert set(NUMERICS) <= set(built), f"not built: {set(NUMERICS) - set(built)}"


def test_every_host_example_returns_zero(built, tmp_path):
    for name, (_, exe, _) in built.items():
        result = run_exe(exe, env={"CAIRN_OBSERVE": str(tmp_path / f"{name}.jsonl")})
        assert result.returncode == 0, (name, result.stderr)


def compiler_version():
    arg = "-dumpfullversion" if CC == "gcc" else "-dumpversion"
    return subprocess.run([CC, arg], capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("name", sorted(NUMERICS))
def test_receipt_fields(built, name):
    source, exe, receipt = built[name]
    assert receipt["cairn"] == "0.1.0"
    assert receipt["source"] == {"path": str(source),
                                 "sha256": hashlib.sha256(source.read_bytes()).hexdigest()}
    assert receipt["output"] == {"path": str(exe), "sha256": hashlib.sha256(exe.read_bytes()).hexdigest()}
    assert receipt["target"] == "host" and receipt["emulate"] is False
    cc = receipt["compiler"]
    assert cc["name"] == CC and cc["version"] == compiler_version()
    flags = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off", "-fno-fast-math"]
    san = {None: [], "thread": ["-fsanitize=thread"],
           "address,undefined": ["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                                 "-fno-omit-frame-pointer"]}[SANITIZE_FLAG]
    assert cc["flags"] == flags + san
    assert receipt["sanitizers"] == (SANITIZE_FLAG.split(",") if SANITIZE_FLAG else [])
    assert re.fullmatch(r"[0-9a-f]{64}", receipt["runtime_sha256"])
    for fn, entries in NUMERICS[name].items():
        assert receipt["numerics"][fn] == entries, fn


def test_storage_floats_main_numerics(built):
    main = built["storage_floats"][2]["numerics"]["main"]
    for entry in [convert("usize", "f32"), ARITH32, quantize("i8")]:
        assert entry in main
    for to in ["f16", "bf16"]:
        assert any(e["op"] == "convert" and e["to"] == to and e["overflow"] == "inf" for e in main)


def test_quantized_dot_observations_match_model(built, tmp_path):
    log = tmp_path / "q.jsonl"
    run_exe(built["quantized_dot"][1], env={"CAIRN_OBSERVE": str(log)})
    q = struct.pack("<64b", *[(i - 32) * 4 for i in range(64)])
    assert read_log(log) == [{"name": "q", "type": "i8", "count": 64, "sha256": sha256(q)},
                             {"name": "qdot", "type": "f32", "count": 1,
                              "sha256": sha256(struct.pack("<f", -8.0))}]
