"""Lists of functions built as Python builds them, and passed on.

``fs = []`` then ``for k in range(3): fs.append(lambda t, k=k: t ** k)``: the list
holds functions, which are no values a derivative carries, so the loop that fills it
is unrolled when s2s transforms the function (one copy of the body per item, the loop
variable assigned at the top of each copy, as each iteration assigns it), and each
``fs.append(<function>)`` adds the function to the container of functions ``fs``
names from then on (``fncontainers.py``: a loop or comprehension over it unrolls, an
item read with a constant key is that function).  A lambda made in an iteration
reads its default ``k=k`` there, and a name it closes over where it is called, as in
Python.

A tuple or list of functions is passed to a function of yours as one argument
(``chain((np.sin, np.tanh), x)``, ``chain(fs, x)``) or through its ``*fns``
(``compose(x, np.sin, relu)``): ``FnSeq``, which the callee's plan binds as its own
container of functions (``functions.py``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..ir.nodes import Const, Var
from .comprehensions import substitute
from .dicts import _jumps, assigned_names
from .fncontainers import containers
from .fnvalues import FnSeq, spelled_here
from .held_items import FnItems, enter_items, pass_items
from .static import NOVALUE

_FUNCTION_LIKE = (cst.Name, cst.Attribute, cst.Lambda, cst.IfExp, cst.Call, cst.Subscript)


def sequence_value(n: Any, node: Any) -> FnSeq | None:
    """The functions a tuple or list literal of functions only, or a local container
    of functions (a tuple or list), denotes; None for anything else."""
    sliced = containers(n).sliced(node)
    if sliced is not None:  # (`ops[:2]` of a local tuple or list of functions)
        kind = containers(n).kinds.get(node.value.value, tuple)
        return FnSeq(tuple(n.funcs.resolved(fv, node) for _, fv in sliced), kind)
    if isinstance(node, cst.Name):
        local = containers(n).local.get(node.value)
        if local is None or not local or not all(isinstance(k, int) for k, _ in local):
            return None
        kind = containers(n).kinds.get(node.value, tuple)
        return FnSeq(tuple(n.funcs.resolved(fv, node) for _, fv in local), kind)
    if not isinstance(node, (cst.Tuple, cst.List)) or not node.elements or any(
            isinstance(e, cst.StarredElement) or not isinstance(e.value, _FUNCTION_LIKE)
            for e in node.elements):
        return None
    values = [n.funcs.value_of(e.value) for e in node.elements]
    if any(v is None for v in values):
        return None
    return FnSeq(tuple(n.funcs.resolved(v, node) for v in values),
                 list if isinstance(node, cst.List) else tuple)


def function_dict(n: Any, node: Any) -> FnItems | None:
    """A dict of functions only, with keys known now: a literal
    (``{"f": np.sin, "g": relu}``) or a local one (``fs = {"f": ACTS[key], ...}``),
    passed to a callee as ``FnItems`` (its reads of the keys are the functions,
    ``held_items.py``; emitted code passes the dict, spelled as a literal of the
    functions' names); None for anything else (a lambda reading this function's
    values, a partial: refused where the dict is used as a value)."""
    if isinstance(node, cst.Name):
        local = containers(n).local.get(node.value)
        if not local or all(isinstance(k, int) for k, _ in local):  # (a tuple's)
            return None
        pairs = [(k, n.funcs.resolved(fv, node)) for k, fv in local]
    elif isinstance(node, cst.Dict) and node.elements:
        pairs = []
        for e in node.elements:
            if not isinstance(e, cst.DictElement) or not isinstance(e.value, _FUNCTION_LIKE):
                return None
            key, fv = n.comps.static.static_value(e.key), n.funcs.value_of(e.value)
            if type(key) not in (str, int) or fv is None:
                return None
            pairs.append((key, n.funcs.resolved(fv, node)))
    else:
        return None
    pairs = list(dict(pairs).items())
    if not all(fv.spelled and not (fv.head or fv.keywords or fv.captured or fv.choice)
               for _, fv in pairs):
        return None  # (a lambda, a partial, a choice: refused where it is a value)
    text = "{" + ", ".join(f"{k!r}: {fv.text}" for k, fv in pairs) + "}"
    return FnItems(Const(None, text), tuple(pairs))


def pass_sequence(n: Any, arg: cst.Arg, out: list, kwargs: dict) -> bool:
    """A call's argument that is a tuple or list of functions: passed as one value,
    or spread by ``*`` into its functions; False (nothing done) for another."""
    seq = sequence_value(n, arg.value)
    if seq is None and not arg.star and (found := function_dict(n, arg.value)) is not None:
        seq = found  # (`{"f": np.sin, "g": relu}`: passed as its functions)
        if arg.keyword is not None:
            kwargs[arg.keyword.value] = seq
        else:
            out.append(seq)
        return True
    if seq is None or arg.star == "**":
        return pass_items(n, arg, out, kwargs)  # (`cfg` holding functions among values)
    if arg.star == "*":
        out += list(seq.items)
    elif arg.keyword is not None:
        kwargs[arg.keyword.value] = seq
    else:
        out.append(seq)
    return True


def enter_functions(n: Any, values: dict, kind: str, name: str, detail: Any) -> list[str]:
    """A planned callee's parameter given a function (``fn``), a tuple or list of
    them (``fns``) or its ``*name`` given functions (``fnstar``): the IR parameters
    for the values they carry, the parameter bound to what they rebuild."""
    if kind == "items":  # (a dict, list or tuple holding functions: held_items.py)
        return enter_items(n, name, detail)
    names = [n.names.fresh(f"{name}_{i}") for i in range(len(detail.leaves()))]
    rebuilt = detail.rebuilt(map(Var, names))
    if kind == "fn":
        values[name] = spelled_here(n, rebuilt)
    else:
        enter_sequence(n, name, rebuilt, lambda fv: spelled_here(n, fv))
    return names


def enter_sequence(n: Any, name: str, detail: FnSeq, spelled: Any) -> None:
    """A planned callee's parameter given a tuple or list of functions (or its
    ``*name`` given functions): a container of functions there."""
    found = containers(n)
    found.local[name] = [(k, spelled(fv)) for k, fv in enumerate(detail.items)]
    found.kinds[name] = detail.kind
    n.env.pop(name, None)


def append_function(n: Any, call: cst.Call) -> bool:
    """``fs.append(<function>)`` on a list of functions, or on the empty list
    ``fs = []`` (which becomes one); False (nothing done) for any other append."""
    func = getattr(call, "func", None)  # (the statement may be no call: `yield v`)
    if not (isinstance(func, cst.Attribute) and func.attr.value == "append"
            and isinstance(func.value, cst.Name) and len(call.args) == 1
            and call.args[0].keyword is None and not call.args[0].star):
        return False
    name, arg = func.value.value, call.args[0].value
    found = containers(n)
    if name in found.local:
        fv = n.funcs.value_of(arg) if isinstance(arg, _FUNCTION_LIKE) else None
        if fv is None:
            raise n.unsupported(arg, f"`{name}` holds functions, and this appends a "
                                "value to it", "keep the values in a list of their own")
        _not_on_a_path(n, call, name)
        found.local[name].append((len(found.local[name]), fv))
        return True
    let = n.lets.get(n.env.get(name, ""))
    if let is None or let.prim != "make_list" or let.args or not isinstance(
            arg, _FUNCTION_LIKE) or (isinstance(arg, cst.Name) and arg.value in n.env):
        return False
    fv = n.funcs.value_of(arg)
    if fv is None:
        return False
    _not_on_a_path(n, call, name)
    n.stmts.check_name(func.value)
    n.env.pop(name, None)
    found.local[name] = [(0, fv)]
    found.kinds[name] = list
    return True


def _not_on_a_path(n: Any, call: Any, name: str) -> None:
    if n.depth or n.paths or n.loops:
        raise n.unsupported(
            call, f"this appends a function to `{name}` inside a loop that runs in the "
            "emitted code or an `if` on a value: which functions the list holds would "
            "be known only when the function runs", "append in a loop over constants "
            "(`for k in range(3):`, which s2s unrolls) or choose with an `if` on "
            "constants")


def unroll_appending(n: Any, node: cst.For) -> bool:
    """``for k in <constants>:`` whose body appends a function to a list: unrolled,
    each copy starting with ``k = <item>``.  False (nothing done) for other loops."""
    if not _appends_functions(n, node.body):
        return False
    items = n.comps.static.static_items(node.iter)
    if items is None or node.orelse is not None or node.asynchronous is not None:
        raise n.unsupported(
            node.iter, "this loop appends functions to a list, and s2s unrolls such a "
            "loop when it transforms the function: what it walks must be known then "
            "(a range of constants, a tuple, a dict's keys), without an `else`",
            "loop over `range(<a constant>)` or a tuple, or build the list of "
            "functions by a comprehension over one")
    if _jumps(node.body):
        raise n.unsupported(node, "a loop that appends functions is unrolled, and a "
                            "`break`, `continue` or `return` of it is not supported yet",
                            "use an `if` on constants in the body")
    alias = n.desugar.alias
    outer, lowered = n.out, []
    reassigned = assigned_names(node.body)
    for spelling, value in items:
        table: dict[str, Any] = {}
        n.comps.bind(node.target, spelling, value, table)
        head = []
        for name, spelled in table.items():
            if value is not NOVALUE and isinstance(value, (int, float, str)) and isinstance(
                    node.target, cst.Name):
                spelled = cst.parse_expression(repr(value))
                table[name] = spelled
            line = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                                       spelled)])
            for new in (line, line.body[0], line.body[0].targets[0],
                        line.body[0].targets[0].target, spelled):
                alias(new, node.target)
            head.append(line)
        # (a default that reads the loop variable, `lambda t, k=k:`, reads this
        # iteration's item, written in: a literal default, as `k=0` would be)
        literal = {k: v for k, v in table.items() if k not in reassigned and isinstance(
            v, (cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation))}
        body = [s.visit(_Defaults(literal, alias)) if literal else s for s in node.body.body]
        lowered += n.stmts.block(head + body)
    n.out = outer
    outer += lowered
    return True


class _Defaults(cst.CSTTransformer):
    """The defaults of the lambdas and ``def``s in a statement with names replaced."""

    def __init__(self, table: dict[str, Any], alias: Any) -> None:
        self.table, self.alias = table, alias

    def leave_Param(self, original: cst.Param, updated: cst.Param) -> Any:
        if updated.default is None:
            return updated
        new = updated.with_changes(default=substitute(updated.default, self.table,
                                                      self.alias))
        self.alias(new, original)
        return new


def _root(node: Any) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return getattr(node, "value", "")


def _appends_functions(n: Any, body: Any) -> bool:
    """Does ``body`` (a nested loop's too, not a nested function's) append a lambda, a
    ``functools.partial(...)``, a nested ``def`` it defines or a function name to a
    local list?"""
    defined: set[str] = set()
    found: list[Any] = []

    class Finder(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            defined.add(node.name.value)
            return False

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Attribute) and func.attr.value == "append" and (
                    isinstance(func.value, cst.Name)) and func.value.value in (
                    n.local_names) and len(node.args) == 1:
                found.append(node.args[0].value)

    body.visit(Finder())
    for arg in found:
        if isinstance(arg, cst.Lambda):
            return True
        if isinstance(arg, cst.Name) and (arg.value in defined or arg.value in n.funcs.values):
            return True
        if isinstance(arg, (cst.Name, cst.Attribute)) and _root(arg) not in n.local_names \
                and n.funcs.value_of(arg) is not None:  # (`fs.append(np.sin)`, `relu`)
            return True
        if isinstance(arg, cst.Call) and isinstance(arg.func, (cst.Name, cst.Attribute)) \
                and cst.Module([]).code_for_node(arg.func).split(".")[-1] == "partial":
            return True
    return False

