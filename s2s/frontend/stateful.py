"""``y = obj.method(x)`` (``y = obj(x)``) of an object of your class the function
built, a method that sets attributes of its object and returns a value (issue 23):
a batch norm's ``__call__`` updating its running statistics, an optimizer's
``step`` keeping its velocities.

The method is written as a function of its parameters and of the fields returning
``(value, record)`` (``built_objects._from_method``, ``kind="paired"``: each ``return
v`` is ``return v, self``); the call binds the target to the value and the object's
name to a record of the fields it leaves, as ``object_setters.method_statement``
does for a method returning nothing.  The same checks hold: the function built the
object, and no other name, container, closure or method's result holds it (else
Python's change of the object would be seen there, and s2s's rebinding would not)."""

from __future__ import annotations

import builtins
import inspect
import textwrap
import types
from typing import Any

import libcst as cst

from ..ir.nodes import Const, Index, Let, Return, Var, walk
from .built_objects import _method_record, _writes_attributes
from .object_setters import _field, _rebind, _why_not, call_on_fields
from .objects import record_of_atom


def paired_call(n: Any, target: cst.Name | None, value: Any) -> bool:
    """``target = obj.method(...)`` (``target`` None: the call as a statement) of a
    method setting attributes of an object the function built: lowered (True), or
    False where the call is not one."""
    found = _method_of(n, value)
    if found is None:
        return False
    name, made, method, attr = found
    if target is None and attr != "__call__" and not _returns_value(method):
        return False  # (`p.bump(v)` returning nothing: object_setters.method_statement)
    var = Var(n.env[name])
    cls = made.cls
    written = f"{name}.{attr}(...)" if attr != "__call__" else f"{name}(...)"
    why = _why_not(n, value.func, name, var, cls, attr, method=True)
    if why:
        raise n.unsupported(value, f"`{written}` sets attributes of a `{cls.__name__}` "
                            f"object (an object of your class): {why}",
                            "return the new values from the method and build a new "
                            "object, or compute with a local name")
    record = _method_record(cls, method, paired=True)
    what = f"`{cls.__name__}.{attr}`"
    if isinstance(record, str):
        raise n.unsupported(value, f"{what} {record}",
                            "set the fields in a method that returns nothing")
    result, callee = call_on_fields(n, value, made, var, record[0],
                                    f"{cls.__name__}_{attr.strip('_')}", what, None)
    keys = _paired_keys(callee) if callee is not None else None
    if keys is None:
        raise n.unsupported(value, f"s2s cannot tell which fields {what} sets (it "
                            "returns from more than one place, or its fields differ "
                            "between its paths)", "return once, at the method's end")
    returned = _item(n, result, 0, value, target.value if target is not None else "_")
    record_atom = _item(n, result, 1, value, name)
    _rebind(n, value, name, made, keys, [_field(n, record_atom, k, value) for k in keys])
    if target is not None:
        n.bound.add(target.value)
        ssa = n.names.fresh(target.value) if target.value in n.env else target.value
        n.emit(ssa, "identity", (returned,), {}, target)
        n._bind(target.value, ssa)
    return True


_ONCE = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp,
         cst.DictComp, cst.GeneratorExp, cst.NamedExpr, cst.Await, cst.Yield)


def hoisted(n: Any, small: Any) -> Any:
    """``return np.sum(bn(x, training=False))``: the one call in the statement of a
    method setting attributes of an object the function built, lowered first as
    ``bn_call = bn(x, training=False)`` (paired_call), and the statement with the name
    in its place.  Only where that is Python's order: no other call runs before it
    (the calls enclosing it run after their arguments; the expression runs left to
    right), nothing makes it conditional or repeated (``and``, ``if``-expressions,
    comprehensions, lambdas), and the object's name is read only after it (no name
    holds the object but its own: paired_call's checks).  Else ``small`` itself."""
    value = getattr(small, "value", None)
    if not isinstance(small, (cst.Assign, cst.AnnAssign, cst.Return, cst.Expr)) or (
            value is None or (isinstance(value, cst.Call) and (
                isinstance(small, cst.Expr) or isinstance(small, cst.Assign) and len(
                    small.targets) == 1 and isinstance(small.targets[0].target,
                                                       cst.Name)))):
        return small
    found: list[tuple[cst.Call, list]] = []
    calls: list[tuple[cst.Call, list]] = []

    class Walk(cst.CSTVisitor):
        def __init__(self) -> None:
            self.stack: list[Any] = []

        def on_visit(self, node: Any) -> bool:
            if isinstance(node, cst.Call):
                calls.append((node, list(self.stack)))
                if _method_of(n, node) is not None:
                    found.append((node, list(self.stack)))
            self.stack.append(node)
            return True

        def on_leave(self, node: Any) -> None:
            self.stack.pop()

    small.visit(Walk())
    if len(found) != 1:
        return small
    call, above = found[0]
    name = call.func if isinstance(call.func, cst.Name) else call.func.value
    order = [c for c, _ in calls]
    if any(isinstance(a, _ONCE) for a in above) or any(  # (a call Python runs first)
            c not in above for c in order[:order.index(call)]) or (
            _read_before(small, call, name.value)):
        return small
    attr = "call" if isinstance(call.func, cst.Name) else call.func.attr.value.strip("_")
    base, i = f"{name.value}_{attr}", 2
    while base in n.local_names or base in n.fn.__globals__ or hasattr(builtins, base):
        base, i = f"{name.value}_{attr}_{i}", i + 1
    temp = cst.Name(n.names.fresh(base))
    n.local_names.add(temp.value)  # (a name of the function's own, as if written)
    n.desugar.alias(temp, call)
    if not paired_call(n, temp, call):
        return small
    rewritten = small.visit(_Replace(call, temp))
    n.desugar.alias(rewritten, small)
    return rewritten


