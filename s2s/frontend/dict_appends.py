"""``history["loss"].append(loss)``: an append into a list a dict of known keys holds.

Python's append changes the list in place; s2s lowers it as the write
``history["loss"] = history["loss"] + [loss]`` (a new list under the key, through
``dicts.py``'s write of a new dict).  The two agree when nothing else refers to that
list, which is checked on the function's source: the dict is bound once, to a dict
literal whose item under the key is a list literal; the dict's name is only ever
subscripted by constant keys (never passed, bound to another name or iterated); and
the list is only appended to, indexed (``history["loss"][-1]``), joined with ``+``,
walked by a ``for`` or a comprehension that does not append to it, or given to NumPy
or to ``len``/``sum``/``max``/``min``/``list``/``tuple``/``sorted`` (which keep no
reference to it).  Anything else (``h = history["loss"]``, ``[history["loss"]]``,
``helper(history)``) keeps the refusal, located, naming the line that shares it.
"""

from __future__ import annotations

import ast
from typing import Any

import libcst as cst

from .record_spelling import SPELLED

_READERS = frozenset(("len", "sum", "max", "min", "list", "tuple", "sorted"))
_WALKERS = frozenset(("zip", "enumerate", "reversed"))  # (only in a loop's header)
_MODULES = frozenset(("np", "numpy", "jnp", "math"))


def split_dict_lists(n: Any, nodes: list[Any]) -> list[Any]:
    """The function's statements ``nodes`` with each list a dict literal holds and the
    body appends to, where nothing else refers to it, held by a name of its own:
    ``history = {"loss": [], "w": []}`` becomes ``history_loss = []``, ``history_w =
    []``, ``history = {}``; ``history["loss"]`` becomes ``history_loss`` everywhere (the
    Normalizer ``n``'s list appends, loops and reads then apply)."""
    block = cst.IndentedBlock(body=nodes)
    appends = _Appends()
    block.visit(appends)
    names: dict[tuple[str, str], str] = {}
    for d, key in dict.fromkeys(appends.found):
        if _sharing(block, d, key) is None:
            names[(d, key)] = n.names.fresh(f"{d}_{key}" if key.isidentifier() else d)
    if not names:
        return nodes
    n.local_names.update(names.values())
    return list(cst.IndentedBlock(body=nodes).visit(_Split(names, n.desugar.alias)).body)


def refuse_dict_item_append(n: Any, call: Any) -> None:
    """``d["k"].append(v)`` left by ``split_dict_lists`` on a dict ``d`` this function
    built: refused, located, saying what else refers to the list."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "append" and isinstance(call.func.value, cst.Subscript)):
        return
    item = call.func.value
    base, key = item.value, _constant_key(item)
    if not (isinstance(base, cst.Name) and key is not None and n.dicts.is_dict(base)):
        return
    name = base.value
    keys = n.dicts.known(n.env[name])
    if key not in keys:
        raise n.unsupported(item, f"`{name}` has no key {key!r} here (its keys: "
                            f"{list(keys)}): Python raises KeyError",
                            f'give `{name}` the key where it is built: {{"{key}": []}}')
    shared = _sharing(n.p.node, name, key)
    where = f" (line {n.loc(shared).line})" if shared in n.p.positions else ""
    spelled = getattr(n.fn, SPELLED, None)
    if spelled is not None and spelled[1] == name and key.isidentifier():
        field = f"{name}.{key}"  # (a method's `self`: the dict of the object's fields)
        raise n.unsupported(
            call, f"`{field}.append(...)` changes in place a list another field or name "
            "holds too: Python's other references to it would see the append",
            f"keep the list in one field and read it there (`{field}[i]`): bind no other "
            "field or name to it")
    raise n.unsupported(
        call, f"`{name}[{key!r}].append(...)` changes in place a list that is not only "
        f"this dict's item{where}: Python's other references to it would see the append",
        f"build `{name}` once as a dict literal holding a new list (`{name} = {{{key!r}: "
        f"[]}}`), and read the list only as `{name}[{key!r}][i]`, `len(...)`, "
        "`np.stack(...)` or in a loop")


class _Appends(cst.CSTVisitor):
    """The ``(name, key)`` of each statement ``name["key"].append(v)``."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def visit_Expr(self, node: cst.Expr) -> None:
        call = node.value
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                call.func.attr.value == "append" and isinstance(call.func.value, cst.Subscript) \
                and isinstance(call.func.value.value, cst.Name) and len(call.args) == 1 and \
                call.args[0].keyword is None and not call.args[0].star:
            key = _constant_key(call.func.value)
            if key is not None:
                self.found.append((call.func.value.value.value, key))


