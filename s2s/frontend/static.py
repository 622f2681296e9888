"""What is known of an expression when the function is transformed.

A comprehension's ``for`` and ``if``, ``max`` over constants, ``sorted(d)``: their
values are computed now from literals, module constants and pure built-ins, and how
each item is spelled in the emitted code (``SCALES[1]``, ``2``, ``x``) is kept, so the
code reads the module's values again at each call.  A module name read to decide
structure is watched by value (``StaticVar``: the code is generated again when it
changes), one read for its parts by the kinds of those parts (``ReadVar``).
"""

from __future__ import annotations

import builtins
import math
import re
import types
from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError
from ..ir.nodes import Atom, Const
from .object_fields import as_fields, object_fields
from .resolve import DefaultVar, FreeVar

NOVALUE = object()  # an item whose spelling is known but whose value is not

# calls a static value may make: pure, and decided by their arguments' values
PURE = {builtins.range, builtins.len, builtins.zip, builtins.enumerate, builtins.reversed,
        builtins.sorted, builtins.min, builtins.max, builtins.abs, builtins.round,
        builtins.sum, builtins.any, builtins.all, builtins.isinstance, builtins.type,
        builtins.tuple, builtins.list, builtins.dict, builtins.int, builtins.float,
        builtins.bool, builtins.str}
PURE_METHODS = {"items", "keys", "values", "get",
                # str's (an array has none of them): `if k.startswith("w")` over a dict's keys
                "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip",
                "removeprefix", "removesuffix", "isdigit", "isalpha", "split"}
