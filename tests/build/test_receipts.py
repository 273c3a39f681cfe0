"""Receipts are deterministic: the same inputs give the same bytes, and a change of the
source, the compiler, the flags or the sanitizers changes them (in the field that says
so). SOURCE_DATE_EPOCH is the only time that may enter one."""
import json
import pathlib
import shutil
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import EXAMPLES, GOLDEN_RUN, cairn

SOURCE = EXAMPLES / "parallel_sum.cairn"


def receipt_bytes(source, out, *flags, env=None):
    result = cairn("build", source, "-o", out, *flags, env=env)
    assert result.returncode == 0, result.stderr
    return pathlib.Path(f"{out}.receipt.json").read_bytes()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    d = tmp_path_factory.mktemp("receipts")
    return d, receipt_bytes(SOURCE, d / "prog", "--cc", "gcc")


def test_same_inputs_same_bytes(base):
    d, first = base
    assert receipt_bytes(SOURCE, d / "prog", "--cc", "gcc") == first
    assert first.endswith(b"\n") and b"source_date_epoch" not in first


def test_source_change_changes_receipt(base, tmp_path):
    d, first = base
    edited = tmp_path / "parallel_sum.cairn"
    edited.write_text(SOURCE.read_text() + "// one more line\n")
    shutil.copy(edited, d / "edited.cairn")
    other = json.loads(receipt_bytes(d / "edited.cairn", d / "prog", "--cc", "gcc"))
    assert other["source"]["sha256"] != json.loads(first)["source"]["sha256"]


@pytest.mark.parametrize("flags,field", [
    (["--cc", "clang"], "compiler"),
    (["--cc", "gcc", "-O1"], "compiler"),
    (["--cc", "gcc", "--sanitize", "address,undefined"], "sanitizers"),
    (["--cc", "gcc", "--sanitize", "thread"], "sanitizers"),
])
def test_build_change_changes_receipt(base, flags, field):
    d, first = base
    changed = receipt_bytes(SOURCE, d / "prog", *flags)
    assert changed != first
    assert json.loads(changed)[field] != json.loads(first)[field]


def test_source_date_epoch_recorded(base):
    d, _ = base
    r = json.loads(receipt_bytes(SOURCE, d / "epoch", "--cc", "gcc",
                                 env={"SOURCE_DATE_EPOCH": "1700000000"}))
    assert r["source_date_epoch"] == "1700000000"


def test_receipt_lists_unordered_free_host_program(base):
    # A host program whose bits the language fixes has no "order": "unordered" entry.
    _, first = base
    for entries in json.loads(first)["numerics"].values():
        assert all(e.get("order") != "unordered" for e in entries)


def test_unordered_operations_say_so(tmp_path):
    # atomic_add_unordered's order is the scheduler's: the farm reads "order" to know
    # that its digests need not match between runs.
    r = json.loads(receipt_bytes(GOLDEN_RUN / "atomics_host.cairn", tmp_path / "atomics", "--cc", "gcc"))
    # the contract's bound comes with it (numerics.md "Atomic float addition"); the host
    # keeps subnormals, so no flush term
    assert {"op": "atomic_add", "type": "f64", "rounding": "nearest-even",
            "order": "unordered", "space": "host", "flush_subnormals": False,
            "bound": "k * 2^-52 * (|old| + sum |v|)"} in r["numerics"]["main"]


LITERALS = ["0.1", "0.5", "1e22", "1e23", "0.000030517578125", "3.0", "16777217.0",
            "123456789.125", "0.3", "1e-5", "5e-324", "2.5e-3"]


def test_inexact_literals_listed(tmp_path):
    """A float literal its type cannot hold is listed as {"op": "literal", ...}; the
    model decides exactness with fractions, independently of cairn."""
    from fractions import Fraction
    import struct
    lines = []
    for k, text in enumerate(LITERALS):
        lines.append(f"fn d{k}() -> f64 = {text};")
        lines.append(f"fn s{k}() -> f32 = {text};" if float(text) < 3e38 and float(text) > 1e-40 else "")
    source = tmp_path / "literals.cairn"
    source.write_text("\n".join(lines) + "\nfn main() -> i32 { return 0; }\n")
    numerics = json.loads(receipt_bytes(source, tmp_path / "lit", "--cc", "gcc"))["numerics"]
    for k, text in enumerate(LITERALS):
        exact64 = Fraction(float(text)) == Fraction(text)
        listed = {"op": "literal", "to": "f64", "rounding": "nearest-even"} in numerics[f"d{k}"]
        assert listed == (not exact64), text
        if f"s{k}" in numerics:
            as32 = struct.unpack("<f", struct.pack("<f", float(text)))[0]
            exact32 = exact64 and as32 == float(text)
            listed = {"op": "literal", "to": "f32", "rounding": "nearest-even"} in numerics[f"s{k}"]
            assert listed == (not exact32), text


def test_receipt_hashes_the_bytes_parsed(tmp_path):
    """The source is read once: the receipt's digest is that of the bytes that were
    parsed and built, even when the file changes while the C compiler runs (here a --cc
    wrapper rewrites it before compiling the generated program), not a later read."""
    import hashlib
    import os
    import stat
    source = tmp_path / "moving.cairn"
    original = SOURCE.read_bytes()
    source.write_bytes(original)
    wrapper = tmp_path / "cc-that-edits"
    wrapper.write_text(
        "#!/bin/sh\n"
        "# compiling moving.c: the source changes under the build\n"
        f'case " $* " in *" moving.c "*) echo "// edited" >> "{source}" ;; esac\n'
        'exec gcc "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    r = json.loads(receipt_bytes(source, tmp_path / "moving", "--cc", wrapper))
    assert source.read_bytes() != original, "the wrapper did not edit the source"
    assert r["source"]["sha256"] == hashlib.sha256(original).hexdigest()
    assert r["compiler"]["name"] == "gcc"
