"""tilelib.py: the main() that runs an examples/tensor tiling (tile64, tile32) on @device
views and compares its bits with mma_unordered on host views, exiting 1 on a difference.
tests/tensor/test_examples.py and tests/bench/bench_tile64.py both build it.

The fill values round in f16 and bf16 (0.1, 0.37 ...), so equal bits say the tiling adds
in the reference's order, not only that it indexes right."""

FILL = """
  buffer hc:f32[M * N] = zeroed;
  buffer ha:f16[M * K] = zeroed;
  buffer hb:f16[K * N] = zeroed;
  for i in 0..M * N { hc[i] = f32(i % 9) * 0.3 - 1.1; }
  for i in 0..M * K { ha[i] = f16(f32(i % 7) * 0.1 + 0.3); }
  for i in 0..K * N { hb[i] = f16(f32(i % 13) * 0.37 - 2.1); }
"""

COMPARE = """
  buffer c:f32[M * N] @device = zeroed;
  buffer a:f16[M * K] @device = zeroed;
  buffer b:f16[K * N] @device = zeroed;
  copy(c, hc); copy(a, ha); copy(b, hb);
  TILING(c, a, b);
  buffer got:f32[M * N] = zeroed;
  copy(got, c);
  mma_unordered(M, N, K, hc, ha, hb);
  observe("c", got);
  for i in 0..M * N { if to_bits(got[i]) != to_bits(hc[i]) { return 1; } }
"""

REFERENCE = """
  mma_unordered(M, N, K, hc, ha, hb);
  observe("c", hc);
"""


def _main(body):
    return "\nfn main() -> i32 {" + FILL + body + "  return 0;\n}\n"


def compare_main(tiling):
    """main() running TILING on device views, exit 1 when a bit differs from the reference."""
    return _main(COMPARE.replace("TILING", tiling))


def reference_main():
    """main() running only the reference loop (the baseline of bench_tile64.py)."""
    return _main(REFERENCE)
