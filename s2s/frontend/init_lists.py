"""A list field your ``__init__`` builds and grows (issue 23): held by a local name
while ``__init__`` runs, set on the record at its end::

    self.layers = []                      self["layers"] = []; self_layers = []
    for w in ws:                  ->      for w in ws:
        self.layers.append(Layer(w))          self_layers.append(Layer(w))
                                          self["layers"] = self_layers

Inside ``__init__`` nothing but ``self.layers`` can reach the list where ``self``
appears only as ``self.<name>`` (never passed, returned or called on: no method or
``super()`` call may read the field), so the local name is Python's attribute
exactly, and a loop growing it is a loop growing a local list, which the lowering
knows (``parts.append(v)``, ``parts = parts + [v]``).  Read as the record's field,
inside a loop the list was the dict's item carried from one iteration to the next,
whose ``+`` the transforms took for NumPy's (a wrong gradient).  The placeholder
``self["layers"] = []`` keeps the order Python gives the object's attributes; the
statements keep the user's line numbers (the placeholder shares the line).

A grown field this cannot hold (``self`` passed on, a method called) and grown in a
loop is refused (``grown_in_loop``): its length would change with each iteration.
"""

from __future__ import annotations

import inspect
import textwrap
import types
from typing import Any

import libcst as cst

_GROW = ("append", "extend", "insert")


def local_lists(fdef: cst.FunctionDef, me: str) -> dict[str, str]:
    """Field -> local name for the list fields ``__init__`` may hold locally: set first
    by a top-level ``self.F = [...]``, grown (``append``/``extend``/``+=``/``self.F =
    self.F + ...``), where ``self`` appears only as ``self.<field>`` not called and
    nothing returns early."""
    parents = _parents(fdef.body)
    if not _only_fields(fdef.body, me, parents):
        return {}
    first: dict[str, Any] = {}
    for stmt in fdef.body.body:
        for node in _walk(stmt):
            field = _own(node, me)
            if field and field not in first:
                first[field] = stmt
    taken = {node.value for node in _walk(fdef) if isinstance(node, cst.Name)}
    out = {}
    for field in sorted(_grown(fdef.body, me)):
        stmt = first.get(field)
        if not _reads_ok(fdef.body, me, field, parents) or not (
                isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and (
                isinstance(stmt.body[0], cst.Assign)) and len(stmt.body[0].targets) == 1
                and _own(stmt.body[0].targets[0].target, me) == field and isinstance(
                    stmt.body[0].value, cst.List)):
            continue
        name, i = f"{me}_{field}", 2
        while name in taken:
            name, i = f"{me}_{field}_{i}", i + 1
        taken.add(name)
        out[field] = name
    return out


def grown_in_loop(fdef: cst.FunctionDef, me: str, held: dict[str, str], cls: type) -> str:
    """Why ``__init__`` cannot be written ("" where it can): it grows a list field in
    a loop that no local name holds (``local_lists``), or calls there a method of its
    own that grows one (``self.add(v)``: ``self.layers.append(v)``)."""
    for node in _walk(fdef.body):
        if not isinstance(node, (cst.For, cst.While)):
            continue
        grown = _grown(node.body, me) - set(held)
        if grown:
            field = sorted(grown)[0]
            return (f"grows the list `{me}.{field}` in a loop where `{me}` is also "
                    "passed on or its method called (s2s holds such a list only "
                    f"where `__init__` uses `{me}` just as `{me}.<field>`)")
        for call in _walk(node.body):
            name = _own(call.func, me) if isinstance(call, cst.Call) else ""
            field = sorted(_grows_in(getattr(cls, name, None)))[:1] if name else []
            if field:
                return (f"calls `{me}.{name}(...)`, which grows the list "
                        f"`{me}.{field[0]}`, in a loop (s2s holds a growing list "
                        "field only where `__init__` appends to it itself)")
    return ""


def _grows_in(method: Any) -> set[str]:
    """The list fields a method of the class grows (none where it has no source)."""
    if not isinstance(method, types.FunctionType):
        return set()
    try:
        fdef = cst.parse_module(textwrap.dedent(inspect.getsource(method))).body[0]
    except (OSError, TypeError, cst.ParserSyntaxError):
        return set()
    if not isinstance(fdef, cst.FunctionDef) or not fdef.params.params:
        return set()
    return _grown(fdef.body, fdef.params.params[0].name.value)


