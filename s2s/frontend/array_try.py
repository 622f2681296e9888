"""A ``try`` around array code whose ``except`` clauses can never run::

    try:
        y = np.log1p(x ** 2)
    except (ValueError, ZeroDivisionError):
        y = x
    else:
        y = y + 0.5 * x
    finally:
        z = np.cos(x)

is the path on which the body raises nothing: ``y = np.log1p(x ** 2)``, then the
``else``, then the ``finally``, the statements Python runs in that order, lowered as
code of their own (their derivative flows).  JAX's trace takes this path too (a
traced value raises nothing).

Sound only where no ``except`` can run, for any input: the body is assignments to
names of arithmetic, comparisons, subscripts and NumPy ufunc calls (``np.log1p``,
``np.sin``, ...), whose exceptions are known, and no class an ``except`` names is one
of those (or a base of one):

- any NumPy operation: ``FloatingPointError`` (under ``np.errstate``/``np.seterr``
  "raise"), ``RuntimeWarning`` and ``DeprecationWarning`` (under a warnings filter
  "error"), ``TypeError``, ``AttributeError`` (dtypes), ``OverflowError`` (a Python
  int too large, a Python float's ``**``), ``NameError``, ``MemoryError``;
- two operands neither a literal (``x + y``, ``np.arctan2(y, x)``): ``ValueError``
  (shapes that do not broadcast);
- ``/``, ``//``, ``%`` (of Python numbers): ``ZeroDivisionError``;
- ``**`` or ``np.power`` with an exponent that is not a non-negative int literal:
  ``ZeroDivisionError`` (``0.0 ** -1``) and ``ValueError`` (integers to a negative
  power);
- a subscript: ``IndexError``, ``KeyError``, ``ValueError``.

So ``except (ValueError, ZeroDivisionError)`` around ``np.log1p(x ** 2)`` is dead
code, and dropping it changes nothing Python would compute; ``except
FloatingPointError``, ``except ArithmeticError``, ``except Exception`` or a bare
``except:`` may run (an ``np.errstate(divide="raise")`` of the caller) and are refused,
located at the ``except``, as is a body doing anything else (a call of another
function can raise anything), a body or ``else`` that leaves early (``return``:
Python runs ``finally`` first).  A ``try`` whose body reads no value of the function
is kept as Python instead (kept_try.py).
"""

from __future__ import annotations

import builtins
from typing import Any

import libcst as cst
import numpy as np

from .kept_try import _reads_local  # (the test kept_try.py keeps Python by)

_ALWAYS = ((FloatingPointError, "under `np.errstate(...=\"raise\")`"),
           (RuntimeWarning, "under a warnings filter \"error\""),
           (DeprecationWarning, "under a warnings filter \"error\""),
           (TypeError, "of a dtype it does not take"), (AttributeError, "of an object array"),
           (OverflowError, "of a Python number out of range"),
           (NameError, "of a name not bound"), (MemoryError, "out of memory"))
_DIVIDING = (cst.Divide, cst.FloorDivide, cst.Modulo)
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary)


def array_try(n: Any, node: cst.Try) -> list[Any] | None:
    """The statements a ``try`` around array code runs (module docstring), None where
    the ``try`` is no such (no ``except``; a body reading no value of the function:
    kept_try.py); a located refusal where an ``except`` could run."""
    lines = _lines(node.body)
    one = lines[0].body if len(lines) == 1 and isinstance(lines[0], cst.SimpleStatementLine) \
        else []
    if not node.handlers or len(one) == 1 and isinstance(one[0], cst.Assign) and _reads_local(
            n, one[0].value) is None:
        return None  # (kept as Python by kept_try.py, or refused there)
    _no_early_exit(n, node.body, "body", "the `except` and `else` would be skipped")
    if node.orelse is not None and node.finalbody is not None:
        _no_early_exit(n, node.orelse.body, "`else`", "Python runs the `finally` first")
    raisable = _Raisable(n)
    for line in lines:
        raisable.statement(line)
    for handler in node.handlers:
        for caught in _caught(n, handler):
            for cls, where, why in raisable.found:
                if issubclass(cls, caught):
                    code = cst.Module([]).code_for_node(where).strip()
                    named = "everything (a bare `except:`)" if handler.type is None else \
                        f"`{caught.__name__}`"
                    raise n.unsupported(
                        handler, f"this `except` catches {named}, and the "
                        f"`try`'s `{code}` can raise `{cls.__name__}` ({why}): s2s "
                        "differentiates a `try` around array code only where its `except` "
                        "can never run",
                        "check the condition with `if` or `np.where`, or catch the error "
                        "outside the function")
    return [*lines, *(_lines(node.orelse.body) if node.orelse else ()),
            *(_lines(node.finalbody.body) if node.finalbody else ())]


def _lines(block: Any) -> list[Any]:
    """A block's statements (``try: y = f(x)`` on one line: that line)."""
    if isinstance(block, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(block.body)]
    return list(block.body)


def _no_early_exit(n: Any, block: Any, part: str, why: str) -> None:
    found: list[Any] = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: Any) -> bool:
            if isinstance(node, (cst.Return, cst.Break, cst.Continue, cst.Raise)):
                found.append(node)
            return not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda))

    block.visit(Finder())
    if found:
        raise n.unsupported(found[0], f"this leaves the `try`'s {part} early ({why}): s2s "
                            "differentiates a `try` around array code as the statements "
                            "Python runs when nothing raises, in order",
                            "assign the result and return after the `try`")


