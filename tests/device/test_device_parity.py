"""Where the emulation and a device parted, mended (issue 23, part A), end to end: each
test builds a program fresh, runs it emulated at pool widths 1, 2, 7 and 16, and holds
the result to an independent model. Tests of the CUDA build's PTX are in
test_cuda_lanes.py; the device half of every new program runs under `make gpu`."""
import pathlib

import pytest

from cairntest import run
from devicelib import PROGRAMS, build, observe, values

WIDTHS = [1, 2, 7, 16]


def run_at(exe, width, **env):
    return run([exe], env={"CAIRN_THREADS": str(width), **env}, timeout=300)


# ---- item 5: a pooled integer product traps exactly when the index-order fold does ----

PRODUCT = """
fn host_prod(n:usize, x:ro<i64>[n]) -> i64 = reduce * parallel i in n yield x[i];
fn dev_prod(n:usize, x:ro<i64>[n]@device) -> i64 = reduce * parallel i in n yield x[i];
fn main() -> i32 {
  let n:usize = 200000;
  buffer h:i64[n] = zeroed;
  for i in 0..n { h[i] = 1; }
  for k in 1..40 { h[k * 5000] = 2147483648; }
  ZERO
  buffer d:i64[n]@device = zeroed;
  copy(d, h);
  observe("WHICH", WHICH_prod(n, WHICHARG));
  return 0;
}
"""


@pytest.mark.parametrize("which", ["host", "dev"])
@pytest.mark.parametrize("zero,traps", [("h[3] = 0;", False), ("h[199999] = 0;", True), ("", True),
                                        ("h[12000] = 0;", False)])
def test_pooled_product_traps_as_the_index_order_fold(tmp_path, which, zero, traps):
    """Factors 2^31 every 5000 indices (2^62 fits i64, 2^93 does not): the fold in index
    order reaches 2^93 at index 15000 unless a zero came first. Before, a worker's checked
    partial trapped by schedule where a zero came first (8 of 60 runs at widths 2, 7 and
    16 on the 2-core development machine); each width runs five times."""
    src = tmp_path / "prod.cairn"
    src.write_text(PRODUCT.replace("ZERO", zero).replace("WHICHARG", "h" if which == "host" else "d")
                   .replace("WHICH", which))
    exe = build(src, tmp_path / "prod")
    for w in [w for w in WIDTHS for _ in range(5)]:
        if traps:
            res = run_at(exe, w)
            line = 3 if which == "dev" else 2
            assert res.returncode != 0, (w, res.stderr)
            assert f"trap: integer overflow at {src}:{line}:" in res.stderr, (w, res.stderr)
        else:
            assert values(observe(exe, tmp_path / f"w{w}", w), which) == [0]


# ---- items 1 and 2: warp operations in loops and branches, each thread's own condition --

def test_warp_operations_in_loops_and_branches_follow_each_warp(tmp_path):
    """programs/warp_branches.cairn (its dev_ = ref_ checks run in test_emulate.py) held
    to a numpy model of what each warp computes: a loop of w + 1 rounds in warp w
    (before, every warp ran thread 0's bounds, and the program did not build: the
    per-block arrays were declared inside the loop), a loop bound and a condition made
    of warp reductions, and warps counted from thread 16 in a block of threads 16..80."""
    import numpy as np
    exe = build(PROGRAMS / "warp_branches.cairn", tmp_path / "wb")
    for w in WIDTHS:
        obs = observe(exe, tmp_path / f"w{w}", w)
        k = np.array(values(obs, "k"), dtype=np.int64).reshape(-1, 32)  # one row per warp
        warp = np.arange(k.shape[0]) % 4                                # T = 128: 4 warps
        sums = k.sum(axis=1)
        loop = np.array([sum(sums[b] + 32 * j for j in range(warp[b] + 1)) for b in range(len(k))])
        assert values(obs, "dev_warp_loop") == list(np.repeat(loop, 32))
        bound = [sum(j + 1 for j in range(int((row & 3).max()))) for row in k]
        assert values(obs, "dev_warp_bound") == list(np.repeat(bound, 32))
        cond = np.where(k.min(axis=1) > -40000, k.max(axis=1), -k.max(axis=1))
        assert values(obs, "dev_warp_cond") == list(np.repeat(cond, 32))
        offset = np.where(np.arange(12)[:, None] % 2 == 1, sums[:12, None], k[:12, :1])
        assert values(obs, "dev_offset")[:12 * 32] == list(np.broadcast_to(offset, (12, 32)).ravel())


