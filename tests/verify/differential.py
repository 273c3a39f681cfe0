#!/usr/bin/python3
"""differential.py: cairn verify's verdicts attacked with concrete runs.

For each program (random ones from a typed grammar, and hand-written ones), `cairn
verify --json` gives every property a verdict. Then:

  - every function is run on inputs made of boundary values kept by its `requires`
    (0, 1, -1, each width's extremes, the requires' own constants and their
    neighbours; for floats +-0, +-1, infinities, the largest finite, the smallest and
    largest subnormals, quiet and signalling NaNs with several payloads; views empty,
    of one element, of a few and past --unwind, holding zeros, ones, extremes or
    their index), each case built into one program and run at pool widths 1, 2 and 7.
    A run that traps at a guard whose every property there is "verified" is a wrong
    verdict; so is one that traps where no property is (unless the function holds a
    construct the model does not reach, which is its own unknown property);
  - every counterexample is replayed at the same widths: it must trap with the
    property's message at its line and column (or at a site its verdict says the same
    inputs also fail).

Cases run in batches: one program calls the function once per case, each call after an
observation that names the case, and a trap ends the batch; the cases after it are built
again into the next batch. A case whose `requires` does not hold is skipped in main
before the call (the requires is evaluated there as written), and so is one whose views
would be larger than the harness allows.

    differential.py [--seeds A..B] [--classes A..B] [--programs FILE ...] [--seconds S]
                    [--json]
        prints what it tried and every wrong verdict; exit 1 when one is wrong.

tests/verify/test_differential.py runs a bounded sweep in `make test`;
tests/fuzz/fuzz_verify.sh (`make fuzz`) runs fresh seeds for longer.
"""
import argparse
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from trapmsg import TRAP_LINE as TRAP, kind_of, says  # noqa: E402  the runtime's trap messages

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CAIRN = pathlib.Path(os.environ.get("CAIRN_BIN", ROOT / "bin")) / "cairn"

INTS = {"i8": (-(1 << 7), (1 << 7) - 1), "i16": (-(1 << 15), (1 << 15) - 1),
        "i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1),
        "u8": (0, 255), "u16": (0, 65535), "u32": (0, (1 << 32) - 1), "u64": (0, (1 << 64) - 1),
        "usize": (0, (1 << 64) - 1)}
F32 = [0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7f7fffff,
       0x00000001, 0x007fffff, 0x7fc00000, 0x7fc00001, 0xffc00000, 0x7f800001, 0x4f000000]
F64 = [0x0, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000, 0x7ff0000000000000,
       0xfff0000000000000, 0x7fefffffffffffff, 0x1, 0x000fffffffffffff, 0x7ff8000000000000,
       0x7ff8000000000001, 0xfff8000000000000, 0x7ff0000000000001, 0x43e0000000000000]
MAX_ELEMENTS = 1 << 16  # views the harness builds stay below this
WIDTHS = ("1", "2", "7")


# ---------------------------------------------------------------- random programs

