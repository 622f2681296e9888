"""A callee's ``y += v`` into its parameter's array: NumPy changes the caller's array.

In IR ``y += v`` is ``y_2 = y + v`` (a new value), which is NumPy's meaning only
where nothing reads the array ``y`` was given afterwards.  The callee notes each
parameter it may write so (``note``): its ``+=`` while the name may still hold the
parameter's array.  A call (``check``) passing such a parameter a Python number or a
NumPy scalar runs (``+=`` rebinds it, as in IR).  An array runs only where no other
name can see it (``settle``, once the caller's body is lowered): it is made by the
caller's own statement (``x * 1.0``, ``np.zeros(3) + x``, ``np.copy(x)``), in the
same loop iteration as the call, and that call is its only read (``a = h(a)``
rebinds ``a``).  Emitted code that calls the callee as written (reverse mode's
forward, which its backward reads after) passes ``own_copy(a)`` there (the call's
``copies``), so the callee's write never reaches a value emitted code reads again.
A callee passing its own parameter on (``def g(k): return h(k)``) notes that
parameter in turn, for its callers to check; the function given to a transform
never passes its argument so (``refuse_passed``: s2s never writes into its caller's
arrays).  A parameter the callee reads again after such a call, passes in a loop, or
gave another call before its ``+=`` (``z = g(y)``: ``z`` may be ``y``'s array) is
noted ``numbers_only``: a number runs, any array is refused.  Anything else is
refused at the callee's line: a name read after the call, a view (``x[1:]``), a
module's array, a container's item, a value an ``if`` or a loop joins.  The
function given to a transform keeps its own ``x += 1`` (rebinds ``x``).
"""

from __future__ import annotations

import types
from typing import Any

import libcst as cst
import numpy as np

from ..errors import UnsupportedSyntaxError, mark_shared_write
from ..ir.nodes import Const, For, Let, Return, Var, uses, walk
from ..primitives import PRIMITIVES
from .buffers import VIEWS, allocates

# primitives whose result is a new array no other name holds (not one that may return
# its operand, a view of it or a tuple: np.real of a real array is the array itself)
_MADE = {"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "copy",
         "arange", "linspace", "eye", "own_copy", "matmul", "dot", "outer", "stack",
         "concatenate", "hstack", "vstack", "tile", "repeat"}
_NOT_MADE = {"real", "imag", "real_if_close", "astype", "nan_to_num", "modf", "frexp",
             "divmod", "where", "unwrap", "interp"}
_NUMBERS = (bool, int, float, complex, np.generic)


def _made(prim: str) -> bool:
    return prim in _MADE or prim not in _NOT_MADE and allocates(prim) and PRIMITIVES[
        prim].family in ("elementwise", "binary")


def written(n: Any) -> dict[str, Any]:
    """The parameters this function may write into: name -> the error to raise."""
    return vars(n).setdefault("param_writes", {})


def note(n: Any, node: cst.AugAssign) -> None:
    """``y += v`` on a parameter whose array ``y`` may still hold (it is the parameter,
    or a value s2s cannot follow: one an ``if`` joins, ``y = y * 2.0`` on one path)."""
    if not isinstance(node.target, cst.Name) or node.target.value not in n.arguments:
        return
    name = node.target.value
    if name in getattr(n.fn, "__s2s_number_cells__", ()):
        return  # (a closure's counter cell, closure_cells.py: only ever a number)
    current = n.env.get(name, name)
    let = n.lets.get(current)
    if current != name and let is not None and let.prim not in VIEWS and any(
            s is let for block in n._open for s in block):
        return  # (`y = y * 2.0` before, on every path to here: a new array)
    op = node.operator._get_token()
    value = cst.Module([]).code_for_node(node.value)
    err = UnsupportedSyntaxError(
        f"`{name} {op} ...` writes into the array the caller passes as `{name}` "
        "in place (NumPy's meaning), which s2s does not do for a caller's array",
        n.loc(node),
        f"write `{name} = {name} {op[:-1]} {value}` (a new array)", n.display)
    if name in n.dicts.shared or current in n.dicts.shared:  # (`z = g(y)` before:
        err.numbers_only = True  # type: ignore[attr-defined]  # z may be y's array)
    written(n).setdefault(name, err)


