"""The .npy reader's fuzz corpus (tests/fuzz/corpus_npy: files NumPy wrote, hand-made
broken ones, and every input tests/fuzz/fuzz_npy.sh ever found that crashed, hung or
leaked) replayed through the fuzz target built with a plain main (fuzz_npy_replay). The
target itself checks that the parser and the file reader agree, never read past the
bytes, and that what they accept writes back to the same file. Here: no input trips a
sanitizer or a check, and each seed is read, or refused, for the reason it was made."""
import os
import pathlib

from cairntest import TBIN, run

CORPUS = pathlib.Path(__file__).resolve().parent / "corpus_npy"


def replay(*paths):
    r = run([TBIN / "fuzz_npy_replay", *paths], timeout=120,
            env={"FUZZ_NPY_VERBOSE": "1", "TMPDIR": os.environ.get("TMPDIR", "/tmp")})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Sanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    assert r.stdout.rstrip().endswith(f"replayed {len(list(CORPUS.iterdir())) if paths == (CORPUS,) else len(paths)} inputs")
    return dict(line.split(": ", 1) for line in r.stdout.splitlines()[:-1])


def test_the_whole_corpus_replays_cleanly():
    inputs = [p for p in CORPUS.iterdir() if p.is_file()]
    assert len(inputs) >= 30
    assert len(replay(CORPUS)) == len(inputs)


def test_numpys_own_files_are_read_with_their_dtype_shape_and_order():
    got = replay(CORPUS)
    assert got["f32_1d"] == "read <f4 v1 (5,) C"
    assert got["f64_2d"] == "read <f8 v1 (2, 3) C"
    assert got["i64_scalar"] == "read <i8 v1 () C"
    assert got["empty_2d"] == "read <f8 v1 (3, 0) C"
    assert got["fortran"] == "read <f4 v1 (2, 3) F"  # read; main's reader refuses the order
    assert got["v2"] == "read <i4 v2 (3,) C" and got["v3"] == "read <i2 v3 (3,) C"
    assert got["py2_long"] == "read <f4 v1 (2,) C" and got["double_quotes"].startswith("read")


def test_broken_files_are_refused_for_their_reason():
    got = replay(CORPUS)
    want = {
        "not_npy": "does not start with \\x93NUMPY", "version_9": "version 9.0",
        "truncated_header": "truncated: the header is 118 bytes",
        "truncated_data": "truncated: its header says 4 elements (16 bytes), the file holds 13",
        "longer": "more than its 4 elements take (16)", "structured": "structured dtype",
        "missing_shape": "lacks 'shape'", "dup_key": "'descr' twice", "extra_key": "key 'x'",
        "tuple_no_comma": "(N,)", "overflow_shape": "more elements than 2^64",
        "huge_dim": "past 2^63 - 1", "negative_dim": "where a whole number goes",
        "many_dims": "more than 32 dimensions", "trailing_text": "text after its dict",
        "leading_zero": "leading zero", "escape": "escape", "bool_fortran_word": "True or False",
    }
    for name, reason in want.items():
        assert got[name].startswith("refused") and reason in got[name], (name, got[name])
