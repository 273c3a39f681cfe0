"""The bracket GEMM's case families, shared by the tests that hold every backend and
kernel to the same bits (test_enclose_kernels.py, test_enclose_residue.py) and by the
frozen device case set (tests/data/enclose/make_cases.py).

The seed's families: random operands at several shapes, K from 8 to 16384, integer
operands, catastrophic cancellation, subnormals, overflow, f32, operands spanning 520
binades; and what reaches each kernel's edges: tails of tiles and vector blocks, the
lane folds at 4096 and 8192 steps, one-limb operands (the mulx kernel), Karatsuba's
102-bit limit, zeros and an empty K. Each case is deterministic (seeded by its name).
"""
from enclose_model import Case, SIGN, random_normal_bits, rng_for, to_bits

F64_MAX = 0x7FEFFFFFFFFFFFFF


def random_case(name, m, n, k, width=64):
    rng = rng_for(name)
    return Case(name, width, m, n, k, random_normal_bits(rng, m * k, width),
                random_normal_bits(rng, k * n, width))


def uniform_case(name, m, n, k, width=64):
    """Operands in [1, 2) and (-2, -1]: one binade, so they fit one 64-bit limb."""
    rng = rng_for(name)

    def draw():
        return to_bits(rng.choice((-1, 1)) * (1 + rng.getrandbits(23 if width == 32 else 52)
                                              / 2.0 ** (23 if width == 32 else 52)), width)
    return Case(name, width, m, n, k, [draw() for _ in range(m * k)],
                [draw() for _ in range(k * n)])


def integer_case(name, m, n, k, width=64):
    rng = rng_for(name)
    return Case(name, width, m, n, k,
                [to_bits(float(rng.randint(-1000, 1000)), width) for _ in range(m * k)],
                [to_bits(float(rng.randint(-1000, 1000)), width) for _ in range(k * n)])


def spread_case(name, m, n, k, how):
    """520 binades: per element (`elements`: lossy), or whole rows of A and columns of B
    at scales 2^-260 .. 2^260 with each line narrow (`lines`: still tight)."""
    rng = rng_for(name)
    row_e = [rng.randint(-260, 260) for _ in range(m)]
    col_e = [rng.randint(-260, 260) for _ in range(n)]

    def draw(e):
        return to_bits(rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** e, 64)
    if how == "elements":
        a = [draw(rng.randint(-260, 260)) for _ in range(m * k)]
        b = [draw(rng.randint(-260, 260)) for _ in range(k * n)]
    else:
        a = [draw(row_e[i] + rng.randint(-3, 3)) for i in range(m) for _ in range(k)]
        b = [draw(col_e[j] + rng.randint(-3, 3)) for _ in range(k) for j in range(n)]
    return Case(name, 64, m, n, k, a, b)


def cancellation_cases():
    big, tiny = 2.0 ** 60, 2.0 ** -40
    rng = rng_for("cancel")
    xs = [rng.uniform(-1, 1) * 2.0 ** rng.randint(-30, 30) for _ in range(50)]
    ys = [rng.uniform(-1, 1) for _ in range(50)]
    a2 = xs + [-x for x in xs] + [2.0 ** -35]
    b2 = ys + ys + [2.0 ** -35]
    return [Case("cancel_small", 64, 1, 1, 5, [to_bits(x, 64) for x in (big, 1.0, -big, 3.0, big)],
                 [to_bits(x, 64) for x in (1.0, tiny, 1.0, tiny, -1.0)]),
            Case("cancel_random", 64, 1, 1, 101, [to_bits(x, 64) for x in a2],
                 [to_bits(x, 64) for x in b2])]