class Gen:
    """Random well-typed functions over the constructs cairn verify models: checked
    integer arithmetic of every width, conversions, shifts, views with extents, loops,
    parallel regions, reductions and scans, calls with requires, floats and their bits.
    The checker is the judge: a refused program is skipped."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.cr = random.Random(seed + 1 << 20)  # std.cr's statements: r's stream unchanged
        self.n = 0

    def name(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def lit(self, t):
        lo, hi = INTS[t]
        v = self.r.choice([0, 1, 2, 3, 7, 100, hi, hi - 1, lo, lo + 1, self.r.randint(lo, hi)])
        v = min(max(v, lo), hi)
        return f"({v})" if v < 0 else str(v)

    def int_expr(self, t, env, depth):
        """An expression of integer type t over env: {name: type}."""
        r = self.r
        names = [n for n, ty in env.items() if ty == t]
        if depth <= 0 or r.random() < 0.3:
            if names and r.random() < 0.75:
                return r.choice(names)
            return self.lit(t)
        k = r.random()
        if k < 0.55:
            op = r.choice(["+", "-", "*", "/", "%", "+", "*"])
            return f"({self.int_expr(t, env, depth - 1)} {op} {self.int_expr(t, env, depth - 1)})"
        if k < 0.65:
            op = r.choice(["<<", ">>"])
            return f"({self.int_expr(t, env, depth - 1)} {op} {self.int_expr(t, env, depth - 1)})"
        if k < 0.85:
            src = r.choice(list(INTS))
            inner = self.int_expr(src, env, depth - 1)
            if not re.search(r"[a-z]", inner):  # a literal would take t's type
                return self.lit(t)
            return f"{t}({inner})"
        views = [n for n, ty in env.items() if ty == f"view:{t}"]
        if views:
            v = r.choice(views)
            return f"{v}[{self.int_expr('usize', env, depth - 1)}]"
        return f"min({self.int_expr(t, env, depth - 1)}, {self.int_expr(t, env, depth - 1)})"

    def cond(self, env, depth=2):
        t = self.r.choice(sorted({ty for ty in env.values() if ty in INTS}) or ["i32"])
        op = self.r.choice(["<", "<=", ">", ">=", "==", "!="])
        return f"{self.int_expr(t, env, depth)} {op} {self.int_expr(t, env, depth)}"

    def float_stmts(self, env, fparam, ft):
        bits = "u32" if ft == "f32" else "u64"
        v = self.name("fv")
        w = self.name("bv")
        k = self.r.choice(["2.0", "0.5", "1.0", "-1.0"])
        t = self.r.choice(["i32", "i64", "u8", "i16"])
        return [f"let {v}:{ft} = {fparam} * {k} + {self.r.choice(['0.0', '1.0', '-0.0'])};",
                f"let {w}:{bits} = to_bits({self.r.choice([fparam, v])});",
                f"if {v} == {v} && {v} < 1000.0 && {v} > -1000.0 {{ let {self.name('cv')}:{t} = {t}({v}); }}",
                f"if ({w} & 3) == {self.r.choice(['1', '2', '3'])} {{ let {self.name('dv')}:i32 = 100 / "
                f"i32({w} & 0); }}" if self.r.random() < 0.3 else ""] + self.cr_stmts(fparam, v, ft)

    def cr_stmts(self, fparam, v, ft):
        """A std.cr call and guards its range facts may prove (verify_cr.c): |tanh|, |sin|,
        |cos| <= 1 and 0 <= sigmoid <= 1 keep i32(c * 1000.0) in range; exp, exp2 and sigmoid
        >= 0 keep u8(c) from the negative side; the bits of a NaN result are 0x7fffffff."""
        r = self.cr
        if r.random() < 0.4:
            return []
        f = r.choice(["exp", "log"] if ft == "f64" else
                     ["exp", "exp2", "expm1", "log", "log2", "log1p", "tanh", "sigmoid", "sin", "cos"])
        c = self.name("cr")
        nan = "0x7fffffff" if ft == "f32" else "0x7fffffffffffffff"
        out = [f"let {c}:{ft} = std.cr.{f}({r.choice([fparam, v])});",
               r.choice([f"if {c} == {c} {{ let {self.name('ci')}:i32 = i32({c} * 1000.0); }}",
                         f"if {c} == {c} && {c} < 255.0 {{ let {self.name('cu')}:u8 = u8({c}); }}"])]
        if r.random() < 0.3:
            out.append(f"if {c} != {c} && to_bits({c}) != {nan} {{ let {self.name('cz')}:i32 = 1 / 0; }}")
        return out

    def loop_stmts(self, env, n, views):
        r = self.r
        out = []
        ro = [v for v, ty in views if ty[0] == "ro"]
        rw = [v for v, ty in views if ty[0] == "rw"]
        if ro and r.random() < 0.7:
            x = r.choice(ro)
            et = env[x].split(":")[1]
            acc = self.name("s")
            wide = "i64" if et != "i64" else "i64"
            out.append(f"let mut {acc}:{wide} = 0;")
            out.append(f"for i in 0..{n} {{ {acc} += {wide}({x}[i]); }}")
            env[acc] = wide
        if rw and r.random() < 0.7:
            y = r.choice(rw)
            et = env[y].split(":")[1]
            inner = dict(env)
            inner["i"] = "usize"
            out.append(f"parallel i in {n} {{ {y}[i] = {self.int_expr(et, inner, 2)}; }}")
        if ro and r.random() < 0.6:
            x = r.choice(ro)
            et = env[x].split(":")[1]
            op = r.choice(["+", "*", "min", "max", "^"])
            mode = r.choice(["for", "parallel"])
            red = self.name("r")
            out.append(f"let {red}:{et} = reduce {op} {mode} i in {n} yield {x}[i];")
            env[red] = et
        if ro and rw and r.random() < 0.3:
            x, y = r.choice(ro), r.choice(rw)
            if env[x] == env[y].replace("rw", "ro"):
                out.append(f"scan + for i in {n} yield {x}[i] into {y};")
        return out

    def function(self, helpers):
        r = self.r
        name = self.name("fn")
        env, params, reqs = {}, [], []
        for _ in range(r.randint(1, 3)):
            t = r.choice(list(INTS))
            p = self.name("p")
            params.append(f"{p}:{t}")
            env[p] = t
        n = None
        views = []
        if r.random() < 0.7:
            n = self.name("n")
            params.append(f"{n}:usize")
            env[n] = "usize"
            reqs.append(f"{n} <= {r.choice([3, 5, 9, 20, 1000])}")
            for _ in range(r.randint(1, 2)):
                acc = r.choice(["ro", "ro", "rw"])
                et = r.choice(["i32", "i64", "u8"])
                ext = r.choice([n, n, f"{n} + 1", f"{n} * 2"])
                v = self.name("x")
                params.append(f"{v}:{acc}<{et}>[{ext}]")
                env[v] = f"view:{et}"
                views.append((v, (acc, et)))
        fparam = None
        if r.random() < 0.35:
            ft = r.choice(["f32", "f64"])
            fparam = self.name("q")
            params.append(f"{fparam}:{ft}")
        ints = [p.split(":")[0] for p in params if p.split(":")[1] in INTS and not p.startswith("n")]
        for p in ints:
            if r.random() < 0.5:
                t = env[p]
                lo, hi = INTS[t]
                c = min(r.choice([0, 1, 10, 100, 1000, hi // 2]), hi)
                reqs.append(f"{p} {r.choice(['<', '<=', '>', '>=', '!='])} {c}")
        if reqs and r.random() < 0.05:
            reqs.append(f"{reqs[0].split()[0]} < 0 && {reqs[0].split()[0]} > 0")  # vacuous
        ret = r.choice(list(INTS))
        body = []
        for _ in range(r.randint(1, 4)):
            t = r.choice(list(INTS))
            v = self.name("v")
            body.append(f"let {v}:{t} = {self.int_expr(t, env, r.randint(1, 3))};")
            env[v] = t
        if n:
            body += self.loop_stmts(env, n, views)
        if fparam:
            body += [s for s in self.float_stmts(env, fparam, [p for p in params if p.startswith(fparam + ":")][0].split(":")[1]) if s]
        if helpers and r.random() < 0.5:
            h, hparams, hret = r.choice(helpers)
            args = [self.int_expr(ht, env, 1) for ht in hparams]
            v = self.name("h")
            body.append(f"let {v}:{hret} = {h}({', '.join(args)});")
            env[v] = hret
        body.append(f"if {self.cond(env)} {{ return {self.int_expr(ret, env, 2)}; }}")
        body.append(f"return {self.int_expr(ret, env, 2)};")
        req = f" requires {' && '.join(reqs)}" if reqs else ""
        text = f"fn {name}({', '.join(params)}) -> {ret}{req} {{\n  " + "\n  ".join(body) + "\n}\n"
        return name, text

    def helper(self):
        r = self.r
        name = self.name("h")
        t = r.choice(["i32", "u32", "i64", "u8"])
        a, b = self.name("a"), self.name("b")
        env = {a: t, b: t}
        lo, hi = INTS[t]
        req = f" requires {b} != 0 && {a} < {min(hi, 1000)}" if r.random() < 0.6 else ""
        text = f"fn {name}({a}:{t}, {b}:{t}) -> {t}{req} = {self.int_expr(t, env, 2)};\n"
        return (name, [t, t], t), text

    def program(self, functions=4):
        helpers, parts = [], []
        for _ in range(self.r.randint(0, 2)):
            h, text = self.helper()
            helpers.append(h)
            parts.append(text)
        for _ in range(functions):
            parts.append(self.function(helpers)[1])
        return "".join(parts) + "fn main() -> i32 { return 0; }\n"


class ClassGen:
    """Random programs for each class of issue 35, where the old model said "verified"
    and a run trapped: calls that write through an rw reference in a nested loop's bound,
    a buffer's count or a region's count (1); a blocks region's grid or threads (2); a
    device lane's NaN bits through -, abs, min, max (3); an atomic's old value in a
    pooled reduction (4, two workers racing); a lane reading a neighbour through a
    helper (5, the races program: the checker must refuse it); a guard reached through
    recursion as well as directly (6). Constants, operators and shapes vary with the
    seed; every function traps on the inputs the harness gives it (4 and 5 when the
    workers race)."""

    NANS = [0x7fc00001, 0xffc00001, 0x7fc12345, 0xffd00000, 0x7fa00000]

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.n = 0

    def name(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def binder(self):
        """Class 1: c written in a binder of a loop the model steps inductively (n
        symbolic, past what it unrolls); c = step * n, so `4 - min(c, 4 step) / step` is 0
        from four trips on. The old model kept c at its last unrolled trip's: verified."""
        r = self.r
        bump, fn = self.name("bump"), self.name("binder")
        step, width = r.randint(1, 3), r.randint(1, 3)
        shape = r.choice(["for j in 0..{b} {{ }}", "buffer b:u8[{b}] = zeroed;", "parallel j in {b} {{ }}"])
        return (f"fn {bump}(c:rw<i32>) -> usize {{ c += {step}; return {width}; }}\n"
                f"fn {fn}(n:usize) -> i32 requires n <= {r.choice([100, 1000])} {{\n  let mut c:i32 = 0;\n"
                f"  for i in 0..n {{ {shape.format(b=bump + '(c)')} }}\n"
                f"  return 10 / (4 - min(c, {4 * step}) / {step});\n}}\n")

    def blocks(self):
        """Class 2: a blocks region whose grid or threads count resets c, then `10 / c`."""
        r = self.r
        reset, fn = self.name("reset"), self.name("grid")
        start = r.choice([1, 5, 7, -3])
        if r.random() < 0.5:
            region = f"blocks g in {reset}(c) threads t in 32 {{ o[g * 32 + t] = 0; }}"
        else:
            region = f"blocks g in 1 threads t in 31 + {reset}(c) {{ o[t] = 0; }}"
        return (f"fn {reset}(c:rw<i32>) -> usize {{ c = 0; return 1; }}\n"
                f"fn {fn}(o:rw<i32>[32]@unified) -> i32 {{\n  let mut c:i32 = {start};\n"
                f"  {region}\n  return 10 / c;\n}}\n")

    def device_nan(self):
        """Class 3: a divisor from the device NaN's bits (0x7fffffff there, the host's
        exact bits in the old model)."""
        r = self.r
        fn, bits = self.name("dnan"), r.choice(self.NANS)
        op = r.choice(["-y", "abs(y)", "min(y, y)", "max(y, y)", "-abs(y)"])
        return (f"fn {fn}(out:rw<u32>[4]@device) {{\n"
                f"  parallel i in 4 {{ let y = from_bits[f32]({hex(bits)}); "
                f"out[i] = 100 / (to_bits({op}) ^ 0x7fffffff); }}\n}}\n")

    @staticmethod
    def spin(cond, count):
        """Statements that keep a lane busy when cond holds (s stays 0 for the caller)."""
        return (f"  let mut s:usize = 0;\n"
                f"  if {cond} {{ for j in 0..{count} {{ s = (s + j) % 1000; }} }}\n")

    def pooled(self):
        """Class 4: term i divides by its atomic's old value - i + lanes/2; a worker that
        reaches term lanes/2 first sees 0 (term 0 spins, so the other worker does)."""
        r = self.r
        spin, fn = self.name("spin"), self.name("pooled")
        lanes = r.choice([64, 128])
        return (f"fn {spin}(i:usize) -> i64 {{\n" + self.spin("i == 0", 30000000) +
                f"  return i64(s) - i64(s);\n}}\n"
                f"fn {fn}(x:rw<u32>[1]) -> i64 {{\n  x[0] = 0;\n"
                f"  return reduce + parallel i in {lanes} yield {spin}(i) + 10 / "
                f"(i64(atomic_add_wrap(x[0], 1)) - i64(i) + {lanes // 2});\n}}\n")

    def recursion(self):
        """Class 6: h's guard reached directly (d = 1) and through recursion (d = 1 - k)."""
        r = self.r
        h, down, fn = self.name("h"), self.name("down"), self.name("mixed")
        c = r.choice([100, 7, 1])
        return (f"fn {h}(d:i32) -> i32 = {c} / d;\n"
                f"fn {down}(k:u32, d:i32) -> i32 requires k <= 8 {{\n"
                f"  if k == 0 {{ return {h}(d); }}\n  return {down}(k - 1, d - 1);\n}}\n"
                f"fn {fn}(k:u32) -> i32 requires k <= {r.choice([2, 3, 5])} {{\n"
                f"  let a = {h}(1);\n  return a + {down}(k, 1);\n}}\n")

    def neighbour(self):
        """Class 5: lanes write y[i] = 1 and read y[i + off] (2 before any lane runs)
        through a helper; the lane before a chunk's end spins first, so it reads 1."""
        r = self.r
        at, fn = self.name("at"), self.name("neighbour")
        off = r.choice([1, 2])
        return (f"fn {at}(v:ro<i32>[64], k:usize) -> i32 {{\n" + self.spin("k % 32 == 31", 50000000) +
                f"  return v[k + {off}] + i32(s) - i32(s);\n}}\n"
                f"fn {fn}(y:rw<i32>[64]) {{\n  for k in 0..64 {{ y[k] = 2; }}\n"
                f"  parallel i in {64 - off} {{ let d = 10 / ({at}(y, i) - 1); y[i] = d - 9; }}\n}}\n")

    def programs(self):
        """(the classes' program, the races program)."""
        parts = [self.binder(), self.blocks(), self.device_nan(), self.recursion()]
        if self.r.random() < 0.5:
            parts.append(self.pooled())
        main = "fn main() -> i32 { return 0; }\n"
        return "".join(parts) + main, self.neighbour() + main


