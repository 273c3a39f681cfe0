"""The phase rule (E-COOP-PHASE) against a brute-force model.

Random cooperative regions over one shared array: a sequence of writes, reads and
barriers (some under `if t < C`), optionally inside a uniform loop `for i in 0..L`, with
indices a*t + b*i + c, (t + c) % T and t / d. The model runs every thread through the
region in Python, numbers each access by the barriers executed before it (its phase), and
calls the program racy when two different threads touch one element in one phase with at
least one write. The checker must refuse every racy program (soundness) and, for this
affine family, which the language promises to decide exactly, accept every safe one.
A second family writes a @device view from several blocks, which never synchronise. A
third indexes through a small swizzled or padded layout (L.at(row, col)).
"""
import random
import sys
import pathlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from frontlib import check  # noqa: E402


def random_index(rng, T, loop):
    form = rng.random()
    if form < 0.15:
        return ("mod", rng.randrange(0, T), None)
    if form < 0.25:
        return ("div", rng.choice([2, 4, 32]), None)
    a = rng.choice([0, 1, 1, 1, 2, 32])
    b = rng.choice([0, 1, 2, 4, 32, 64]) if loop else 0
    return ("affine", (a, b), rng.randrange(0, 3))


def index_text(ix, T):
    kind, p, c = ix
    if kind == "mod":
        return f"(t + {p}) % {T}"
    if kind == "div":
        return f"t / {p}"
    a, b = p
    terms = [f"{a} * t" if a else "", f"{b} * i" if b else "", str(c)]
    return " + ".join(x for x in terms if x)


def index_value(ix, t, i):
    kind, p, c = ix
    if kind == "mod":
        return (t + p) % T_OF[0]
    if kind == "div":
        return t // p
    a, b = p
    return a * t + b * i + c


T_OF = [0]


def random_program(rng):
    T = rng.choice([4, 8, 32, 64])
    T_OF[0] = T
    loop = rng.random() < 0.6
    L = rng.choice([2, 3, 4])
    ops = []
    for _ in range(rng.randrange(2, 5)):
        r = rng.random()
        if r < 0.25:
            ops.append(("barrier",))
        else:
            guard = rng.choice([None, None, rng.randrange(1, T)])
            ops.append(("write" if r < 0.6 else "read", random_index(rng, T, loop), guard))
    return T, loop, L, ops


def source(T, loop, L, ops, where=None, head=()):
    """The region's text; where(ix) writes an index (default: index_text)."""
    where = where or (lambda ix: index_text(ix, T))
    size = 64 * T + 64 * 8 + 8
    lines = [*head, f"fn f(out:rw<f32>[{T}]@device) {{", f"  blocks g in 1 threads t in {T} {{",
             f"    shared s:f32[{size}] = zeroed;"]
    indent = "    "
    if loop:
        lines.append(f"    for i in 0..{L} {{")
        indent = "      "
    for n, op in enumerate(ops):
        if op[0] == "barrier":
            lines.append(indent + "barrier;")
            continue
        kind, ix, guard = op
        stmt = f"s[{where(ix)}] = 1.0;" if kind == "write" else f"let v{n} = s[{where(ix)}];"
        lines.append(indent + (f"if t < {guard} {{ {stmt} }}" if guard else stmt))
    if loop:
        lines.append("    }")
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def racy(T, loop, L, ops, element=index_value):
    """Every thread runs the region; accesses keyed by (phase, element(ix, t, i))."""
    seen = {}
    for t in range(T):
        phase = 0
        for i in range(L if loop else 1):
            for op in ops:
                if op[0] == "barrier":
                    phase += 1
                    continue
                kind, ix, guard = op
                if guard is not None and not t < guard:
                    continue
                key = (phase, element(ix, t, i))
                for (t2, kind2) in seen.get(key, ()):
                    if t2 != t and "write" in (kind, kind2):
                        return True
                seen.setdefault(key, set()).add((t, kind))
    return False


def verdict(tmp_path, text):
    path = tmp_path / "p.cairn"
    path.write_text(text)
    rc, found, err = check(path)
    codes = {c for c, _, _ in found}
    assert rc in (0, 1) and codes <= {"E-COOP-PHASE"}, err
    return rc == 1


