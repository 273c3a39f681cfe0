"""Comments that cite a file or a section name one that exists, so a reader who follows
a pointer finds what it points at. A file named with a folder (`compiler/lower/lower.h`,
`runtime/cairn_sum.c`, `docs/tools.md`) must exist from the tree's root, from the citing
file's folder or one above it, or from compiler/ or runtime/ (where includes are written
from); a bare name (`verify.h`, `codes.def`) must name a file somewhere in the tree;
a glob (`compiler/lower/lower_c*.c`) must match one. `DESIGN.md section N` must be a
section of a DESIGN.md in the tree (the design card is kept outside it: cite docs/).
A file of another project (`QBE's ops.h`) is not this tree's. Names written in
capitals are placeholders (`OUT.receipt.json`, `c/KEY/STEM.c`) and
file names of data (.json, .cairn, .txt) are what a program writes or reads, not
citations: both are passed over."""
import io
import pathlib
import re
import subprocess
import tokenize

import pytest

from cairntest import ROOT

CITED = re.compile(r"(?<![\w./%<>$-])((?:\.\./|[\w.*-]+/)*[\w*-]+(?:\.[\w-]+)*"
                   r"\.(?:c|h|cu|cuh|cpp|def|md|py|sh|mk))(?![\w/*(])")
SECTION = re.compile(r"\b([\w./-]*DESIGN\.md),? sections? (\d+)")
PLACEHOLDER = re.compile(r"(^|[/_.])[A-Z][A-Z0-9_]+([/_.]|$)")
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
FOREIGN = re.compile(r"\b[A-Z][\w+-]*'s[\s*#]+`?$")  # QBE's ops.h, Go's prove.go
C_LIKE = {".c", ".h", ".cu", ".cuh", ".cpp", ".def"}
FOLDERS = ("compiler", "runtime", "farm", "agent", "lib", "proofs", "tests", "scripts",
           "python", "tools", "examples")
SKIP = ("tests/build/c_goldens/",)  # generated code, recorded as text
# Stale, and known (none now): an entry must still be stale to stay listed.
KNOWN_STALE = set()
EXTERNAL = {"math_constants.h"}  # the CUDA toolkit's
DIRECTIVE = re.compile(r"^\s*#\s*(include|define|if|ifdef|ifndef|endif|else|pragma)\b")


def tracked():
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [p for p in out.splitlines() if (ROOT / p).is_file()]


FILES = tracked()
BASENAMES = {pathlib.PurePath(p).name for p in FILES}


def comments(rel):
    """(line, text) of each comment in the file: C comments, Python comments and
    docstrings, # lines of shell scripts and makefiles."""
    path = ROOT / rel
    text = path.read_text(errors="replace")
    if path.suffix in C_LIKE:
        for m in C_COMMENT.finditer(text):
            yield text.count("\n", 0, m.start()) + 1, m.group()
    elif path.suffix == ".py":
        prev = tokenize.INDENT
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and prev in (
                    tokenize.INDENT, tokenize.NEWLINE, tokenize.NL, tokenize.DEDENT)):
                yield tok.start[0], tok.string
            if tok.type not in (tokenize.COMMENT, tokenize.NL):
                prev = tok.type
    elif path.suffix in (".sh", ".mk") or path.name == "Makefile":
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#") and not DIRECTIVE.match(line):
                yield n, line


def resolves(rel, cited):
    """Whether a file cited from file REL exists (see the module's docstring)."""
    if "/" not in cited:
        if "*" in cited:
            return any(pathlib.PurePath(p).match(cited) for p in FILES)
        return cited in BASENAMES
    here = (ROOT / rel).parent
    bases = [ROOT, ROOT / "compiler", ROOT / "runtime"]
    while here != ROOT:
        bases.append(here)
        here = here.parent
    return any(list(b.glob(cited)) if "*" in cited else (b / cited).exists() for b in bases)


def design_sections():
    """{path of a DESIGN.md in the tree: its numbered sections}."""
    out = {}
    for p in FILES:
        if pathlib.PurePath(p).name == "DESIGN.md":
            out[p] = set(re.findall(r"^#+\s*(\d+)\.", (ROOT / p).read_text(), re.M))
    return out


