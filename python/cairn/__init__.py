"""CAIRN from Python: call a library built with `cairn build --lib` on NumPy arrays.

    import numpy as np, cairn
    k = cairn.build("k.cairn")            # cairn build --lib, cached; then cairn.load
    k.dot(np.ones(3), np.ones(3))         # pub fn dot(n:usize, x:ro<f64>[n], y:ro<f64>[n])
    cairn.exact_sum(np.array([1e16, 1.0, -1e16]))   # 1.0: the runtime's exact sum
    lo, hi = cairn.mm_enclose(A, B)       # the exact bracket of A @ B

Each pub fn is a method of the library, with the same parameters (by position or by
name). A view takes a NumPy array of exactly its element type (f16: numpy.float16; bf16,
f8e4m3, f8e5m2: their bits as uint16 / uint8), any shape, its elements in C order: a
C-contiguous array is passed without a copy (an rw view must be one: the function writes
into it), another ro array is copied first. A scalar that is a view's extent (n of
x:ro<f64>[n]) may be left out: it is that array's size. A scalar rw<T> takes a one-element
array of T, updated in place. The result comes back as a NumPy scalar of its type. A
trap raises TrapError with the runtime's message and the .cairn file, line and column;
the process goes on. Pure Python over ctypes: nothing to compile but the CAIRN program.
docs/tools.md ("Python") has the rest."""
import ctypes
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import tempfile

import numpy as np

from . import _bind, _device, _find, _types
from ._runtime import exact_sum, mm_enclose

__all__ = ["build", "load", "Library", "Function", "CairnError", "TrapError", "BuildError",
           "exact_sum", "mm_enclose"]
__version__ = "0.1.0"


class CairnError(Exception):
    """Anything this package reports."""


class TrapError(CairnError):
    """A CAIRN function trapped: .message says what failed, .file, .line and .col where."""

    def __init__(self, message, file, line, col):
        self.message, self.file, self.line, self.col = message, file, line, col
        where = f" at {file}:{line}:{col}" if file else ""
        super().__init__(f"{message}{where}")


class BuildError(CairnError):
    """cairn build failed: .status is its exit status, .diagnostics what it printed."""

    def __init__(self, source, status, diagnostics):
        self.source, self.status, self.diagnostics = source, status, diagnostics
        super().__init__(f"cairn build --lib {source} failed (exit {status}):\n{diagnostics}")


class _Error(ctypes.Structure):  # PREFIX_error of the generated header
    _fields_ = [("message", ctypes.c_char_p), ("file", ctypes.c_char_p),
                ("line", ctypes.c_int), ("col", ctypes.c_int)]