# ---- item 3: one set of guards, the same trap emulated as on the device ----------------

GUARDS = {
    "threads": ("""
fn f(n:usize, x:rw<i32>[4]@device) {
  blocks g in 1 threads t in n { atomic_add_wrap(x[0], 1); }
}
fn main() -> i32 {
  buffer x:i32[4]@device = zeroed;
  f(2048, x);
  return 0;
}
""", "a block of more than 1024 threads", "3:30"),
    "blocks": ("""
fn f(n:usize, x:rw<i32>[4]@device) {
  blocks g in n threads t in 32 { atomic_add_wrap(x[0], 1); }
}
fn main() -> i32 {
  buffer x:i32[4]@device = zeroed;
  f(2147483648, x);
  return 0;
}
""", "more blocks than one device launch holds", "3:15"),
    "lanes": ("""
fn f(n:usize, x:rw<i32>[4]@device) {
  parallel i in n { atomic_add_wrap(x[0], 1); }
}
fn main() -> i32 {
  buffer x:i32[4]@device = zeroed;
  f(1099511627776, x);
  return 0;
}
""", "too many lanes for one device launch", "3:3"),
    "wmma": ("""
fn f(b:ro<f16>[256]@device) {
  blocks g in 1 threads t in 32 {
    let x = mma_load[WmmaB[f16, 32, 8, 16]](b, rows(16, 16), 0, 1);
  }
}
fn main() -> i32 {
  buffer b:f16[256]@device = zeroed;
  f(b);
  return 0;
}
""", "a WMMA fragment whose first element is not 32-byte aligned", "4:13"),
}


@pytest.mark.parametrize("case", sorted(GUARDS))
def test_launch_guards_trap_in_the_emulation(tmp_path, case):
    """More than 1024 threads, 2^31 blocks, lanes past one launch, a misaligned WMMA tile:
    each trapped only in a CUDA build before; the emulation now traps with the same
    message at the same place (the CUDA build's host code runs the same guard)."""
    text, reason, where = GUARDS[case]
    src = tmp_path / f"{case}.cairn"
    src.write_text(text)
    exe = build(src, tmp_path / case)
    res = run_at(exe, 2)
    assert res.returncode != 0, res.stderr
    assert res.stderr.strip().splitlines()[-1] == f"trap: {reason} at {src}:{where}"


SHARED = """
fn f(x:rw<f32>[4]@device) {
  blocks g in 1 threads t in 32 {
    shared a:f32[1000] = zeroed;
    shared s:f32[N] = zeroed;
    s[t] = 1.0;
    a[t] = 2.0;
    barrier;
    if t == 0 { x[0] = s[5] + a[7]; }
  }
}
fn main() -> i32 {
  buffer x:f32[4]@device = zeroed;
  f(x);
  return 0;
}
"""


@pytest.mark.parametrize("target,kib", [("host", 227), ("sm_90", 227), ("sm_80", 163), ("sm_89", 99),
                                        ("sm_120", 99), ("sm_75", 64)])