def subnormal_cases():
    sub = [to_bits(5e-324, 64), to_bits(3 * 5e-324, 64), to_bits(2.0 ** -1050, 64)]
    rng = rng_for("subnormal_block")
    block_a = [rng.randint(1, (1 << 52) - 1) | rng.choice((0, SIGN[64])) for _ in range(4 * 16)]
    block_b = [to_bits(rng.uniform(-4, 4), 64) for _ in range(16 * 5)]
    return [
        Case("sub_x_big", 64, 3, 1, 1, sub, [to_bits(2.0 ** 1000, 64)]),
        Case("sub_x_sub", 64, 1, 1, 1, [sub[0]], [sub[1]]),
        Case("neg_sub_x_sub", 64, 1, 1, 1, [sub[0] | SIGN[64]], [sub[1]]),
        Case("near_min_normal", 64, 1, 1, 2, [to_bits(2.0 ** -1022, 64), to_bits(-5e-324, 64)],
             [to_bits(1.0, 64), to_bits(1.0, 64)]),
        Case("subnormal_block", 64, 4, 5, 16, block_a, block_b),
        Case("sub_f32", 32, 2, 1, 2, [1, 7, 0x00400000, 0x80000003],
             [to_bits(0.75, 32), to_bits(2.0 ** -10, 32)]),
    ]


def overflow_cases():
    mx = F64_MAX
    return [
        Case("over_pos", 64, 1, 1, 1, [mx], [to_bits(2.0, 64)]),
        Case("over_neg", 64, 1, 1, 1, [mx | SIGN[64]], [to_bits(2.0, 64)]),
        Case("over_sum", 64, 1, 2, 2, [mx, mx], [to_bits(1.0, 64), to_bits(-1.0, 64),
                                                 to_bits(2.0 ** -53, 64), to_bits(2.0 ** -53, 64)]),
        Case("over_f32", 32, 1, 1, 1, [0x7F7FFFFF], [to_bits(1.5, 32)]),
    ]


def karatsuba_edge_cases():
    """Rows needing exactly 102 bits (Karatsuba's last) and 103 (the schoolbook's)."""
    out = []
    for top in (50, 51):
        rng = rng_for(f"kara_edge_{top}")
        a = []
        for i in range(3):
            row = [to_bits(rng.choice((-1, 1)) * rng.uniform(1, 2) * 2.0 ** rng.randint(-40, 40), 64)
                   for _ in range(9)]
            row[0], row[1] = to_bits(2.0 ** top, 64), to_bits(-(2.0 ** -50), 64)
            a += row
        b = [to_bits(rng.uniform(-1, 1) * 2.0 ** rng.randint(-50, 50), 64) for _ in range(9 * 10)]
        b[0], b[1] = to_bits(2.0 ** 50, 64), to_bits(2.0 ** -50, 64)
        out.append(Case(f"kara_edge_{top}", 64, 3, 10, 9, a, b))
    return out


def families(long=False):
    """Every family; `long` adds the cases whose exact check takes seconds (K = 70000
    reaches the row packing's lane fold)."""
    cases = [random_case(f"shape_{m}x{n}x{k}", m, n, k)
             for m, n, k in [(1, 1, 8), (5, 7, 100), (16, 16, 512), (3, 2, 4000), (13, 37, 33),
                             (9, 17, 300), (4, 40, 7)]]
    cases += [random_case(f"k{k}", 2, 3, k) for k in (8, 64, 512, 4096, 4097, 16384)]
    cases += [random_case("k8200_cols", 2, 9, 8200)]
    cases += [integer_case("ints", 6, 5, 200), integer_case("ints_f32", 5, 6, 100, 32)]
    cases += cancellation_cases() + subnormal_cases() + overflow_cases()
    cases += [random_case("f32_a", 7, 9, 50, 32), random_case("f32_b", 2, 3, 3000, 32)]
    cases += [spread_case("spread_elements", 4, 5, 40, "elements"),
              spread_case("spread_lines", 6, 9, 30, "lines")]
    cases += [uniform_case("one_limb", 5, 11, 600), uniform_case("one_limb_f32", 3, 4, 50, 32)]
    cases += karatsuba_edge_cases()
    cases += [Case("zeros", 64, 2, 2, 2, [0, SIGN[64], 0, 0], [0, 0, SIGN[64], 0]),
              Case("k0", 64, 2, 3, 0, [], [])]
    if long:
        cases += [random_case("k70000_rows", 1, 2, 70000)]
    return cases