def _number(n: Any, atom: Any) -> bool:
    """A Python number or a NumPy scalar (``np.float64(2.0)``): ``+=`` rebinds it."""
    if isinstance(atom, Const):
        return atom.value is None or isinstance(atom.value, (_NUMBERS, str, tuple))
    if n.buffer.immutable(atom.name):
        return True
    let = n.lets.get(atom.name)
    impl = PRIMITIVES[let.prim].impl if let is not None and let.prim in PRIMITIVES else None
    return isinstance(impl, type) and issubclass(impl, np.generic) and all(
        _number(n, a) for a in let.args)  # (np.float64 of an array is an array)


def check(n: Any, stmts: list[Any], node: Any = None) -> None:
    """The calls among ``stmts`` (one statement's output, ``node``) of callees that
    write into a parameter: a number runs; an array the caller made, or its own
    parameter, waits for ``settle``; anything else is refused.  A callee that may
    return its argument's array (``return y``, ``y[0]``) leaves that argument held by
    another name: a later ``a += v`` on it is refused (statements.py)."""
    for let in walk(stmts):
        if not isinstance(let, Let) or let.prim != "call":
            continue
        callee = let.params.get("callee")
        if node is not None and _may_return_a_parameter(callee):
            for a in let.args:
                if isinstance(a, Var):
                    n.aliased.setdefault(a.name, node)
        writes = getattr(callee, "param_writes", None) or {}
        for i, (pname, atom) in enumerate(zip(getattr(callee, "params", ()), let.args)):
            if pname not in writes or _number(n, atom):
                continue
            made = isinstance(atom, Var) and n.lets.get(atom.name)
            if getattr(writes[pname], "numbers_only", False):
                raise _refusal(n, let, writes[pname], atom, ", which the callee also "
                               "holds in another name or reads after the write")
            if made and _made(made.prim) or isinstance(atom, Var) and atom.name in (
                    n.arguments) and not made:
                vars(n).setdefault("param_calls", []).append((let, i, writes[pname]))
            else:
                raise _refusal(n, let, writes[pname], atom)


def _may_return_a_parameter(fn: Any) -> bool:
    """May ``fn``'s result be (or hold, or view) an array one of its parameters holds?"""
    body = getattr(fn, "body", None)
    if body is None:
        return False  # (a recursive call's marker: its function is being lowered)
    held = set(getattr(fn, "params", ()))
    for _ in range(2):  # (a loop's carried names: once more)
        for s in walk(body):
            if isinstance(s, Let) and s.prim in VIEWS and any(
                    isinstance(a, Var) and a.name in held for a in s.args):
                held.add(s.target)
            elif isinstance(s, For):
                held |= {entry for entry, exit_ in s.carried if exit_ in held}
    return any(isinstance(s, Return) and isinstance(s.value, Var) and s.value.name in held
               for s in walk(body))


def _refusal(n: Any, let: Let, err: Any, atom: Any, why: str = "") -> Exception:
    """``err`` (the callee's), raised for the call ``let`` passing ``atom``."""
    line = let.loc.line if let.loc is not None else "?"
    made = isinstance(atom, Var) and n.lets.get(atom.name)
    what, hint = err.what, err.hint
    if made and made.prim == "make_list":  # (`ys += [v]` extends the caller's list)
        what = what.replace("the array", "the list").replace(
            "NumPy's meaning", "Python's meaning: the list grows").replace(
            "a caller's array", "a caller's list")
        hint = (hint or "").replace("(a new array)", "(a new list)")
        kind = "a list"
    else:
        kind = "an array (or list)"
    return mark_shared_write(UnsupportedSyntaxError(
        f"{what}; `{n.display}` passes it {kind} on line {line}{why}", err.loc, hint,
        err.func))


