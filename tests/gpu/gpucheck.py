#!/usr/bin/python3
"""gpucheck.py: the exact side of `make gpu` (scripts/gpu.sh).

Where the language leaves an order to the hardware (mma_unordered and its fragments,
atomic_add_unordered, device float reductions), a device run is held to the contract's
bound of the exact answer, not to the emulation's bits. This checker reads a run's raw
observed bits (`CAIRN_OBSERVE_RAW`), computes the exact answer in rationals
(fractions.Fraction: no float is rounded on the way) from the observed inputs, and the
measured error as a fraction of the bound. contracts.json says, per program, which
observation is which kind of result and which observations are its inputs.

    gpucheck.py append CASE LOG RAW    (cairn-agent --checker) CASE's measurements appended
                                       to its observation log LOG as bound/fixed lines
    gpucheck.py results OUT            OUT/<half>/<case>/ folders -> OUT/results.json
                                       (the farm's results shape, with "bounds" per case)
    gpucheck.py predicate OUT MACHINE  OUT/results.json + OUT/verdicts.json -> the
                                       statement's predicate (docs/farm.md) in
                                       OUT/bundle/predicate.json, files under OUT/bundle/
"""
import hashlib
import json
import math
import os
import pathlib
import shutil
import struct
import sys
from fractions import Fraction

HERE = pathlib.Path(__file__).resolve().parent
CONTRACTS = pathlib.Path(os.environ.get("GPU_CONTRACTS", HERE / "contracts.json"))
HALVES = ("emulated", "device")
TEST_RESULT = "https://in-toto.io/attestation/test-result/v0.1"

# Unit roundoff and the smallest normal's exponent per float type: u = 2^-p.
UNIT = {"f64": Fraction(1, 2 ** 53), "f32": Fraction(1, 2 ** 24)}


# --- decoding raw little-endian bits -------------------------------------------------
def f16_value(h):
    return struct.unpack("<e", struct.pack("<H", h))[0]


def bf16_value(h):
    return struct.unpack("<f", struct.pack("<I", h << 16))[0]


