"""tests/farm: the farm tests run once per store, SQLite and PostgreSQL (a throwaway
server started here for the session, tests/farm/pg_throwaway.sh). `make test` runs every
module under SQLite and the modules in PG_MODULES under PostgreSQL too (the whole second
pass took 5-6 minutes on the shared 2-core machine); `make matrix` (CAIRN_MATRIX=1) and
CAIRN_FARM_STORE=postgresql run every module under PostgreSQL; CAIRN_FARM_STORE=sqlite
runs SQLite only. Tests marked `sqlite_only` (they reach into farm.db itself) run only
under SQLite."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402
from cairntest import MATRIX  # noqa: E402

STORES = [s for s in os.environ.get("CAIRN_FARM_STORE", "sqlite,postgresql").split(",") if s]

# What the store decides: the queue, leases and kills, several coordinators, uploads and
# their refusals, the comparison's views, a small load.
PG_MODULES = {"test_farm_cluster.py", "test_multi_coordinator.py", "test_farm_rejections.py",
              "test_verdicts.py", "test_farm_load.py"}


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only(reason): the test reads or edits farm.db")


def pytest_collection_modifyitems(config, items):
    if MATRIX or "CAIRN_FARM_STORE" in os.environ:
        return
    keep, drop = [], []
    for item in items:
        store = getattr(item, "callspec", None) and item.callspec.params.get("farm_store")
        subset = store != "postgresql" or item.path.name in PG_MODULES
        (keep if subset else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session", params=STORES, autouse=True)
def farm_store(request):
    if request.param == "sqlite":
        yield "sqlite"
        return
    assert request.param == "postgresql", f"CAIRN_FARM_STORE: unknown store {request.param}"
    server = farmlib.ThrowawayPostgres()
    farmlib.POSTGRES = server
    try:
        yield "postgresql"
    finally:
        farmlib.POSTGRES = None
        server.stop()


@pytest.fixture(autouse=True)
def _sqlite_only(request, farm_store):
    marker = request.node.get_closest_marker("sqlite_only")
    if marker and farm_store != "sqlite":
        pytest.skip(f"SQLite only: {marker.args[0] if marker.args else 'reads farm.db'}")
