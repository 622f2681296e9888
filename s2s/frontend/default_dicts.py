"""``collections.defaultdict`` built in the function, desugared to a dict (issue 23)::

    acc = collections.defaultdict(float)      acc = {}
    for k in ("a", "b", "a"):                 for k in ("a", "b", "a"):
        acc[k] += x[k == "a"]          ->         if k not in acc:
                                                      acc[k] = 0.0
                                                  acc[k] += x[k == "a"]

Python's defaultdict inserts the factory's value when an item it lacks is read
(``acc[k]``, ``acc[k] += v``, ``groups[k].append(v)``); a write (``acc[k] = v``), ``del``,
``.get`` and ``in`` insert nothing.  So each statement that reads an item gets, first,
the insertion Python makes: ``if k not in acc: acc[k] = <factory's value>``, a test
the dict lowering decides when the keys are known (a loop over constant keys
unrolled; a run-time key stays refused, located, as for any dict).  The factory is
``float``, ``int``, ``bool``, ``str``, ``list``, ``dict``, ``tuple`` (its value written
as a literal), a ``lambda:`` (its body) or a function of yours (called).

A read Python makes only on some paths (in a comprehension, a lambda, a conditional
expression, ``and``/``or``, a ``while`` or ``elif`` test) and the dict used otherwise
than by its items, ``.items()``/``.keys()``/``.values()``/``.get``/``.pop``, ``in``,
``len``, ``list``, ``sorted``, ``dict`` and a ``for`` over it (passed to a function,
returned, stored) are refused at the user's line: another holder of a plain dict
would not fill its missing keys.
"""

from __future__ import annotations

import builtins
import collections
from typing import Any

import libcst as cst

from .block_walk import BlockWalk, NameUses
from .desugar import module_object

__all__ = ["default_dicts"]

_LITERALS = {float: "0.0", int: "0", bool: "False", str: '""', list: "[]", dict: "{}",
             tuple: "()"}
_METHODS = {"items", "keys", "values", "get", "pop", "copy"}
_READERS = {builtins.len, builtins.list, builtins.sorted, builtins.dict, builtins.tuple}
_SOME_PATHS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.Lambda,
               cst.IfExp, cst.BooleanOperation)
_WHY = ("s2s holds a `collections.defaultdict` built in the function as a dict, filling "
        "a missing key where a statement reads it")


def default_dicts(n: Any, nodes: list[Any]) -> list[Any]:
    """``nodes`` (a function's statements; ``n``: its Normalizer) with each
    ``collections.defaultdict(...)`` bound to a name written as above."""
    made = _made(n, nodes)
    if not made:
        return nodes
    _check_uses(n, nodes, made)
    return _Rewrite(n, made).block(nodes)


def _made(n: Any, nodes: list[Any]) -> dict[str, Any]:
    """Name -> the factory's value (an expression) for each name bound to a
    ``collections.defaultdict(...)`` call (the name bound to nothing else)."""
    calls: dict[str, list] = {}
    others: set[str] = set()
    bound: set[int] = set()

    class Find(cst.CSTVisitor):
        def visit_FunctionDef(self, node: Any) -> bool:
            return False

        def visit_ClassDef(self, node: Any) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, (cst.Name, cst.Attribute)) and module_object(
                    n, node.func) is collections.defaultdict:
                if id(node) not in bound:
                    calls.setdefault(id(node), [node])

        def visit_Assign(self, node: cst.Assign) -> None:
            value = node.value
            for t in node.targets:
                if isinstance(t.target, cst.Name) and isinstance(value, cst.Call) and (
                        module_object(n, value.func) is collections.defaultdict) and len(
                        node.targets) == 1:
                    calls.setdefault(t.target.value, []).append(value)
                    bound.add(id(value))
                elif isinstance(t.target, cst.Name):
                    others.add(t.target.value)

    for node in nodes:
        node.visit(Find())
    out: dict[str, Any] = {}
    for key, found in calls.items():
        if not isinstance(key, str) or key in others:
            call = found[0]
            raise n.unsupported(call, "a `collections.defaultdict` not bound to a name of "
                                "its own (`acc = defaultdict(float)`): " + _WHY,
                                "bind it to a name of its own (`acc = defaultdict(float)`)")
        factories = [_factory(n, call) for call in found]
        texts = {cst.Module([]).code_for_node(f) for f in factories}
        if len(texts) > 1:
            raise n.unsupported(found[1], f"`{key}` is bound to defaultdicts of other "
                                "factories", "give each its own name")
        out[key] = factories[0]
    return out


