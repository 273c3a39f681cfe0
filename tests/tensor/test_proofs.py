"""make proofs, inside make test: every layout fact of proofs/prove_layouts.c is proved
by Z3, and each one is refuted (a counterexample, exit 10) when its formula is
deliberately broken, so a proof that could not fail would show here."""
import pytest

from cairntest import harness, run

FACTS = ["spread-is-isa", "c-share-is-spread", "spread-one-lane", "a-share-one-lane", "b-share-one-lane",
         "spec-swizzle-bijection", "tile32-swizzle-bijection", "tile32-a-runs", "tile32-b-runs",
         "tile64-a-wmma", "tile64-b-wmma", "tile64-stages-a-wmma", "tile64-stages-b-wmma"]


def test_the_prover_lists_every_fact():
    listed = run([harness("prove_layouts"), "--list"], check=True).stdout.split()
    assert listed == FACTS


def test_every_fact_is_proved():
    r = run([harness("prove_layouts")], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("proved ") == len(FACTS)


@pytest.mark.parametrize("fact", FACTS)
def test_a_wrong_formula_is_refuted(fact):
    r = run([harness("prove_layouts"), "--wrong", fact], timeout=120)
    assert r.returncode == 10, r.stdout + r.stderr
    assert r.stdout.startswith(f"REFUTED {fact} (wrong formula)")
    assert " = " in r.stdout        # the counterexample's values


def test_an_unknown_fact_is_an_error():
    r = run([harness("prove_layouts"), "no-such-fact"])
    assert r.returncode == 2 and "no fact named" in r.stderr