def stale_citations(files=None):
    designs = design_sections()
    stale = []
    for rel in files or FILES:
        if rel.startswith(SKIP):
            continue
        for line, text in comments(rel):
            for m in SECTION.finditer(text):
                if not any(m.group(2) in s for s in designs.values()):
                    at = line + text.count("\n", 0, m.start())
                    stale.append(f"{rel}:{at}: {m.group(1)} section {m.group(2)}")
            for m in CITED.finditer(text):
                cited = m.group(1)
                if PLACEHOLDER.search(cited) or cited.startswith(("http", "www.")):
                    continue
                if FOREIGN.search(text[:m.start()]):
                    continue
                if "/" in cited and cited.split("/")[0] not in FOLDERS + ("docs", ".."):
                    continue  # a path on another machine (/usr/include/..., STATE/...)
                if cited in EXTERNAL or (rel, cited) in KNOWN_STALE:
                    continue
                if not resolves(rel, cited):
                    at = line + text.count("\n", 0, m.start())
                    stale.append(f"{rel}:{at}: {cited}")
    return stale


DOCS = [p for p in FILES if p == "README.md" or (p.startswith(("docs/", "examples/")) and
                                                   p.endswith(".md"))]


def stale_in_docs(texts):
    """What README.md and docs/*.md cite that is not in the tree: a source file named with
    its folder (`runtime/cairn_sum.c`; a bare name is the reader's own file), the
    numerics specification kept outside (`spec/...`), and a folder README's layout table
    lists. {rel: text} in, "rel:line: cited" out."""
    stale = []
    for rel, text in sorted(texts.items()):
        for m in CITED.finditer(text):
            cited = m.group(1)
            if "/" not in cited or PLACEHOLDER.search(cited):
                continue
            if cited.split("/")[0] not in FOLDERS + ("docs", "spec", ".."):
                continue
            if not resolves(rel, cited):
                stale.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {cited}")
        layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0] if rel == "README.md" \
            else ""
        for row in (line for line in layout.splitlines() if line.startswith("| `")):
            for folder in re.findall(r"`([\w.-]+)/`", row.split("|")[1]):
                if not (ROOT / folder).is_dir():
                    stale.append(f"{rel}: layout names {folder}/")
    return stale


def test_docs_cite_only_what_is_in_the_tree():
    stale = stale_in_docs({rel: (ROOT / rel).read_text() for rel in DOCS})
    assert not stale, "the docs cite what is not in the tree:\n" + "\n".join(stale)


def test_the_docs_rule_can_fail():
    """The README of issue 38 (`spec/numerics.md`, `evidence/` in the layout) fails."""
    readme = ("The contract is `spec/numerics.md`; see `runtime/cairn_nothing.c` and `app.c`.\n"
              "## Layout\n| `configs/`, `evidence/` | x |\n## Next\n")
    assert stale_in_docs({"README.md": readme}) == [
        "README.md:1: spec/numerics.md", "README.md:1: runtime/cairn_nothing.c",
        "README.md: layout names evidence/"]


def test_cited_files_and_sections_exist():
    stale = stale_citations()
    assert not stale, "comments cite what does not exist:\n" + "\n".join(stale)


@pytest.mark.parametrize("rel,text,ok", [
    ("compiler/driver/driver.h", "/* see receipt.h */", True),
    ("compiler/driver/driver.h", "/* see lib/err.h and check/check.h */", True),
    ("compiler/driver/driver.h", "/* see compiler/lower/lower_c*.c */", True),
    ("compiler/driver/driver.h", "/* see compiler/lower_c*.c */", False),
    ("compiler/driver/driver.h", "/* see frontend.h */", False),
    ("compiler/driver/driver.h", "/* see compiler/lower_c.c */", False),
    ("compiler/driver/driver.h", "/* DESIGN.md section 8 */", False),
    ("compiler/driver/driver.h", "/* writes OUT.receipt.json and c/KEY/STEM.c */", True),
    ("compiler/driver/driver.h", "/* in the manner of QBE's `ops.h` */", True),
    ("compiler/driver/driver.h", "/* in the manner of ops.h */", False),
])
def test_the_rule_itself(rel, text, ok, monkeypatch):
    """The check can fail: a stale path, a stale glob, a file gone, a section of a
    design card not in the tree; placeholders pass."""
    monkeypatch.setattr(pathlib.Path, "read_text", lambda self, errors=None: text)
    assert (stale_citations([rel]) == []) == ok


def test_known_stale_citations_are_still_there():
    """The list only shrinks: an entry whose citation is gone (fixed) must leave it."""
    for rel, cited in KNOWN_STALE:
        assert cited in (ROOT / rel).read_text(), (rel, cited, "fixed: remove it from KNOWN_STALE")
