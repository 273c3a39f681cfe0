"""What a CUDA build's lanes compile to (issue 23, items 7 and 12), read from the PTX
nvcc makes for sm_90 and from the generated CUDA C++; no GPU is needed.

- Integer atomics are PTX's own atom where the ISA has one ("atom", PTX ISA: add, min,
  max on .u32/.s32/.u64/.s64; and, or, xor on .b32/.b64; cas on .b16/.b32/.b64), with
  compare-and-swap loops only for what it lacks (8- and 16-bit add, min, max; 8-bit cas).
- A 32-bit (or narrower) value crosses lanes in one shfl.sync, a 64-bit one in two.
- A launch does not wait for the device unless its region touches @unified memory.
- The device trap record is published (fields, a system fence, then `ready`) before any
  lane executes `trap`, and a lane that loses the claim waits for `ready`."""
import re

from cairntest import BIN, ROOT, run
from cudalib import emit, functions, needs_nvcc, ptx
from devicelib import PROGRAMS

ATOMS = re.compile(r"\batom\.[a-z0-9.:]+")


def atoms(text):
    return [m.group(0) for m in ATOMS.finditer(text)]


def kernels(text):
    """PTX of the kernels alone (the trap function's claim is a cas of its own)."""
    return "\n".join(b for n, b in functions(text).items() if "kern" in n)


@needs_nvcc
def test_integer_atomics_are_native(tmp_path):
    text = kernels(ptx(PROGRAMS / "atomics_widths.cairn", tmp_path))
    found = set(atoms(text))
    for op in ["add.u32", "add.u64", "min.s32", "min.u32", "min.s64", "min.u64", "max.s32",
               "max.u32", "max.s64", "max.u64", "and.b32", "and.b64", "or.b32", "or.b64",
               "xor.b32", "xor.b64", "cas.b16", "cas.b32", "cas.b64"]:
        assert f"atom.global.{op}" in found, (op, sorted(found))
    # the loops that remain: 8- and 16-bit add, min and max (4 types x 3), 8-bit cas (2)
    cas_loops = [a for a in atoms(text) if a.endswith("cas.b32")]
    assert len(cas_loops) == 4 * 3 + 2 + 2, cas_loops  # + the i32 and u32 atomic_cas


@needs_nvcc
def test_32_and_64_bit_atomics_use_no_compare_and_swap(tmp_path):
    src = tmp_path / "words.cairn"
    body = "".join(f"""
fn k_{t}(n:usize, x:rw<{t}>[4]@device) {{
  parallel i in n {{
    atomic_add_wrap(x[0], {t}(i % 3)); atomic_min(x[1], {t}(i)); atomic_max(x[1], {t}(i));
    atomic_and(x[2], {t}(i)); atomic_or(x[3], {t}(i)); atomic_xor(x[3], {t}(i));
  }}
}}""" for t in ["i32", "u32", "i64", "u64"])
    src.write_text(body + "\nfn main() -> i32 { return 0; }\n")
    text = kernels(ptx(src, tmp_path / "out"))
    assert not [a for a in atoms(text) if ".cas." in a], atoms(text)
    assert len(atoms(text)) == 4 * 6


@needs_nvcc
def test_narrow_and_or_xor_are_one_word_atom(tmp_path):
    src = tmp_path / "bytes.cairn"
    src.write_text("""
fn k(n:usize, x:rw<u8>[4]@device, y:rw<i16>[4]@device) {
  parallel i in n {
    atomic_and(x[1], u8(i)); atomic_or(x[2], u8(i)); atomic_xor(x[3], u8(i));
    atomic_and(y[1], i16(i)); atomic_or(y[2], i16(i)); atomic_xor(y[3], i16(i));
  }
}
fn main() -> i32 { return 0; }
""")
    ops = atoms(kernels(ptx(src, tmp_path / "out")))
    assert not [a for a in ops if ".cas." in a], ops
    assert sorted(a.split(".")[-2] for a in ops) == sorted(["and", "or", "xor"] * 2), ops