class HeldLists(cst.CSTTransformer):
    """``self.F`` as the local name ``local_lists`` gives; its first assignment also
    sets the placeholder; the record's field set from it at the end."""

    def __init__(self, me: str, held: dict[str, str]) -> None:
        super().__init__()
        self.me, self.held, self.placed = me, held, set()

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
        field = _own(original, self.me)
        return cst.Name(self.held[field]) if field in self.held else updated

    def leave_Assign(self, original: cst.Assign, updated: cst.Assign) -> Any:
        field = _own(original.targets[0].target, self.me) if len(original.targets) == 1 \
            else ""
        if field not in self.held or field in self.placed:
            return updated
        self.placed.add(field)  # (`self["F"] = []`: the attribute's place in the object)
        return cst.FlattenSentinel([_set(self.me, field, cst.List([])), updated])

    def finish(self, body: cst.IndentedBlock) -> cst.IndentedBlock:
        """The body with the fields set from their local names after its last line."""
        ends = [cst.SimpleStatementLine([_set(self.me, f, cst.Name(name))])
                for f, name in self.held.items()]
        return body.with_changes(body=[*body.body, *ends])


def _set(me: str, field: str, value: Any) -> cst.Assign:
    return cst.Assign([cst.AssignTarget(cst.Attribute(cst.Name(me), cst.Name(field)))],
                      value)


def _parents(body: Any) -> dict[int, Any]:
    parents: dict[int, Any] = {}
    for node in _walk(body):
        for child in node.children:
            parents[id(child)] = node
    return parents


def _reads_ok(body: Any, me: str, field: str, parents: dict[int, Any]) -> bool:
    """Every ``me.field`` is set, grown, indexed, iterated or measured (``len``):
    never bound to another name or container, which would share the list."""
    for node in _walk(body):
        if _own(node, me) != field:
            continue
        parent = parents.get(id(node))
        grand = parents.get(id(parent))
        if isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.AugAssign) and (
                parent.target is node) or isinstance(parent, cst.For) and (
                parent.iter is node) or isinstance(parent, cst.Subscript) and (
                parent.value is node):
            continue
        if isinstance(parent, cst.Attribute) and isinstance(grand, cst.Call) and (
                parent.attr.value in _GROW):
            continue
        if isinstance(parent, cst.BinaryOperation) and parent.left is node and isinstance(
                grand, cst.Assign) and _own(grand.targets[0].target, me) == field:
            continue
        if isinstance(parent, cst.Arg) and isinstance(grand, cst.Call) and isinstance(
                grand.func, cst.Name) and grand.func.value == "len":
            continue
        return False
    return True


def _only_fields(body: Any, me: str, parents: dict[int, Any]) -> bool:
    """``me`` appears only as ``me.<field>``, never called; no ``super()``, no
    ``return``."""
    for node in _walk(body):
        if isinstance(node, cst.Return):
            return False
        if isinstance(node, cst.Name) and node.value == "super":
            return False
        if isinstance(node, cst.Name) and node.value == me:
            parent = parents.get(id(node))
            if not (isinstance(parent, cst.Attribute) and parent.value is node):
                return False
            call = parents.get(id(parent))
            if isinstance(call, cst.Call) and call.func is parent:
                return False
    return True


def _grown(body: Any, me: str) -> set[str]:
    """The fields ``body`` grows: ``self.F.append(v)`` (``extend``, ``insert``),
    ``self.F += [...]``, ``self.F = self.F + [...]``."""
    out = set()
    for node in _walk(body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in _GROW) and _own(node.func.value, me):
            out.add(_own(node.func.value, me))
        elif isinstance(node, cst.AugAssign) and _own(node.target, me) and isinstance(
                node.operator, cst.AddAssign) and isinstance(node.value, (cst.List, cst.Tuple)):
            out.add(_own(node.target, me))
        elif isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(
                node.value, cst.BinaryOperation) and isinstance(node.value.operator, cst.Add) \
                and isinstance(node.value.right, cst.List):
            field = _own(node.targets[0].target, me)
            if field and _own(node.value.left, me) == field:
                out.add(field)
    return out


def _own(node: Any, me: str) -> str:
    """``F`` where ``node`` is ``me.F``, else ""."""
    return node.attr.value if isinstance(node, cst.Attribute) and isinstance(
        node.value, cst.Name) and node.value.value == me else ""


def _walk(node: Any) -> Any:
    yield node
    for child in node.children:
        yield from _walk(child)
