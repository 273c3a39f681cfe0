"""assert() holds the invariants the comments state: in the farm, the store's job states
(queued -> running -> done | failed | cancelled, attempts bounded, a done job carries its
bundle and evidence folder) and the server's (a request set aside is in one list and never
freed there, one answer per request, a job in at most one filing slot). They are active in
every build `make test` and `make matrix` run: no NDEBUG compiles them out. This checks
that each file that states such invariants calls glibc's assert handler in its object."""
import subprocess

import pytest

from cairntest import TBIN

OBJ = TBIN.parent  # the Makefile's $(OBJ)

ASSERTING = ["farm/db/db.c", "farm/serve/hub.c", "farm/serve/server.c",
             "farm/serve/handlers.c", "farm/serve/auth.c", "farm/serve/config.c"]


@pytest.mark.parametrize("source", ASSERTING)
def test_asserts_are_compiled_in(source):
    obj = OBJ / source.replace(".c", ".o")
    assert obj.exists(), f"{obj} not built"
    undefined = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                               check=True).stdout.split()
    assert "__assert_fail" in undefined, f"{source}: assert() compiled out (NDEBUG?)"
