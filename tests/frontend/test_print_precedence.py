"""The printer keeps each expression's structure, with the fewest parentheses: random
fully parenthesised integer expressions are printed by `cairn check --print`, and Python
(whose precedence for these operators is CAIRN's: | ^ & << >> + - * / % and unary -)
evaluates the original and the printed text to the same value."""
import pathlib
import random
import re

from cairntest import BIN, run

OPS = ["+", "-", "*", "&", "|", "^", "<<", ">>"]


def random_expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        lit = str(rng.randint(0, 9))
        return f"(-{lit})" if rng.random() < 0.2 else lit
    op = rng.choice(OPS)
    lhs = random_expr(rng, depth - 1)
    rhs = str(rng.randint(0, 3)) if op in ("<<", ">>") else random_expr(rng, depth - 1)
    text = f"({lhs} {op} {rhs})"
    return f"(-{text})" if rng.random() < 0.1 else text


def test_printed_expressions_keep_their_value(tmp_path):
    rng = random.Random(20261130)
    exprs = [random_expr(rng, rng.randint(1, 6)) for _ in range(400)]
    src = tmp_path / "exprs.cairn"
    src.write_text("".join(f"fn e{i}() -> i64 = {e};\n" for i, e in enumerate(exprs)))
    r = run([BIN / "cairn", "check", "--print", src])
    assert r.returncode == 0, r.stderr
    printed = dict(re.findall(r"^fn e(\d+)\(\) -> i64 = (.*);$", r.stdout, re.M))
    assert len(printed) == len(exprs)
    fewer = 0
    for i, original in enumerate(exprs):
        text = printed[str(i)]
        assert eval(text) == eval(original), (original, text)
        fewer += text.count("(") < original.count("(")
    assert fewer > len(exprs) // 2     # redundant parentheses were dropped