def shfl_count(text, kind):
    return len(re.findall(rf"\bshfl\.sync\.{kind}\.b32\b", text))


@needs_nvcc
def test_shuffles_move_32_bit_words(tmp_path):
    """One shfl.sync per 32 bits: a bool, an i8, an f32 or an i32 in one, an f64 or i64 in
    two (before: two for every value, in 64-bit words)."""
    for typ, words in [("bool", 1), ("i8", 1), ("i16", 1), ("f32", 1), ("i32", 1), ("f64", 2),
                       ("i64", 2)]:
        src = tmp_path / f"sh_{typ}.cairn"
        src.write_text(f"""
fn k(x:ro<{typ}>[32]@device, y:rw<{typ}>[32]@device) {{
  blocks g in 1 threads t in 32 {{ y[t] = shuffle(x[t], 31 - t); }}
}}
fn main() -> i32 {{ return 0; }}
""")
        text = kernels(ptx(src, tmp_path / typ))
        assert shfl_count(text, "idx") == words, (typ, shfl_count(text, "idx"))


def test_launches_wait_only_for_unified_memory(tmp_path):
    files = emit(PROGRAMS / "trap_lane.cairn", tmp_path / "dev")
    cu = files["trap_lane_dev.cu"]
    assert "cairn_device_launched(CAIRN_AT(3, 3), 0);" in cu
    assert "cudaDeviceSynchronize" not in cu  # the runtime header waits, not the launchers
    src = tmp_path / "uni.cairn"
    src.write_text("""
fn bump(n:usize, d:ro<i32>[n]@device, x:rw<i32>[n]@unified) { parallel i in n { x[i] = d[i] + 1; } }
fn main() -> i32 {
  buffer u:i32[8]@unified = zeroed;
  buffer d:i32[8]@device = zeroed;
  bump(8, d, u);
  return u[3] - 1;
}
""")
    cu = emit(src, tmp_path / "uni")["uni_dev.cu"]
    assert "cairn_device_launched(CAIRN_AT(2, 63), 1);" in cu


@needs_nvcc
def test_trap_record_is_published_before_any_lane_traps(tmp_path):
    text = ptx(PROGRAMS / "trap_lane.cairn", tmp_path)
    (name, body), = [(n, b) for n, b in functions(text).items() if "cairn_trap_at" in n]
    lines = [ln.strip() for ln in body.splitlines()]
    claim = next(i for i, ln in enumerate(lines) if ln.startswith("atom.cas.b32"))
    fence = next(i for i, ln in enumerate(lines) if ln.startswith(("membar.sys", "fence.sc.sys")))
    ready = next(i for i, ln in enumerate(lines) if ln.startswith("atom.exch.b32"))
    stores = [i for i, ln in enumerate(lines) if ln.startswith("st.volatile")]
    assert claim < min(stores) and max(stores) < fence < ready, body
    # the losing lanes spin on ready (a volatile load in a loop) before the trap
    assert any(ln.startswith("ld.volatile.u32") for ln in lines), body
    assert lines.count("trap;") >= 1


@needs_nvcc
def test_derived_function_with_a_region_gets_no_device_copy(tmp_path):
    """derive grad's functions have lane effects too: scale_grad runs a parallel region,
    so the CUDA build gives it no __device__ copy (before, nvcc rejected the copy)."""
    src = ROOT / "tests" / "golden" / "grad" / "grad_race_ok.cairn"
    cu = emit(src, tmp_path / "emit")["grad_race_ok_dev.cu"]
    assert "cairn_fn_scale_grad" not in cu and "cairn_fn_smooth_grad" in cu
    ptx(src, tmp_path / "ptx")  # nvcc accepts the device half
    res = run([BIN / "cairn", "build", src, "--target", "sm_90", "-o", tmp_path / "exe"],
              timeout=900)
    assert res.returncode == 0, res.stderr


