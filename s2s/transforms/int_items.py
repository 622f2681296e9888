"""Which items of containers hold Python ints: ``int_items(fn)``.

Reverse mode saves a loop's integers on its tape beside its arrays
(``tape.append((i_plus_1, x_pow))``, the exponent of ``x ** (i + 1)``), and reads
them back from the popped tuple.  Activity is per name, so an item read from a tape
that holds arrays carried a derivative: the Hessian (forward over the emitted
gradient) took ``x ** i_plus_1``'s derivative in its exponent, ``0 * log(x)``, NaN
for a negative ``x`` where JAX (whose integer exponents have none) gives a number.

The analysis says, per container name, which leaf paths hold Python ints on every
statement that binds it (a list's items as ``"*"``: all of them; a tuple's by
position): the greatest fixed point of that intersection over the function, loops'
back edges and breaks included.  ``int_items`` returns the names bound by reading
such a leaf out of a container: Python ints, which carry no derivative.
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import Const, For, Function, If, Let, Slice, Var
from ..ir.walk import loop_breaks

_TOP = None  # (not bound yet in the iteration: every path, and an int)
_ARITHMETIC = ("add", "subtract", "multiply", "floor_divide", "remainder", "negative",
               "identity")


def int_items(fn: Function) -> frozenset[str]:
    """The names bound by reading a Python int out of a container (see above)."""
    return _IntItems(fn).solve()


class _IntItems:
    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.defs: dict[str, list[Any]] = {}  # name -> its Lets and back-edge sources
        self.loop_targets: set[str] = set()
        self._collect(fn.body)
        # each name's int paths (() for the name itself); _TOP until computed
        self.paths: dict[str, frozenset | None] = dict.fromkeys(self.defs, _TOP)

    def _collect(self, stmts: list[Any]) -> None:
        for s in stmts:
            if isinstance(s, Let):
                self.defs.setdefault(s.target, []).append(s)
            elif isinstance(s, If):
                self._collect(s.body)
                self._collect(s.orelse)
            elif isinstance(s, For):
                self.loop_targets.add(s.target)
                self._collect(s.body)
                for entry, exit_ in s.carried:
                    self.defs.setdefault(entry, []).append(exit_)
                for brk in loop_breaks(s.body):
                    for entry, name in brk.copies:
                        self.defs.setdefault(entry, []).append(name)

    def solve(self) -> frozenset[str]:
        changed = True
        while changed:  # (values only shrink: the greatest fixed point)
            changed = False
            for name, sources in self.defs.items():
                value = _TOP
                for source in sources:
                    value = _meet(value, self._of_let(source) if isinstance(source, Let)
                                  else self._of(Var(source)))
                if value != self.paths[name]:
                    self.paths[name], changed = value, True
        return frozenset(
            name for name, sources in self.defs.items()
            if all(isinstance(s, Let) and s.prim == "getitem" for s in sources)
            and self.paths[name] is not _TOP and () in self.paths[name])

    def _of(self, a: Any) -> frozenset | None:
        if isinstance(a, Const):
            return frozenset({()}) if type(a.value) is int else frozenset()
        if not isinstance(a, Var):
            return frozenset()
        if a.name in self.loop_targets:
            return frozenset({()})
        return self.paths.get(a.name, frozenset())  # (a parameter: nothing known)

    def _of_let(self, s: Let) -> frozenset | None:
        prim, args = s.prim, s.args
        if prim in ("len", "int", "ndim", "size"):
            return frozenset({()})
        if prim in _ARITHMETIC:
            parts = [self._of(a) for a in args]
            if prim == "identity":
                return parts[0]
            return frozenset({()}) if all(p is _TOP or () in p for p in parts) else frozenset()
        if prim == "make_tuple":
            return frozenset((i, *p) for i, a in enumerate(args) for p in self._of(a) or ())
        if prim == "make_list":
            value = _TOP
            for a in args:
                value = _meet(value, _items(self._of(a)))
            return value
        if prim == "append":
            return _meet(_lists(self._of(args[0])), _items(self._of(args[1])))
        if prim in ("pop", "list"):
            return _lists(self._of(args[0]))
        if prim == "getitem" and isinstance(args[0], Var):
            producers = self.defs.get(args[0].name, ())
            if producers and all(isinstance(p, Let) and p.prim == "shape" for p in producers):
                index = s.params["index"].items
                if len(index) == 1 and isinstance(index[0], Slice):
                    return frozenset({("*",)})  # (`x.shape[1:]`: a tuple of ints)
                return frozenset({()})  # (`x.shape[0]`)
            return _read(self._of(args[0]), s.params["index"].items)
        return frozenset()


def _meet(a: frozenset | None, b: frozenset | None) -> frozenset | None:
    return b if a is _TOP else a if b is _TOP else a & b


def _items(paths: frozenset | None) -> frozenset | None:
    """A list's item paths for an item whose own paths are ``paths``."""
    return _TOP if paths is _TOP else frozenset(("*", *p) for p in paths)


def _lists(paths: frozenset | None) -> frozenset | None:
    """The item paths of a list (what a tuple's positions say of it, nothing)."""
    return _TOP if paths is _TOP else frozenset(p for p in paths if p[:1] == ("*",))


def _read(paths: frozenset | None, index: tuple) -> frozenset | None:
    """The paths of ``base[index]`` for a base with ``paths``."""
    if paths is _TOP:
        return _TOP
    if len(index) != 1:
        return frozenset()
    key = index[0]
    if isinstance(key, Slice):
        return _lists(paths)  # (`hs[1:]`: a list of the same items)
    position = key.value if isinstance(key, Const) and type(key.value) is int and (
        key.value >= 0) else None
    # (an empty path: the base itself may be an int, a name ``_of`` cannot tell from
    # an array; its items are nothing known)
    return frozenset(p[1:] for p in paths if p and (p[0] == "*" or (
        position is not None and p[0] == position)))