# ---------------------------------------------------------------- signatures and inputs

PARAM = re.compile(r"(\w+)\s*:\s*(ro|rw)?\s*(<\s*(\w+)\s*>)?\s*(\w+)?\s*(\[(.*)\])?\s*(@\w+)?")


def split_top(text, sep=","):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([<{":
            depth += 1
        elif ch in ")]>}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def signatures(source):
    """{name: (params [(name, kind, type, extent, placement)], ret, requires)} of the
    top-level functions, read from the source (their text is what main repeats)."""
    fns = {}
    for m in re.finditer(r"^fn (\w+)\((.*?)\)(.*)$", source, re.M):
        name, plist, rest = m.group(1), m.group(2), m.group(3)
        cut = min([i for i in (rest.find(" = "), rest.find("{")) if i >= 0] or [len(rest)])
        head = rest[:cut]  # a requires holds neither " = " nor a brace
        rm = re.match(r"\s*(->\s*(\w+))?\s*(implements \w+)?\s*(requires (.*))?$", head)
        if not rm:
            continue
        ret, req = rm.group(2), (rm.group(5) or "").strip() or None
        params = []
        for raw in split_top(plist):
            raw = raw.strip()
            pname, ty = raw.split(":", 1)
            ty = ty.strip()
            vm = re.match(r"(ro|rw)<(\w+)>(\[(.*)\])?\s*(@\w+)?$", ty)
            if vm:
                params.append((pname.strip(), vm.group(1), vm.group(2), vm.group(4), vm.group(5)))
            else:
                params.append((pname.strip(), "scalar", ty, None, None))
        fns[name] = (params, ret, req)
    return fns


def int_values(t, consts):
    lo, hi = INTS[t]
    vals = {0, 1, 2, 3, 8, 9, lo, hi, lo + 1, hi - 1, (lo + hi) // 2}
    if lo < 0:
        vals |= {-1, -2}
    for c in consts:
        vals |= {c - 1, c, c + 1}
    return sorted(v for v in vals if lo <= v <= hi)


def literal(t, v):
    if t in ("f32", "f64"):
        return f"from_bits[{t}]({hex(v)})"
    if t == "bool":
        return "true" if v else "false"
    return f"({v})" if v < 0 else str(v)


def cases(params, requires, rng, count):
    """Input cases: {param: value} for scalars, {param: (fill, value)} for views."""
    consts = [int(c) for c in re.findall(r"(?<![\w.])(\d+)(?![\w.])", requires or "")]
    pools = {}
    for pname, kind, ty, ext, place in params:
        if kind == "scalar":
            if ty in INTS:
                pools[pname] = int_values(ty, consts)
            elif ty == "f32":
                pools[pname] = F32
            elif ty == "f64":
                pools[pname] = F64
            elif ty == "bool":
                pools[pname] = [0, 1]
            else:
                return []  # storage floats, fragments: not generated here
        else:
            if ty not in INTS and ty not in ("f32", "f64", "bool"):
                return []
            fills = ["zero", "one", "index", "max", "min", "nan"] if ty in ("f32", "f64") else \
                    ["zero", "one", "index", "max", "min"]
            pools[pname] = fills
    out = []
    for k in range(count):
        case = {}
        for pname, pool in pools.items():
            if k == 0:
                case[pname] = pool[0]
            elif k == 1:
                case[pname] = pool[min(1, len(pool) - 1)]
            else:
                case[pname] = rng.choice(pool)
        out.append(case)
    return out


FILL = {"zero": lambda t: "0" if t in INTS else "0.0" if t in ("f32", "f64") else "false",
        "one": lambda t: "1" if t in INTS else "1.0" if t in ("f32", "f64") else "true"}


def fill_value(t, fill, k="cex_k"):
    if fill in FILL:
        return FILL[fill](t)
    if fill == "index":
        return f"{t}({k} % 100)" if t in INTS else f"{t}(i32({k} % 100))" if t in ("f32", "f64") else "true"
    if fill in ("max", "min") and t in INTS:
        return literal(t, INTS[t][1] if fill == "max" else INTS[t][0])
    if fill in ("max", "min") and t in ("f32", "f64"):
        return literal(t, F32[6] if t == "f32" else F64[6]) if fill == "max" else literal(t, F32[7] if t == "f32" else F64[7])
    if fill == "nan":
        return literal(t, 0x7fc00001 if t == "f32" else 0x7ff8000000000001)
    return FILL["zero"](t)


def case_block(fn, sig, case, k):
    """The statements of case k: the inputs as lets and buffers named like the
    parameters, the requires as written, then the call."""
    params, ret, req = sig
    lines = [f"  observe(\"case{k}\", 0);", "  {"]
    for pname, kind, ty, ext, place in params:
        if kind == "scalar":
            lines.append(f"    let {pname}:{ty} = {literal(ty, case[pname])};")
    ok = "true"
    for pname, kind, ty, ext, place in params:
        if kind == "scalar":
            continue
        if ext is None:  # a scalar reference
            lines.append(f"    let mut {pname}:{ty} = {FILL['one'](ty)};")
            continue
        lines.append(f"    let {pname}_n:usize = {ext};")
        ok = f"{ok} && {pname}_n <= {MAX_ELEMENTS}"
    lines.append(f"    if {ok} {{")
    for pname, kind, ty, ext, place in params:
        if kind == "scalar" or ext is None:
            continue
        where = f" {place}" if place and place != "@device" else ""
        host = f"{pname}_h" if place == "@device" else pname
        lines.append(f"      buffer {host}:{ty}[{pname}_n]{where} = zeroed;")
        lines.append(f"      for cex_k in 0..{pname}_n {{ {host}[cex_k] = {fill_value(ty, case[pname])}; }}")
        if place == "@device":
            lines.append(f"      buffer {pname}:{ty}[{pname}_n] @device = zeroed;")
            lines.append(f"      copy({pname}, {host});")
    call = f"{fn}({', '.join(p[0] for p in params)})"
    guard = f"if {req} " if req else ""
    value = f"let cex_r = {call};" if ret else f"{call};"
    lines.append(f"      {guard}{{ {value} }}")
    lines += ["    }", "  }"]
    return lines


def without_main(source):
    """The source with main's lines blanked (every other line keeps its place)."""
    lines = source.split("\n")
    out, skipping, depth = [], False, 0
    for line in lines:
        if re.match(r"^fn main\(\)", line):
            skipping = True
        if skipping:
            depth += line.count("{") - line.count("}")
            out.append("")
            if depth <= 0 and ("}" in line or ";" in line):
                skipping = False
            continue
        out.append(line)
    return "\n".join(out)


# ---------------------------------------------------------------- running and judging

class Tally:
    def __init__(self):
        self.programs = self.functions = self.properties = 0
        self.verdicts = {}
        self.cases = self.runs = self.builds = self.skipped = 0
        self.replays = self.replay_runs = 0
        self.refused = 0  # generated programs the checker refuses (issue 35's races)
        self.traps = self.traps_at_verified = self.explained = 0
        self.wrong = []

    def summary(self):
        return {"programs": self.programs, "functions": self.functions, "properties": self.properties,
                "verdicts": self.verdicts, "cases": self.cases, "runs": self.runs, "builds": self.builds,
                "skipped_by_requires_or_size": self.skipped, "traps": self.traps,
                "signals_in_unmodelled_code": self.explained,
                "replays": self.replays, "replay_runs": self.replay_runs, "refused": self.refused,
                "wrong": len(self.wrong)}


def sh(cmd, env=None, timeout=120):
    full = dict(os.environ)
    if env:
        full.update(env)
    try:
        return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, env=full)
    except subprocess.TimeoutExpired:
        return None


def judge_trap(tally, program, fn, props, got, where):
    """A trap (message, line, col) in fn's run: wrong when every property of fn there
    with that message is verified, or none is and fn holds nothing unmodelled."""
    msg, line, col = got
    here = [p for p in props if p["function"] == fn and p["at"].endswith(f":{line}:{col}")
            and says(p["property"], msg)]
    tally.traps += 1
    if here and all(p["verdict"] == "verified" for p in here):
        tally.traps_at_verified += 1
        tally.wrong.append({"program": str(program), "function": fn, "trap": got, "run": where,
                            "verdicts": [(p["title"], p["verdict"]) for p in here]})
    elif not here and not any(p["function"] == fn and p["property"] == "unmodelled construct" for p in props) \
            and "out of memory" not in msg:
        tally.wrong.append({"program": str(program), "function": fn, "trap": got, "run": where,
                            "verdicts": "no property at this place"})


def run_cases(tally, program, source, fn, sig, props, case_list, work):
    """Builds and runs the cases in batches; judges every trap."""
    base = without_main(source)
    main_line = base.rstrip("\n").count("\n") + 1
    todo = list(enumerate(case_list))
    while todo:
        body = []
        for k, case in todo:
            body += case_block(fn, sig, case, k)
        text = base.rstrip("\n") + "\nfn main() -> i32 {\n" + "\n".join(body) + "\n  return 0;\n}\n"
        path = work / f"{fn}_cases.cairn"
        path.write_text(text)
        exe = work / f"{fn}_cases"
        b = sh([CAIRN, "build", path, "-o", exe, "-O0"], timeout=300)
        tally.builds += 1
        if b is None or b.returncode != 0:
            tally.wrong.append({"program": str(program), "function": fn, "build": (b.stderr if b else "timeout")[-800:]})
            return
        last_done = None
        for width in WIDTHS:
            log = work / f"{fn}.obs"
            if log.exists():
                log.unlink()
            r = sh([exe], env={"CAIRN_THREADS": width, "CAIRN_OBSERVE": str(log)}, timeout=120)
            tally.runs += 1
            started = [json.loads(l)["name"] for l in log.read_text().splitlines()] if log.exists() else []
            if r is None:
                tally.wrong.append({"program": str(program), "function": fn, "timeout": width})
                return
            m = TRAP.search(r.stderr)
            if r.returncode == 0:
                continue
            if not m or not started:
                unmodelled = any(p["function"] == fn and p["property"] == "unmodelled construct"
                                 for p in props)
                if r.returncode < 0 and unmodelled:  # a signal, not a guard: a recursive call's
                    tally.explained += 1              # depth (stack overflow) is not modelled
                    last_done = int(started[-1][4:]) if started else len(case_list)
                    break
                tally.wrong.append({"program": str(program), "function": fn, "exit": r.returncode,
                                    "stderr": r.stderr[-400:]})
                return
            k = int(started[-1][4:])
            got = (m.group(1), int(m.group(3)), int(m.group(4)))
            if got[1] > main_line:  # in main: the harness's own requires or extent
                tally.skipped += 1
            else:
                judge_trap(tally, program, fn, props, got, {"case": case_list[k], "threads": width})
            last_done = k if last_done is None else min(last_done, k)
        tally.cases += len(todo) if last_done is None else len([1 for k, _ in todo if k <= last_done])
        if last_done is None:
            break
        todo = [(k, c) for k, c in todo if k > last_done]


def replay_all(tally, program, props):
    for p in props:
        if p["verdict"] != "counterexample" or not p.get("replay"):
            continue
        tally.replays += 1
        exe = pathlib.Path(p["replay"]).with_suffix("")
        b = sh([CAIRN, "build", p["replay"], "-o", exe, "-O0"], timeout=300)
        if b is None or b.returncode != 0:
            tally.wrong.append({"program": str(program), "replay": p["replay"], "build": (b.stderr if b else "")[-600:]})
            continue
        sites = [(p["property"], p["at"].rsplit(":", 2)[1:])]
        for also in p.get("also", []):
            at, title = also.split(": ", 1)
            kind = kind_of(title)
            sites.append((kind, at.rsplit(":", 2)[1:]))
        for width in WIDTHS:
            r = sh([exe], env={"CAIRN_THREADS": width}, timeout=120)
            tally.replay_runs += 1
            if p["property"] == "implements":
                ok = r is not None and r.returncode != 0
            else:
                m = TRAP.search(r.stderr) if r else None
                ok = bool(m) and any(says(kind, m.group(1)) and [m.group(3), m.group(4)] == at
                                     for kind, at in sites)
            if not ok:
                tally.wrong.append({"program": str(program), "replay": p["replay"], "threads": width,
                                    "stderr": (r.stderr if r else "timeout")[-400:]})
                break


def attack(tally, program, work, seed, cases_per_fn, budget):
    source = program.read_text()
    cex = work / "cex"
    r = sh([CAIRN, "verify", program, "--json", "--budget", str(budget), "--cex-dir", cex], timeout=1800)
    if r is None or r.returncode not in (0, 5, 10):
        return False
    props = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    tally.programs += 1
    tally.properties += len(props)
    for p in props:
        tally.verdicts[p["verdict"]] = tally.verdicts.get(p["verdict"], 0) + 1
    replay_all(tally, program, props)
    sigs = signatures(source)
    rng = random.Random(seed)
    for fn, sig in sigs.items():
        if fn == "main" or fn.endswith("_grad"):
            continue
        case_list = cases(sig[0], sig[2], rng, cases_per_fn)
        if not case_list:
            continue
        tally.functions += 1
        run_cases(tally, program, source, fn, sig, props, case_list, work)
    return True


def attack_classes(tally, seed, base, cases_per_fn, budget):
    """ClassGen(seed)'s two programs: the classes' one must check and is attacked; the
    races one must be refused with E-LANE-RACE (accepted, as the old checker did, it is
    attacked too, and its verified guards trap when the lanes race)."""
    work = base / f"classes{seed}"
    work.mkdir(parents=True, exist_ok=True)
    for stem, text in zip(("classes", "races"), ClassGen(seed).programs()):
        prog = work / f"{stem}{seed}.cairn"
        prog.write_text(text)
        c = sh([CAIRN, "check", prog])
        if c.returncode == 0:
            attack(tally, prog, work, seed, cases_per_fn, budget)
        elif stem == "races" and "E-LANE-RACE" in c.stderr:
            tally.refused += 1
        else:
            tally.wrong.append({"program": str(prog), "check": c.stderr[-800:]})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1..3", help="random programs A..B (inclusive)")
    ap.add_argument("--programs", nargs="*", default=[], help="hand-written programs too")
    ap.add_argument("--classes", help="issue 35's class programs for seeds A..B (ClassGen)")
    ap.add_argument("--seconds", type=float, default=0, help="keep taking seeds until this many seconds")
    ap.add_argument("--cases", type=int, default=12, help="input cases per function")
    ap.add_argument("--budget", type=int, default=12000000, help="cairn verify --budget")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", help="folder for the programs (default: a temporary one)")
    a = ap.parse_args(argv)
    lo, hi = (int(x) for x in a.seeds.split(".."))
    tally = Tally()
    t0 = time.monotonic()
    base = pathlib.Path(a.keep) if a.keep else pathlib.Path(tempfile.mkdtemp(prefix="cairn-diff-"))
    for path in a.programs:
        work = base / pathlib.Path(path).stem
        work.mkdir(parents=True, exist_ok=True)
        attack(tally, pathlib.Path(path), work, 0, a.cases, a.budget)
    if a.classes:
        clo, chi = (int(x) for x in a.classes.split(".."))
        for cseed in range(clo, chi + 1):
            attack_classes(tally, cseed, base, a.cases, a.budget)
    seed = lo
    while seed <= hi or (a.seconds and time.monotonic() - t0 < a.seconds):
        work = base / f"seed{seed}"
        work.mkdir(parents=True, exist_ok=True)
        prog = work / f"prog{seed}.cairn"
        prog.write_text(Gen(seed).program())
        if sh([CAIRN, "check", prog]).returncode == 0:
            attack(tally, prog, work, seed, a.cases, a.budget)
        seed += 1
    out = tally.summary()
    out["seconds"] = round(time.monotonic() - t0, 1)
    out["seeds"] = f"{lo}..{seed - 1}"
    if a.json:
        print(json.dumps({"summary": out, "wrong": tally.wrong}, indent=1))
    else:
        print(json.dumps(out))
        for w in tally.wrong:
            print("WRONG:", json.dumps(w))
    return 1 if tally.wrong else 0


if __name__ == "__main__":
    sys.exit(main())
