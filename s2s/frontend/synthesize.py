"""Functions s2s writes itself, with a source the frontend reads like any other.

A transform reads source text, so a callable that has none (``functools.partial``,
``np.sum``, a nested ``def`` lifted out of the function that defines it) is given a
small ``def`` whose text is registered in ``linecache`` under its own file name:
``inspect.getsourcelines`` and s2s's freshness check then read it as they read a file.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import textwrap
import types
from typing import Any

# the attribute a copy of a user's function carries: the functions its parameters are
# bound to for one transform (api/callables.py makes it, frontend/bound_params.py reads it)
BOUND = "__s2s_bound_params__"


class DictKeys:
    """In ``BOUND``: a dict parameter spread into a call (``f(v, **kw)``) whose keys at
    this call are ``keys`` (its items read by those keys: ``bound_params.py``)."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys


class SeqLength:
    """In ``BOUND``: a tuple or list parameter spread into a call (``h(*xs)``) whose
    length at this call is ``n`` (its items read by index: ``bound_params.py``);
    ``items``, where each item is a dict with string keys, their keys (``for s in
    specs: penalty(w, s)`` unrolled, each call given a dict of known keys)."""

    def __init__(self, n: int, items: tuple | None = None) -> None:
        self.n, self.items = n, items

    @property
    def key(self) -> tuple:
        return (self.n, self.items)


class HeldStrings:
    """In ``BOUND``: a dict parameter whose items under ``strings``' keys are these
    strings at this call (``spec = {"kind": "scale", "a": 2.0}`` given by a caller that
    built it): ``spec["kind"] == "scale"`` is decided when transforming, as in the
    caller (``bound_params.py``, ``literals.bound_item``)."""

    def __init__(self, strings: dict[str, str]) -> None:
        self.strings = strings


class ItemFunctions:
    """In ``BOUND``: a dict, list or tuple parameter holding functions among its
    values (``cfg = {"act": np.tanh, "scale": 2.0}``): ``functions``, key -> the
    function this call passes (``cfg["act"](x)`` calls it: ``bound_params.py``)."""

    def __init__(self, functions: dict[Any, Any]) -> None:
        self.functions = functions


class BoundType:
    """In ``BOUND``: a parameter whose value is an object of ``cls`` at this call (its
    methods, ``p.apply(x)`` and ``p(x)``, are ``cls``'s)."""

    def __init__(self, cls: type, nested: tuple = ()) -> None:
        self.cls = cls
        # ((field, BoundType or a tuple of them, one per item of a list field), ...):
        # the objects of your classes its fields hold (`for l in net.layers: l(h)`)
        self.nested = nested

    def classes(self) -> tuple:
        """Its class and its fields' objects' classes, in order."""
        out: tuple = (self.cls,)
        for _, held in self.nested:
            for t in held if isinstance(held, tuple) else (held,):
                out += t.classes()
        return out

_COUNTER = itertools.count()
PARTIAL = "_s2s_partial"  # functools.partial, in a recursive function's maker

# file name s2s registered -> (the user's file, its lines, the column offset) that
# errors in the text show: a lifted nested function's are the user's lines; and,
# optionally, {line: (the user's line, ((column, shift), ...))}: the text of that line
# is the user's line's, from each column on ``shift`` columns further right (a
# generator's copy: ``generators.py``)
DISPLAY: dict[str, tuple] = {}


def synthesize(text: str, name: str, namespace: dict[str, Any], tag: str,
               first_line: int = 1, display: tuple | None = None,
               recursive: bool = False, cells: dict[str, Any] | None = None
               ) -> types.FunctionType:
    """Compile ``text`` (one ``def name(...)``) under a registered file name, as a
    function whose globals are ``namespace`` (the same dict: a module's globals stay
    live).  ``first_line`` puts the ``def`` on that line of the file (a lifted nested
    function keeps its lines' numbers); ``display`` is what errors show instead (see
    ``DISPLAY``).  ``recursive``: the function calls itself by its name, which it reads
    from a closure cell (it is defined inside a maker function, one line above).
    ``cells``: names the function reads from closure cells holding these values."""
    filename = f"<s2s-{tag}-{next(_COUNTER)}>"
    if recursive and first_line > 1:
        # (``PARTIAL`` a cell it reads: a use of itself as a value, frontend/recursive.py)
        text = (f"def _s2s_maker({PARTIAL}):\n"
                f"{textwrap.indent(text, '    ')}    return {name}\n")
        first_line -= 1
        if display is not None:  # (the def is written 4 columns further in)
            display = display[:2] + ((display[2] or 0) - 4,) + display[3:]
    if cells:  # (a maker one line above, its parameters the cells)
        text = (f"def _s2s_cells({', '.join(cells)}):\n"
                f"{textwrap.indent(text, '    ')}    return {name}\n")
        first_line = max(first_line - 1, 1)
        if display is not None:
            display = display[:2] + ((display[2] or 0) - 4,) + display[3:]
    padded = "\n" * (first_line - 1) + text
    lines = padded.splitlines(keepends=True)
    linecache.cache[filename] = (len(padded), None, lines, filename)
    if display is not None:
        DISPLAY[filename] = display
    module = compile(padded, filename, "exec")
    if recursive and text.startswith("def _s2s_maker"):
        maker = next(c for c in module.co_consts
                     if isinstance(c, types.CodeType) and c.co_name == "_s2s_maker")
        return types.FunctionType(maker, namespace, "_s2s_maker")(functools.partial)
    if cells:
        maker = next(c for c in module.co_consts
                     if isinstance(c, types.CodeType) and c.co_name == "_s2s_cells")
        return types.FunctionType(maker, namespace, "_s2s_cells")(*cells.values())
    code = next(c for c in module.co_consts
                if isinstance(c, types.CodeType) and c.co_name == name)
    return types.FunctionType(code, namespace, name)


def signature_text(params: list[str], kwonly: list[str], defaulted: set[str],
                   star: str | None = None, starstar: str | None = None) -> str:
    """A parameter list: ``x, s=None, *, k=None`` (defaults are set on the function
    object afterwards, so the text never evaluates a value)."""
    out = [p + ("=None" if p in defaulted else "") for p in params]
    if star is not None:
        out.append("*" + star)
    elif kwonly:
        out.append("*")
    out += [p + ("=None" if p in defaulted else "") for p in kwonly]
    if starstar is not None:
        out.append("**" + starstar)
    return ", ".join(out)
