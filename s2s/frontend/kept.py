"""Statements with no derivative, kept as written: ``assert test, msg``, ``if test:
raise Error(...)`` (an ``if`` whose body only raises) and calls made for their effect
(``print(...)``, ``logging.info(...)``, ``warnings.warn(...)``, a module function).

Each becomes one ``kept`` statement: its text with the function's names replaced by
the values they hold there (``print("y", y)`` reads ``y_2`` after ``y = y * x``), the
names it reads as operands, so the transforms keep those values and place the
statement in the forward computation, run once with real values.
"""

from __future__ import annotations

import logging
import types
from typing import Any

import libcst as cst
import numpy as np

from ..errors import NotIterableError, TransformError, UnboundFunctionError, UnpackError
from ..ir.nodes import Atom, Const
from . import param_writes
from .calls import _comprehension_names
from .resolve import expression_advice

# expressions a kept statement may not hold: they bind, yield or defer
_REFUSED = (cst.Lambda, cst.NamedExpr, cst.Yield, cst.Await)


def raise_only(node: Any) -> cst.Raise | None:
    """The ``raise`` of ``if test: raise ...`` (no ``else``, nothing else in the body)."""
    if not isinstance(node, cst.If) or node.orelse is not None:
        return None
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine):
        return None
    (small,) = body[0].body if len(body[0].body) == 1 else (None,)
    return small if isinstance(small, cst.Raise) and small.exc is not None else None


class KeptLowerer:
    """Lowers the kept statements of one function into its Normalizer's output."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, scope, resolver

    def assert_(self, node: cst.Assert) -> None:
        """``assert test, msg``: checked where it stands."""
        self.keep(node, [node], "check")

    def raise_if(self, node: cst.If, exc: cst.Raise) -> None:
        """``if test: raise Error(...)``: one statement, ``if test: raise ...``."""
        self.keep(node, [node.test], "check", "if {0}:", body=exc)
        guard = _guards_a_read(self.n, exc)
        if guard:  # (emitted code s2s reads again: hessian)
            self.n.out[-1].params["always"] = True
        if guard == "items":  # (frontend/unpacking.py: not checked on a container)
            self.n.out[-1].params["items"] = True

    def call(self, node: cst.Expr) -> bool:
        """A bare call made for its effect: kept when it calls a function (of a module,
        a builtin, the user's) or a logger's method; not a method of another object,
        which changes that object (``LOG.append(x)``, ``x.sort()``), nor a NumPy
        function, which returns a value to use."""
        call = node.value
        if not isinstance(call, cst.Call):
            return False
        root = call.func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name) or root.value in self.n.local_names:
            return False
        try:
            obj, _ = self.n.resolver.resolve_dotted(call.func)
        except TransformError:
            return False
        module = getattr(obj, "__module__", "") or ""
        if module.startswith("numpy") or isinstance(obj, (np.ufunc, type)) or not callable(
                obj):
            return False
        owner = getattr(obj, "__self__", None)
        if owner is not None and not isinstance(owner, (types.ModuleType, logging.Logger)):
            return False  # a method (`LOG.append(x)`): it changes its object
        self.keep(node, [call], "call")
        return True

    def keep(self, node: Any, parts: list[Any], kind: str, form: str = "{0}",
             body: Any = None) -> None:
        """Emit ``node`` as one ``kept`` statement: ``form`` over the texts of
        ``parts``, each with the function's names substituted (and the statement
        ``body`` under it: the ``raise`` of ``if test: raise ...``)."""
        n = self.n
        operands: list[Atom] = []
        keys: list[str] = []

        def operand(atom: Atom) -> str:
            if isinstance(atom, Const):
                return atom.text
            for key, known in zip(keys, operands):
                if known == atom:
                    return key
            keys.append(f"__s2s_operand_{len(operands)}__")
            operands.append(atom)
            return keys[-1]

        param_writes.check_kept(n, parts)  # (`print(h(a))`, `h` writing into `a`)
        texts = [self._substituted(part, operand) for part in parts]
        params = {"template": (form.format(*texts), keys), "kind": kind}
        if body is not None:
            params["body"] = (self._substituted(body, operand), keys)
        for key in ("template", "body"):  # (every key, as the last part left them)
            if key in params:
                params[key] = (params[key][0], tuple(keys))
        n.emit(n.names.fresh("kept"), "kept", tuple(operands), params, node)

    def _substituted(self, node: Any, operand: Any) -> str:
        n = self.n
        bound = _comprehension_names(node)
        skip: set[int] = set()  # names that are not reads: attributes, keywords

        class Find(cst.CSTVisitor):
            def visit_Attribute(self, a: cst.Attribute) -> None:
                skip.add(id(a.attr))

            def visit_Arg(self, a: cst.Arg) -> None:
                if a.keyword is not None:
                    skip.add(id(a.keyword))

            def on_visit(self, m: cst.CSTNode) -> bool:
                if isinstance(m, _REFUSED):
                    raise n.unsupported(m, *expression_advice(m))
                return super().on_visit(m)

        node.visit(Find())

        class Substitute(cst.CSTTransformer):
            def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
                name = original.value
                if id(original) in skip or name in bound or name in (
                        "True", "False", "None"):
                    return updated
                if name not in n.local_names:
                    n.resolver.bind_namespace(name, original)
                    return updated  # a module name (np, logging, a builtin)
                return cst.Name(operand(n.exprs.expr(original)))

        return cst.Module([]).code_for_node(node.visit(Substitute()))


def _guards_a_read(n: Any, exc: cst.Raise) -> bool | str:
    """Does ``exc`` raise s2s's UnboundFunctionError (the check before a read of a
    function a loop that ran no iteration did not bind: frontend/loop_functions.py),
    UnpackError (the check of an unpacked value's length: frontend/unpacking.py) or
    NotIterableError (the check that it has items: ``"items"``)?  Every run runs it,
    probes too (they would call the function on None, or read an item past the end)."""
    call = exc.exc
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or (
            call.func.value in n.local_names):
        return False
    made = n.resolver.namespace.get(call.func.value, n.fn.__globals__.get(call.func.value))
    func = getattr(made, "func", None)
    if func == NotIterableError.of:
        return "items"
    return func is UnboundFunctionError or func == UnpackError.of
