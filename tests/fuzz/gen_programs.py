#!/usr/bin/python3
"""gen_programs.py: random well-typed CAIRN programs, for the C compilers to judge.

Every program `cairn check` accepts must build: the generated C has to compile under gcc
and clang with the project's flags (-Wall -Wextra -Werror ...) at every -O level. This
generator writes programs that are well typed by construction (a typed grammar: each
expression is built for the type its context wants), leaning on the corners that once
broke the build: comparisons whose result the types fix (`n >= 0` on a usize, `u <= 255`
on a u8), a value compared with itself, loops and reductions with literal and zero
bounds, extreme literals, conversions between every pair of scalar types, storage
floats, views, buffers, scans, pooled reductions and parallel regions. The checker is
the judge of validity (a program it refuses is skipped and counted), so the generator
may be loose where the rules are subtle.

    gen_programs.py SEED [COUNT DIR]     writes DIR/prog_SEED.cairn ... (or prints one)
    gen_programs.py --sweep CAIRN SEED SECONDS DIR
                                         programs SEED, SEED + 1, ... for SECONDS, each
                                         checked and, if accepted, built by CAIRN with
                                         gcc and clang at -O0 .. -O3; exit 1 on a failure

tests/fuzz/test_random_programs.py (a bounded sweep in `make test`) and
tests/fuzz/fuzz_programs.sh (`make fuzz`, for a while) build what it writes.
"""
import os
import random
import shutil
import subprocess
import sys
import time

INTS = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "usize"]
FLOATS = ["f32", "f64"]
STORAGE = ["f16", "bf16", "f8e4m3", "f8e5m2"]
SCALARS = INTS + FLOATS + ["bool"]
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32,
        "u64": 64, "usize": 64}
STORAGE_BITS = {"f16": "u16", "bf16": "u16", "f8e4m3": "u8", "f8e5m2": "u8"}
MATH1 = ["exp", "log", "sin", "cos", "tanh", "cbrt", "log1p", "atan"]


def int_range(t):
    b = BITS[t]
    return (-(1 << (b - 1)), (1 << (b - 1)) - 1) if t[0] == "i" else (0, (1 << b) - 1)