def _caught(n: Any, handler: cst.ExceptHandler) -> list[type]:
    """The classes an ``except`` names (a bare ``except:``: BaseException), looked up
    as the function reads them (builtins, module or closure names, ``np.x.Y``)."""
    if handler.type is None:
        return [BaseException]
    parts = handler.type.elements if isinstance(handler.type, cst.Tuple) else [
        cst.Element(handler.type)]
    classes: list[type] = []
    for part in parts:
        obj = _dotted(n, part.value)
        objs = obj if isinstance(obj, tuple) else (obj,)
        if not all(isinstance(c, type) and issubclass(c, BaseException) for c in objs):
            raise n.unsupported(part.value, "s2s differentiates a `try` around array code "
                                "only where its `except` names exception classes",
                                "name the classes (`except (ValueError, KeyError):`)")
        classes += objs
    return classes


def _dotted(n: Any, node: Any) -> Any:
    """The object a name or ``a.b.c`` of the function's globals names, else None."""
    if isinstance(node, cst.Attribute):
        root = _dotted(n, node.value)
        return getattr(root, node.attr.value, None) if root is not None else None
    if not isinstance(node, cst.Name) or node.value in n.local_names:
        return None
    if node.value in n.resolver.closure or node.value in n.fn.__globals__:
        return n.resolver.lookup_global(node)  # (recorded: a rebinding makes it anew)
    return getattr(builtins, node.value, None)


class _Raisable:
    """What a ``try`` body can raise: ``found`` is ``(class, node, why)``; a construct
    whose exceptions s2s does not know is refused at it."""

    def __init__(self, n: Any) -> None:
        self.n = n
        self.found: list[tuple[type, Any, str]] = []

    def add(self, node: Any, why: str, *classes: type) -> None:
        self.found += [(c, node, why) for c in classes]

    def refuse(self, node: Any) -> Any:
        return self.n.unsupported(
            node, "s2s differentiates a `try` around array code only where its body "
            "assigns names from arithmetic, subscripts and NumPy ufuncs (their exceptions "
            "are known, so s2s can tell its `except` never runs); it cannot tell what this "
            "raises", "compute it before the `try`, or check the condition with `if` or "
            "`np.where` in place of the `try`")

    def statement(self, line: Any) -> None:
        if not isinstance(line, cst.SimpleStatementLine):
            raise self.refuse(line)
        for small in line.body:
            if isinstance(small, cst.Assign) and all(
                    isinstance(t.target, cst.Name) for t in small.targets):
                self.expression(small.value)
            elif isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(
                    small.target, cst.Name):
                self.expression(small.value)
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                op = type(small.operator).__name__.replace("Assign", "")
                self.binary(small, getattr(cst, op)(), small.target, small.value)
            elif not isinstance(small, cst.Pass):
                raise self.refuse(small)

    def expression(self, node: Any) -> None:
        for cls, why in _ALWAYS:
            self.add(node, why, cls)
        if isinstance(node, (cst.Name, *_LITERALS)):
            return
        if isinstance(node, cst.UnaryOperation):
            return self.expression(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return self.binary(node, node.operator, node.left, node.right)
        if isinstance(node, cst.Comparison):
            operands = [node.left, *(c.comparator for c in node.comparisons)]
            if any(not isinstance(c.operator, (cst.LessThan, cst.LessThanEqual,
                                               cst.GreaterThan, cst.GreaterThanEqual,
                                               cst.Equal, cst.NotEqual))
                   for c in node.comparisons):
                raise self.refuse(node)
            return self.operands(node, operands)
        if isinstance(node, cst.Subscript):
            self.add(node, "an index out of range, a key missing", IndexError, KeyError,
                     ValueError)
            self.expression(node.value)
            for element in node.slice:
                part = element.slice
                values = [part.value] if isinstance(part, cst.Index) else [
                    v for v in (part.lower, part.upper, part.step) if v is not None]
                for value in values:
                    self.expression(value)
            return None
        if isinstance(node, cst.Call) and isinstance(_dotted(self.n, node.func), np.ufunc) \
                and all(a.keyword is None and not a.star for a in node.args):
            if _dotted(self.n, node.func) in (np.power, np.float_power) and len(node.args) == 2:
                return self.binary(node, cst.Power(), node.args[0].value, node.args[1].value)
            return self.operands(node, [a.value for a in node.args])
        raise self.refuse(node)

    def operands(self, node: Any, values: list[Any]) -> None:
        for value in values:
            self.expression(value)
        if sum(not isinstance(v, _LITERALS) for v in values) > 1:
            self.add(node, "of shapes that do not broadcast", ValueError)

    def binary(self, node: Any, op: Any, left: Any, right: Any) -> None:
        self.operands(node, [left, right])
        if isinstance(op, _DIVIDING):
            self.add(node, "a Python number divided by zero", ZeroDivisionError)
        if isinstance(op, cst.Power) and not (isinstance(right, cst.Integer)):
            self.add(node, "zero or an integer to a negative power", ZeroDivisionError,
                     ValueError)
