"""The layering rule of the tree (docs/design.md, "Folders and layers"), read from every
quoted #include of compiler/, farm/, agent/ and lib/:

- an include is written from its binary's root: compiler/ ("check/check.h"), farm/
  ("proto/api.h", "db/db.h"), agent/ ("agent.h"), or the tree's root for what several
  binaries share ("lib/err.h", "runtime/cairn_layout.h"); never a bare name that only the
  including file's folder, or an -I flag of another folder, makes resolve;
- a folder includes only from folders below it (compiler: base < syntax < grad < check <
  {lower, verify, predict} < driver < the command line; farm: proto < core < db < serve <
  the farm's main; lib/ under all of them); the three back-end folders of one rank do not
  include each other; compiler/ never includes farm/ or agent/, nor they compiler/;
- from outside a folder, only its public header (X/X.h) or its X-macro tables (*.def) are
  included; an *_internal.h never leaves its folder. farm/proto is the one folder with
  several public headers (api.h, archive.h, dsse.h, evidence.h, http.h, util.h): both
  binaries include them by name.

Circles of files inside one folder are fine; across folders there are none, since ranks
only go down. The rule is checked on the real tree and shown to fail on planted
violations of each kind."""
import pathlib
import re
import subprocess

import pytest

from cairntest import ROOT

COMPILER_RANKS = {"base": 0, "syntax": 1, "grad": 2, "check": 3, "lower": 4, "verify": 4,
                  "predict": 4, "driver": 5, "": 6}
FARM_RANKS = {"proto": 0, "core": 1, "db": 2, "serve": 3, "": 4}
MULTI_HEADER = {("farm", "proto")}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    """{path: text} of every C source and header the rule covers (tracked or not)."""
    out = {}
    for top in ("compiler", "farm", "agent", "lib"):
        for p in (ROOT / top).rglob("*"):
            if p.suffix in (".c", ".h") and p.is_file():
                out[p.relative_to(ROOT).as_posix()] = p.read_text()
    return out


def place(path):
    """(binary, folder inside it) of a source path: ("compiler", "check")."""
    parts = path.split("/")
    top = parts[0]
    folder = parts[1] if len(parts) > 2 else ""
    return top, folder


def roots(top):
    return {"compiler": ["compiler", ""], "farm": ["farm", ""], "agent": ["agent", "farm", ""],
            "lib": [""]}[top]


def resolve(path, inc, exists):
    """The tree path an include names when written from a root of its binary, or None."""
    top, _ = place(path)
    for r in roots(top):
        cand = f"{r}/{inc}" if r else inc
        if exists(cand):
            return cand
    return None


def rank(target):
    top, folder = place(target)
    if top == "compiler":
        return COMPILER_RANKS.get(folder)
    if top == "farm":
        return FARM_RANKS.get(folder)
    return None


def violations(files, exists=None):
    """Every broken rule in files ({path: text}), as one line each."""
    exists = exists or (lambda p: p in files or (ROOT / p).is_file())
    bad = []
    for path, text in sorted(files.items()):
        top, folder = place(path)
        for inc in INCLUDE.findall(text):
            target = resolve(path, inc, exists)
            where = f"{path}: \"{inc}\""
            if target is None:
                bad.append(f"{where} is not written from the root")
                continue
            ttop, tfolder = place(target)
            bad += rule_binaries(where, top, ttop)
            if ttop == top and top in ("compiler", "farm") and tfolder != folder:
                bad += rule_layers(where, path, target)
                bad += rule_public(where, ttop, tfolder, target)
            if target.endswith("_internal.h") and (ttop, tfolder) != (top, folder):
                bad.append(f"{where}: an _internal.h included from outside its folder")
    return bad


def rule_binaries(where, top, ttop):
    allowed = {"compiler": {"compiler", "lib", "runtime"}, "farm": {"farm", "lib"},
               "agent": {"agent", "farm", "lib"}, "lib": {"lib"}}[top]
    if ttop not in allowed:
        return [f"{where}: {top}/ may not include {ttop}/"]
    if top == "agent" and ttop == "farm" and not where.split('"')[1].startswith("proto/"):
        return [f"{where}: the agent shares only farm/proto"]
    return []