class Var:
    def __init__(self, name, ty, mut=False, view=None, extent=None):
        self.name, self.ty, self.mut, self.view, self.extent = name, ty, mut, view, extent


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.fns = []      # (name, [(pname, Var)], ret)
        self.count = 0

    def fresh(self, stem="v"):
        self.count += 1
        return f"{stem}{self.count}"

    def pick(self, xs):
        return self.r.choice(xs)

    # ---- expressions ---------------------------------------------------------------

    def int_literal(self, t):
        lo, hi = int_range(t)
        v = self.pick([0, 0, 1, 2, 7, 100, hi, hi - 1, lo, lo + 1, 255, 65535])
        v = min(max(v, lo), hi)
        return str(v) if v >= 0 else f"-{-v}"

    def float_literal(self, t):
        big = "1e300" if t == "f64" else "3.0e38"
        return self.pick(["0.0", "1.0", "0.5", "2.5", "1e16", "1.0e-3", big, "0.1",
                          "-1.5", "1e-40" if t == "f32" else "5e-324"])

    def literal(self, t):
        if t == "bool":
            return self.pick(["true", "false"])
        if t in FLOATS:
            return self.float_literal(t)
        if t in STORAGE:  # storage floats have no literals
            return f"{t}({self.pick(['0.0', '1.5', '-448.0', '1e-3'])})"
        return self.int_literal(t)

    def scalars(self, scope, t):
        return [v for v in scope if v.view is None and v.ty == t]

    def element(self, scope, t, index_vars):
        views = [v for v in scope if v.view and v.ty == t]
        if not views:
            return None
        v = self.pick(views)
        idx = self.pick(index_vars) if index_vars and self.r.random() < 0.8 else "0"
        return f"{v.name}[{idx}]"

    def leaf(self, scope, t, index_vars):
        roll = self.r.random()
        names = self.scalars(scope, t)
        if names and roll < 0.45:
            return self.pick(names).name
        if roll < 0.65:
            e = self.element(scope, t, index_vars)
            if e:
                return e
        return self.literal(t)

    def expr(self, scope, t, depth, index_vars=()):
        if depth <= 0 or self.r.random() < 0.25:
            return self.leaf(scope, t, index_vars)
        d = depth - 1
        if t == "bool":
            return self.bool_expr(scope, d, index_vars)
        if t in INTS:
            return self.int_expr(scope, t, d, index_vars)
        if t in FLOATS:
            return self.float_expr(scope, t, d, index_vars)
        return self.storage_expr(scope, t, d, index_vars)

    def anchored(self, scope, t, d, iv):
        """An expression that fixes its own type: a literal needs its context's type
        (docs/language.md), so where there is none (an operand of a conversion, the
        first operand of an operator, a yield) a bare literal becomes T(literal)."""
        e = self.expr(scope, t, d, iv)
        if e.lstrip("-")[:1].isdigit():
            if t in INTS:
                return f"{t}({self.pick(['0', '1', '2', '7', '100'])})"
            return f"{t}({e})"
        return e

    def convert_from(self, scope, t, d, index_vars):
        src = self.pick(INTS + FLOATS + STORAGE)
        if t in STORAGE and src not in FLOATS:
            src = self.pick(FLOATS)
        if src in STORAGE and t in INTS:
            return f"{t}(f32({self.anchored(scope, src, d, index_vars)}))"
        return f"{t}({self.anchored(scope, src, d, index_vars)})"

    def reduction(self, scope, t, d, index_vars, ops):
        op = self.pick(ops)
        mode = "parallel" if self.r.random() < 0.4 and not index_vars else "for"
        i = self.fresh("ix")
        bound = self.pick(["0", "1", "3", "0..0", "2..5", "n"]) if self.has_n(scope) \
            else self.pick(["0", "1", "3", "0..0", "2..5"])
        inner = scope + [Var(i, "usize")]
        body = self.anchored(inner, t, min(d, 2), tuple(index_vars) + (i,))
        return f"(reduce {op} {mode} {i} in {bound} yield {body})"

    def has_n(self, scope):
        return any(v.name == "n" for v in scope)

    def int_expr(self, scope, t, d, iv):
        k = self.r.randrange(9)
        if k == 0:
            op = self.pick(["+", "-", "*", "/", "%", "&", "|", "^"])
            return f"({self.anchored(scope, t, d, iv)} {op} {self.expr(scope, t, d, iv)})"
        if k == 1:
            op = self.pick(["<<", ">>"])
            return f"({self.anchored(scope, t, d, iv)} {op} {self.pick(['0', '1', '3'])})"
        if k == 2 and t[0] == "i":
            return f"(-{self.anchored(scope, t, d, iv)})"
        if k == 3:
            return self.convert_from(scope, t, d, iv)
        if k == 4:
            f = self.pick(["min", "max"] + (["abs"] if t[0] == "i" else []))
            args = [self.anchored(scope, t, d, iv)] + [self.expr(scope, t, d, iv)
                                                        for _ in range(0 if f == "abs" else 1)]
            return f"{f}({', '.join(args)})"
        if k == 5:
            return self.reduction(scope, t, d, iv, ["+", "*", "min", "max", "&", "|", "^"])
        if k == 6 and t in ("u16", "u8"):
            s = self.pick([x for x in STORAGE if STORAGE_BITS[x] == t])
            return f"to_bits({self.expr(scope, s, d, iv)})"
        if k == 7:
            return self.call(scope, t, d, iv)
        return self.leaf(scope, t, iv)

    def float_expr(self, scope, t, d, iv):
        k = self.r.randrange(9)
        if k == 0:
            op = self.pick(["+", "-", "*", "/"])
            return f"({self.anchored(scope, t, d, iv)} {op} {self.expr(scope, t, d, iv)})"
        if k == 1:
            return f"(-{self.anchored(scope, t, d, iv)})"
        if k == 2:
            return self.convert_from(scope, t, d, iv)
        if k == 3:
            f = self.pick(["sqrt", "floor", "ceil", "trunc", "abs"])
            return f"{f}({self.anchored(scope, t, d, iv)})"
        if k == 4 and not iv:
            f = self.pick(MATH1)
            return f"std.math.{f}({self.anchored(scope, t, d, iv)})"
        if k == 5:
            return self.reduction(scope, t, d, iv, ["+", "min", "max"])
        if k == 6:
            f = self.pick(["min", "max"])
            return f"{f}({self.anchored(scope, t, d, iv)}, {self.expr(scope, t, d, iv)})"
        if k == 7:
            return self.call(scope, t, d, iv)
        return self.leaf(scope, t, iv)

    def storage_expr(self, scope, t, d, iv):
        k = self.r.randrange(3)
        if k == 0:
            return f"from_bits[{t}]({self.anchored(scope, STORAGE_BITS[t], d, iv)})"
        if k == 1:
            return f"quantize[{t}]({self.expr(scope, 'f32', d, iv)}, {self.pick(['1.0', '0.25', '3.0'])})"
        return f"{t}({self.anchored(scope, self.pick(FLOATS), d, iv)})"

    def bool_expr(self, scope, d, iv):
        k = self.r.randrange(6)
        if k <= 2:  # comparisons, often against a literal or the value itself
            t = self.pick(INTS + FLOATS)
            op = self.pick(["==", "!=", "<", "<=", ">", ">="])
            a = self.anchored(scope, t, d, iv)
            roll = self.r.random()
            b = a if roll < 0.2 else self.literal(t) if roll < 0.6 else self.expr(scope, t, d, iv)
            return f"({a} {op} {b})"
        if k == 3:
            op = self.pick(["&&", "||"])
            return f"({self.expr(scope, 'bool', d, iv)} {op} {self.expr(scope, 'bool', d, iv)})"
        if k == 4:
            return f"(!{self.expr(scope, 'bool', d, iv)})"
        return self.leaf(scope, "bool", iv)

    def call(self, scope, t, d, iv):
        fits = [f for f in self.fns if f[2] == t]
        if not fits or iv:
            return self.leaf(scope, t, iv)
        name, params, _ = self.pick(fits)
        args = []
        for _, p in params:
            if p.view:
                views = [v for v in scope if v.view and v.ty == p.ty and
                         (p.view == "ro" or v.view == "rw")]
                if not views:
                    return self.leaf(scope, t, iv)
                args.append(self.pick(views).name)
            elif p.name == "n" and self.has_n(scope):
                args.append("n")
            else:
                args.append(self.expr(scope, p.ty, min(d, 1), iv))
        return f"{name}({', '.join(args)})"

    # ---- statements ----------------------------------------------------------------

    def stmt(self, scope, out, depth, ret, indent):
        pad = "  " * indent
        k = self.r.randrange(10)
        t = self.pick(SCALARS + STORAGE[:1])
        if k <= 2:
            name = self.fresh()
            mut = self.r.random() < 0.5
            out.append(f"{pad}let {'mut ' if mut else ''}{name}:{t} = {self.expr(scope, t, 3)};")
            scope.append(Var(name, t, mut))
        elif k == 3:
            muts = [v for v in scope if v.mut and v.view is None]
            if muts:
                v = self.pick(muts)
                op = "=" if v.ty in ("bool",) + tuple(STORAGE) else self.pick(["=", "+=", "-=", "*="])
                out.append(f"{pad}{v.name} {op} {self.expr(scope, v.ty, 2)};")
        elif k == 4 and depth > 0:
            out.append(f"{pad}if {self.expr(scope, 'bool', 3)} {{")
            self.block(list(scope), out, depth - 1, ret, indent + 1, 2)
            if self.r.random() < 0.5:
                out.append(f"{pad}}} else {{")
                self.block(list(scope), out, depth - 1, ret, indent + 1, 2)
            out.append(f"{pad}}}")
        elif k == 5 and depth > 0:
            i = self.fresh("ix")
            bound = self.pick(["0..0", "0", "3", "1..4", "n"] if self.has_n(scope) else ["0..0", "0", "3", "1..4"])
            out.append(f"{pad}for {i} in {bound} {{")
            self.block(scope + [Var(i, "usize")], out, depth - 1, ret, indent + 1, 2)
            out.append(f"{pad}}}")
        elif k == 6:
            rw = [v for v in scope if v.view == "rw" and v.extent == "n"]
            if rw and self.has_n(scope):
                v, i = self.pick(rw), self.fresh("ix")
                lane = [s for s in scope if s.view != "rw" and not s.mut]
                out.append(f"{pad}parallel {i} in n {{ {v.name}[{i}] = "
                           f"{self.expr(lane + [Var(i, 'usize')], v.ty, 2, (i,))}; }}")
        elif k == 7:
            bt = self.pick(INTS + FLOATS)
            name = self.fresh("b")
            out.append(f"{pad}buffer {name}:{bt}[4] = zeroed;")
            scope.append(Var(name, bt, view="rw", extent="4"))
            if self.r.random() < 0.5:
                i = self.fresh("ix")
                op = self.pick(["+", "min", "max"] + (["&", "^"] if bt in INTS else []))
                mode = "for" if bt in FLOATS else self.pick(["for", "parallel"])
                body = self.anchored(scope + [Var(i, "usize")], bt, 2, (i,))
                out.append(f"{pad}scan {op} {mode} {i} in 4 yield {body} into {name};")
        elif k == 8:
            rw = [v for v in scope if v.view == "rw"]
            if rw:
                v = self.pick(rw)
                out.append(f"{pad}{v.name}[0] = {self.expr(scope, v.ty, 2)};")
        else:
            out.append(f"{pad}return {self.expr(scope, ret, 3)};" if ret else f"{pad}return;")

    def block(self, scope, out, depth, ret, indent, nstmts):
        for _ in range(self.r.randrange(1, nstmts + 1)):
            self.stmt(scope, out, depth, ret, indent)

    def function(self, name):
        params = []
        if self.r.random() < 0.6:
            params.append(("n", Var("n", "usize")))
            for _ in range(self.r.randrange(1, 3)):
                vt = self.pick(INTS + FLOATS + STORAGE[:2])
                mode = self.pick(["ro", "rw"])
                params.append((None, Var(self.fresh("x"), vt, view=mode, extent="n")))
        for _ in range(self.r.randrange(0, 3)):
            params.append((None, Var(self.fresh("p"), self.pick(SCALARS + STORAGE))))
        ret = self.pick(SCALARS + STORAGE[:1])
        scope = [v for _, v in params]
        body = []
        self.block(scope, body, 2, ret, 1, 6)
        body.append(f"  return {self.expr(scope, ret, 3)};")
        sig = ", ".join(f"{v.name}:{self.typename(v)}" for _, v in params)
        self.fns.append((name, [(p or v.name, v) for p, v in params], ret))
        return f"fn {name}({sig}) -> {ret} {{\n" + "\n".join(body) + "\n}\n"

    @staticmethod
    def typename(v):
        return f"{v.view}<{v.ty}>[{v.extent}]" if v.view else v.ty

    def program(self, nfns=6):
        parts = [self.function(f"f{k}") for k in range(nfns)]
        parts.append("fn main() -> i32 {\n  return 0;\n}\n")
        return "\n".join(parts)


