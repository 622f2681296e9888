"""Comprehensions and generator expressions, desugared to what the lowerers read.

``[f(v) for v in it if c]`` is rewritten, as libcst, into one of two forms:

* **unrolled**, when what it walks is known when the function is transformed (a
  ``range`` of constants, a literal tuple or list, a module constant, ``zip``,
  ``enumerate``, ``reversed``, ``sorted`` and ``.items()``/``.keys()``/``.values()``
  of those): a literal ``[f(v0), f(v1), ...]`` (a tuple, a dict), each variable
  replaced by how its item is spelled (``SCALES[1]``, ``2``, ``x``), and each ``if``
  decided then, so ``sum``, indexing, ``np.stack`` and ``max`` read a list of known
  length, as JAX's trace unrolls the comprehension;
* **a loop**, over an array's rows or a container argument: ``items = []; for v in
  it: items.append(f(v))`` (``sum`` of a generator: ``total = 0; total = total +
  f(v)``), lowered as the ``for`` loops the transforms already follow.

An ``if`` that reads values only known at run time would make the list's length
depend on them, and is refused where it is written.  Comprehensions over shapes and
constants only are still one ``pyexpr`` (``CallLowerer.python_expression``).
"""

from __future__ import annotations

import builtins
import math
import types
from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError
from ..ir.nodes import Atom, Var
from .resolve import FreeVar

NOVALUE = object()  # an item whose spelling is known but whose value is not

# calls a static value may make: pure, and decided by their arguments' values
PURE = {builtins.range, builtins.len, builtins.zip, builtins.enumerate, builtins.reversed,
        builtins.sorted, builtins.min, builtins.max, builtins.abs, builtins.round,
        builtins.sum, builtins.any, builtins.all, builtins.isinstance, builtins.type,
        builtins.tuple, builtins.list, builtins.dict, builtins.int, builtins.float,
        builtins.bool, builtins.str}
PURE_METHODS = {"items", "keys", "values", "get"}
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


class _Dynamic(Exception):
    """A comprehension's ``for`` walks values known only when the function runs."""


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


class Rename(cst.CSTTransformer):
    """Replace free uses of names by expressions, the rebuilt nodes keeping the
    positions of the nodes they replace."""

    def __init__(self, table: dict[str, cst.BaseExpression], alias: Any) -> None:
        self.table, self.alias = table, alias

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        new = self.table.get(original.value)
        if new is None:
            return updated
        self.alias(new, original)
        return new

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
        return updated.with_changes(attr=original.attr)  # (`x.i` is not the variable)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> Any:
        return updated.with_changes(keyword=original.keyword)  # nor is `f(i=...)`

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.alias(out, original)
        return out


def substitute(node: Any, table: dict[str, cst.BaseExpression], alias: Any) -> Any:
    return node.visit(Rename(table, alias)) if table else node


def _targets(target: Any) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _targets(e.value)]
    return []


