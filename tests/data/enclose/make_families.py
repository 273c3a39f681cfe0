#!/usr/bin/python3
"""Writes the bracket GEMM's case families (tests/runtime/enclose_families.py) as one
case file, for checks that run outside pytest: make gpu brackets them on the device
with tools/enclose_check_cuda --check-host, case by case against the host's bits.
Deterministic (every case is seeded by its name). Usage: make_families.py OUT [--long]
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "runtime"))
from enclose_families import families  # noqa: E402
from enclose_model import write_cases  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) == 2 else 2)
    write_cases(sys.argv[1], families(long="--long" in sys.argv[2:]))
