"""Golden run programs (tests/golden/run/*.cairn): each says in `// expect-...:` comments
its exit status, its trap (reason and line:col), and its observations (name, type, count,
SHA-256 of the raw little-endian bits). The digests in the comments come from Python
models (tests/build/test_observe_models.py recomputes them), never from cairn."""
import sys
import pathlib

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # buildlib.py
from buildlib import GOLDEN_RUN, cairn, expectations, read_log
from cairntest import cairn_cell_flags

PROGRAMS = sorted(GOLDEN_RUN.glob("*.cairn"))


@pytest.mark.parametrize("source", PROGRAMS, ids=lambda p: p.stem)
def test_golden_run(source, tmp_path):
    want = expectations(source)
    assert want["exit"] is not None or want["trap"], f"{source} states no expectation"
    log = tmp_path / "obs.jsonl"
    result = cairn("run", source, *cairn_cell_flags(), "--observe", log)
    if want["trap"]:
        reason, _, where = want["trap"].rpartition(" at ")
        assert result.returncode != 0, result.stderr
        assert f"trap: {reason} at {source}:{where}\n" in result.stderr, result.stderr
    else:
        assert result.returncode == want["exit"], result.stderr
        assert "trap:" not in result.stderr
    got = read_log(log) if log.exists() else []
    assert got == want["observe"]
