"""The GPU's residue algorithm run on the host (cairn_enclose_residue_bits, what an
emulated device run executes) gives the CPU backend's bits on every case family, and
its arithmetic holds against Python integers: the moduli, the CRT constants, the
division-free reductions (exhaustively) and the CRT's round trip at the extremes."""
import math
import pathlib
import random
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import harness, run  # noqa: E402
from enclose_families import families, random_case  # noqa: E402
from enclose_model import Case, check_bracket, parse_results, run_cases, to_bits  # noqa: E402

CASES = families()


def greedy_moduli(count):
    out = []
    for m in range(255, 1, -1):
        if all(math.gcd(m, x) == 1 for x in out):
            out.append(m)
        if len(out) == count:
            return out


def crt(need):
    out = run([harness("enclose_residue_check"), "crt", str(need)], check=True).stdout.split("\n")
    head = out[0].split()
    if head == ["none"]:
        return None
    L, limbs, M = int(head[1]), int(head[3]), int(head[5], 16)
    rows = [tuple(int(x, 16) if i == 2 else int(x) for i, x in enumerate(line.split()))
            for line in out[1:1 + L]]
    return L, limbs, M, rows


def test_moduli_are_pairwise_coprime_and_cover_the_budget():
    L, _, M, rows = crt(334)
    moduli = [m for m, _, _ in rows]
    assert L == 48 and moduli == greedy_moduli(48)
    assert all(math.gcd(x, y) == 1 for i, x in enumerate(moduli) for y in moduli[i + 1:])
    assert max(moduli) <= 255 and M == math.prod(moduli) and M > 2 ** 334
    # the budget's largest need (332) takes all 48: 47 do not pass 2^332
    assert math.prod(moduli[:47]) < 2 ** 332 and crt(332)[0] == 48
    assert crt(335) is None
    # int8 residues of absolute value <= 127 keep k = 2^17 products inside int32
    assert 127 * 127 * 2 ** 17 < 2 ** 31


@pytest.mark.parametrize("need", [4, 8, 9, 60, 158, 200, 301, 331, 332, 334])
def test_crt_constants(need):
    L, limbs, M, rows = crt(need)
    moduli = [m for m, _, _ in rows]
    assert M == math.prod(moduli) > 2 ** need
    assert math.prod(moduli[:-1]) <= 2 ** need  # the least L that does
    assert limbs * 32 >= (L * M).bit_length()  # T = sum c_l M / m_l < L M fits
    for m, inv, w in rows:
        assert w == M // m and (w * inv) % m == 1


def test_division_free_reduction_is_exact_for_every_input():
    """x mod m by a reciprocal, for every x < 2^26 and every modulus (3.2e9 checks)."""
    out = run([harness("enclose_residue_check"), "mod"], timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout


def test_gemm_sums_reduce_exactly():
    out = run([harness("enclose_residue_check"), "reduce"], timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout


def test_crt_recovers_every_sum_up_to_the_bound():
    """|S| <= 2^(need - 2) (the bound of sum X Y with X + 2^wa, Y + 2^wb in range and k
    <= 2^lg): the extremes, small values and random ones at every need."""
    rng = random.Random(27)
    lines, want = [], []
    for need in [4, 5, 9, 64, 65, 128, 158, 200, 256, 300, 331, 332, 334]:
        top = 2 ** (need - 2)
        for s in [0, 1, -1, top, -top, top - 1, -top + 1] + \
                 [rng.randint(-top, top) for _ in range(40)]:
            lines.append(f"{need} {'-' if s < 0 else ''}{abs(s):x}")
            want.append(s)
    proc = subprocess.run([harness("enclose_residue_check"), "roundtrip"], input="\n".join(lines),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = [int(x, 16) for x in proc.stdout.split()]
    assert [g - (1 << 384) if g >> 383 else g for g in got] == want


def run_backend(cases, residue, threads=2):
    args = ["--residue"] if residue else []
    proc = run_cases(harness("enclose_run"), cases, env={"CAIRN_THREADS": str(threads)},
                     extra_args=args)
    assert proc.returncode in (0, 1), proc.stderr
    return parse_results(proc.stdout)


_cpu = {}


def cpu_results():
    if not _cpu:
        _cpu["r"] = run_backend(CASES, residue=False)
    return _cpu["r"]


@pytest.mark.parametrize("threads", [1, 3])
def test_residue_algorithm_gives_the_cpu_bits(threads):
    got = run_backend(CASES, residue=True, threads=threads)
    for case, mine, ref in zip(CASES, got, cpu_results()):
        assert mine["rc"] == ref["rc"] == 0, case.name
        assert mine["kernel"] == "residue-host"
        for key in ("lo", "hi", "tight", "tight_outputs", "lossy_rows", "lossy_cols", "bits_a",
                    "bits_b", "need_a", "need_b", "lg", "scale_a", "scale_b"):
            assert mine[key] == ref[key], (case.name, key)


def test_residue_algorithm_is_exact():
    for case, r in zip(CASES, run_backend(CASES, residue=True)):
        check_bracket(case, r, tight=bool(r["tight"]))


def test_the_largest_budget_uses_all_moduli():
    """Rows and columns that need 163 + 163 bits at k = 40 (6 more): 332, every modulus."""
    rng = random.Random(5)
    a = [to_bits(rng.choice((-1, 1)) * 2.0 ** rng.randint(-200, 200), 64) for _ in range(3 * 40)]
    b = [to_bits(rng.choice((-1, 1)) * 2.0 ** rng.randint(-200, 200), 64) for _ in range(40 * 2)]
    case = Case("budget_all", 64, 3, 2, 40, a, b)
    mine, ref = run_backend([case], True)[0], run_backend([case], False)[0]
    assert mine["bits_a"] + mine["bits_b"] + mine["lg"] == 332
    assert (mine["lo"], mine["hi"]) == (ref["lo"], ref["hi"])
    check_bracket(case, mine, tight=False)


@pytest.mark.parametrize("where,bits", [("a", 0x7FF8000000000000), ("b", 0xFFF0000000000000)])
def test_refusals_match_the_cpu(where, bits):
    a = [to_bits(1.0, 64)] * 6
    b = [to_bits(1.0, 64)] * 6
    (a if where == "a" else b)[4] = bits
    (a if where == "a" else b)[5] = bits
    case = Case("bad", 64, 2, 2, 3, a, b)
    mine, ref = run_backend([case], True)[0], run_backend([case], False)[0]
    assert mine["rc"] == ref["rc"] == -1 and mine["bad"] == ref["bad"]
    one = to_bits(1.0, 64)
    k = (1 << 17) + 1
    big = Case("k_too_big", 64, 1, 1, k, [one] * k, [one] * k)
    assert run_backend([big], True)[0]["rc"] == -2


def test_frozen_digest():
    digest = (pathlib.Path(__file__).resolve().parents[1] / "data" / "enclose" /
              "cases.sha256").read_text().split()[0]
    out = run([harness("enclose_run"), "--residue", "--digest",
               pathlib.Path(__file__).resolve().parents[1] / "data" / "enclose" / "cases.txt"],
              check=True)
    assert out.stdout.split()[1] == digest


@pytest.mark.matrix
def test_long_k_matches():
    case = random_case("residue_k65536", 2, 2, 1 << 16)
    mine, ref = run_backend([case], True)[0], run_backend([case], False)[0]
    assert (mine["lo"], mine["hi"]) == (ref["lo"], ref["hi"])
