"""``getattr(obj, name)`` called, where ``name`` is a string known when s2s transforms
the function (a literal, a loop's item over a tuple of strings, a str default, an
f-string of such): the function ``obj.<name>`` denotes, as if written so::

    for n in ("tanh", "sin"):                 np.tanh(x), then np.sin(x)
        acc = acc + getattr(np, n)(x)
    getattr(self, f"act_{self.kind}")(x)      self.act_tanh(x)

``self.kind`` there is a string field of an object the function built (``Layer("tanh",
...)``, its constructor made per call's strings): the method is made per the object's
string fields (``named_items``, ``bound_params.ints_bound``), as a callee comparing
``spec["kind"]`` is.  A name known only when the function runs is left to the refusal
it had."""

from __future__ import annotations

import ast
import builtins
import weakref
from typing import Any

import libcst as cst

from .. import syntax
from ..errors import TransformError
from ..ir.nodes import Const, Let, Var
from .dicts import assigned_names
from .literals import known
from .module_dicts import lower_copies
from .objects import record_of_atom

__all__ = ["getattr_reads", "named_attribute", "named_items", "unroll_named_records"]


def named_attribute(fl: Any, node: cst.Call) -> Any:
    """The function value ``getattr(obj, "name")`` denotes, or None (not such a call)."""
    func = node.func
    if not isinstance(func, cst.Name) or func.value != "getattr" or (
            func.value in fl.n.local_names) or len(node.args) != 2 or any(
            a.keyword is not None or a.star for a in node.args):
        return None
    try:
        if fl.n.resolver.lookup_global(func) is not builtins.getattr:
            return None
    except TransformError:
        return None
    value = fl.n.comps.static.static_value(node.args[1].value)  # (`names[0]`)
    name = Const(value, repr(value)) if type(value) is str else _string(
        fl.n, fl.n.exprs.expr(node.args[1].value))
    if name is None:  # (made per call's strings where a parameter gives it)
        err = fl.n.unsupported(
            node.args[1], "`getattr` of a name known only when the function runs: s2s "
            "reads the function it names when it transforms", "name it by a string "
            "literal, a loop over a tuple of strings, or a str parameter")
        err.per_call = True  # (expressions.per_call's mark: api/callables.py)
        raise err
    if not name.value.isidentifier():
        raise fl.n.unsupported(node.args[1], f"getattr of the name {name.value!r}, not an "
                               "identifier", "name an attribute the object has")
    attr = cst.Attribute(node.args[0].value, cst.Name(name.value))
    fl.n.desugar.alias_tree(attr, node)
    root = node.args[0].value
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name) and root.value not in fl.n.local_names:
        fl.n.resolver.resolve_dotted(attr)  # (`getattr(np, "tahn")`: no such attribute)
    return fl.value_of(attr)


def _string(n: Any, atom: Any) -> Const | None:
    """The string ``atom`` is when transforming: a constant, a name bound to one (a
    loop over constant strings unrolled), a parameter the transform is made per call
    for (``bound_strings``)."""
    if isinstance(atom, Var) and type(getattr(n, "bound_strings", {}).get(
            atom.name)) is str:
        return Const(n.bound_strings[atom.name], repr(n.bound_strings[atom.name]))
    let = n.lets.get(atom.name) if isinstance(atom, Var) else None
    if isinstance(let, Let) and let.prim == "add" and len(let.args) == 2:  # (`"act_" +
        parts = [_string(n, a) for a in let.args]  # self.kind`, an f-string of them)
        if all(p is not None for p in parts):
            return Const(parts[0].value + parts[1].value, repr(parts[0].value + parts[1].value))
    const = known(n, atom)
    return const if const is not None and isinstance(const.value, str) else None


