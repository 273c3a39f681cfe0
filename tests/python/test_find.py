"""Where the package finds cairn and libcairn.so (python/cairn/_find.py) when it records
no folders, as after `pip install ./python`: libcairn.so beside the cairn binary it uses,
laid out as make install does (PREFIX/bin, PREFIX/lib) or as a checkout (bin/,
build/obj/); the environment first; and a message that says what to do when neither is
there."""
import pathlib

import pytest

from cairn import _find


@pytest.fixture
def pip_installed(monkeypatch, tmp_path):
    """The package as pip installs it: no recorded folders, no checkout around it."""
    monkeypatch.setattr(_find._installed, "BINDIR", None)
    monkeypatch.setattr(_find._installed, "LIBDIR", None)
    monkeypatch.setattr(_find, "_CHECKOUT", tmp_path / "nowhere")
    monkeypatch.delenv("CAIRN", raising=False)
    monkeypatch.delenv("CAIRN_RUNTIME_LIB", raising=False)
    return tmp_path


def lay_out(root, binary, library):
    for rel in (binary, library):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    (root / binary).chmod(0o755)
    return root / binary, root / library


@pytest.mark.parametrize("binary,library", [("prefix/bin/cairn", "prefix/lib/libcairn.so"),
                                            ("tree/bin/cairn", "tree/build/obj/libcairn.so")])
def test_the_library_beside_the_binary_on_path(pip_installed, monkeypatch, binary, library):
    exe, lib = lay_out(pip_installed, binary, library)
    monkeypatch.setenv("PATH", str(exe.parent))
    assert _find.cairn_binary() == exe
    assert _find.runtime_library() == lib


def test_the_environment_comes_first(pip_installed, monkeypatch):
    exe, lib = lay_out(pip_installed, "a/bin/cairn", "a/lib/libcairn.so")
    other, other_lib = lay_out(pip_installed, "b/bin/cairn", "b/lib/libcairn.so")
    monkeypatch.setenv("PATH", str(exe.parent))
    monkeypatch.setenv("CAIRN", str(other))
    assert _find.cairn_binary() == other and _find.runtime_library() == other_lib
    monkeypatch.setenv("CAIRN_RUNTIME_LIB", str(lib))
    assert _find.runtime_library() == lib


def test_nothing_found_says_what_to_do(pip_installed, monkeypatch):
    monkeypatch.setenv("PATH", str(pip_installed / "empty"))
    with pytest.raises(_find.NotFound, match="put the cairn beside it"):
        _find.runtime_library()
    with pytest.raises(_find.NotFound, match="set CAIRN to the binary"):
        _find.cairn_binary()
