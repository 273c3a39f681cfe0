"""scripts/deps.sh and the Makefile's use of it: packages split by use (build, test, gpu);
plain `make` installs nothing and names the one command that installs what the build
lacks; `make test` (CI's .ci/run on a fresh Debian machine) still installs every package
it needs. A stand-in dpkg-query says which packages are missing; a stand-in apt-get
records what would have been installed, so nothing here touches the machine's packages."""
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from cairntest import ROOT  # noqa: E402

DEPS = ROOT / "scripts" / "deps.sh"


def stand_ins(tmp, missing):
    """A dpkg-query that says every package but MISSING is installed, and an apt-get that
    appends its arguments to tmp/apt.log."""
    fake_q = tmp / "dpkg-query"
    fake_q.write_text("#!/bin/sh\nfor p in $FAKE_MISSING; do [ \"$p\" = \"$3\" ] && exit 1; done\n"
                      "printf 'install ok installed'\n")
    fake_apt = tmp / "apt-get"
    fake_apt.write_text(f"#!/bin/sh\necho \"$*\" >>{tmp / 'apt.log'}\n")
    for f in (fake_q, fake_apt):
        f.chmod(0o755)
    return dict(os.environ, DEPS_DPKG_QUERY=str(fake_q), DEPS_APT_GET=str(fake_apt),
                FAKE_MISSING=" ".join(missing))


def deps(tmp, args, missing=()):
    env = stand_ins(tmp, missing)
    return subprocess.run(["bash", DEPS, *args], capture_output=True, text=True, env=env,
                          timeout=120)


def listed(group):
    r = subprocess.run(["bash", DEPS, "--list", group], capture_output=True, text=True,
                       check=True, timeout=60)
    return r.stdout.split()


def test_groups_split_by_use():
    build, test, gpu = listed("build"), listed("test"), listed("gpu")
    for p in ("gcc", "make", "libcjson-dev", "libssl-dev", "libcurl4-openssl-dev", "libz3-dev",
              "libsqlite3-dev", "libpq-dev", "libmicrohttpd-dev"):
        assert p in build
    for p in ("chromium", "postgresql", "valgrind", "clang-format", "libmpfr-dev",
              "python3-pytest", "python3-numpy"):
        assert p in test and p not in build and p not in gpu
    assert set(build) <= set(test) and set(build) <= set(gpu)
    assert "nvcc" in gpu and "nvcc" not in test


def test_check_names_what_the_build_lacks_and_installs_nothing(tmp_path):
    r = deps(tmp_path, ["--check", "build"], missing=["libz3-dev", "chromium"])
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "libz3-dev" in lines[0] and "chromium" not in lines[0]
    assert "apt-get install -y --no-install-recommends libz3-dev" in lines[0]
    assert not (tmp_path / "apt.log").exists()


def test_check_passes_when_only_test_packages_are_missing(tmp_path):
    r = deps(tmp_path, ["--check", "build"], missing=["chromium", "postgresql", "valgrind"])
    assert r.returncode == 0 and r.stderr == "" and not (tmp_path / "apt.log").exists()


def test_dry_run_on_a_fresh_machine_lists_every_test_package(tmp_path):
    """What make test installs on a fresh Debian machine (nothing installed): every package
    of the build and test groups, in one apt-get command, and nothing is installed."""
    everything = listed("test")
    r = deps(tmp_path, ["--dry-run", "test"], missing=everything)
    assert r.returncode == 0
    (line,) = r.stdout.strip().splitlines()
    assert "apt-get install -y --no-install-recommends" in line
    assert set(line.split("--no-install-recommends", 1)[1].split()) == set(everything)
    assert not (tmp_path / "apt.log").exists()
    assert deps(tmp_path, ["--dry-run", "test"]).stdout == ""


@pytest.mark.skipif(os.geteuid() != 0, reason="install mode runs apt-get through sudo unless root")
def test_install_runs_apt_get_for_the_missing_only(tmp_path):
    r = deps(tmp_path, ["test"], missing=["chromium", "gcc"])
    assert r.returncode == 0, r.stderr
    log = (tmp_path / "apt.log").read_text().splitlines()
    assert log[0].startswith("update")
    assert log[1].split()[-2:] == ["gcc", "chromium"]


def make_dry(tmp, *goals):
    r = subprocess.run(["make", "-n", "--no-print-directory", *goals, f"OBJ={tmp}/obj",
                        f"BIN={tmp}/bin", "PYTEST_ARGS=none"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_plain_make_checks_and_make_test_installs(tmp_path):
    plain = make_dry(tmp_path)
    assert "scripts/deps.sh --check build" in plain and "scripts/deps.sh test" not in plain
    assert "scripts/deps.sh test" in make_dry(tmp_path, "test")
    gpu = make_dry(tmp_path, "gpu")
    assert "scripts/deps.sh --check build" in gpu and "scripts/deps.sh test" not in gpu
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_make_without_a_build_package_stops_with_the_command(tmp_path):
    env = stand_ins(tmp_path, ["libmicrohttpd-dev"])
    r = subprocess.run(["make", "--no-print-directory", f"OBJ={tmp_path}/obj",
                        f"BIN={tmp_path}/bin"], cwd=ROOT, capture_output=True, text=True,
                       env=env, timeout=300)
    assert r.returncode != 0
    assert "apt-get install -y --no-install-recommends libmicrohttpd-dev" in r.stderr
    assert not (tmp_path / "apt.log").exists()
    assert not (tmp_path / "bin").exists()