class _Split(cst.CSTTransformer):
    """``split_dict_lists``' rewrite: ``names`` maps ``(dict name, key)`` to the name
    holding that list."""

    def __init__(self, names: dict[tuple[str, str], str], alias: Any) -> None:
        self.names = names
        self.alias = alias

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> Any:
        key = _constant_key(original)
        if isinstance(original.value, cst.Name) and (original.value.value, key) in self.names:
            new = cst.Name(self.names[(original.value.value, key)])
            self.alias(new, original)
            return new
        return updated

    def leave_SimpleStatementLine(self, original: Any, updated: Any) -> Any:
        if len(original.body) != 1 or not isinstance(original.body[0], cst.Assign):
            return updated
        assign = original.body[0]
        target = assign.targets[0].target if len(assign.targets) == 1 else None
        if not isinstance(target, cst.Name) or not isinstance(assign.value, cst.Dict):
            return updated
        lines, kept = [], []
        for e in assign.value.elements:
            key = _constant_key_of(e.key) if isinstance(e, cst.DictElement) else None
            name = self.names.get((target.value, key)) if key is not None else None
            if name is None:
                kept.append(e)
                continue
            bind = cst.Assign([cst.AssignTarget(cst.Name(name))], e.value)
            line = cst.SimpleStatementLine([bind])
            for new in (line, bind, bind.targets[0], bind.targets[0].target):
                self.alias(new, e)
            lines.append(line)
        if not lines:
            return updated
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        value = assign.value.with_changes(elements=kept)
        bind = assign.with_changes(value=value)
        line = updated.with_changes(body=[bind])
        for new, old in ((value, assign.value), (bind, assign), (line, original)):
            self.alias(new, old)
        return cst.FlattenSentinel([*lines, line])


def _constant_key(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    return _constant_key_of(node.slice[0].slice.value)


def _constant_key_of(value: Any) -> str | None:
    if isinstance(value, cst.SimpleString):
        key = ast.literal_eval(value.value)
        return key if isinstance(key, str) else None
    return None


def _sharing(fn: Any, name: str, key: str) -> Any:
    """The first node of ``fn`` (the function's source) through which the list
    ``name[key]`` may be seen other than as the dict's item; None where there is none."""
    finder = _Uses(name)
    fn.visit(finder)
    bound = finder.binds
    if len(bound) != 1 or not _literal_with_list(bound[0], key):
        return bound[1] if len(bound) > 1 else (bound[0] if bound else fn)
    for use in finder.bad:
        return use
    for sub, parents in finder.items:
        if _constant_key(sub) != key:
            continue
        if not _reads_only(sub, parents):
            return sub
    return None


def _literal_with_list(value: Any, key: str) -> bool:
    """Is ``value`` a dict literal whose item under ``key`` is a list literal?"""
    if not isinstance(value, cst.Dict):
        return False
    for e in value.elements:
        if not isinstance(e, cst.DictElement):
            return False
        if _constant_key_of(e.key) == key:
            return isinstance(e.value, cst.List) and all(  # (moved before the dict:
                isinstance(i, cst.Element) and _calls_nothing(i.value)  # nothing it calls)
                for i in e.value.elements)
    return False


def _calls_nothing(node: Any) -> bool:
    """Does evaluating ``node`` call nothing (no call, walrus, yield, lambda)?"""
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, (cst.Call, cst.NamedExpr, cst.Yield, cst.Await, cst.Lambda,
                              cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp)):
                found.append(n)
            return not found

    node.visit(Finder())
    return not found