class Comprehensions:
    """Desugars the comprehensions of one function for its Normalizer."""

    def __init__(self, n: Any) -> None:
        self.n = n
        self.user_locals = set(n.fn.__code__.co_varnames) | set(n.fn.__code__.co_cellvars)

    # ---- entry points -------------------------------------------------------------

    def comprehension(self, node: Any, target: str | None, kind: str = "list") -> Atom:
        """A list (``kind="list"``), tuple or dict comprehension, or a generator
        read as a list, lowered as its literal or its loop."""
        if isinstance(node, cst.ListComp) and kind == "list":
            kept = self.as_python_expression(node, target)
            if kept is not None:
                return kept
        items = self.unrolled(node)
        if items is not None:
            return self.n.exprs.expr(self.literal(node, items, kind), target)
        if isinstance(node, cst.DictComp):
            raise self.n.unsupported(
                node, "a dict comprehension is supported over what is known when s2s "
                "transforms the function (constants, literals, `range` of constants), "
                "whose keys are then constant strings", 'write a dict literal {"a": ...}',
            )
        return self.loop(node, target, "list")

    def as_python_expression(self, node: Any, target: str | None,
                             base: str = "items") -> Atom | None:
        """Over shapes and constants only, a comprehension stays one ``pyexpr``
        statement (what rules build indexes with); else None, nothing emitted."""
        out, size = self.n.out, len(self.n.out)
        try:
            return self.n.calls.python_expression(node, target, base)
        except TransformError:
            del out[size:]
            return None

    def sum(self, node: Any, start: Any, call: cst.Call, target: str | None) -> Atom:
        """``sum(f(v) for v in it)``: the sum of the unrolled items, or a loop adding
        them up (after ``start``)."""
        items = self.unrolled(node)
        if items is not None:
            args = [cst.Arg(self.literal(node, items, "list"))]
            if start is not None:
                args.append(cst.Arg(start))
            new = call.with_changes(args=args)
            self.n.desugar.alias(new, call)
            return self.n.calls.builtin_sum(new, target)
        return self.loop(node, target, "sum", start)

    def items_of(self, node: Any) -> list[Atom] | None:
        """The atoms of a list or tuple of known length that ``node`` denotes (a
        literal, a comprehension it unrolls, a constant), or None."""
        if isinstance(node, COMPREHENSIONS[:2]):
            items = self.unrolled(node)
            return None if items is None else [self.n.exprs.expr(e) for e in items]
        if isinstance(node, (cst.List, cst.Tuple)) and not any(
                isinstance(e, cst.StarredElement) for e in node.elements):
            return [self.n.exprs.expr(e.value) for e in node.elements]
        static = self.static_items(node)
        if static is not None:
            return [self.n.exprs.expr(spelling) for spelling, _ in static]
        if not isinstance(node, cst.Name):
            return None
        atom = self.n.exprs.expr(node)
        let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
        if let is not None and let.prim in ("make_list", "make_tuple") and (
                atom.name not in self.n.buffer_root.values()):
            return list(let.args)
        return None

    # ---- unrolling ---------------------------------------------------------------

    def unrolled(self, node: Any) -> list[Any] | None:
        """The element expressions (``(key, value)`` pairs for a dict comprehension),
        one per item, when every ``for`` walks something static; else None."""
        fors: list[cst.CompFor] = []
        clause = node.for_in
        while clause is not None:
            if clause.asynchronous is not None:
                raise self.n.unsupported(clause, "`async for` is not supported",
                                         "use a plain `for`")
            fors.append(clause)
            clause = clause.inner_for_in
        out: list[Any] = []
        try:
            self._unroll(node, fors, {}, out)
        except _Dynamic:
            return None  # (a `for` over values known when it runs: a loop)
        return out

    def _unroll(self, node: Any, fors: list[cst.CompFor], table: dict, out: list) -> None:
        if not fors:
            if isinstance(node, cst.DictComp):
                out.append((substitute(node.key, table, self.n.desugar.alias),
                            substitute(node.value, table, self.n.desugar.alias)))
            else:
                out.append(substitute(node.elt, table, self.n.desugar.alias))
            return
        clause = fors[0]
        items = self.static_items(substitute(clause.iter, table, self.n.desugar.alias))
        if items is None:
            raise _Dynamic()
        for spelling, value in items:
            inner = dict(table)
            self.bind(clause.target, spelling, value, inner)
            if all(self.decide(cond.test, inner) for cond in clause.ifs):
                self._unroll(node, fors[1:], inner, out)

    def bind(self, target: Any, spelling: Any, value: Any, table: dict) -> None:
        """Bind a ``for`` target (names, nested tuples) to an item's spelling."""
        if isinstance(target, cst.Name):
            table[target.value] = _paren(spelling)
            return
        if not isinstance(target, (cst.Tuple, cst.List)) or any(
                isinstance(e, cst.StarredElement) for e in target.elements):
            raise self.n.unsupported(target, "a comprehension's variables must be names "
                                     "or tuples of names", "write `for a, b in ...`")
        for k, element in enumerate(target.elements):
            if isinstance(spelling, (cst.Tuple, cst.List)) and len(spelling.elements) == len(
                    target.elements):
                part = spelling.elements[k].value
            else:
                part = cst.Subscript(_paren(spelling), [cst.SubscriptElement(
                    cst.Index(cst.Integer(str(k))))])
                self.n.desugar.alias(part, spelling)
            sub = NOVALUE
            if value is not NOVALUE:
                try:
                    sub = value[k]
                except (TypeError, IndexError, KeyError):
                    raise self.n.unsupported(target, "this item cannot be unpacked into "
                                             f"{len(target.elements)} names",
                                             "unpack as many names as the item has") from None
            self.bind(element.value, part, sub, table)

    def decide(self, test: Any, table: dict) -> bool:
        """An ``if`` of a comprehension, decided when the function is transformed."""
        value = self.static_value(substitute(test, table, self.n.desugar.alias))
        if value is NOVALUE:
            raise self.n.unsupported(
                test, "a comprehension's `if` here reads values known only when the "
                "function runs, so the list's length would depend on them (JAX "
                "refuses this too)", "keep every item and select with np.where, or "
                "filter on constants and the comprehension's variables",
            )
        return bool(value)

    def literal(self, node: Any, items: list[Any], kind: str) -> Any:
        """The unrolled items as a list, tuple or dict literal."""
        if isinstance(node, cst.DictComp):
            elements = []
            for key, value in items:
                k = self.static_value(key)
                if not isinstance(k, str):
                    raise self.n.unsupported(node.key, "a dict comprehension's keys must "
                                             "be strings known when s2s transforms the "
                                             "function", "key the dict by strings")
                elements.append(cst.DictElement(cst.SimpleString(repr(k)), value))
            new: Any = cst.Dict(elements)
        elif kind == "tuple":
            new = cst.Tuple([cst.Element(e) for e in items])
        else:
            new = cst.List([cst.Element(e) for e in items])
        self.n.desugar.alias(new, node)
        return new

    # ---- static values -------------------------------------------------------------

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
        value = self.static_value(node)
        if isinstance(value, dict):
            return [(_spell(k), k) for k in value]
        if isinstance(value, (tuple, list, range)) or (
                isinstance(value, np.ndarray) and value.ndim >= 1):
            return [(self._index(node, k), value[k]) for k in range(len(value))]
        return None

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
                value = self.static_value(base)
                if not isinstance(value, dict):
                    return None
                pairs = [(_spell(k), self._index(base, k)) for k in value]
            keys = [self.static_value(k) for k, _ in pairs]
            if func.attr.value == "keys":
                return [(k, key) for (k, _), key in zip(pairs, keys)]
            if func.attr.value == "values":
                return [(v, self.static_value(v)) for _, v in pairs]
            return [(self._pair(k, v), (key, self.static_value(v)))
                    for (k, v), key in zip(pairs, keys)]
        fn = self._builtin(func)
        if fn is builtins.range:
            bounds = [self.static_value(a) for a in args]
            if not all(isinstance(b, int) for b in bounds):
                return None
            return [(_spell(k), k) for k in range(*bounds)]
        if fn in (builtins.zip, builtins.enumerate, builtins.reversed, builtins.sorted):
            seqs = [self.static_items(args[0])] if args else []
            if fn is builtins.zip:
                seqs = [self.static_items(a) for a in args]
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
                if n.value in comps.n.local_names:
                    ok[0] = False
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
                if comps._builtin(n.func) not in PURE and not comps._math(n.func):
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

    def _builtin(self, func: Any) -> Any:
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
        new = cst.Subscript(_paren(base), [cst.SubscriptElement(cst.Index(_spell(key)))])
        self.n.desugar.alias(new, base)
        return new

    def _pair(self, first: Any, second: Any) -> Any:
        return cst.Tuple([cst.Element(first), cst.Element(second)])

    # ---- loops ---------------------------------------------------------------------

    def loop(self, node: Any, target: str | None, kind: str, start: Any = None) -> Atom:
        """``items = []; for v in it: items.append(f(v))`` (or ``total = total +
        f(v)`` for ``sum``), lowered where the comprehension is."""
        fors: list[cst.CompFor] = []
        clause = node.for_in
        table: dict[str, cst.BaseExpression] = {}
        while clause is not None:
            for cond in clause.ifs:
                self.decide(cond.test, table)  # (static ifs only; these are not)
            for name in _targets(clause.target):
                fresh = self.loop_name(name)
                if fresh != name:
                    table[name] = cst.Name(fresh)
            fors.append(clause)
            clause = clause.inner_for_in
        alias = self.n.desugar.alias
        acc = self.loop_name("total" if kind == "sum" else "items", target)
        elt = substitute(node.elt, table, alias)
        if kind == "sum":
            body: Any = _assign(acc, cst.BinaryOperation(cst.Name(acc), cst.Add(), elt))
            first = _assign(acc, start if start is not None else cst.Integer("0"))
        else:
            body = cst.SimpleStatementLine([cst.Expr(cst.Call(
                cst.Attribute(cst.Name(acc), cst.Name("append")), [cst.Arg(elt)]))])
            first = _assign(acc, cst.List([]))
        for clause in reversed(fors):
            body = cst.For(target=substitute(clause.target, table, alias),
                           iter=substitute(clause.iter, table, alias),
                           body=cst.IndentedBlock([body]))
        for new in (first, first.body[0], body):
            alias(new, node)
        _alias_all(body, node, self.n.desugar.positions, alias)
        outer = self.n.out
        lowered = self.n.stmts.block([first, body])
        self.n.out = outer
        outer += lowered
        return Var(self.n.env[acc])

    def loop_name(self, name: str, target: str | None = None) -> str:
        """A name for a comprehension's variable (or its result, named after the
        assignment's target where that is its first binding) that shadows nothing."""
        if target is not None and target in self.user_locals and target not in self.n.env:
            self.n.local_names.add(target)
            return target
        if name in self.user_locals or name in self.n.env or name in self.n.names.taken:
            name = self.n.names.fresh(name)
        else:
            self.n.names.taken.add(name)
        self.n.local_names.add(name)
        return name


def _assign(name: str, value: Any) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _alias_all(tree: Any, old: Any, positions: dict, alias: Any) -> None:
    """Give the synthesized nodes (those without a position) the comprehension's."""

    class Visit(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            if n not in positions:
                alias(n, old)
            return True

    tree.visit(Visit())


def _spell(value: Any) -> Any:
    """A literal's expression (``2``, ``-1``, ``'a'``)."""
    return cst.parse_expression(repr(value))


def _paren(node: Any) -> Any:
    """``node`` as an operand: a spelled tuple is parenthesized."""
    if isinstance(node, cst.Tuple) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node
