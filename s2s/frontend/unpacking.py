"""Unpacking of a value whose length is known only when the function runs.

``a, b = v`` of an array's rows (``x[:3]``), of a list grown in a loop, of a tuple
passed by keyword: the width is checked where the function runs, as Python checks
it, by a kept statement before the items are read::

    width = len(pts)
    if width != 2:
        raise unpack_error(width)

``unpack_error`` (bound where the code runs) builds Python's ValueError as
:class:`~s2s.errors.UnpackError`, located at the user's line.  A width the call's
structure settles (a tuple argument's) is checked when s2s transforms the call and the
check dropped (``ir/unroll.py``; a loop's and a literal's: ``transforms/analysis.py``,
``frontend/loops.py``, ``frontend/statements.py``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import libcst as cst

from ..errors import NotIterableError, UnpackError
from ..ir.nodes import Atom, Const, Var
from ..primitives import PRIMITIVES
from .desugar import lower_in_place
from .objects import record_of_atom
from .source import emitted


def _check_items(n: Any, target: Any, v: str) -> None:
    """The kept ``if not_iterable(v): raise not_iterable_error(v)`` before ``len(v)``:
    Python's TypeError (``cannot unpack non-iterable numpy.float64 object``) at the
    user's line for a value with no items (``a, b = np.sum(x)``), where ``len`` would
    raise its own message from emitted code.  Under vmap it runs per example (a
    container, always with items, is not checked: ``transforms/kept.py``)."""
    test, raiser = n.names.fresh("not_iterable"), n.names.fresh("not_iterable_error")
    n.resolver.namespace[test] = NotIterableError.fails
    n.resolver.namespace[raiser] = partial(NotIterableError.of, loc=n.loc(target),
                                           func=n.display)
    key = "__s2s_operand_0__"
    n.emit(n.names.fresh("kept"), "kept", (n.exprs.expr(cst.Name(v)),), {
        "template": (f"if {test}({key}):", (key,)), "kind": "check",
        "body": (f"raise {raiser}({key})", (key,)), "always": True, "items": True},
        target)


def _check(n: Any, target: Any, v: str, width: int, at_least: bool) -> None:
    """``count = len(v)``, then the kept ``if count != width: raise ...`` (``<`` with a
    starred name): Python's check where the function runs.  A length the call's
    structure settles (a tuple argument's) is decided when s2s transforms the call
    (``ir/unroll.py``: the check dropped, or Python's error raised then)."""
    _check_items(n, target, v)
    count = n.comps.loop_name("width")
    lower_in_place(n, [cst.parse_statement(f"{count} = len({v})\n")], target)
    raiser = n.names.fresh("unpack_error")
    n.resolver.namespace[raiser] = partial(UnpackError.of, width, loc=n.loc(target),
                                           at_least=at_least, func=n.display)
    key = "__s2s_operand_0__"
    n.emit(n.names.fresh("kept"), "kept", (n.exprs.expr(cst.Name(count)),), {
        "template": (f"if {key} {'<' if at_least else '!='} {width}:", (key,)),
        "kind": "check", "body": (f"raise {raiser}({key})", (key,)), "always": True,
        "width": (width, at_least)}, target)


def checked_at_run_time(n: Any, target: Any, tree: Atom) -> Atom:
    """``a, b = v`` of a value whose length may be known only when the function runs:
    its length checked there first (the items are then read by index).  Not in code
    s2s emitted (a derivative transformed again): its tuples are its own, their widths
    right by construction, and a kept `raise` in a loop would keep the loop Python on
    the JAX backend."""
    if emitted(n.fn):
        return tree
    made = record_of_atom(n, tree)
    if made is not None and made.positional and issubclass(made.cls, tuple):
        # (`w, b = self` of a NamedTuple: its fields, as many as its class says)
        if len(made.keys) != len(target.elements):
            raise UnpackError.of(len(target.elements), len(made.keys), n.loc(target))
        return tree
    v = n.comps.loop_name("unpacked")
    n._bind(v, tree.name)
    _check(n, target, v, len(target.elements), False)
    return Var(n.env[v])


def starred_at_run_time(n: Any, target: Any, tree: Atom) -> None:
    """``first, *rest, last = v`` of a value whose length is known only when the
    function runs (an array's rows, a list grown in a loop): the statements Python's
    unpacking amounts to, ``rest`` a list of the middle items, and Python's
    ``ValueError`` when there are too few."""
    elements = list(target.elements)
    if not isinstance(tree, Var) or sum(
            isinstance(e, cst.StarredElement) for e in elements) != 1:
        raise n.unsupported(
            target, "this starred unpacking is not supported",
            "index it: `first, rest = v[0], v[1:]`")
    k = next(i for i, e in enumerate(elements) if isinstance(e, cst.StarredElement))
    after, need = len(elements) - k - 1, len(elements) - 1
    v = n.comps.loop_name("unpacked")
    n._bind(v, tree.name)

    def spelled(e: Any) -> str:
        return cst.Module([]).code_for_node(e.value)

    lines = [f"{spelled(e)} = {v}[{j}]\n" for j, e in enumerate(elements[:k])]
    width = _results(n, tree)
    if width is not None:  # (a NumPy function's tuple, np.linalg.lstsq's 4: by constants)
        if width < need:
            raise UnpackError.of(need, width, n.loc(target), True)
        middle = ", ".join(f"{v}[{j}]" for j in range(k, width - after))
        lines.append(f"{spelled(elements[k])} = [{middle}]\n")
    else:
        # (a slice: a tuple or list argument's items are then known per call, its
        # slice the tuple of them, ir/unroll.py; an array's rows as before)
        lines.append(f"{spelled(elements[k])} = list({v}[{k}:{f'-{after}' if after else ''}])\n")
        _check(n, target, v, need, True)
    lines += [f"{spelled(e)} = {v}[{j - after}]\n"
              for j, e in enumerate(elements[k + 1:])]
    statements = [cst.parse_statement(line) for line in lines]
    lower_in_place(n, statements, target)


def _results(n: Any, tree: Var) -> int | None:
    """How many results the NumPy function that bound ``tree`` returns (a tuple of a
    fixed width: ``coef, *_ = np.linalg.lstsq(a, y)``), or None."""
    let = n.lets.get(tree.name)
    prim = PRIMITIVES.get(let.prim) if let is not None else None
    width = getattr(prim, "results", None)
    if callable(width):
        try:
            width = width(dict(let.params))
        except Exception:  # noqa: BLE001 - not known here: read when it runs
            return None
    return width if isinstance(width, int) else None


def element_targets(stmts: Any, target: Any, value: Any) -> bool:
    """``self.lr, self.beta = lr, beta`` (``a[0], a[1] = a[1], a[0]``) assigned by the
    statement lowerer ``stmts``: the right side unpacked into fresh names, then each
    attribute or item written from its name in order, as Python evaluates it; False
    (nothing done) where every element is a name (or a starred one is not)."""
    split = _element_names(stmts.n, target)
    if split is None:
        return False
    stmts.assign(split[0], value)
    for element, name in split[1]:
        stmts.assign(element, name)
    return True


def _element_names(n: Any, target: Any) -> tuple[Any, list[tuple[Any, Any]]] | None:
    writes: list[tuple[Any, Any]] = []

    def rename(t: Any) -> Any:
        if isinstance(t, (cst.Tuple, cst.List)):
            return t.with_changes(elements=[e.with_changes(value=rename(e.value))
                                            for e in t.elements])
        if isinstance(t, (cst.Attribute, cst.Subscript)):
            base = t.value.value if isinstance(t.value, cst.Name) else "item"
            stem = t.attr.value if isinstance(t, cst.Attribute) else f"{base}_item"
            name = cst.Name(n.names.fresh(stem))
            n.local_names.add(name.value)
            n.desugar.alias(name, t)
            writes.append((t, name))
            return name
        return t

    renamed = rename(target)
    starred = any(isinstance(e, cst.StarredElement) and not isinstance(e.value, cst.Name)
                  for e in _elements(target))
    return None if not writes or starred else (renamed, writes)


def _elements(t: Any) -> list[Any]:
    if not isinstance(t, (cst.Tuple, cst.List)):
        return []
    return [x for e in t.elements for x in (e, *_elements(e.value))]


def constant_items(n: Any, elements: Any, value: Any) -> Any:
    """``(WS[0], WS[1], WS[2])`` for ``value`` (``WS``), a tuple or list constant (a
    module's tuple of weights) unpacked with a star (``elements``: the target's; ``w0,
    *ws = WS``): the items read as a literal's; else ``value`` lowered (its atom)."""
    atom = n.exprs.expr(value)
    if not (any(isinstance(e, cst.StarredElement) for e in elements or ()) and isinstance(
            atom, Const) and type(atom.value) in (tuple, list)):
        return atom
    length = len(atom.value)
    items = cst.Tuple([cst.Element(cst.Subscript(value, [cst.SubscriptElement(cst.Index(
        cst.Integer(str(i))))])) for i in range(length)])
    n.desugar.alias_tree(items, value)
    return items


def split_literal(stmts: Any, target: Any, value: Any) -> bool:
    """``carry, ys = init, []`` assigned by the statement lowerer ``stmts`` one name
    after the other (True), where that is what Python's statement does: the target is
    distinct plain names, the value a literal of as many plain elements, none of which
    reads any of the names (``a, b = b, a`` is not split: its right side is evaluated
    first).  Each name then binds as its own statement would (``ys = []``: a list the
    function built, which ``ys.append`` grows); False (nothing done) else."""
    pairs = _literal_pairs(target, value)
    for name, element in pairs or ():
        stmts.assign(name, element)
    return pairs is not None


def _literal_pairs(target: Any, value: Any) -> list[tuple[Any, Any]] | None:
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(
            value, (cst.Tuple, cst.List)) or len(target.elements) != len(value.elements):
        return None
    names = [e.value.value if isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
             else None for e in target.elements]
    if None in names or len(set(names)) != len(names) or any(
            not isinstance(e, cst.Element) for e in value.elements):
        return None
    read: set[str] = set()

    class Reads(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            read.add(node.value)

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            read.update(names)  # (a walrus binds as it evaluates: kept whole)

    for e in value.elements:
        e.value.visit(Reads())
    if read & set(names):
        return None
    return [(e.value, v.value) for e, v in zip(target.elements, value.elements)]