def _factory(n: Any, call: cst.Call) -> Any:
    """The expression whose value a missing key gets."""
    if len(call.args) > 1 or any(a.keyword is not None or a.star for a in call.args):
        raise n.unsupported(call, "`collections.defaultdict` given items or keywords: "
                            + _WHY, "build it empty (`defaultdict(float)`) and assign "
                            "the items after")
    if not call.args:  # (no factory: a missing key raises KeyError, as a dict's)
        return None
    f = call.args[0].value
    if isinstance(f, cst.Lambda) and not f.params.params and not isinstance(
            f.params.star_arg, cst.Param) and not f.params.kwonly_params and (
            f.params.star_kwarg is None):
        return f.body
    value = module_object(n, f) if isinstance(f, (cst.Name, cst.Attribute)) else None
    if type(value) is type and value in _LITERALS:
        return cst.parse_expression(_LITERALS[value])
    if isinstance(f, (cst.Name, cst.Attribute)) and callable(value) and not isinstance(
            value, type):
        return cst.Call(f)
    raise n.unsupported(f, "this `defaultdict` factory: " + _WHY + " from `float`, "
                        "`int`, `bool`, `str`, `list`, `dict`, `tuple`, a `lambda:` or a "
                        "function of yours", "use one of those factories")


def _check_uses(n: Any, nodes: list[Any], made: dict[str, Any]) -> None:
    """Refuse, located, a name of ``made`` used otherwise than the module's note says."""

    class Uses(NameUses):
        def check(self, name: cst.Name, parent: Any) -> None:
            if self.nested():
                raise n.unsupported(name, f"`{name.value}` (a `collections.defaultdict`) "
                                    "read in a nested function or lambda: " + _WHY,
                                    "read its items in the function itself")
            ok = isinstance(parent, cst.Attribute) and parent.value is name and (
                parent.attr.value in _METHODS) or self.in_place(name, parent)
            if not ok:
                raise n.unsupported(name, f"`{name.value}` (a `collections.defaultdict`) "
                                    "used as a value here: " + _WHY + "; another holder "
                                    "of the dict would not fill them", "read its items "
                                    f"here, or pass `dict({name.value})`")

        def reader(self, func: Any) -> bool:
            return module_object(n, func) in _READERS

    for node in nodes:
        node.visit(Uses(made))