DECODE = {
    "f64": lambda b: list(struct.unpack("<%dd" % (len(b) // 8), b)),
    "f32": lambda b: list(struct.unpack("<%df" % (len(b) // 4), b)),
    "f16": lambda b: [f16_value(h) for h in struct.unpack("<%dH" % (len(b) // 2), b)],
    "bf16": lambda b: [bf16_value(h) for h in struct.unpack("<%dH" % (len(b) // 2), b)],
}


def values(obs):
    """The observation's elements as Python floats (exact: every format fits a double)."""
    decode = DECODE.get(obs["type"])
    if decode is None:
        raise ValueError(f"observation {obs['name']}: no exact decoding for type {obs['type']}")
    return decode(obs["bits"])


def exact(v):
    return Fraction(v) if math.isfinite(v) else None


# --- contract kinds: (exact value, bound) per output element -------------------------
def gamma(n, u):
    """gamma_n = n u / (1 - n u): the classic bound of n roundings in any order."""
    return n * u / (1 - n * u) if n > 0 else Fraction(0)


def to_f32(v):
    """V rounded to f32 (to nearest, ties to even). An f32 product, sum or quotient done
    in f64 and rounded to f32 is correctly rounded: 53 >= 2 * 24 + 2 (Figueroa)."""
    return struct.unpack("<f", struct.pack("<f", v))[0]


def rounded(values, c):
    """The terms a program sums: each observed value times "scale", then plus "offset",
    each operation rounded once in the contract's type."""
    rnd = to_f32 if c.get("type") == "f32" else float
    out = [rnd(v * c["scale"]) if "scale" in c else v for v in values]
    return [rnd(v + c["offset"]) if "offset" in c else v for v in out]


def sum_contract(c, obs):
    """A device float reduction: out = the sum of the terms (an observation, optionally
    scaled and offset as the program's yield does), combined in a tree whose order the
    device picks. Bound: gamma_{n-1} * sum |x| (any order of n - 1 adds)."""
    terms = [exact(v) for v in rounded(values(obs[c["terms"]]), c)]
    if None in terms:
        return None
    total = sum(terms, Fraction(0))
    bound = gamma(len(terms) - 1, UNIT[c.get("type", "f64")]) * sum(abs(t) for t in terms)
    return [(total, bound)]


def round_to(q, fmt):
    """The Fraction q rounded once to nearest, ties to even, into f32 or f64 (a float; an
    infinity past the largest finite value plus half its ulp)."""
    p, emin, emax = (24, -126, 127) if fmt == "f32" else (53, -1022, 1023)
    if q == 0:
        return 0.0
    a, e = abs(q), 0
    while a >= 2:
        a, e = a / 2, e + 1
    while a < 1:
        a, e = a * 2, e - 1
    e = max(e, emin)
    scaled = abs(q) / Fraction(2) ** (e - p + 1)
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and m % 2):
        m += 1
    if m * Fraction(2) ** (e - p + 1) > (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax:
        return math.copysign(math.inf, q)
    v = float(m * Fraction(2) ** (e - p + 1))
    return v if q > 0 else -v


def exact_sum_contract(c, obs):
    """A device float reduce + (the exact device sum, docs/devices.md): out is the exact
    sum of the terms (an observation, optionally scaled and offset as the program's yield
    does) rounded once, bit for bit: bound 0."""
    terms = [exact(v) for v in rounded(values(obs[c["terms"]]), c)]
    if None in terms:
        return None
    return [(Fraction(round_to(sum(terms, Fraction(0)), c.get("type", "f64"))), Fraction(0))]


def atomic_contract(c, obs):
    """atomic_add_unordered: each output (bin b of "bins", element i of the terms going to
    bin i % bins) is its old value ("old", else 0) plus its k terms in the order threads
    arrive. The terms are an observation, or "count" copies of a constant "const" (rounded
    to the type). Bound (the receipt's, docs/devices.md): f32 k*2^-23*(|old| + sum|v|) +
    k*2^-125 (the device flushes subnormals); f64 k*2^-52*(|old| + sum|v|)."""
    f32 = c.get("type") == "f32"
    if "terms" in c:
        terms = [exact(v) for v in values(obs[c["terms"]])]
    else:
        terms = [exact(to_f32(c["const"]) if f32 else float(c["const"]))] * c["count"]
    bins = c.get("bins", 1)
    old = [exact(v) for v in values(obs[c["old"]])] if "old" in c else [Fraction(0)] * bins
    if None in old or None in terms:
        return None
    rel, floor = (Fraction(1, 2 ** 23), Fraction(1, 2 ** 125)) if f32 else (Fraction(1, 2 ** 52), 0)
    out = []
    for b in range(bins):
        mine = terms[b::bins]
        k = len(mine)
        magnitude = abs(old[b]) + sum(abs(t) for t in mine)
        out.append((old[b] + sum(mine, Fraction(0)), k * rel * magnitude + k * floor))
    return out


def mma_contract(c, obs):
    """mma_unordered(m, n, k, c, a, b), row-major a (m x k), b (k x n), c (m x n) f32:
    every output within (k + 1) * 2^-22 * (|c_old| + sum |a b|) of the exact sum."""
    m, n, k = c["m"], c["n"], c["k"]
    a = [exact(v) for v in values(obs[c["a"]])]
    b = [exact(v) for v in values(obs[c["b"]])]
    c0 = [exact(v) for v in values(obs[c["c_old"]])]
    if None in a or None in b or None in c0:
        return None
    out = []
    for i in range(m):
        for j in range(n):
            products = [a[i * k + p] * b[p * n + j] for p in range(k)]
            total = c0[i * n + j] + sum(products, Fraction(0))
            mag = abs(c0[i * n + j]) + sum(abs(x) for x in products)
            out.append((total, (k + 1) * Fraction(1, 2 ** 22) * mag))
    return out


KINDS = {
    "sum": (sum_contract, "a float reduction in an order the device picks: within gamma_(n-1) * sum |x| of the exact sum"),
    "exact_sum": (exact_sum_contract, "a device reduce + over floats: the exact sum rounded once, bit for bit"),
    "atomic_add": (atomic_contract, "atomic_add_unordered: within its receipt bound of old + sum v"),
    "mma": (mma_contract, "mma_unordered: within (k+1) * 2^-22 * (|c| + sum |a b|) of the exact sum"),
}


def measure(contract, obs, name):
    """The bound entry for observation NAME: worst error, its bound (limit) and their ratio."""
    kind, promise = KINDS[contract["kind"]]
    refs = kind(contract, obs)
    entry = {"observation": name, "promise": promise, "kind": contract["kind"]}
    got = values(obs[name])
    if refs is None:
        entry.update(ok=False, ratio=None, detail="an input is not finite: no exact reference")
        return entry
    if len(got) != len(refs):
        entry.update(ok=False, ratio=None,
                     detail=f"{len(got)} elements observed, the contract gives {len(refs)}")
        return entry
    worst = (Fraction(0), Fraction(0), Fraction(0))   # ratio, error, bound
    for v, (ref, bound) in zip(got, refs):
        if not math.isfinite(v):
            entry.update(ok=False, ratio=None, detail=f"a non-finite output ({v}) where the exact sum is finite")
            return entry
        err = abs(Fraction(v) - ref)
        ratio = err / bound if bound else (Fraction(0) if err == 0 else None)
        if ratio is None:
            entry.update(ok=False, ratio=None, detail="a nonzero error where the bound is 0")
            return entry
        worst = max(worst, (ratio, err, bound))
    entry.update(ok=worst[0] <= 1, ratio=float(worst[0]), error=float(worst[1]),
                 limit=float(worst[2]))   # the bound itself ("bound" names the observation in logs)
    return entry


# --- a run's folder ------------------------------------------------------------------
def read_observations(log, raw_dir):
    """The data lines of an observation log, each with its raw bits (NAME.SEQ.bin)."""
    out = []
    if not log.exists():
        return out
    for seq, line in enumerate(log.read_text().splitlines()):
        o = json.loads(line)
        if "name" not in o:          # a check, bound or fixed line
            continue
        raw = raw_dir / f"{o['name']}.{seq}.bin"
        o["bits"] = raw.read_bytes() if raw.exists() else None
        out.append(o)
    return out


def fixed_names(case, observations, contracts):
    """What no contract of CASE names keeps its bits (None: CASE has no contracts)."""
    if case not in contracts:
        return None
    return sorted({o["name"] for o in observations} - set(contracts[case]))


def expected_trap(case, contracts):
    """The trap line CASE must end with (contracts.json "_trap"), or None: a program that
    proves a device trap reports like the host's (tests/device/programs/trap_lane.cairn)."""
    return contracts.get(case, {}).get("_trap")


def case_bounds(case, observations, contracts):
    """Bound entries for the contracted observations of CASE (by name; the last one wins)."""
    by_name = {o["name"]: o for o in observations if o["bits"] is not None}
    entries = []
    for name, contract in contracts.get(case, {}).items():
        if name in by_name and not name.startswith("_"):
            entries.append(measure(contract, by_name, name))
    return entries


def case_result(folder, contracts):
    meta = json.loads((folder / "meta.json").read_text())
    observations = read_observations(folder / "observe.jsonl", folder / "raw")
    r = {"case": meta["case"], "build_status": meta["build_status"],
         "observations": [{k: o[k] for k in ("name", "type", "count", "sha256")} for o in observations],
         "checks": [{"name": "build", "ok": meta["build_status"] == 0}]}
    receipt = folder / "prog.receipt.json"
    if receipt.exists():
        r["receipt"] = f"{meta['half']}/{meta['case']}/receipt.json"
        numerics = json.loads(receipt.read_text()).get("numerics", {})
        r["unordered"] = any(e.get("order") == "unordered" for fn in numerics.values() for e in fn)
    if meta["build_status"] == 0:
        r["exit_status"] = meta["exit_status"]
        trap = [line for line in (folder / "run.log").read_text(errors="replace").splitlines()
                if "trap:" in line] if (folder / "run.log").exists() else []
        if trap:
            r["trap"] = trap[0]
        want = expected_trap(meta["case"], contracts)
        if want is None:
            r["checks"].append({"name": "exit_status_0", "ok": meta["exit_status"] == 0})
            r["checks"].append({"name": "no_trap", "ok": not trap})
        else:
            r["checks"].append({"name": "traps_as_expected",
                                "ok": meta["exit_status"] != 0 and bool(trap) and trap[0].endswith(want)})
        r["bounds"] = case_bounds(meta["case"], observations, contracts)
        fixed = fixed_names(meta["case"], observations, contracts)
        if fixed is not None:
            r["fixed"] = fixed
    return r


def cmd_results(out):
    contracts = json.loads(CONTRACTS.read_text())
    results = []
    for half in HALVES:
        root = out / half
        if not root.exists():
            continue
        metas = sorted(root.rglob("meta.json"))
        cases = [case_result(m.parent, contracts) for m in metas]
        cell = json.loads((root / "cell.json").read_text())
        results.append({"machine": cell["machine"], "cell_id": half,
                        "predicate": {"cell": cell, "cases": cases}})
    (out / "results.json").write_text(json.dumps(results, indent=1))
    cases = sorted({c["case"] for r in results for c in r["predicate"]["cases"]})
    (out / "cases.json").write_text(json.dumps(cases))
    return 0


def cmd_append(case, log, raw_dir):
    """For cairn-agent --checker: the case's measurements as observation lines appended
    to its log ({"bound": NAME, "ratio", "ok", "promise", ...} and {"fixed": [...]}),
    which the agent files in the case's bounds and fixed lists."""
    contracts = json.loads(CONTRACTS.read_text())
    observations = read_observations(log, raw_dir)
    lines = [{("bound" if k == "observation" else k): v for k, v in b.items()}
             for b in case_bounds(case, observations, contracts)]
    fixed = fixed_names(case, observations, contracts)
    if fixed is not None:
        lines.append({"fixed": fixed})
    with open(log, "a") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    return 0


# --- the statement's predicate -------------------------------------------------------
def copy_files(out, bundle):
    """Receipts, observation logs, raw bits and logs of both halves, as the subjects."""
    names = []
    for half in HALVES:
        for meta in sorted((out / half).rglob("meta.json")) if (out / half).exists() else []:
            case = json.loads(meta.read_text())["case"]
            src = meta.parent
            pairs = [("prog.receipt.json", "receipt.json"), ("observe.jsonl", "observe.jsonl"),
                     ("build.log", "build.log"), ("run.log", "run.log")]
            pairs += [(f"raw/{p.name}", f"obs/{p.name}") for p in sorted((src / "raw").glob("*.bin"))]
            for frm, to in pairs:
                if (src / frm).exists():
                    dest = bundle / half / case / to
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src / frm, dest)
                    names.append(f"{half}/{case}/{to}")
    return names


def sha256_of(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def cmd_predicate(out, machine):
    results = json.loads((out / "results.json").read_text())
    report = json.loads((out / "verdicts.json").read_text())
    bundle = out / "bundle"
    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir(parents=True)
    names = copy_files(out, bundle)
    failing = {"differs-where-fixed", "violates-contract"}
    passed = [c["case"] for c in report["cases"] if c["verdict"] in ("identical", "within-bound")]
    warned = [c["case"] for c in report["cases"] if c["verdict"] == "no-evidence"]
    failed = [c["case"] for c in report["cases"] if c["verdict"] in failing]
    cells = [r["predicate"]["cell"] for r in results]
    predicate = {
        "result": "FAILED" if failed else "WARNED" if warned else "PASSED",
        "configuration": [{"name": n, "digest": {"sha256": sha256_of(bundle / n)}}
                          for n in names if n.endswith("/receipt.json")],
        "passedTests": passed, "warnedTests": warned, "failedTests": failed,
        "testResultType": TEST_RESULT,
        "machine": machine,
        "cairn_version": cells[0].get("cairn_version", "") if cells else "",
        "cell": {"id": "gpu-check", "halves": cells},
        "cases": report["cases"],
        "halves": {r["cell_id"]: r["predicate"]["cases"] for r in results},
    }
    (out / "predicate.json").write_text(json.dumps(predicate, indent=1, sort_keys=True))
    return 0


def main(argv):
    if len(argv) >= 4 and argv[0] == "append":
        return cmd_append(argv[1], pathlib.Path(argv[2]), pathlib.Path(argv[3]))
    if len(argv) >= 2 and argv[0] == "results":
        return cmd_results(pathlib.Path(argv[1]))
    if len(argv) >= 3 and argv[0] == "predicate":
        return cmd_predicate(pathlib.Path(argv[1]), json.loads(argv[2]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
