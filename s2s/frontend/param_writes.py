"""A callee's ``y += v`` into its parameter's array: NumPy changes the caller's array.

In IR ``y += v`` is ``y_2 = y + v`` (a new value), which is NumPy's meaning only
where nothing reads the array ``y`` was given afterwards.  The callee notes each
parameter it may write so (``note``): its ``+=`` while the name may still hold the
parameter's array.  A call (``check``) passing an array there is refused at the
callee's line, unless the argument is a Python number (``+=`` rebinds it, as in IR):
NumPy would change what the caller reads (a silently wrong value and derivative
before), and the emitted gradient on NumPy, which calls the callee as written, would
change the arrays its backward reads, the caller's own too.  (Accepting a fresh array
nothing reads after the call, ``h(x * 1.0)``, is not sound for that reason.)  The
function given to a transform keeps its ``x += 1`` (rebinds ``x``: s2s never changes
its caller's arrays); ``api/jit.py`` refuses this on JAX too, where the function runs
as written on ``jax.numpy``.
"""

from __future__ import annotations

import types
from typing import Any

import libcst as cst

from ..errors import UnsupportedSyntaxError, mark_shared_write
from ..ir.nodes import Let, Var, walk
from .buffers import VIEWS


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
    written(n).setdefault(name, UnsupportedSyntaxError(
        f"`{name} {op} ...` writes into the array the caller passes as `{name}` "
        "in place (NumPy's meaning), which s2s does not do for a caller's array",
        n.loc(node),
        f"write `{name} = {name} {op[:-1]} {value}` (a new array)", n.display))


def check(n: Any, stmts: list[Any]) -> None:
    """The calls among ``stmts`` (one statement's output) of callees that write into
    a parameter: refused unless the argument there is a Python number."""
    for let in walk(stmts):
        if not isinstance(let, Let) or let.prim != "call":
            continue
        callee = let.params.get("callee")
        writes = getattr(callee, "param_writes", None) or {}
        for pname, atom in zip(getattr(callee, "params", ()), let.args):
            if pname in writes and isinstance(atom, Var) and not n.buffer.immutable(atom.name):
                err = writes[pname]
                line = let.loc.line if let.loc is not None else "?"
                raise mark_shared_write(UnsupportedSyntaxError(
                    f"{err.what}; `{n.display}` passes it an array (or list) on line "
                    f"{line}", err.loc, err.hint, err.func))


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
