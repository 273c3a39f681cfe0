"""Every CPU kernel of the bracket GEMM gives the portable kernel's bits, on every case
family (enclose_families.py), and those bits are the exact model's floor and ceiling
where the operands scale losslessly (containment elsewhere).

The kernel is chosen at run time (cairn_enclose.c); CAIRN_ENCLOSE_KERNEL and
CAIRN_ENCLOSE_PACK force one, and the harness reports which ran, so each comparison
checks that the kernel under test ran on the cases it is meant for (a forced kernel
the CPU cannot run is skipped, never silently replaced). The AMX path is the residue
algorithm (test_enclose_residue.py) on the tile units."""
import ctypes
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from cairntest import harness  # noqa: E402
from enclose_families import families  # noqa: E402
from enclose_model import check_bracket, parse_results, run_cases  # noqa: E402


def cpu_flags():
    text = pathlib.Path("/proc/cpuinfo").read_text() if pathlib.Path("/proc/cpuinfo").exists() else ""
    line = next((x for x in text.splitlines() if x.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def amx_permitted():
    """Linux lets this process use the AMX tile data (arch_prctl ARCH_REQ_XCOMP_PERM)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(158, 0x1023, 18) == 0  # SYS_arch_prctl on x86-64
    except (OSError, AttributeError):
        return False


FLAGS = cpu_flags()
HAS_IFMA = {"avx512f", "avx512vl", "avx512cd", "avx512ifma"} <= FLAGS
HAS_ADX = {"adx", "bmi2"} <= FLAGS
HAS_AMX = HAS_IFMA and {"amx_tile", "amx_int8", "avx512bw", "avx512dq", "avx512_vnni"} <= FLAGS \
    and amx_permitted()


def ifma_kernel(r):
    karatsuba = 52 < r["bits_a"] <= 102 and 52 < r["bits_b"] <= 102
    return "ifma51-karatsuba" if karatsuba else "ifma52"


def best_kernel(r):
    """What runs by default: AMX for lossless lines of at most 102 bits, IFMA elsewhere."""
    amx = HAS_AMX and r["tight"] and r["bits_a"] <= 102 and r["bits_b"] <= 102
    return "amx-residue" if amx else ifma_kernel(r)


# name -> (environment, needs, which cases it must have run on: bits_a, bits_b -> kernel)
CONFIGS = {
    "default": ({}, HAS_IFMA, best_kernel),
    "amx": ({"CAIRN_ENCLOSE_KERNEL": "amx"}, HAS_AMX, best_kernel),
    "ifma": ({"CAIRN_ENCLOSE_KERNEL": "ifma"}, HAS_IFMA, ifma_kernel),
    "karatsuba_portable_pack": ({"CAIRN_ENCLOSE_PACK": "scalar"}, HAS_IFMA, ifma_kernel),
    "ifma52": ({"CAIRN_ENCLOSE_KERNEL": "ifma52"}, HAS_IFMA, lambda r: "ifma52"),
    "adx64": ({"CAIRN_ENCLOSE_KERNEL": "adx64"}, HAS_ADX,
              lambda r: "adx64" if r["bits_a"] <= 64 and r["bits_b"] <= 64 else "scalar"),
}

CASES = families()
_portable = {}


def run(env, threads):
    proc = run_cases(harness("enclose_run"), CASES, env={"CAIRN_THREADS": str(threads), **env})
    assert proc.returncode == 0, proc.stderr
    results = parse_results(proc.stdout)
    assert [r["name"] for r in results] == [c.name for c in CASES]
    return results


def portable():
    if not _portable:
        _portable["r"] = run({"CAIRN_ENCLOSE_KERNEL": "scalar"}, 1)
    return _portable["r"]


def test_portable_kernel_is_exact():
    for case, r in zip(CASES, portable()):
        assert r["kernel"] == "scalar"
        check_bracket(case, r, tight=bool(r["tight"]))
    assert sum(r["tight"] for r in portable()) >= len(CASES) - 3  # spreads and overflow


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_kernel_gives_the_portable_bits(config, threads):
    env, available, expected = CONFIGS[config]
    if not available:
        pytest.skip(f"this CPU cannot run the {config} kernel")
    got = run(env, threads)
    ran = set()
    for case, mine, ref in zip(CASES, got, portable()):
        if case.m and case.n:
            assert mine["kernel"] == expected(mine), (case.name, mine["kernel"])
        ran.add(mine["kernel"])
        for key in ("lo", "hi", "tight", "bits_a", "bits_b", "lossy_rows", "lossy_cols"):
            assert mine[key] == ref[key], (config, case.name, key)
    assert ran - {"scalar"}, f"{config} never ran its own kernel"


def test_families_reach_every_kernel():
    """AMX, Karatsuba, the IFMA schoolbook and the one-limb mulx kernel each get cases
    (with AMX, Karatsuba's only where forced: a lossy line is wider than 102 bits)."""
    assert {ifma_kernel(r) for r in portable()} == {"ifma51-karatsuba", "ifma52"}
    kinds = {best_kernel(r) for r in portable()}
    assert kinds == ({"amx-residue", "ifma52"} if HAS_AMX else {"ifma51-karatsuba", "ifma52"})
    assert sum(CONFIGS["adx64"][2](r) == "adx64" for r in portable()) >= 3


@pytest.mark.matrix
@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_long_k_lane_folds(config):
    """K = 70000: the row packing's lane sums fold (every 8192 vector steps)."""
    env, available, _ = CONFIGS[config]
    if not available:
        pytest.skip(f"this CPU cannot run the {config} kernel")
    case = families(long=True)[-1]
    proc = run_cases(harness("enclose_run"), [case], env=env)
    ref = run_cases(harness("enclose_run"), [case], env={"CAIRN_ENCLOSE_KERNEL": "scalar"})
    mine, want = parse_results(proc.stdout)[0], parse_results(ref.stdout)[0]
    assert (mine["lo"], mine["hi"]) == (want["lo"], want["hi"])
    check_bracket(case, want, tight=True)