def settle(n: Any, body: list[Any]) -> None:
    """The calls ``check`` let wait, with the caller's whole body lowered: each runs
    where its argument is read by that call only, made (or, for a parameter, the
    call made) outside any loop the other is not in; emitted code calls it on a copy
    there.  A parameter passed on so is noted as written (``written``)."""
    calls = vars(n).pop("param_calls", [])
    if not calls:
        return
    reads: dict[str, int] = {}
    loops: dict[int, tuple] = {}
    _index(body, (), reads, loops)
    for let, i, err in calls:
        atom = let.args[i]
        made = n.lets.get(atom.name)
        seen = id(let) not in loops or reads.get(atom.name) != 1 or (
            loops[id(let)] != (loops.get(id(made)) if made is not None else ()))
        if seen and made is not None:
            raise _refusal(n, let, err, atom, ", which other code can still see (read "
                           "after the call, or passed again in a loop)")
        if not seen:
            let.params["copies"] = tuple(sorted(set(let.params.get("copies", ())) | {i}))
        if made is None:  # (its own parameter, passed on: its callers decide; where
            passed = UnsupportedSyntaxError(err.what, err.loc, err.hint, err.func)
            passed.passed_on = (n.display, atom.name, let.loc)  # type: ignore[attr-defined]
            passed.numbers_only = seen  # type: ignore[attr-defined]  # it reads it
            written(n)[atom.name] = passed  # again, a number only: `+=` rebinds)


def _index(stmts: list[Any], around: tuple, reads: dict, loops: dict) -> None:
    """How many times each name is read in ``stmts`` (``reads``), and the loops around
    each statement (``loops``: id -> the ids of its ``For``s, outermost first)."""
    for s in stmts:
        loops[id(s)] = around
        for name in uses(s):
            reads[name] = reads.get(name, 0) + 1
        if isinstance(s, For):
            _index(s.body, around + (id(s),), reads, loops)
        elif hasattr(s, "orelse"):
            _index(s.body, around, reads, loops)
            _index(s.orelse, around, reads, loops)


def refuse_passed(fn: Any) -> Any:
    """The IR of a function given to a transform (``normalize``): refused where it
    passes its own argument to a callee that writes into it (s2s never changes the
    arrays its caller passes)."""
    for err in (getattr(fn, "param_writes", None) or {}).values():
        passed = getattr(err, "passed_on", None)
        if passed is not None:
            display, name, loc = passed
            raise mark_shared_write(UnsupportedSyntaxError(
                f"{err.what}; `{display}` passes it its own argument `{name}` on line "
                f"{loc.line if loc is not None else '?'} (s2s never writes into the "
                "arrays its caller passes)", err.loc, err.hint, err.func))
    return fn


def checked(n: Any, stmts: list[Any]) -> list[Any]:
    """A lambda's body (lowered as one expression, no statement): ``stmts``, checked."""
    check(n, stmts)
    return stmts


def check_kept(n: Any, parts: list[Any]) -> None:
    """A kept statement (``print(h(a))``, ``assert``) runs as written on the forward
    values, so a callee there that writes into a parameter would change them (NumPy's
    meaning) where the IR does not: refused at the callee's line."""
    from .normalize import _normalize_callee  # (normalize imports this module's users)
    from .resolve import is_library, unwrap_forwarding

    class Calls(cst.CSTVisitor):
        def visit_Call(self, call: cst.Call) -> None:
            root = call.func
            while isinstance(root, cst.Attribute):
                root = root.value
            if not isinstance(root, cst.Name) or root.value in n.local_names:
                return
            try:
                obj, _ = n.resolver.resolve_dotted(call.func)
                fn = unwrap_forwarding(obj)
                if not isinstance(fn, types.FunctionType) or is_library(fn) or (
                        fn in n.stack):
                    return
                writes = _normalize_callee(fn, n.stack).param_writes
            except Exception:  # noqa: BLE001 - not a function s2s reads: kept as before
                return
            for err in writes.values():
                raise mark_shared_write(UnsupportedSyntaxError(
                    f"{err.what}; `{n.display}` calls it in a statement kept as written "
                    f"(line {n.loc(call).line})", err.loc, err.hint, err.func))

    for part in parts:
        part.visit(Calls())
