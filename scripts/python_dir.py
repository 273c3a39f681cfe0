#!/usr/bin/env python3
"""Where `make install PREFIX=...` puts the Python package, as the interpreter running this
script sees it (make install PYTHON=... picks the interpreter): the first folder of its
sys.path under PREFIX that holds packages (Debian's /usr/local/lib/python3.X/dist-packages,
a venv's site-packages); else sysconfig's purelib for a Python installed at PREFIX
(PREFIX/lib/python3.X/site-packages), which PYTHONPATH then names."""
import os
import sys
import sysconfig


def python_dir(prefix):
    prefix = os.path.abspath(prefix)
    for entry in sys.path:
        if entry.endswith("-packages") and os.path.abspath(entry).startswith(os.path.join(prefix, "lib", "")):
            return entry
    return sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix})


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python_dir.py PREFIX")
    print(python_dir(sys.argv[1]))