def getattr_reads(body: Any, names: set[str]) -> bool:
    """Does ``body`` call ``getattr(obj, ...)`` of a name of ``names`` (a loop's
    variables: the loop is unrolled, so each copy's name is a constant)?"""
    found = [False]

    class Find(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            if isinstance(call.func, cst.Name) and call.func.value == "getattr" and len(
                    call.args) == 2 and any(isinstance(m, cst.Name) and m.value in names
                                            for m in _names(call.args[1].value)):
                found[0] = True

    body.visit(Find())
    return found[0]


def _names(node: Any) -> list[Any]:
    out: list[Any] = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            out.append(name)

    node.visit(Names())
    return out


def named_items(fn: Any) -> frozenset[str]:
    """``fn``'s parameters whose field (``self.kind``) or string item (``spec["kind"]``)
    names what ``getattr`` reads in its body (``getattr(self, f"act_{self.kind}")``):
    given an object or dict whose strings the caller knows, it is made per them."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return frozenset()
    found = _NAMED.get(code)
    if found is None:
        defined = syntax.function_node(fn)
        params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        found = _NAMED[code] = frozenset() if defined is None else frozenset(
            sub.value.id for node in ast.walk(defined) if isinstance(node, ast.Call) and (
                isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(
                    node.args) >= 2) for sub in ast.walk(node.args[1])
            if isinstance(sub, (ast.Attribute, ast.Subscript)) and isinstance(
                sub.value, ast.Name) and sub.value.id in params)
    return found


_NAMED: "weakref.WeakKeyDictionary[Any, frozenset]" = weakref.WeakKeyDictionary()


def unroll_named_records(n: Any, node: cst.For) -> bool:
    """``for layer in layers:`` over a list or tuple display of objects the function
    built (not grown nor written since), one of whose classes names a method by a field
    (``getattr(self, f"act_{self.kind}")``): unrolled, ``layer = layers[k]`` before
    each copy of the body, so each item's method is made per its own strings (True);
    False (nothing emitted) for any other loop."""
    target, seq = node.target, node.iter
    if node.orelse is not None or node.asynchronous is not None or not isinstance(
            target, cst.Name) or not isinstance(seq, cst.Name) or seq.value not in n.env:
        return False
    let = n.lets.get(n.env[seq.value])
    if not isinstance(let, Let) or let.prim not in ("make_list", "make_tuple") or (
            let.target in n.buffer_root.values()):  # (grown or written: another binding)
        return False
    made = [record_of_atom(n, a) for a in let.args]
    if not made or any(m is None for m in made) or not any(_names_methods(m.cls)
                                                           for m in made):
        return False
    if target.value in assigned_names(node.body) or _jumps(node.body):
        return False
    copies = []
    for k in range(len(let.args)):
        item = cst.Subscript(cst.Name(seq.value), [cst.SubscriptElement(cst.Index(
            cst.Integer(str(k))))])
        bind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(
            target.value))], item)])
        n.desugar.alias_tree(bind, target)
        copies.append([bind, *(_copy(n, s) for s in node.body.body)])
    lower_copies(n, copies)
    return True


def _copy(n: Any, stmt: Any) -> Any:
    """A deep copy of ``stmt`` (each unrolled copy lowers nodes of its own) whose nodes
    report the positions of those they copy."""
    olds: list[Any] = []
    news: list[Any] = []

    class Collect(cst.CSTVisitor):
        def __init__(self, into: list[Any]) -> None:
            super().__init__()
            self.into = into

        def on_visit(self, node: Any) -> bool:
            self.into.append(node)
            return True

    new = stmt.deep_clone()
    stmt.visit(Collect(olds))
    new.visit(Collect(news))
    for a, b in zip(news, olds):
        n.desugar.alias(a, b)
    return new


def _names_methods(cls: type) -> bool:
    """Does a method of ``cls`` name a function by a field of its ``self``?"""
    for klass in getattr(cls, "__mro__", ()):
        for value in vars(klass).values():
            code = getattr(value, "__code__", None)
            if code is not None and code.co_argcount and (
                    code.co_varnames[0] in named_items(value)):
                return True
    return False


def _jumps(body: Any) -> bool:
    """A ``break``, ``continue`` or ``return`` in ``body`` (not a nested loop's or
    function's jump)."""
    found = [False]

    class Find(cst.CSTVisitor):
        def visit_For(self, n: Any) -> bool:
            return False

        def visit_While(self, n: Any) -> bool:
            return False

        def visit_FunctionDef(self, n: Any) -> bool:
            return False

        def visit_Lambda(self, n: Any) -> bool:
            return False

        def visit_Break(self, n: Any) -> None:
            found[0] = True

        def visit_Continue(self, n: Any) -> None:
            found[0] = True

        def visit_Return(self, n: Any) -> None:
            found[0] = True

    body.visit(Find())
    return found[0]