# ---- building what it writes -----------------------------------------------------------

LEVELS = ["-O0", "-O1", "-O2", "-O3"]


def compilers():
    return [cc for cc in ("gcc", "clang") if shutil.which(cc)]


def judge(cairn, seed, workdir):
    """Writes program SEED, checks it and builds every accepted one with each compiler
    at each -O level. Returns (accepted, failures): failures lists (flags, stderr)."""
    path = os.path.join(workdir, f"prog_{seed}.cairn")
    with open(path, "w") as f:
        f.write(Gen(seed).program())
    checked = subprocess.run([cairn, "check", path], capture_output=True, text=True,
                             timeout=120)
    if checked.returncode != 0:
        return False, []
    failures = []
    for cc in compilers():
        for level in LEVELS:
            out = os.path.join(workdir, f"prog_{seed}_{cc}{level}")
            res = subprocess.run([cairn, "build", path, "-o", out, "--cc", cc, level],
                                 capture_output=True, text=True, timeout=300)
            if res.returncode != 0:
                failures.append((f"--cc {cc} {level}", res.stderr[-3000:]))
    return True, failures


def sweep(cairn, first_seed, seconds, workdir):
    """Programs first_seed, first_seed + 1, ... until `seconds` pass; prints each failure
    with its program's path. Returns (programs, accepted, failed)."""
    start, seed, programs, accepted, failed = time.time(), first_seed, 0, 0, 0
    while time.time() - start < seconds:
        ok, failures = judge(cairn, seed, workdir)
        programs, accepted = programs + 1, accepted + ok
        for flags, err in failures:
            failed += 1
            print(f"FAIL {workdir}/prog_{seed}.cairn with {flags}:\n{err}", flush=True)
        seed += 1
    return programs, accepted, failed


def main(argv):
    if len(argv) >= 2 and argv[1] == "--sweep":  # --sweep CAIRN SEED SECONDS DIR
        cairn, seed, seconds, workdir = argv[2], int(argv[3]), float(argv[4]), argv[5]
        programs, accepted, failed = sweep(cairn, seed, seconds, workdir)
        print(f"gen_programs: {programs} programs from seed {seed}, {accepted} accepted, "
              f"each built with {' and '.join(compilers())} at {' '.join(LEVELS)}: "
              f"{failed} builds failed")
        return 1 if failed else 0
    seed = int(argv[1]) if len(argv) > 1 else 1
    count = int(argv[2]) if len(argv) > 2 else 1
    if len(argv) <= 3:
        print(Gen(seed).program())
        return 0
    for k in range(count):
        with open(f"{argv[3]}/prog_{seed + k}.cairn", "w") as f:
            f.write(Gen(seed + k).program())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
