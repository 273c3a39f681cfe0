"""How a call's arguments meet a pub fn's parameters, and what to say when they do not.

By position, the arguments take every parameter when there are as many as parameters;
otherwise they take the parameters that cannot be left out (a scalar is left out only
when it is exactly one view's extent, n of x:ro<f64>[n]). When a view gets a number or a
scalar gets an array, the arguments were lined up wrongly: the error says why (which
scalar cannot be left out, and why; or that a full count binds the extents too) and
shows the binding used ("bound: r=float16[4, 3]?, ..."), the suspect ones marked "?"."""
import numpy as np

from . import _device


def _is_array(value):
    return isinstance(value, np.ndarray) or _device.where(value)[0] is not None


def describe(value):
    """A short picture of an argument: float16[4, 3], float32(1e-05), 2.0."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype}[{', '.join(str(d) for d in value.shape)}]"
    if _is_array(value):
        return f"{type(value).__name__} array"
    if isinstance(value, np.generic):
        return f"{value.dtype}({value.item()!r})"
    text = repr(value)
    return text if len(text) <= 24 else text[:21] + "..."


def _is_number(value):
    return isinstance(value, (bool, int, float, complex, np.generic))


def misfits(params, given):
    """Names whose argument is of the wrong kind: an array for a scalar, or a number for
    a view or a scalar rw<T> (anything else is left to the view's own check)."""
    return [p["name"] for p in params if p["name"] in given and
            (_is_array(given[p["name"]]) if p["kind"] == "scalar"
             else _is_number(given[p["name"]]))]


def binding(params, given, positional, suspect):
    """'bound: r=float16[4, 3]?, c=(gamma's size), ...': what each parameter got."""
    parts = []
    for p in params:
        name = p["name"]
        if name in given:
            mark = "?" if name in suspect else ""
            how = "" if name in positional else " (by name)"
            parts.append(f"{name}={describe(given[name])}{mark}{how}")
        elif p["kind"] == "scalar" and name not in positional:
            sized = [q["name"] for q in params if q.get("extent_param") == name]
            parts.append(f"{name}=({sized[0]}'s size)" if sized else f"{name}=(missing)")
        else:
            parts.append(f"{name}=(missing)")
    return "bound: " + ", ".join(parts)


def _why_required(params, optional):
    """Why the scalars that size views but cannot be left out are required."""
    notes = []
    for p in params:
        if p["kind"] != "scalar" or p["name"] in optional:
            continue
        compound = [q for q in params if q.get("extent") and not q.get("extent_param")
                    and p["name"] in q["extent"].replace("*", " ").split()]
        if compound:
            q = compound[0]
            notes.append(f"{p['name']} cannot be left out: {q['name']}'s extent is "
                         f"{q['extent']}, not one parameter, so its size does not give "
                         f"{p['name']}")
    return notes


def cause(fn, nargs, positional, optional):
    """The real reason the positional arguments went to the wrong parameters."""
    names = [p["name"] for p in fn.params]
    if optional and nargs == len(names):
        short = [n for n in names if n not in optional]
        return (f"{nargs} arguments for {len(names)} parameters bind every one by position, "
                f"{', '.join(sorted(optional))} included; leave "
                f"{', '.join(sorted(optional))} out to pass {len(short)} ({', '.join(short)})")
    notes = _why_required(fn.params, optional)
    left = f"only {', '.join(sorted(optional))} may be left out" if optional else \
        "no parameter may be left out"
    return "; ".join(notes + [f"{left}: pass {', '.join(positional)} in this order, "
                              f"or by name"])


def check(fn, args, given, positional):
    """TypeError when the arguments do not line up with the parameters (a misfit, or a
    parameter none of them reached), saying why and the binding used."""
    bad = misfits(fn.params, given)
    missing = [n for n in positional[len(args):] if n not in given]
    if not bad or not args:
        return
    what = ", ".join(f"{n} ({_kind(fn, n)}) got {describe(given[n])}" for n in bad)
    gaps = f"; {', '.join(missing)} got nothing" if missing else ""
    raise TypeError(f"{fn.name}(): the arguments do not line up with the parameters: "
                    f"{what}{gaps}. {cause(fn, len(args), positional, fn._optional)}\n  "
                    f"{binding(fn.params, given, positional[:len(args)], bad)}")


def _kind(fn, name):
    p = next(q for q in fn.params if q["name"] == name)
    return p["type"] if p["kind"] == "scalar" else f"{p.get('access', 'rw')}<{p['type']}>"
