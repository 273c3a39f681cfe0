"""Where the cairn binary and the runtime's shared library are.

In this order: the environment (CAIRN, the binary; CAIRN_RUNTIME_LIB, libcairn.so); the
folders `make install` recorded in _installed.py when it installed this package; a
source checkout this package sits in (bin/cairn, build/obj/libcairn.so); then PATH for
the binary. A package installed by pip (pip install ./python) records no folders: it
takes cairn from PATH, and libcairn.so from beside that binary, as make install lays them
out (PREFIX/bin/cairn, PREFIX/lib/libcairn.so) or as a checkout does (bin/cairn,
build/obj/libcairn.so)."""
import os
import pathlib
import shutil

from . import _installed

_HERE = pathlib.Path(__file__).resolve().parent
_CHECKOUT = _HERE.parent.parent  # python/cairn -> the tree's root


class NotFound(RuntimeError):
    """A CAIRN file this package needs and cannot find."""


def _first(candidates):
    for path in candidates:
        if path and pathlib.Path(path).is_file():
            return pathlib.Path(path)
    return None


def cairn_binary():
    """The cairn compiler this package builds with."""
    found = _first([os.environ.get("CAIRN"),
                    _installed.BINDIR and pathlib.Path(_installed.BINDIR) / "cairn",
                    _CHECKOUT / "bin" / "cairn", shutil.which("cairn")])
    if not found:
        raise NotFound("cairn not found: set CAIRN to the binary, install CAIRN "
                       "(make install PREFIX=...), or put cairn on PATH")
    return found


def _beside_binary():
    """libcairn.so where the cairn binary's folder says: PREFIX/lib or the checkout's."""
    try:
        binary = cairn_binary().resolve()
    except NotFound:
        return []
    top = binary.parent.parent
    return [top / "lib" / "libcairn.so", top / "build" / "obj" / "libcairn.so"]


def runtime_library():
    """libcairn.so, the runtime's shared library (exact_sum, mm_enclose)."""
    found = _first([os.environ.get("CAIRN_RUNTIME_LIB"),
                    _installed.LIBDIR and pathlib.Path(_installed.LIBDIR) / "libcairn.so",
                    _CHECKOUT / "build" / "obj" / "libcairn.so", *_beside_binary()])
    if not found:
        raise NotFound("libcairn.so not found: set CAIRN_RUNTIME_LIB to it, run make in the "
                       "source tree, install CAIRN (make install PREFIX=...), or put the cairn "
                       "beside it (PREFIX/bin) on PATH")
    return found


def cache_root():
    """Where cairn.build keeps its libraries: cairn's own cache, folder py/."""
    for var, sub in (("CAIRN_CACHE", ""), ("XDG_CACHE_HOME", "cairn")):
        if os.environ.get(var):
            return pathlib.Path(os.environ[var]) / sub / "py"
    return pathlib.Path.home() / ".cache" / "cairn" / "py"