COMPREHENSIONS = (cst.ListComp, cst.GeneratorExp, cst.DictComp)
def static_key(value: Any, depth: int = 0) -> Any:
    """What of a value a decision made from it depends on (``StaticVar``)."""
    if depth > 6:
        return ("deep", id(value))
    if value is None or isinstance(value, (bool, int, float, str, complex, np.generic)):
        return (type(value).__name__, repr(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(static_key(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), static_key(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        data = value.tobytes() if value.size <= 4096 else None
        return ("array", value.shape, str(value.dtype), data)
    if isinstance(value, (types.ModuleType, type)) or callable(value):
        return ("object", id(value))
    if hasattr(value, "__dict__"):
        return ("attrs", id(value), static_key(dict(vars(value)), depth + 1))
    return ("object", id(value))


def kind_key(value: Any, depth: int = 0) -> Any:
    """The kinds of a constant's parts (a number, an array of some rank and dtype, a
    container of such): what code reading ``CONFIG["wd"]`` at each call assumes."""
    if depth > 6:
        return ("deep", id(value))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(kind_key(v, depth + 1) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((repr(k), kind_key(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return ("array", value.ndim, str(value.dtype))
    if value is None or isinstance(value, (bool, int, float, str, complex, np.generic)):
        return (type(value).__name__, repr(value) if isinstance(value, str) else None)
    if hasattr(value, "__dict__") and not callable(value):
        return ("attrs", kind_key(dict(vars(value)), depth + 1))
    return ("object", id(value))


class ReadVar(FreeVar):
    """A free name whose parts the code reads (``CONFIG["wd"]``, at each call): the
    code is generated again when a part changes kind (a float becomes an array)."""

    def fingerprint(self) -> Any:
        try:
            value = self.read()
        except (KeyError, ValueError):
            return None
        return (super().fingerprint(), ("read", kind_key(value)))


class StaticVar(FreeVar):
    """A free name whose value decided the code (a comprehension's length, an ``if``
    filter, ``len(TABLE)``), not only its kind: the next call generates again when
    the value changes, as a changed default does (``DefaultVar``)."""

    def fingerprint(self) -> Any:
        try:
            value = self.read()
        except (KeyError, ValueError):
            return None
        return (super().fingerprint(), ("static", static_key(value)))

    def value_key(self) -> Any:
        """What of its value the code depends on, read now: a call may take code made
        before only while this is unchanged (an array changed in place keeps its
        identity: api/signatures.py's ``FreeSnapshot``)."""
        return static_key(self.read())


def undo_watches(n: Any, before: dict[str, FreeVar]) -> None:
    """The free names passes read as static values (``StaticReader.watch``) since
    ``before`` (a copy of ``n.resolver.free``) put back as they were, for passes that
    then lowered nothing: a loop left to the loop form reads ``range(N)`` when it runs,
    so a change of ``N`` (a module array) makes no code again."""
    free = n.resolver.free
    for name, var in list(free.items()):
        if type(var) is StaticVar and type(before.get(name)) is not StaticVar:
            old = before.get(name)
            if old is None:  # (read first by the pass: the plain name it looked up)
                old = FreeVar(var.name, var.cell, var.scope)
                old.also = var.also
            free[name] = old


class PathVar(StaticVar):
    """A module's attribute whose value decided the code (``config.KEY`` passed to a
    callee whose copy is made for its string): watched by value, as a StaticVar,
    since the module is one object whatever its attributes hold."""

    def __init__(self, root: FreeVar, path: tuple[str, ...]) -> None:
        super().__init__(".".join((root.name, *path)), root.cell, root.scope)
        self.root, self.path = root, path

    def read(self) -> Any:
        value = self.root.read()
        try:
            for attr in self.path:
                value = getattr(value, attr)
        except AttributeError as err:  # (fingerprint: None, so generated again)
            raise KeyError(self.name) from err
        return value

    def same_binding(self, other: FreeVar) -> bool:
        return isinstance(other, PathVar) and other.path == self.path and (
            self.root.same_binding(other.root))

    def joined(self, other: FreeVar) -> FreeVar:
        """Both places' attributes watched (a callee's ``config.KEY`` of a module of
        its own: the root names' own check says where they differ)."""
        var = PathVar(self.root, self.path)
        var.also = self.also + tuple(o for o in other.bindings() if not any(
            b.same_binding(o) for b in self.bindings()))
        return var

    def agrees(self) -> bool:
        return True

    def fingerprint(self) -> Any:
        try:
            return ("path", tuple(static_key(b.read()) for b in self.bindings()))
        except (KeyError, ValueError):
            return None


class FieldsVar(FreeVar):
    """A callee's parameter left at a default that is a dataclass or NamedTuple object
    holding containers (``scales: list = field(default_factory=...)``, ``dims: tuple``):
    the code is made for their lengths and keys (``for s in h.scales`` unrolled), so
    the next call generates again when one changes (an item appended in place), a
    field changes kind, or the default is replaced.  It reads a fresh dict: no call
    takes the fast path that checks objects by identity only (api/signatures.py)."""

    def __init__(self, fn: Any, param: str) -> None:
        self.default = DefaultVar(fn, param, param in (getattr(fn, "__kwdefaults__", None)
                                                       or {}))
        super().__init__(self.default.name + " (its fields)")

    def read(self) -> Any:
        value = self.default.read()
        view = object_fields(value)
        return {"object": id(value), **(dict.fromkeys(view, None) if view is None else {
            k: view[k] for k in view})}

    def same_binding(self, other: FreeVar) -> bool:
        return isinstance(other, FieldsVar) and self.default.same_binding(other.default)

    def agrees(self) -> bool:
        return True

    def fingerprint(self) -> Any:
        return ("fields", kind_key(self.read()))


def watched_fields(n: Any, fn: Any, pname: str, default: Any, node: Any) -> Any:
    """``as_fields(default)`` for a callee's default, watched: the default itself
    (``DefaultVar``: emitted code binds this object, so a replaced ``__defaults__``
    makes the next call generate again) and, where the object's fields hold
    containers, their structure (``FieldsVar``)."""
    value = as_fields(default)
    keyword_only = pname in (getattr(fn, "__kwdefaults__", None) or {})
    n.resolver.depends_on(DefaultVar(fn, pname, keyword_only), node)
    if value is not default and any(isinstance(v, (tuple, list, dict))
                                    for v in dict.values(value)):
        n.resolver.depends_on(FieldsVar(fn, pname), node)
    return value



class StaticReader:
    """Reads static values and items for one function's Normalizer."""

    def __init__(self, n: Any) -> None:
        self.n = n

    def static_items(self, node: Any) -> list[tuple[Any, Any]] | None:
        """``(spelling, value)`` per item of what ``node`` walks, when that is known
        now; the value is NOVALUE where only the spelling is (``(x, y)``)."""
        if isinstance(node, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return None
            return [(e.value, self.static_value(e.value)) for e in node.elements]
        if isinstance(node, cst.Dict):
            return [(e.key, self.static_value(e.key)) for e in node.elements
                    if isinstance(e, cst.DictElement)]
        if isinstance(node, cst.Call) and not any(a.star or a.keyword for a in node.args):
            items = self._call_items(node)
            if items is not None:
                return items
        found = getattr(self.n, "_function_containers", None)  # (`fs = [np.sin, g]`)
        if found is not None and isinstance(node, cst.Subscript):
            functions = found.items(node)  # (`ops[:2]`: a slice of those)
            if functions is not None:
                return functions
        if isinstance(node, cst.Name) and node.value in self.n.local_names:
            functions = found.items(node) if found is not None else None
            bound = getattr(self.n, "bound_strings", {}).get(self.n.env.get(node.value))
            if functions is not None or type(bound) is not tuple:  # (a tuple parameter
                return functions if functions is not None else self.local_items(node)
            # of strings made per call: its items, below)
        if (sliced := self.local_slice(node)) is not None:
            return sliced
        value = self.static_value(node)
        if isinstance(value, dict):
            return [(_spell(k), k) for k in value] if all(map(spellable, value)) else None
        if isinstance(value, str) and isinstance(node, cst.SimpleString):
            return [(_spell(c), c) for c in value]  # (`for k in "abca"`: `"a"`, ...)
        if isinstance(value, (tuple, list, range, str)) or (
                isinstance(value, np.ndarray) and value.ndim >= 1):
            return [(self._index(node, k), value[k]) for k in range(len(value))]
        return None

    def local_items(self, node: cst.Name) -> list[tuple[Any, Any]] | None:
        """The items of a tuple, list or dict literal the function made (and did not
        write into since): a dict's keys, a sequence's values under names of their own."""
        ssa = self.n.env.get(node.value)
        let = self.n.lets.get(ssa) if ssa is not None else None
        if let is None or ssa in self.n.buffer_root.values():
            return None
        if let.prim == "make_dict" and getattr(let.params.get("built"), "positional", False):
            return [(self.atom_node(a, node), a.value if isinstance(a, Const) else NOVALUE)
                    for a in let.args]  # (a NamedTuple: its fields' values, in order)
        if let.prim == "make_dict" and "keys" in let.params:  # (else keyed per call)
            keys = self.n.dicts.settled(ssa)  # (None: a loop wrote per-call keys into it)
            return None if keys is None else [(_spell(k), k) for k in keys]
        if let.prim in ("make_tuple", "make_list") and (
                ssa not in self.n.loop_carried):  # (`parts = parts + [v]` in a loop)
            return [(self.atom_node(a, node), a.value if isinstance(a, Const) else NOVALUE)
                    for a in let.args]
        if let.prim == "make_tuple" and ssa not in self.n.lists:
            # a tuple a loop rebinds (`state = tuple(... for s in state)`): its items
            # read where the loop is (`state[0]`), for the length it has before the
            # loop; the loop must rebind it to a tuple of that length (checked where it
            # ends: frontend/carried_records.check_assumed)
            self.n.assumed_lengths.append((ssa, len(let.args), node))
            return [(self._index(node, k), NOVALUE) for k in range(len(let.args))]
        return None

    def local_slice(self, node: Any) -> list[tuple[Any, Any]] | None:
        """``p[:2]`` of a name ``local_items`` reads (a NamedTuple, a tuple or list
        the function made) with constant bounds: the items Python's slice picks."""
        if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and
                node.value.value in self.n.local_names and len(node.slice) == 1 and
                isinstance(node.slice[0].slice, cst.Slice)):
            return None
        cut = node.slice[0].slice
        bounds = [None if b is None else self.static_value(b)
                  for b in (cut.lower, cut.upper, cut.step)]
        if not all(b is None or type(b) is int for b in bounds) or bounds[2] == 0:
            return None
        items = self.local_items(node.value)
        return None if items is None else items[slice(*bounds)]

    def atom_node(self, atom: Atom, node: Any) -> Any:
        """An expression the lowerers read back as ``atom``: a constant's text, or a
        name of its own bound to the atom's (a Var's) name."""
        if isinstance(atom, Const):
            new = cst.parse_expression(atom.text)
        else:
            name = f"__s2s_item_{len(self.n.env)}_{atom.name}"
            self.n.local_names.add(name)
            self.n.env[name] = atom.name
            new = cst.Name(name)
        self.n.desugar.alias(new, node)
        return new

    def _call_items(self, node: cst.Call) -> list[tuple[Any, Any]] | None:
        args = [a.value for a in node.args]
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("items", "keys",
                                                                  "values") and not args:
            base = func.value
            if isinstance(base, cst.Dict):
                pairs = [(e.key, e.value) for e in base.elements
                         if isinstance(e, cst.DictElement)]
                pairs = [(_spell(self.static_value(k)), v) for k, v in pairs]
            else:
                local = isinstance(base, cst.Name) and base.value in self.n.local_names
                let = self.n.lets.get(self.n.env.get(base.value, "")) if local else None
                value = self.static_value(base) if not local else None
                if let is not None and let.prim == "make_dict" and "keys" in let.params:
                    keys = self.n.dicts.settled(let.target)  # (None: per-call keys written)
                    value = None if keys is None else dict.fromkeys(keys)  # (made here)
                if not isinstance(value, dict) or not all(map(spellable, value)):
                    return None  # (`{Color.RED: ...}`: keys with no literal)
                pairs = [(_spell(k), self._index(base, k)) for k in value]
            keys = [self.static_value(k) for k, _ in pairs]
            if func.attr.value == "keys":
                return [(k, key) for (k, _), key in zip(pairs, keys)]
            if func.attr.value == "values":
                return [(v, self.static_value(v)) for _, v in pairs]
            return [(self._pair(k, v), (key, self.static_value(v)))
                    for (k, v), key in zip(pairs, keys)]
        fn = self.builtin(func)
        if fn is builtins.range:
            bounds = [self.static_value(a) for a in args]
            if not all(isinstance(b, int) for b in bounds):
                return None
            return [(_spell(k), k) for k in range(*bounds)]
        if fn in (builtins.zip, builtins.enumerate, builtins.reversed, builtins.sorted):
            seqs = [self.static_items(args[0])] if args else []
            if fn is builtins.zip:
                seqs = self._zipped([self.static_items(a) for a in args], args)
            if not seqs or any(s is None for s in seqs):
                return None
            if fn is builtins.reversed:
                return list(reversed(seqs[0]))
            if fn is builtins.sorted:
                if len(args) != 1 or any(v is NOVALUE for _, v in seqs[0]):
                    return None
                return sorted(seqs[0], key=lambda item: item[1])
            if fn is builtins.enumerate:
                start = self.static_value(args[1]) if len(args) == 2 else 0
                if not isinstance(start, int) or len(args) > 2:
                    return None
                return [(self._pair(_spell(k + start), s), (k + start, v))
                        for k, (s, v) in enumerate(seqs[0])]
            return [(cst.Tuple([cst.Element(s) for s, _ in group]),
                     tuple(v for _, v in group) if all(v is not NOVALUE for _, v in group)
                     else NOVALUE) for group in zip(*seqs)]
        return None

    def _zipped(self, seqs: list, args: list) -> list:
        """``zip``'s walks, where one is a tuple a loop rebinds (its length known before
        the loop) and the others are the results of calls of the user's functions
        (``zip(state, k1)``, ``k1 = f(...)``): those read by position (``k1[0]``) up
        to that length (the analysis refuses a tuple result shorter than it, located;
        a longer one Python's zip cuts as well)."""
        known = [len(s) for s in seqs if s is not None]
        if not known or None not in seqs or not any(  # (only beside a tuple a loop
                isinstance(a, cst.Name) and self.n.env.get(a.value) in self.n.loop_carried
                for a in args):  # rebinds: elsewhere the loop form reads Python's zip)
            return seqs
        out = []
        for walk, node in zip(seqs, args):
            if walk is None:
                let = self.n.lets.get(self.n.env.get(node.value, "")) if isinstance(
                    node, cst.Name) and node.value in self.n.local_names else None
                if let is None or let.prim != "call":
                    return seqs
                walk = [(self._index(node, k), NOVALUE) for k in range(min(known))]
            out.append(walk)
        return out

    def static_value(self, node: Any) -> Any:
        """The value of an expression of constants, module names (read now: the code
        is generated again when they change) and pure built-ins; else NOVALUE."""
        names: dict[str, Any] = {}
        ok = [True]
        comps = self

        class Check(cst.CSTVisitor):
            def visit_Name(self, n: cst.Name) -> None:
                if n.value in ("True", "False", "None") or n.value in names:
                    return
                bound = getattr(comps.n, "bound_strings", {})  # (an int parameter the
                if type(bound.get(comps.n.env.get(n.value))) in (int, tuple):  # transform
                    names[n.value] = bound[comps.n.env[n.value]]  # is made per call for:
                    # `range(n)`; a tuple of strings, `for s in names: getattr(np, s)`)
                    return
                if (held := _bound_literal(comps.n, n.value)) is not NOVALUE:
                    names[n.value] = held  # (`spec=("poly", 3)` made per call)
                    return
                aliased = n.value in comps.n.resolver.aliases and n.value not in comps.n.env
                if n.value in comps.n.local_names and not aliased:  # (`self` of a
                    ok[0] = False  # method bound to an object reads as the object)
                    return
                try:
                    names[n.value] = comps.n.resolver.lookup_global(n)
                except TransformError:
                    ok[0] = False
                    return
                comps.watch(n.value)

            def visit_Attribute(self, n: cst.Attribute) -> bool:
                n.value.visit(self)
                return False

            def visit_Call(self, n: cst.Call) -> None:
                if isinstance(n.func, cst.Attribute) and n.func.attr.value in PURE_METHODS:
                    return
                if comps.builtin(n.func) not in PURE and not comps._math(n.func):
                    ok[0] = False

            def on_visit(self, n: Any) -> bool:
                if isinstance(n, (*COMPREHENSIONS, cst.Lambda, cst.NamedExpr,
                                  cst.SetComp, cst.Yield, cst.Await)):
                    ok[0] = False
                return ok[0] and super().on_visit(n)

        node.visit(Check())
        if not ok[0]:
            return NOVALUE
        try:
            code = cst.Module([]).code_for_node(node)
            return eval(code, {"__builtins__": builtins}, names)  # noqa: S307 (checked above)
        except Exception:  # (an expression Python cannot evaluate now: not static)
            return NOVALUE

    def watch(self, name: str, static: bool = True) -> None:
        """The code now depends on ``name``'s value (``StaticVar``: a length, a
        filter), or on the kinds of the parts of it it reads (``ReadVar``)."""
        var = self.n.resolver.free.get(name)
        if var is None or isinstance(var, StaticVar) or (
                isinstance(var, ReadVar) and not static):
            return
        if type(var) not in (FreeVar, ReadVar):
            return
        new = (StaticVar if static else ReadVar)(var.name, var.cell, var.scope)
        new.also = var.also
        self.n.resolver.free[name] = new

    def watch_path(self, text: str) -> None:
        """The code now depends on the value ``text`` spells (``NAME``, ``CFG["k"]``,
        ``cfg.k``, ``config.KEY``): its root name watched by value, and a module's
        attribute path by its own value (``PathVar``)."""
        root = re.match(r"\w*", text).group()
        if not root:
            return
        self.watch(root)
        var = self.n.resolver.free.get(root)
        path = re.fullmatch(r"\w+((?:\.\w+)+)", text)
        if path is not None and var is not None and not var.also and isinstance(
                _read_or_none(var), types.ModuleType):
            self.n.resolver.depends_on(PathVar(var, tuple(path.group(1)[1:].split("."))),
                                       None)

    def builtin(self, func: Any) -> Any:
        if isinstance(func, cst.Name) and func.value not in self.n.local_names:
            try:
                return self.n.resolver.lookup_global(func)
            except TransformError:
                return None
        return None

    def _math(self, func: Any) -> bool:
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and (
                func.value.value not in self.n.local_names):
            try:
                return self.n.resolver.lookup_global(func.value) is math
            except TransformError:
                return False
        return False

    def _index(self, base: Any, key: Any) -> Any:
        new = cst.Subscript(paren(base), [cst.SubscriptElement(cst.Index(_spell(key)))])
        self.n.desugar.alias(new, base)
        return new

    def _pair(self, first: Any, second: Any) -> Any:
        return cst.Tuple([cst.Element(first), cst.Element(second)])


def _bound_literal(n: Any, name: str) -> Any:
    """The tuple of strings a parameter holds where the transform is made per call's
    tuple (``bound_params``: written first as a literal), while it is not rebound."""
    value = getattr(n, "bound_literals", {}).get(name, NOVALUE)
    let = n.lets.get(n.env.get(name, "")) if value is not NOVALUE else None
    if let is None or let.prim != "make_tuple" or let.params or tuple(
            a.value if isinstance(a, Const) else NOVALUE for a in let.args) != value:
        return NOVALUE
    return value


def spellable(value: Any) -> bool:
    """Is ``value`` a literal ``_spell`` writes (a string, a number, None, a tuple of
    such)?"""
    if type(value) is tuple:
        return all(map(spellable, value))
    return value is None or type(value) in (str, int, float, bool, complex)


def _spell(value: Any) -> Any:
    """A literal's expression (``2``, ``-1``, ``'a'``)."""
    return cst.parse_expression(repr(value))


def paren(node: Any) -> Any:
    """``node`` as an operand: a spelled tuple is parenthesized."""
    if isinstance(node, cst.Tuple) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def _read_or_none(var: FreeVar) -> Any:
    try:
        return var.read()
    except (KeyError, ValueError):
        return None
