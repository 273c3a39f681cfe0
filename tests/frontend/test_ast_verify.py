"""ast_verify (compiler/syntax/ast_verify.c) holds syntax/ast.h's contract between
passes: the checker calls it on every program it accepts and after `derive grad` adds
functions. Through tests/c/ast_verify_check.c, a checked tree broken on purpose, one way
at a time, is caught, with what it breaks; the intact tree passes; and the check between
passes aborts with an internal error naming the place."""
import subprocess

import pytest

from cairntest import TBIN, harness

CHECK = harness("ast_verify_check")

BREAKS = {
    "intact": "ok",
    "untyped": "an expression without a type (line 1)",
    "unresolved": "a name that does not resolve (line 1)",
    "call-target": "a call resolves to neither or both a builtin and a function (line 8)",
    "arity": "a call's arity differs from its function's (line 8)",
    "scan-type": "a scan whose type is not void (line 5)",
    "local-number": "a local's number is outside its function's nlocals (line 8)",
    "let-symbol": "a let without its symbol (line 8)",
    "blocks-on-host": "a cooperative region not placed on the device (line 3)",
    "derived-missing-child": "a missing expression (line 6)",
    "param-type": "a parameter without its type (line 1)",
}


def test_every_break_is_caught():
    out = subprocess.run([str(CHECK)], capture_output=True, text=True, check=True).stdout
    got = dict(line.split(": ", 1) for line in out.splitlines())
    assert got == BREAKS


def test_the_check_between_passes_aborts():
    r = subprocess.run([str(CHECK), "die"], capture_output=True, text=True)
    assert r.returncode < 0  # SIGABRT
    assert ("cairn: internal error: after a deliberate break, probe.cairn:1:31: an "
            "expression without a type") in r.stderr


@pytest.mark.parametrize("obj", ["compiler/check/check.o"])
def test_the_checker_calls_it(obj):
    nm = subprocess.run(["nm", "-u", str(TBIN.parent / obj)], capture_output=True, text=True,
                        check=True).stdout
    assert "ast_verify_or_die" in nm