@needs_nvcc
def test_shared_float_atomics_are_atom_shared(tmp_path):
    """A shared array's atomic_add_unordered is atom.shared.add (which keeps subnormals),
    a global one atom.global.add (whose f32 form flushes them)."""
    found = set(atoms(kernels(ptx(PROGRAMS / "shared_atomics.cairn", tmp_path))))
    assert {"atom.shared.add.f32", "atom.shared.add.f64", "atom.global.add.f32"} <= found, found


@needs_nvcc
def test_device_lanes_canonicalize_nans_in_ptx(tmp_path):
    """The PTX ISA leaves an f32 NaN's bits unspecified and keeps f64 payloads ("Floating-
    Point Instructions"), so a CUDA build fixes them itself: where the result of a device
    lane's float operation leaves its expression (stored, bound, passed, returned), it goes
    through setp.nan and a select of the device's NaN (0f7FFFFFFF, 0dFFF8000000000000),
    the bits its emulation gives."""
    text = kernels(ptx(PROGRAMS / "nan_bits.cairn", tmp_path))
    assert len(re.findall(r"\bsetp\.nan\.f32\b", text)) >= 14
    assert len(re.findall(r"\bsetp\.nan\.f64\b", text)) >= 12
    assert text.count("0f7FFFFFFF") >= 14 and text.count("0dFFF8000000000000") >= 12


@needs_nvcc
def test_device_reductions_run_on_the_device(tmp_path):
    """A CUDA build's device reduce runs on the GPU: the exact float sum's two passes
    (the block counters in shared memory: atom.shared.add.u64) and an integer tree per
    block (shuffles) with a second pass; the host gets one value back and folds nothing
    (before, every yield was copied back and folded on the host in index order)."""
    files = emit(PROGRAMS / "reduce_device.cairn", tmp_path / "emit")
    host, cu = files["reduce_device.c"], files["reduce_device_dev.cu"]
    assert "cairn_dsum_run<CAIRN_DSUM32_DIGITS, 925>" in cu and "cairn_dsum_run<CAIRN_DSUM64_DIGITS, 0>" in cu
    for op in ("add", "min", "max", "and", "or", "xor"):
        assert f"cairn_dred_run<cairn_red_{op}<" in cu, op
    assert not re.search(r"for \(uint64_t k = 0; k < t\d+; k\+\+\) t\d+ = ", host)  # the old fold
    assert "cairn_copy(cairn_out" not in cu  # no yields copied back
    text = ptx(PROGRAMS / "reduce_device.cairn", tmp_path / "ptx")
    entries = set(re.findall(r"\.entry\s+(\S+)\(", text))
    for kernel in ("cairn_dsum_kernel", "cairn_dsum_merge_kernel", "cairn_dred_kernel",
                   "cairn_dred_finish"):
        assert any(kernel in e for e in entries), (kernel, entries)
    dsum = "\n".join(b for n, b in functions(text).items() if "cairn_dsum_kernel" in n)
    assert "atom.shared.add.u64" in dsum
    tree = "\n".join(b for n, b in functions(text).items() if "cairn_dred_kernel" in n)
    assert "shfl.sync.idx.b32" in tree


@needs_nvcc
def test_device_scan_is_a_multi_block_scan(tmp_path):
    """A device scan: block totals, their prefixes, then each block's scan from its
    prefix, all on the GPU (before: yields copied back, prefixes on the host)."""
    cu = emit(PROGRAMS / "reduce_ops.cairn", tmp_path / "emit")["reduce_ops_dev.cu"]
    assert "cairn_dscan_run<cairn_red_add<int32_t>, int32_t>" in cu
    assert "cairn_dscan_run<cairn_red_mul<int32_t>, int32_t>" in cu
    text = ptx(PROGRAMS / "reduce_ops.cairn", tmp_path / "ptx")
    entries = " ".join(re.findall(r"\.entry\s+(\S+)\(", text))
    for kernel in ("cairn_dscan_totals", "cairn_dscan_offsets", "cairn_dscan_write"):
        assert kernel in entries, kernel
