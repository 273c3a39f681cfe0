"""The Python package's tests run the package from this tree (python/cairn) with this
cell's cairn binary and runtime library, and a cache of their own."""
import os
import pathlib
import sys

import pytest

from cairntest import BIN, ROOT, TBIN

sys.path.insert(0, str(ROOT / "python"))


@pytest.fixture(autouse=True, scope="session")
def _package_environment(tmp_path_factory):
    os.environ["CAIRN"] = str(BIN / "cairn")
    os.environ["CAIRN_RUNTIME_LIB"] = str(pathlib.Path(TBIN).parent / "libcairn.so")
    os.environ["CAIRN_CACHE"] = str(tmp_path_factory.mktemp("cairn-cache"))
    yield
