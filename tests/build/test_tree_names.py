"""Tree hygiene the shared library (lib/) depends on: every external name of lib/,
compiler/, farm/, farm/proto and agent/ carries its module's prefix (its file's name:
fs_read in fs.c, util_b64_encode in util.c; the module its name starts with: db_pg_open
in db_pg.c, lower_emit in lower_c.c, diags_init in diag.c; or its folder's: proto_call
in farm/proto/api.c), so one binary never links two things of one name and a reader
knows where a call lands. Two families are named by what they are, not by their file:
the compiler's front-end API (cairn_parse, cairn_check ...: syntax/syntax.h, check/check.h) and the string
buffers of strbuf.c (sb_, sv_). The
package script cites only files that exist; the language guide speaks to users."""
import pathlib
import re
import subprocess

import pytest

from cairntest import ROOT, TBIN

OBJ = TBIN.parent  # the Makefile's $(OBJ): TBIN is $(OBJ)/tbin


def externals(obj):
    out = subprocess.run(["nm", "-g", "--defined-only", str(obj)], capture_output=True,
                         text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


FAMILIES = {"compiler": ("cairn_", "sb_", "sv_")}
FOLDERS = sorted({p.parent.relative_to(ROOT).as_posix()
                  for top in ("lib", "compiler", "farm", "agent")
                  for p in (ROOT / top).rglob("*.c")})


def module_prefixes(folder, stem):
    module = stem.split("_")[0]
    return (f"{stem}_", f"{module}_", f"{module.rstrip('s')}_", f"{module}s_",
            f"{pathlib.PurePath(folder).name}_") + FAMILIES.get(folder.split("/")[0], ())


def test_every_folder_with_sources_is_covered():
    assert {"compiler", "compiler/check", "compiler/lower", "farm", "farm/serve",
            "farm/proto", "lib", "agent"} <= set(FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_external_name_has_its_module_prefix(folder):
    sources = sorted((ROOT / folder).glob("*.c"))
    assert sources
    wrong = []
    for src in sources:
        obj = OBJ / folder / f"{src.stem}.o"
        assert obj.exists(), f"{obj} not built"
        prefixes = module_prefixes(folder, src.stem)
        for name in externals(obj):
            if not (name.startswith(prefixes) or (src.stem == "main" and name == "main")):
                wrong.append(f"{folder}/{src.name}: {name}")
    assert not wrong, "unprefixed external names:\n" + "\n".join(wrong)


def test_deps_script_cites_only_files_that_exist():
    text = (ROOT / "scripts" / "deps.sh").read_text()
    cited = set(re.findall(r"\b((?:tests|scripts|docs|configs|farm|agent|compiler|runtime|lib|tools)"
                           r"/[\w./-]+\.\w+)", text))
    missing = sorted(p for p in cited if not (ROOT / p).exists())
    assert not missing, missing


def test_language_guide_does_not_speak_of_rooms():
    # The design card once called the project's folders by another name: words for its
    # engineers, not for users of the language.
    text = (ROOT / "docs" / "language.md").read_text()
    assert not re.search(r"\brooms?\b", text, re.I)
