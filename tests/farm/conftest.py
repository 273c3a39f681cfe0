"""tests/farm: every farm test runs once per store, SQLite and PostgreSQL (a throwaway
server started here for the session, tests/farm/pg_throwaway.sh); the PostgreSQL pass of
tests/farm took 2 min 25 s at load 1.6-4 and 5-6 min at load 9-10 on the shared 2-core
machine. CAIRN_FARM_STORE=sqlite or =postgresql runs one of them. Tests marked
`sqlite_only` (they reach into farm.db itself) run only under SQLite."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import farmlib  # noqa: E402

STORES = [s for s in os.environ.get("CAIRN_FARM_STORE", "sqlite,postgresql").split(",") if s]


def pytest_terminal_summary(terminalreporter):
    """The screenshots the browser tests kept (farmlib.ARTIFACTS_KEPT), listed."""
    if farmlib.ARTIFACTS_KEPT:
        terminalreporter.write_sep("-", "dashboard screenshots kept")
        for path in sorted(set(farmlib.ARTIFACTS_KEPT)):
            terminalreporter.write_line(str(path))


def pytest_configure(config):
    config.addinivalue_line("markers", "sqlite_only(reason): the test reads or edits farm.db")


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
