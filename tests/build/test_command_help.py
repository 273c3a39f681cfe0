"""One dispatch for cairn, cairn-farm and cairn-agent (lib/command.h): each binary's
--help lists its commands from the same table it dispatches with, and every command
listed answers `BIN NAME --help` and `BIN help NAME` with its usage and exit 0."""
import re
import subprocess

import pytest

from cairntest import BIN

# Commands each binary must list (the list is read from --help; these guard the reading).
KNOWN = {"cairn": {"check", "build", "run", "explain"},
         "cairn-farm": {"serve", "submit", "status", "verify"},
         "cairn-agent": {"keygen", "probe", "run", "loadgen", "sign"}}


def run(*argv):
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=30)


def listed(exe):
    """The names under `commands:` / `verbs:` in EXE --help, `help` aside."""
    top = run(exe, "--help")
    assert top.returncode == 0, top.stderr
    section = re.search(r"^(?:commands|verbs):\n((?:  .*\n)+)", top.stdout, re.M)
    assert section, top.stdout
    names = [m.group(1) for m in re.finditer(r"^  (\S+)", section.group(1), re.M)]
    return [n for n in names if n != "help"]


@pytest.mark.parametrize("program", sorted(KNOWN))
def test_every_listed_command_answers_help(program):
    exe = BIN / program
    names = listed(exe)
    assert KNOWN[program] <= set(names) and len(names) == len(set(names))
    for name in names:
        direct = run(exe, name, "--help")
        assert direct.returncode == 0, (program, name, direct.stderr)
        assert direct.stdout.startswith(f"usage: {program} {name}"), (program, name)
        via_help = run(exe, "help", name)
        assert via_help.returncode == 0 and via_help.stdout == direct.stdout, (program, name)


@pytest.mark.parametrize("program", sorted(KNOWN))
def test_unknown_and_missing_commands_exit_2(program):
    exe = BIN / program
    for argv in (["frobnicate"], ["help", "frobnicate"]):
        r = run(exe, *argv)
        assert r.returncode == 2 and "unknown" in r.stderr and r.stderr.count("\n") == 1
    bare = run(exe)
    assert bare.returncode == 2 and "usage:" in bare.stderr


@pytest.mark.parametrize("program", sorted(KNOWN))
def test_version_is_the_one_number_of_lib_version_h(program):
    """cairn, cairn-farm and cairn-agent print one version, lib/version.h's."""
    from cairntest import ROOT
    version = re.search(r'VERSION_CAIRN "([^"]+)"', (ROOT / "lib/version.h").read_text())[1]
    r = run(BIN / program, "--version")
    assert r.returncode == 0 and r.stdout == f"{program} {version}\n" and not r.stderr
    assert "--version" in run(BIN / program, "--help").stdout


@pytest.mark.parametrize("program", sorted(KNOWN))
def test_help_answers_its_own_help(program):
    noun = "COMMAND" if program == "cairn" else "VERB"
    for flag in ("--help", "-h"):
        r = run(BIN / program, "help", flag)
        assert r.returncode == 0 and r.stdout.startswith(f"usage: {program} help [{noun}]"), r