def rule_layers(where, path, target):
    have, want = rank(path), rank(target)
    if have is None or want is None:
        return [f"{where}: a folder without a rank (add it to this test and to docs)"]
    if want >= have:
        return [f"{where}: includes from a folder at or above its own layer"]
    return []


def rule_public(where, ttop, tfolder, target):
    if (ttop, tfolder) in MULTI_HEADER or target.endswith(".def") or tfolder == "":
        return []
    if target != f"{ttop}/{tfolder}/{tfolder}.h":
        return [f"{where}: from outside {ttop}/{tfolder}/ include only {tfolder}/{tfolder}.h"]
    return []


def test_the_tree_keeps_the_layering_rule():
    bad = violations(sources())
    assert not bad, "layering rule broken:\n" + "\n".join(bad)


def test_every_folder_has_a_rank_and_a_public_header():
    for top, ranks in (("compiler", COMPILER_RANKS), ("farm", FARM_RANKS)):
        folders = {p.name for p in (ROOT / top).iterdir() if p.is_dir()}
        assert folders == set(ranks) - {""}, (top, folders)
        for f in folders:
            if (top, f) not in MULTI_HEADER:
                assert (ROOT / top / f / f"{f}.h").is_file(), f"{top}/{f}/{f}.h"


PLANTED = [
    # (file, the include planted into it, what the message says)
    ("compiler/syntax/ast.c", '#include "driver/driver.h"', "at or above its own layer"),
    ("compiler/lower/lower_c.c", '#include "verify/verify.h"', "at or above its own layer"),
    ("compiler/grad/grad.c", '#include "check/check.h"', "at or above its own layer"),
    ("farm/db/db.c", '#include "serve/serve.h"', "at or above its own layer"),
    ("farm/core/bundle.c", '#include "db/db.h"', "at or above its own layer"),
    ("compiler/driver/driver.c", '#include "check/check_internal.h"', "_internal.h"),
    ("compiler/driver/driver.c", '#include "syntax/lexer.h"', "include only syntax/syntax.h"),
    ("compiler/check/check.c", '#include "ast.h"', "not written from the root"),
    ("farm/db/db.c", '#include "util.h"', "not written from the root"),
    ("lib/fs.c", '#include "compiler/base/base.h"', "lib/ may not include compiler/"),
    ("compiler/cmd_run.c", '#include "farm/proto/api.h"', "compiler/ may not include farm/"),
    ("agent/client.c", '#include "db/db.h"', "the agent shares only farm/proto"),
]


@pytest.mark.parametrize("path,planted,message", PLANTED)
def test_a_planted_violation_fails(path, planted, message):
    files = sources()
    assert path in files
    files[path] = planted + "\n" + files[path]
    bad = violations(files)
    assert any(message in b and path in b for b in bad), bad


def test_the_word_room_is_gone_from_code_and_build_files():
    # "Rooms" were how the work was once split among engineers, not a structure of the
    # program; folders and layers name it now.
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    kinds = (".c", ".h", ".cu", ".mk", ".sh", ".py", ".def")
    found = [p for p in tracked
             if (p.endswith(kinds) or p.endswith("Makefile")) and (ROOT / p).is_file()
             and re.search(r"\brooms?\b", (ROOT / p).read_text(errors="replace"), re.I)
             and p != "tests/build/test_layers.py"]
    assert not found, found


def test_the_tree_is_formatted():
    tracked = subprocess.run(["git", "ls-files", "*.c", "*.h", "*.cu"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    # The C goldens are cairn's output as it is, kept byte for byte: not ours to format.
    tracked = [p for p in tracked if not p.startswith("tests/build/c_goldens/")]
    out = subprocess.run(["clang-format", "--dry-run", "-Werror", *tracked], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-4000:]