def test_shared_memory_limit_is_the_targets(tmp_path, target, kib):
    """Shared arrays past the target's limit for one block (CUDA C++ Programming Guide,
    "Compute Capabilities"; the host emulates sm_90) trap before the launch, naming it;
    up to the limit they run. The arrays are 32-byte aligned: a (4000 bytes) takes 4000."""
    limit = kib * 1024
    flags = [] if target == "host" else ["--target", target, "--emulate"]
    name = "sm_90" if target == "host" else target
    fits = (limit - 4000) // 4 // 8 * 8  # s's bytes a multiple of 32: the total is the limit
    for n, ok in [(fits, True), (fits + 1, False)]:
        src = tmp_path / f"s{n}.cairn"
        src.write_text(SHARED.replace("N]", f"{n}]"))
        exe = build(src, tmp_path / f"s{n}", *flags)
        res = run_at(exe, 2)
        if ok:
            assert res.returncode == 0, res.stderr
        else:
            assert res.stderr.strip().splitlines()[-1] == (
                f"trap: shared arrays past a block's shared memory ({kib} KiB on {name}) at {src}:5:5")


def test_cuda_build_keeps_the_same_guards_on_the_host(tmp_path):
    """The CUDA build's host C runs the guards the emulation runs (lower_device.c), with
    the same messages; the launchers no longer hold guards of their own."""
    from cudalib import emit
    src = tmp_path / "g.cairn"
    src.write_text(GUARDS["threads"][0] + GUARDS["lanes"][0].replace("fn main() -> i32 {", "fn main2() -> i32 {").replace("fn f(", "fn f2("))
    files = emit(src, tmp_path / "emit", "sm_80")
    host, cu = files["g.c"], files["g_dev.cu"]
    for reason in ["a block of more than 1024 threads", "too many lanes for one device launch",
                   "more blocks than one device launch holds"]:
        assert reason in host and reason not in cu, reason


# ---- item 6: float atomics on shared memory keep subnormals --------------------------

def test_shared_float_atomics_keep_subnormals(tmp_path):
    """programs/shared_atomics.cairn: 256 adds of one subnormal f32 into a shared array
    equal the unflushed sum (numpy), the same adds into global memory are flushed to
    +0.0, and the receipt says which space flushes (before: both flushed, and the
    receipt had no space)."""
    import json
    import struct
    import numpy as np
    exe = build(PROGRAMS / "shared_atomics.cairn", tmp_path / "sa")
    acc, term = np.float32(0.0), np.float32(1e-39)
    assert 0 < term < np.finfo(np.float32).tiny
    for _ in range(256):
        acc = np.float32(acc + term)
    for w in WIDTHS:
        obs = observe(exe, tmp_path / f"w{w}", w)
        assert obs["dev_shared"][3] == struct.pack("<f", acc) * 4
        assert obs["global_flushed"][3] == struct.pack("<f", 0.0)
    r = json.loads((tmp_path / "sa.receipt.json").read_text())["numerics"]["sums"]
    base = {"op": "atomic_add", "rounding": "nearest-even", "order": "unordered"}
    assert {**base, "type": "f32", "space": "shared", "flush_subnormals": False,
            "bound": "k * 2^-23 * (|old| + sum |v|)"} in r
    assert {**base, "type": "f32", "space": "global", "flush_subnormals": True,
            "bound": "k * 2^-23 * (|old| + sum |v|) + k * 2^-125"} in r
    assert {**base, "type": "f64", "space": "shared", "flush_subnormals": False,
            "bound": "k * 2^-52 * (|old| + sum |v|)"} in r


# ---- item 4: a device lane's NaNs are the device's ------------------------------------

DEV_NAN = {"f32": 0x7fffffff, "f64": 0xfff8000000000000}
HOST_INVALID = {"f32": 0xffc00000, "f64": 0xfff8000000000000}  # x86 SSE's default NaN


def bits_of(obs, name):
    import struct
    typ, count, _, raw = obs[name]
    return list(struct.unpack(f"<{count}{'I' if typ in ('f32', 'u32') else 'Q'}", raw)), typ