def test_phase_rule_matches_the_model(tmp_path):
    rng = random.Random(20261201)
    counts = {"racy": 0, "safe": 0}
    for _ in range(300):
        T, loop, L, ops = random_program(rng)
        text = source(T, loop, L, ops)
        want = racy(T, loop, L, ops)
        counts["racy" if want else "safe"] += 1
        got = verdict(tmp_path, text)
        assert got == want, f"model says {'racy' if want else 'safe'}, checker {'refused' if got else 'accepted'}:\n{text}"
    assert counts["racy"] > 20 and counts["safe"] > 20, counts


def test_blocks_never_share_a_written_device_element(tmp_path):
    rng = random.Random(7)
    for _ in range(40):
        G, T = rng.choice([2, 4]), rng.choice([4, 8, 32])
        a, b, c = rng.choice([0, 1, T, 2 * T]), rng.choice([0, 1, 2]), rng.randrange(0, 3)
        index = " + ".join(x for x in [f"{a} * g" if a else "", f"{b} * t" if b else "", str(c)] if x)
        text = (f"fn f(out:rw<f32>[{4 * G * T + 8}]@device) {{\n"
                f"  blocks g in {G} threads t in {T} {{ out[{index}] = 1.0; }}\n}}\n")
        cells = [a * g + b * t + c for g in range(G) for t in range(T)]
        want = len(set(cells)) < len(cells)
        assert verdict(tmp_path, text) == want, text


# A third family indexes through a small constant layout, s[L.at(row, col)]: swizzled
# (the rule equates coordinates, since a proved layout is injective), padded (affine
# offsets), or both, with now and then a plain index into the same array (a swizzled
# access against a plain one stays conservative). The model computes every offset with
# its own copy of the swizzle (numerics.md: o ^ ((o & (((1 << b) - 1) << (m + s))) >> s))
# and decides races on offsets, so it does not take injectivity on trust.
LAYOUTS = [  # (text, rows, cols, row stride, swizzle (b, m, s) or None)
    ("swizzle(rows(8, 16), 2, 2, 2)", 8, 16, 16, (2, 2, 2)),
    ("swizzle(rows(16, 8), 1, 1, 3)", 16, 8, 8, (1, 1, 3)),
    ("pad(rows(8, 16), 4)", 8, 16, 20, None),
    ("swizzle(pad(rows(8, 16), 16), 2, 2, 3)", 8, 16, 32, (2, 2, 3)),
]


def layout_offset(lay, r, c):
    _, _, _, stride, sw = lay
    o = r * stride + c
    if sw:
        b, m, s = sw
        o ^= (o & (((1 << b) - 1) << (m + s))) >> s
    return o


def random_coordinate(rng, T, loop, n, L=3):
    """(t + c) % n, t / d, or a * t + b * i + c, always inside 0 .. n - 1 (outside, .at
    traps); the forms the rule promises to decide exactly."""
    for _ in range(20):
        form = rng.random()
        if form < 0.3:
            return ("mod", rng.randrange(0, n), n)
        if form < 0.5:
            d = rng.choice([1, 2, 4, 8, 16, 32])
            if (T - 1) // d < n:
                return ("div", d, n)
            continue
        a, b, c = rng.choice([0, 1, 1, 2]), rng.choice([0, 1, 2, 4]) if loop else 0, rng.randrange(0, 3)
        if a * (T - 1) + b * (L - 1) + c < n:
            return ("affine", (a, b, c), n)
    return ("mod", 0, n)


def coordinate_text(x):
    kind, p, n = x
    if kind == "mod":
        return f"(t + {p}) % {n}"
    if kind == "div":
        return f"t / {p}"
    a, b, c = p
    return " + ".join(x for x in [f"{a} * t" if a else "", f"{b} * i" if b else "", str(c)] if x)


def coordinate_value(x, t, i):
    kind, p, n = x
    if kind == "mod":
        return (t + p) % n
    if kind == "div":
        return t // p
    a, b, c = p
    return a * t + b * i + c


def random_layout_program(rng, plain):
    T = rng.choice([4, 8, 32, 64])
    T_OF[0] = T
    lay = rng.choice(LAYOUTS)
    loop = rng.random() < 0.5
    ops = []
    for _ in range(rng.randrange(2, 5)):
        r = rng.random()
        if r < 0.2:
            ops.append(("barrier",))
            continue
        kind = "write" if r < 0.6 else "read"
        guard = rng.choice([None, None, rng.randrange(1, T)])
        if plain and rng.random() < 0.3:
            ops.append((kind, ("plain", random_index(rng, T, loop)), guard))
        else:
            at = (random_coordinate(rng, T, loop, lay[1]), random_coordinate(rng, T, loop, lay[2]))
            ops.append((kind, ("at", at), guard))
    return T, lay, loop, 3, ops