def _reads_only(sub: cst.Subscript, parents: list[Any]) -> bool:
    """Does the use ``sub`` (``d["k"]``, ``parents`` innermost first) leave no other
    reference to the list?"""
    up = parents[0] if parents else None
    if isinstance(up, cst.Attribute) and up.attr.value == "append" and len(parents) > 2 and \
            isinstance(parents[1], cst.Call) and parents[1].func is up and isinstance(
                parents[2], cst.Expr):
        return not any(isinstance(p, cst.For) and _walks(p.iter, sub) for p in parents)
    if isinstance(up, cst.Subscript) and up.value is sub:
        return not _is_target(up, parents[1:])  # (`d["k"][i]`, read; not written)
    if isinstance(up, cst.BinaryOperation):
        return True  # (`d["k"] + [...]`: a new list)
    if isinstance(up, cst.Arg) and len(parents) > 1 and isinstance(parents[1], cst.Call):
        func = parents[1].func
        if isinstance(func, cst.Name) and func.value in _READERS:
            return True
        if isinstance(func, cst.Attribute) and _root(func) in _MODULES:
            return True
        if isinstance(func, cst.Name) and func.value in _WALKERS and len(parents) > 2 and \
                isinstance(parents[2], (cst.For, cst.CompFor)) and parents[2].iter is parents[1]:
            return _walk_appends_not(parents[2], sub)
        return False
    if isinstance(up, (cst.For, cst.CompFor)) and up.iter is sub:
        return _walk_appends_not(up, sub)
    return False


def _walk_appends_not(loop: Any, sub: cst.Subscript) -> bool:
    """A ``for`` over the list whose body does not append to it (Python's loop would
    walk the appended items too)."""
    if isinstance(loop, cst.CompFor):
        return True
    code = cst.Module([]).code_for_node(sub)
    found = []

    class Appends(cst.CSTVisitor):
        def visit_Call(self, c: cst.Call) -> None:
            if isinstance(c.func, cst.Attribute) and c.func.attr.value == "append" and \
                    cst.Module([]).code_for_node(c.func.value) == code:
                found.append(c)

    loop.body.visit(Appends())
    return not found


def _walks(it: Any, sub: cst.Subscript) -> bool:
    code = cst.Module([]).code_for_node(sub)
    return code in cst.Module([]).code_for_node(it)


def _is_target(node: Any, parents: list[Any]) -> bool:
    up = parents[0] if parents else None
    return (isinstance(up, cst.AssignTarget) and up.target is node) or (
        isinstance(up, (cst.AugAssign, cst.AnnAssign)) and up.target is node) or isinstance(
            up, cst.Del)


def _root(node: Any) -> str | None:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


class _Uses(cst.CSTVisitor):
    """Every use of the name ``name`` in a function: its bindings' values, its
    subscripts by constant keys (with their parents), and any other use."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.stack: list[Any] = []
        self.binds: list[Any] = []  # (the values bound to the name; a node for others)
        self.items: list[tuple[cst.Subscript, list[Any]]] = []
        self.bad: list[Any] = []
        self.nested = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.Lambda)) and self.stack:
            self.nested += 1
        if isinstance(node, cst.Name) and node.value == self.name:
            self._use(node)
        self.stack.append(node)
        return True

    def on_leave(self, original: cst.CSTNode) -> None:
        self.stack.pop()
        if isinstance(original, (cst.FunctionDef, cst.Lambda)) and self.stack:
            self.nested -= 1

    def _use(self, node: cst.Name) -> None:
        up = self.stack[-1] if self.stack else None
        if isinstance(up, cst.Param) or isinstance(up, cst.Attribute) and up.attr is node:
            if isinstance(up, cst.Param):
                self.binds += [node, node]  # (a parameter: not a dict built here)
            return
        if self.nested:
            self.bad.append(node)  # (a nested function's use: refused)
            return
        if isinstance(up, cst.AssignTarget) and up.target is node:
            assign, line = self.stack[-2], self.stack[-3]
            one = len(assign.targets) == 1 and len(getattr(line, "body", ())) == 1
            self.binds.append(assign.value if one else node)
            return
        if isinstance(up, cst.Subscript) and up.value is node and _constant_key(up) is not None:
            target = self.stack[-2] if len(self.stack) > 1 else None
            if isinstance(target, (cst.AssignTarget, cst.AugAssign, cst.Del)) or \
                    isinstance(target, cst.AnnAssign):
                self.items.append((up, [target]))  # (a write of the key: judged below)
                return
            self.items.append((up, list(reversed(self.stack[:-1]))))
            return
        if isinstance(up, (cst.Global, cst.Nonlocal, cst.NameItem)):
            self.bad.append(node)
            return
        self.bad.append(node)  # (passed, returned, aliased, iterated, another binding)
