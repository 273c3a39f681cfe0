"""The front end's test helpers (tests/frontend/frontlib.py), for tests/tensor."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "frontend"))
from frontlib import check  # noqa: E402


def check_codes(path):
    """The codes `cairn check` reports for path (empty when accepted)."""
    _, found, _ = check(path)
    return [code for code, _, _ in found]
