"""Functions with six or more parameters take a struct where the parameters travel
together (the project's standard; chibicc, cproc, QBE and Lua stay near 1.5%). Held
here for the folders that were brought under it: the compiler's commands and its base,
syntax, check, grad, predict, driver and verify folders, agent, lib and farm/proto
(compiler/lower, runtime and the rest of farm are not yet). A printf-like function's
`...` is not counted."""
import re

import pytest

from cairntest import ROOT

FOLDERS = ["compiler", "compiler/base", "compiler/syntax", "compiler/check", "compiler/grad",
           "compiler/predict", "compiler/driver", "compiler/verify", "agent", "lib", "farm/proto"]
LIMIT = 6

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", re.S)
DEFINITION = re.compile(r"^[A-Za-z_][\w \t\*]*?\b([A-Za-z_]\w*)\s*\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)\s*\{",
                        re.M)


def parameters(text):
    """{function: parameter count} of every function defined in C text."""
    text = COMMENT.sub(lambda m: '""' if m.group().startswith('"') else " ", text)
    out = {}
    for m in DEFINITION.finditer(text):
        params = m.group(2).strip()
        if not params or params == "void":
            out[m.group(1)] = 0
            continue
        depth, n = 0, 1
        for ch in params:
            depth += ch == "("
            depth -= ch == ")"
            n += ch == "," and depth == 0
        out[m.group(1)] = n - params.endswith("...")
    return out


def too_many():
    found = []
    for folder in FOLDERS:
        for src in sorted((ROOT / folder).glob("*.c")):
            for fn, n in parameters(src.read_text()).items():
                if n >= LIMIT:
                    found.append(f"{src.relative_to(ROOT)}: {fn} takes {n}")
    return found


def test_no_function_takes_six_or_more_parameters():
    assert not too_many(), "give these a struct of what travels together:\n" + "\n".join(too_many())


@pytest.mark.parametrize("text,counts", [
    ("static int f(int a, int b, int c, int d, int e, int g) {\n", {"f": 6}),
    ("long proto_send(Http *h, const HttpRequest *req, HttpResponse *out, ProtoError *e) {\n",
     {"proto_send": 4}),
    ("int w(char *const argv[], int (*tick)(void *, int), void *ctx) {\n", {"w": 3}),
    ("/* f(a, b, c, d, e, g) { */\nvoid v(void) {\n", {"v": 0}),
    ("void r(Grad *g, Span sp, Code c, const char *help, const char *fmt, ...) {\n", {"r": 5}),
])
def test_the_count_itself(text, counts):
    assert parameters(text) == counts