def layout_source(T, lay, loop, L, ops):
    def where(ix):
        how, x = ix
        return index_text(x, T) if how == "plain" else f"LAY.at({coordinate_text(x[0])}, {coordinate_text(x[1])})"
    return source(T, loop, L, ops, where, head=[f"layout LAY = {lay[0]};"])


def layout_racy(T, lay, loop, L, ops):
    def element(ix, t, i):
        how, x = ix
        if how == "plain":
            return index_value(x, t, i)
        return layout_offset(lay, coordinate_value(x[0], t, i), coordinate_value(x[1], t, i))
    return racy(T, loop, L, ops, element)


def test_phase_rule_through_layouts_matches_the_model(tmp_path):
    """Through one layout the rule decides exactly; mixed with plain indices, a swizzled
    layout may be refused when safe (conservative) but never accepted when racy."""
    rng = random.Random(20261202)
    counts = {"racy": 0, "safe": 0, "swizzled safe": 0, "mixed safe accepted": 0}
    for n in range(240):
        plain = n % 3 == 2
        T, lay, loop, L, ops = random_layout_program(rng, plain)
        text = layout_source(T, lay, loop, L, ops)
        want = layout_racy(T, lay, loop, L, ops)
        counts["racy" if want else "safe"] += 1
        got = verdict(tmp_path, text)
        mixed = any(op[0] != "barrier" and op[1][0] == "plain" for op in ops) and lay[4] is not None
        if mixed and not want:
            counts["mixed safe accepted"] += not got
            continue
        counts["swizzled safe"] += not want and lay[4] is not None
        assert got == want, f"model says {'racy' if want else 'safe'}, checker {'refused' if got else 'accepted'}:\n{text}"
    assert counts["racy"] > 20 and counts["swizzled safe"] > 20, counts


# A fourth family stores tiles over a row stride that is not a constant, n = tn * S, from
# blocks g in tn * G0 (bi = g % tn, bj = g / tn): y[(a * bj + r * (t / w)) * n + c * bi +
# d * (t % w) + e]. The checker must refuse every program that races for some tn, and
# the model tries tn = 1 .. 5; programs it accepts must be safe for all of those, and it
# must accept some (the stride rule, issue 38: before, every one was refused).
def strided_program(rng):
    S, w, T = rng.choice([16, 32, 64]), rng.choice([8, 16, 32]), rng.choice([32, 64])
    a, r = rng.choice([0, 4, 8, 32]), rng.choice([0, 1, 1])
    c, d, e = rng.choice([0, 8, 16, 32, 64]), rng.choice([0, 1, 1]), rng.choice([0, 0, 1])
    return S, w, T, rng.choice([1, 2]), (a, r, c, d, e)


def strided_racy(S, w, T, G0, k, tn):
    a, r, c, d, e = k
    seen = set()
    for g in range(tn * G0):
        for t in range(T):
            bi, bj = g % tn, g // tn
            x = (a * bj + r * (t // w)) * (tn * S) + c * bi + d * (t % w) + e
            if x in seen:
                return True
            seen.add(x)
    return False


def test_strides_that_are_not_constants(tmp_path):
    rng = random.Random(38)
    accepted = 0
    for _ in range(150):
        S, w, T, G0, k = strided_program(rng)
        a, r, c, d, e = k
        text = (f"fn f(tn:usize, y:rw<f32>[tn * 1048576]@device) {{\n  let n = tn * {S};\n"
                f"  blocks g in tn * {G0} threads t in {T} {{\n    let bi = g % tn;\n"
                f"    let bj = g / tn;\n"
                f"    y[({a} * bj + {r} * (t / {w})) * n + {c} * bi + {d} * (t % {w}) + {e}] = 1.0;\n"
                f"  }}\n}}\n")
        refused = verdict(tmp_path, text)
        racy = any(strided_racy(S, w, T, G0, k, tn) for tn in range(1, 6))
        assert refused or not racy, f"a race for some tn in 1..5, accepted:\n{text}"
        accepted += not refused
    assert accepted >= 10, accepted