class _Rewrite(BlockWalk):
    """The statements with each item read preceded by Python's insertion."""

    def __init__(self, n: Any, made: dict[str, Any]) -> None:
        super().__init__(n)
        self.made = made

    def head(self, node: Any, elif_: bool) -> tuple[list[Any], Any]:
        if isinstance(node, cst.While):
            return self._refuse_reads(node.test, "a `while` test (read again at each "
                                      "step)"), node
        if isinstance(node, cst.If) and elif_:
            return self._refuse_reads(node.test, "an `elif` test (read only where the `if` "
                                      "before it fails)"), node
        heads = {cst.For: lambda s: [s.iter], cst.If: lambda s: [s.test],
                 cst.With: lambda s: [i.item for i in s.items]}.get(type(node))
        return [g for h in (heads(node) if heads else []) for g in self._guards(h)], node

    def line(self, line: cst.SimpleStatementLine) -> list[Any]:
        guards = []
        small = line.body[0]
        if len(line.body) == 1 and isinstance(small, cst.Assign) and isinstance(
                small.targets[0].target, cst.Name) and small.targets[0].target.value in (
                self.made) and isinstance(small.value, cst.Call):  # (the defaultdict made)
            empty = cst.Dict([])
            self.n.desugar.alias(empty, small.value)
            new = small.with_changes(value=empty)
            self.n.desugar.alias(new, small)
            line = line.with_changes(body=[new])
            self.n.desugar.alias(line, small)
            return [line]
        for small in line.body:
            found = self._guards(small)
            if found and len(line.body) > 1:
                raise self.n.unsupported(small, "an item read of a defaultdict in a line "
                                         "of several statements: " + _WHY, "write each "
                                         "statement on a line of its own")
            guards += found
        return guards + [line]

    def _reads(self, node: Any) -> list[cst.Subscript]:
        """The item reads of a made dict in ``node`` (not a plain write's target)."""
        made, found, stores = self.made, [], set()

        class Find(cst.CSTVisitor):
            def __init__(self) -> None:
                self.some_paths = 0

            def visit_AssignTarget(self, t: cst.AssignTarget) -> None:
                for s in ([t.target] if not isinstance(t.target, (cst.Tuple, cst.List))
                          else [e.value for e in t.target.elements]):
                    stores.add(id(s))

            def visit_Del(self, d: cst.Del) -> None:
                stores.add(id(d.target))

            def on_visit(self, node: Any) -> bool:
                if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and (
                        node.value.value in made) and id(node) not in stores:
                    found.append((node, self.some_paths))
                if isinstance(node, _SOME_PATHS):
                    self.some_paths += 1
                return not isinstance(node, (cst.FunctionDef, cst.ClassDef))

            def on_leave(self, node: Any) -> None:
                if isinstance(node, _SOME_PATHS):
                    self.some_paths -= 1

        node.visit(Find())
        for read, some in found:
            if some:
                raise self.n.unsupported(read, "an item of a `collections.defaultdict` "
                                         "read only on some paths (a comprehension, a "
                                         "lambda, `... if ... else ...`, `and`/`or`): " + _WHY,
                                         "read it in a statement of its own first "
                                         "(`v = acc[k]`)")
        return [r for r, _ in found]

    def _refuse_reads(self, node: Any, where: str) -> list:
        reads = self._reads(node)
        if reads:
            raise self.n.unsupported(reads[0], f"an item of a `collections.defaultdict` "
                                     f"read in {where}: " + _WHY, "read it into a name "
                                     "before the statement")
        return []

    def _guards(self, node: Any) -> list[Any]:
        out = []
        for read in self._reads(node):
            name = read.value.value
            factory = self.made[name]
            if factory is None or len(read.slice) != 1 or not isinstance(
                    read.slice[0].slice, cst.Index):
                continue  # (no factory: KeyError as a dict's; a slice: refused later)
            key = read.slice[0].slice.value
            if not _pure(key):
                raise self.n.unsupported(key, "a `collections.defaultdict` read by a key "
                                         "computed by a call: " + _WHY + ", the key "
                                         "computed again", "bind the key to a name first")
            guard = cst.If(
                test=cst.Comparison(key.deep_clone(), [cst.ComparisonTarget(
                    cst.NotIn(), cst.Name(name))]),
                body=cst.IndentedBlock([cst.SimpleStatementLine([cst.Assign(
                    [cst.AssignTarget(cst.Subscript(cst.Name(name), [cst.SubscriptElement(
                        cst.Index(key.deep_clone()))]))], factory.deep_clone())])]))
            self.n.desugar.alias_tree(guard, read)
            out.append(guard)
        return out


def _pure(node: Any) -> bool:
    """No call, ``:=``, ``await`` or ``yield`` in ``node`` (reading it again is the same)."""
    bad = [False]

    class Check(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            if isinstance(n, (cst.Call, cst.NamedExpr, cst.Await, cst.Yield, cst.Lambda,
                              *_SOME_PATHS)):
                bad[0] = True
            return not bad[0]

    node.visit(Check())
    return not bad[0]