class _Replace(cst.CSTTransformer):
    def __init__(self, old: cst.CSTNode, new: cst.CSTNode) -> None:
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original: Any, updated: Any) -> Any:
        return self.new if original is self.old else updated


def _read_before(small: Any, call: cst.Call, name: str) -> bool:
    """Is the object's ``name`` read where Python reads it before ``call`` runs
    (earlier in the expression, which runs left to right here), or is it a target?"""
    seen = [False, False]  # (the call reached; a read before it)

    class Names(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            if node is call:
                seen[0] = True
                return False  # (its arguments run before it, as lowered)
            return True

        def visit_Name(self, found: cst.Name) -> None:
            seen[1] = seen[1] or (found.value == name and not seen[0])

    targets = [t.target for t in getattr(small, "targets", ())] + (
        [small.target] if isinstance(small, cst.AnnAssign) else [])
    if any(_has_name(t, name) for t in targets):
        return True
    small.value.visit(Names())
    return seen[1]


def _has_name(node: Any, name: str) -> bool:
    found = []

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.append(node.value == name)

    node.visit(Names())
    return any(found)


def _method_of(n: Any, value: Any) -> tuple | None:
    """``(name, Built, method, attr)`` where ``value`` calls a method of an object of
    your class the function holds by a local name, one that sets attributes."""
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Name):
        name, attr = func.value, "__call__"
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        name, attr = func.value.value, func.attr.value
    else:
        return None
    if name not in n.env:
        return None
    made = record_of_atom(n, Var(n.env[name]))
    cls = getattr(made, "cls", None) if made is not None else None
    if not isinstance(cls, type) or (attr != "__call__" and attr in made.keys):
        return None
    method = inspect.getattr_static(cls, attr, None)
    if not isinstance(method, types.FunctionType) or not _writes_attributes(method):
        return None
    return name, made, method, attr


def _returns_value(method: Any) -> bool:
    """Does the method's body hold a ``return`` with a value?"""
    try:
        fdef = cst.parse_module(textwrap.dedent(inspect.getsource(method))).body[0]
    except (OSError, TypeError, cst.ParserSyntaxError):
        return False
    found = []

    class Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is fdef

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Return(self, node: cst.Return) -> None:
            found.append(node.value is not None)

    fdef.visit(Returns())
    return any(found)


def _item(n: Any, atom: Any, i: int, node: Any, base: str) -> Any:
    index = Index((Const(i, repr(i)),), False)
    return n.emit(n.names.fresh(base), "getitem", (atom,), {"index": index}, node)


def _paired_keys(fn: Any) -> tuple[str, ...] | None:
    """The keys of the record in the ``(value, record)`` pair the function's IR
    returns, or None where its IR does not say."""
    ret = next((s for s in reversed(getattr(fn, "body", [])) if isinstance(s, Return)),
               None)
    if ret is None or not isinstance(ret.value, Var):
        return None
    lets = {s.target: s for s in walk(fn.body) if isinstance(s, Let)}
    pair = lets.get(ret.value.name)
    if pair is None or pair.prim != "make_tuple" or len(pair.args) != 2 or not (
            isinstance(pair.args[1], Var)):
        return None
    record = lets.get(pair.args[1].name)
    if record is None or record.prim != "make_dict" or "keys" not in record.params:
        return None
    return tuple(record.params["keys"])

