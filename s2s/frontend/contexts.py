"""``with np.errstate(...):`` and ``with warnings.catch_warnings():``: contexts whose
effect is on how NumPy and Python report floating-point trouble, not on any value.

The body is lowered as usual, as both branches of an ``If`` whose test is the context
(a constant, spelled ``with_context(np.errstate(divide="ignore"))``, always true; the
other branch is never taken): every transform already
carries an ``if`` on a constant through its forward code and replays it around the
body's backward code, and the emitted code spells that ``if`` as the ``with`` it is
(emit/code.py).  So the forward body runs in the context, and so does its derivative
code (the backward sweep's, the tangents'), where the same divisions happen.  A
``with`` over anything else (a file, a lock, a user's context manager, ``as name``)
is refused, located: its effect is on something s2s does not follow.
"""

from __future__ import annotations

import warnings
from typing import Any

import libcst as cst
import numpy as np

from ..errors import TransformError
from ..ir.nodes import Const

# the context managers kept, by identity (their arguments must be constants)
CONTEXTS = (np.errstate, warnings.catch_warnings)
_ADVICE = ("enter the context outside the transformed function, or use "
           "`with np.errstate(...)` / `with warnings.catch_warnings():`")


class ContextValue:
    """The test of the ``if`` a ``with`` becomes: always true."""

    def __bool__(self) -> bool:
        return True


def with_statement(n: Any, node: cst.With) -> None:
    if len(node.items) != 1:
        raise n.unsupported(node.items[1].item, "a `with` of several contexts",
                            "nest one `with` per context")
    item = node.items[0]
    call = item.item
    obj = spelled = None
    if isinstance(call, cst.Call) and isinstance(call.func, (cst.Name, cst.Attribute)):
        try:
            obj, spelled = n.resolver.resolve_dotted(call.func)
        except TransformError:
            obj = None
    if obj not in CONTEXTS:
        raise n.unsupported(
            call, "a `with` over this context: its effect is on something s2s does not "
            "follow (only `np.errstate(...)` and `warnings.catch_warnings()` are kept, "
            "which change how floating-point trouble is reported, not any value)",
            _ADVICE,
        )
    if item.asname is not None:
        raise n.unsupported(item.asname, "`with ... as name`: the context's value is not "
                            "an array", "drop `as ...`; call `warnings.simplefilter` in "
                            "the body")
    texts = []
    for arg in call.args:
        text = _constant(n, arg.value) if not arg.star else None
        if text is None:
            raise n.unsupported(arg.value, "a context's arguments must be constants "
                                "(strings, numbers, warning classes)",
                                "write them as literals")
        texts.append(f"{arg.keyword.value}={text}" if arg.keyword else text)
    body = list(node.body.body)
    if obj is warnings.catch_warnings and not call.args and body:
        folded = _simplefilter(n, body[0])  # (so that the derivative code has it too)
        if folded is not None:
            texts, body = folded, body[1:]
    n.resolver.bind_namespace(spelled.split(".")[0], call.func)
    text = f"with_context({spelled}({', '.join(texts)}))"
    test = Const(ContextValue(), text)
    block = node.body.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])
    # the other branch, never taken, is the body again: the `if`'s joins are then the
    # names the body binds, as every transform carries them (emit/code.py drops it)
    new = cst.If(test=call, body=block, orelse=cst.Else(body=block))
    n.desugar.alias(new, node)
    n.stmts.if_statement(new, test=test)


def _simplefilter(n: Any, stmt: Any) -> list[str] | None:
    """``warnings.simplefilter("ignore", RuntimeWarning)`` first in a
    ``catch_warnings()`` body: the context's own ``action=``/``category=`` (Python
    3.11), which it applies on entering."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and
            isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.Call)):
        return None
    call = stmt.body[0].value
    try:
        obj, _ = n.resolver.resolve_dotted(call.func)
    except TransformError:
        return None
    if obj is not warnings.simplefilter or len(call.args) > 2 or any(
            a.star or (a.keyword is not None and a.keyword.value not in (
                "action", "category")) for a in call.args):
        return None
    texts = []
    for arg, word in zip(call.args, ("action", "category")):
        text = _constant(n, arg.value)
        if text is None:
            return None
        texts.append(f"{arg.keyword.value if arg.keyword else word}={text}")
    return texts


def _constant(n: Any, node: Any) -> str | None:
    """The text of a context's argument: a constant, or a warning class."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        try:
            obj, text = n.resolver.resolve_dotted(node)
        except TransformError:
            return None
        if isinstance(obj, type) and issubclass(obj, Warning):
            n.resolver.bind_namespace(text.split(".")[0], node)
            return text
    atom = n.exprs.expr(node)
    return atom.text if isinstance(atom, Const) else None