class Function:
    """One pub fn of a library: call it like the CAIRN function."""

    def __init__(self, library, entry, cfunc, host_cfunc=None):
        self._library, self._entry, self._cfunc = library, entry, cfunc
        self._host_cfunc = host_cfunc  # PREFIX_fn_host: host memory for the placed views
        self.name, self.params, self.result = entry["name"], entry["params"], entry["result"]
        self.signature = entry["signature"]
        self.__doc__ = f"pub fn {self.signature}  ({entry['at']})"
        inferable = {p["extent_param"] for p in self.params if p.get("extent_param")}
        self._optional = {p["name"] for p in self.params
                          if p["kind"] == "scalar" and p["name"] in inferable}
        argtypes = []
        for p in self.params:
            if p["kind"] == "scalar":
                argtypes.append(_types.ctype(p["type"]))
            else:
                argtypes.append(ctypes.c_void_p)
                if p["kind"] == "view":
                    argtypes.append(ctypes.c_uint64)
        if self.result:
            argtypes.append(ctypes.c_void_p)
        for f in (cfunc, host_cfunc):
            if f is not None:
                f.argtypes, f.restype = argtypes, ctypes.c_int

    def __repr__(self):
        return f"<cairn function {self.signature}>"

    def _bind(self, args, kwargs):
        """{name: value} from the call's arguments."""
        names = [p["name"] for p in self.params]
        positional = names if len(args) == len(names) else \
            [n for n in names if n not in self._optional]
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes {len(positional)} positional arguments "
                            f"({', '.join(positional)}), not {len(args)}")
        given = dict(zip(positional, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{self.name}() has no parameter {key!r} ({self.signature})")
            if key in given:
                raise TypeError(f"{self.name}() got {key!r} twice")
            given[key] = value
        _bind.check(self, args, given, positional)
        return given, positional[:len(args)]

    def _on_device(self, given):
        """Whether the placed views' arguments are device memory (the entry itself) or
        all host memory (the host entry copies); TypeError when they mix."""
        places = {p["name"]: _device.where(given[p["name"]])[0] for p in self.params
                  if p.get("place") and p["name"] in given}
        if "device" in places.values() and set(places.values()) != {"device"}:
            host = sorted(n for n, w in places.items() if w != "device")
            device = sorted(n for n, w in places.items() if w == "device")
            raise TypeError(f"{self.name}(): {', '.join(device)} device memory and "
                            f"{', '.join(host)} host memory: pass every @device view on the "
                            f"device, or every one as a host array (then they are copied)")
        return bool(places) and set(places.values()) == {"device"}

    def _view(self, p, value, on_device):
        """The argument for view P: device memory (_device.Placed) or a numpy array."""
        if p.get("place") and on_device:
            return _device.placed(p["name"], p["type"], p["access"], p["place"], value,
                                  self._library.emulated)
        if not p.get("place") and _device.where(value)[0] == "device":
            raise TypeError(f"{p['name']}: {p['access']}<{p['type']}> takes host memory (a "
                            f"numpy array); this one is device memory")
        value = _device.host_array(p["name"], p["type"], p["access"], value)
        return _types.view(p["name"], p["type"], p["access"], value)

    def _arguments(self, given):
        """The C arguments, the arrays that must live through the call, and whether the
        call is the host entry's (PREFIX_fn_host)."""
        views = {}
        for p in self.params:
            if p["kind"] != "scalar" and p["name"] not in given:
                raise TypeError(f"{self.name}() is missing {p['name']} ({p['kind']} "
                                f"{p.get('access', '')}<{p['type']}>)")
        on_device = self._on_device(given)
        for p in self.params:
            if p["kind"] != "scalar":
                views[p["name"]] = self._view(p, given[p["name"]], on_device)
                if p["kind"] == "ref" and views[p["name"]].size != 1:
                    raise ValueError(f"{p['name']}: rw<{p['type']}> takes a one-element array")
        c_args = []
        for p in self.params:
            name = p["name"]
            if p["kind"] == "scalar":
                if name not in given:
                    sized = [q for q in self.params if q.get("extent_param") == name]
                    if not sized:
                        raise TypeError(f"{self.name}() is missing {name} ({p['type']})")
                    given[name] = views[sized[0]["name"]].size
                c_args.append(_types.scalar(name, p["type"], given[name]))
            else:
                v = views[name]
                c_args.append(v.pointer if isinstance(v, _device.Placed) else v.ctypes.data)
                if p["kind"] == "view":
                    c_args.append(v.size)
        host_entry = self._host_cfunc is not None and not on_device
        return c_args, views, host_entry

    def _bound_arguments(self, args, kwargs):
        """_arguments of the bound call; an error about one argument given by position
        also shows the binding used (and why, when every parameter was bound)."""
        given, positional = self._bind(args, kwargs)
        try:
            return self._arguments(dict(given))
        except (TypeError, ValueError) as e:
            if not positional:
                raise
            why = _bind.cause(self, len(args), positional, self._optional) \
                if len(args) == len(self.params) and self._optional else ""
            note = f" ({why})" if why else ""
            raise type(e)(f"{e}{note}\n  {_bind.binding(self.params, given, positional, ())}") \
                from None

    def __call__(self, *args, **kwargs):
        c_args, keep, host_entry = self._bound_arguments(args, kwargs)
        out = None
        if self.result:
            out = _types.ctype(self.result)()
            c_args.append(ctypes.addressof(out))
        status = (self._host_cfunc if host_entry else self._cfunc)(*c_args)
        del keep  # the arrays lived through the call
        if status != 0:
            e = self._library._last_error().contents
            raise TrapError(e.message.decode(errors="replace"),
                            e.file.decode(errors="replace") if e.file else None, e.line, e.col)
        return _types.result(self.result, out.value) if self.result else None


class Library:
    """A library built with cairn build --lib, loaded: one Function per pub fn, as an
    attribute; .functions maps names to them; .receipt is the build receipt."""

    def __init__(self, path):
        path = pathlib.Path(path)
        base = path.with_suffix("") if path.suffix in (".so", ".a", ".h") else path
        if base.name.endswith(".receipt.json"):
            base = base.with_name(base.name[: -len(".receipt.json")])
        receipt_path = base.with_name(base.name + ".receipt.json")
        try:
            self.receipt = json.loads(receipt_path.read_text())
        except OSError as e:
            raise CairnError(f"{receipt_path}: cannot read the library's receipt ({e.strerror}): "
                             f"build it with cairn build --lib") from None
        if "library" not in self.receipt:
            raise CairnError(f"{receipt_path}: the receipt of an executable, not of a library")
        info = self.receipt["library"]
        self.path = base.with_name(pathlib.Path(info["shared"]["path"]).name)
        self._dll = ctypes.CDLL(str(self.path.resolve()))
        self._last_error = getattr(self._dll, info["last_error"])
        self._last_error.argtypes, self._last_error.restype = [], ctypes.POINTER(_Error)
        # device memory is host memory unless the library runs on a CUDA device
        self.emulated = self.receipt.get("emulate", True) or \
            self.receipt.get("target", "host") == "host"
        self.functions = {
            e["name"]: Function(self, e, getattr(self._dll, e["symbol"]),
                                getattr(self._dll, e["host_symbol"]) if e.get("host_symbol")
                                else None)
            for e in info["entries"]}

    def __getattr__(self, name):
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return functions[name]
        raise AttributeError(f"the library has no pub fn {name!r} (it has: "
                             f"{', '.join(functions) or 'none'})")

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions)

    def __repr__(self):
        return f"<cairn library {self.path} ({', '.join(self.functions)})>"


def load(path):
    """The library at PATH: libNAME.so, libNAME (as -o named it) or its receipt."""
    return Library(path)


def _digest(*parts):
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def build(source, *, cc=None, emulate=False, target=None, opt_level=None, prefix=None):
    """cairn build --lib SOURCE into cairn's cache (cached by the cairn binary, the source's
    path and bytes and these options), then load it. BuildError when cairn refuses it."""
    source = pathlib.Path(source)
    binary = _find.cairn_binary()
    flags = [*(["--cc", cc] if cc else []), *(["--emulate"] if emulate else []),
             *(["--target", target] if target else []),
             *([f"-O{opt_level}"] if opt_level is not None else []),
             *(["--prefix", prefix] if prefix else [])]
    try:
        text = source.read_bytes()
    except OSError as e:
        raise CairnError(f"{source}: {e.strerror}") from None
    key = _digest(binary.read_bytes(), source, text, *flags)
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in source.stem) or "k"
    folder = _find.cache_root() / key
    base = folder / f"lib{stem}"
    if not base.with_name(base.name + ".receipt.json").exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = pathlib.Path(tempfile.mkdtemp(prefix=f"{key}.", dir=folder.parent))
        r = subprocess.run([str(binary), "build", "--lib", str(source), "-o",
                            str(scratch / base.name), *flags], capture_output=True, text=True)
        if r.returncode != 0:
            shutil.rmtree(scratch, ignore_errors=True)
            raise BuildError(source, r.returncode, r.stderr)
        try:
            os.rename(scratch, folder)  # whole, or not at all: a racing build wins
        except OSError:
            shutil.rmtree(scratch, ignore_errors=True)
    return Library(base)
