"""pytest hooks: tests marked `matrix` run only under `make matrix`."""
import pytest

from cairntest import MATRIX


def pytest_collection_modifyitems(config, items):
    if MATRIX:
        return
    skip = pytest.mark.skip(reason="long sweep: runs in `make matrix`")
    for item in items:
        if "matrix" in item.keywords:
            item.add_marker(skip)