def is_nan(b, typ):
    return (b & 0x7fffffff) > 0x7f800000 if typ == "f32" else (b & (2 ** 63 - 1)) > 0x7ff0000000000000


def test_device_lanes_give_the_devices_nan(tmp_path):
    """programs/nan_bits.cairn: every pair of NaNs with payloads (both signs, signalling
    too), infinities, signed zeros, a subnormal and finite values through + - * / sqrt
    neg abs floor ceil trunc min max, both conversions and a called function, in a device
    lane and in host code. Where the host's result is a NaN, the device lane's is the
    device's one NaN of its type (before: the host's payload, or 0xffc00000); elsewhere
    the two have the same bits. Host code keeps x86's NaNs: inf - inf is 0xffc00000, a
    quiet NaN's payload passes through +, a signalling NaN comes out quieted."""
    exe = build(PROGRAMS / "nan_bits.cairn", tmp_path / "nb")
    for w in WIDTHS:
        obs = observe(exe, tmp_path / f"w{w}", w)
        pairs = sorted(n for n in obs if n.startswith("dev"))
        assert len(pairs) == 26
        nans = 0
        for dev in pairs:
            ref = "ref" + dev[3:]
            d, typ = bits_of(obs, dev)
            r, _ = bits_of(obs, ref)
            for k, (x, y) in enumerate(zip(d, r)):
                if is_nan(y, typ):
                    nans += 1
                    assert x == DEV_NAN[typ], (dev, k, hex(x), hex(y))
                else:
                    assert x == y, (dev, k, hex(x), hex(y))
        assert nans > 500  # every operation met NaNs
        add, _ = bits_of(obs, "ref32_add")
        n = 12
        assert add[3 * n + 4] == HOST_INVALID["f32"]     # inf + -inf on the host
        assert add[0 * n + 7] == 0x7fc00001             # qNaN(1) + 1 keeps the payload
        assert add[2 * n + 7] == 0x7fc00001             # sNaN(1) + 1: quieted
        sub64, _ = bits_of(obs, "ref64_sub")
        assert sub64[3 * n + 3] == HOST_INVALID["f64"]   # inf - inf
        # the warp butterfly: a NaN lane (warp 0) and +inf with -inf (warp 1)
        s, _ = bits_of(obs, "warp_sum")
        m, _ = bits_of(obs, "warp_max")
        assert s == [DEV_NAN["f32"]] * 64
        assert m[:32] == [DEV_NAN["f32"]] * 32 and m[32:] == [0x7f800000] * 32
        # a device reduce + is the exact sum: its NaN is the quiet NaN of the spec's table
        assert bits_of(obs, "dsum32")[0] == [0x7fc00000]
        assert bits_of(obs, "dsum64")[0] == [0x7ff8000000000000]
        # moves keep a NaN's bits (a signalling one too); operations give the device's
        import numpy as np
        inp, _ = bits_of(obs, "moves_in")
        assert bits_of(obs, "moves_move")[0] == inp and bits_of(obs, "moves_let")[0] == inp
        assert bits_of(obs, "moves_sh")[0] == [inp[(t + 1) % 32] for t in range(32)]
        f = np.array(inp, dtype=np.uint32).view(np.float32)
        with np.errstate(invalid="ignore"):
            acc = (np.float32(2.0) + f).view(np.uint32).tolist()
            shsum = (f + np.float32(1.0)).view(np.uint32).tolist()
            scan = np.cumsum(f, dtype=np.float32).view(np.uint32).tolist()
        dev = lambda v: DEV_NAN["f32"] if is_nan(v, "f32") else v
        assert bits_of(obs, "moves_acc")[0] == [dev(v) for v in acc]
        assert bits_of(obs, "moves_shsum")[0] == [dev(shsum[(t + 1) % 32]) for t in range(32)]
        assert bits_of(obs, "moves_scan")[0] == [dev(v) for v in scan] + [0] * 32
