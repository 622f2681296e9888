"""Python syntax that calls a method of an object's class (issue 23): ``obj[k]``
(``__getitem__``), ``len(obj)`` (``__len__``), ``a - b``, ``2.0 * a``, ``a @ b``,
``-a`` (``__sub__``, ``__rmul__``, ``__matmul__``, ``__neg__``...) of an object of
your class that the function built or was passed, or reads from its module
(``TABLE[x]``: ``TABLE.__getitem__(x)`` bound to it, its fields read at each call;
``TABLE[0.5]`` and ``len(TABLE)`` stay Python's values, made again when it changes).

s2s holds such an object as the dict of its fields; each spelling is the call of the
class's method that Python makes, inlined as a call of your method (as ``obj.m(k)``
is): ``obj[k]`` is ``type(obj).__getitem__(obj, k)``, ``2.0 * a`` is
``type(a).__rmul__(a, 2.0)`` (a Python number's ``__mul__`` does not know your
class), ``a - b`` is ``type(a).__sub__(a, b)``, or ``type(b).__rsub__(b, a)`` where
``b``'s class is a subclass of ``a``'s overriding it, or ``a``'s defines none.
Refused, located, where Python's choice is not known when s2s transforms: a method
that may return ``NotImplemented``, an array or run-time value on the left of an
object (NumPy's operator would apply it to each element, the object in an object
array), a slice or several keys, ``a += b`` of a class with ``__iadd__``, a class
without the method (Python's TypeError).  (``for v in obj`` calls ``__iter__``:
objects.py.)
"""

from __future__ import annotations

import inspect
import numbers
import sys
import types
from typing import Any

import libcst as cst
import numpy as np

from ..ir.nodes import Const, Var
from .objects import object_method, record_of_atom
from .resolve import is_library
from .source import emitted

# the IR's primitive -> (the method Python calls, the reflected one)
_OPERATORS = {
    "add": ("__add__", "__radd__"), "subtract": ("__sub__", "__rsub__"),
    "multiply": ("__mul__", "__rmul__"), "divide": ("__truediv__", "__rtruediv__"),
    "floor_divide": ("__floordiv__", "__rfloordiv__"), "power": ("__pow__", "__rpow__"),
    "matmul": ("__matmul__", "__rmatmul__"), "remainder": ("__mod__", "__rmod__"),
    "bitwise_or": ("__or__", "__ror__"), "bitwise_and": ("__and__", "__rand__"),
    "bitwise_xor": ("__xor__", "__rxor__"),
}
_UNARY = {cst.Minus: "__neg__", cst.Plus: "__pos__", cst.BitInvert: "__invert__"}


class _Module:
    """An object of your class the function reads from its module (``TABLE``,
    ``cfg.net``): its methods are called bound to it, its fields read when the code
    runs (objects.py's module objects)."""

    def __init__(self, atom: Const) -> None:
        self.atom, self.cls = atom, type(atom.value)


def _module_object(atom: Any) -> Any:
    if not isinstance(atom, Const) or not atom.text.replace(".", "").isidentifier():
        return None
    value, cls = atom.value, type(atom.value)
    if isinstance(value, (type, types.ModuleType, types.FunctionType, types.MethodType,
                          numbers.Number, str, bytes, tuple, list, dict, set, frozenset,
                          np.ndarray, np.generic)) or is_library(cls) or (
            cls.__module__ or "builtins").split(".")[0] in sys.stdlib_module_names:
        return None
    return _Module(atom) if hasattr(value, "__dict__") else None


def _made(n: Any, atom: Any) -> Any:
    """The ``Built`` of the object ``atom`` holds, or a ``_Module`` for a module's
    object (None: not an object of your class, or code s2s emitted, which reads the
    dict of its fields as ``self["w"]``)."""
    if isinstance(atom, Const):
        return None if emitted(n.fn) else _module_object(atom)
    made = record_of_atom(n, atom) if isinstance(atom, Var) and not emitted(n.fn) else None
    cls = getattr(made, "cls", None)  # (a field holding a list of objects: `Items`)
    return made if isinstance(cls, type) else None


def _named_tuple(made: Any) -> bool:
    """A NamedTuple's record: its fields in order (``Built.positional``)."""
    return bool(getattr(made, "positional", False)) and issubclass(made.cls, tuple)


def _defines(cls: type, method: str) -> bool:
    return isinstance(inspect.getattr_static(cls, method, None), types.FunctionType)


def _its(cls: type, method: str) -> str:
    return (f"its `{method}`" if method in dir(cls) else
            f"a `{method}` (Python's TypeError: the class defines none)")


def _call(n: Any, node: Any, made: Any, atom: Any, method: str, args: list,
          target: str | None) -> Any:
    """``type(obj).method(obj, *args)``, inlined as a call of your method."""
    found = inspect.getattr_static(made.cls, method, None)
    source = ""
    try:
        source = inspect.getsource(found) if isinstance(found, types.FunctionType) else ""
    except (OSError, TypeError):
        pass
    if "NotImplemented" in source:
        raise n.unsupported(
            node, f"`{made.cls.__name__}.{method}` may return `NotImplemented` (then "
            "Python tries the other operand's method): which method gives the value is "
            "known only when the function runs",
            "raise an error instead of returning `NotImplemented`, or call a method "
            "of the object by name")
    if isinstance(made, _Module):  # (`TABLE[k]`: `TABLE.__getitem__(k)`, read per call)
        if not isinstance(found, types.FunctionType):
            return None
        n.resolver.bind_namespace(made.atom.text.split(".")[0], node)
        fv = n.funcs.of_object(types.MethodType(found, made.atom.value),
                               f"{made.atom.text}.{method}", node)
    else:
        fv = object_method(n, made, atom, method)
    if fv is None:
        return None
    return n.funcs.call(fv, node, target, passed=(list(args), {}))


def subscript(n: Any, node: cst.Subscript, base: Any, target: str | None) -> Any:
    """``obj[k]`` of an object of your class: its ``__getitem__(k)``; None where
    ``base`` is not such an object."""
    made = _made(n, base)
    key = node.slice[0].slice if len(node.slice) == 1 else None
    if made is None or isinstance(made, _Module) and isinstance(key, cst.Index) and (
            isinstance(n.exprs.expr(key.value), Const)):
        return None  # (`TABLE[0.5]`: Python's value, read again when `TABLE` changes)
    cls = made.cls
    one = len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
    if _named_tuple(made) and not _defines(cls, "__getitem__"):
        index = n.exprs.expr(node.slice[0].slice.value) if one else None
        if isinstance(index, Const) and type(index.value) is int and (
                -len(made.keys) <= index.value < len(made.keys)):
            return None  # (`self[1]` of a NamedTuple: its field, as `o[1]` of one built here)
        raise n.unsupported(
            node, f"indexing a `{cls.__name__}` (a NamedTuple of {len(made.keys)} fields) "
            + ("out of its range: Python's IndexError, tuple index out of range"
               if isinstance(index, Const) and type(index.value) is int else
               "with a slice or a key not known when s2s transforms: s2s reads its fields "
               "by constant index"), "index it with a constant in range, or read its "
            "fields by name (`obj.w`)")
    if not one or not _defines(cls, "__getitem__"):
        raise n.unsupported(
            node, f"indexing a `{cls.__name__}` object (an object of your class) "
            + (f"with a slice or several keys: s2s calls {_its(cls, '__getitem__')} "
               "with one key" if one is False and _defines(cls, "__getitem__") else
               f"calls {_its(cls, '__getitem__')}"),
            "call a method of it (`obj.item(i)`) or index one of its fields "
            "(`obj.items[i]`)")
    key = n.exprs.expr(node.slice[0].slice.value)
    return _call(n, node, made, base, "__getitem__", [key], target)


def length(n: Any, node: Any, atoms: list, target: str | None) -> Any:
    """``len(obj)`` of an object of your class: its ``__len__()``; None where the
    argument is not such an object."""
    made = _made(n, atoms[0]) if len(atoms) == 1 else None
    if made is None or isinstance(made, _Module):
        return None  # (`len(TABLE)`: Python's number, read again when `TABLE` changes)
    if _named_tuple(made) and not _defines(made.cls, "__len__"):
        const = Const(len(made.keys), str(len(made.keys)))  # (a NamedTuple's fields)
        return const if target is None else n.emit(target, "identity", (const,), {}, node)
    if not _defines(made.cls, "__len__"):
        raise n.unsupported(
            node, f"`len` of a `{made.cls.__name__}` object (an object of your class) "
            f"calls {_its(made.cls, '__len__')}",
            "call a method of it (`obj.size()`) or take `len` of one of its fields "
            "(`len(obj.items)`)")
    return _call(n, node, made, atoms[0], "__len__", [], target)


def binary(n: Any, node: Any, prim: str, left: Any, right: Any,
           target: str | None) -> Any:
    """``a - b`` where either operand is an object of your class: the method Python
    calls (``__sub__``, or the right operand's ``__rsub__``); None where neither is."""
    lm, rm = _made(n, left), _made(n, right)
    if lm is None and rm is None:
        return None
    method, reflected = _OPERATORS.get(prim, ("an operator method", "its reflected one"))
    for made, atom, name, other in _order(n, node, lm, rm, left, right, method,
                                          reflected):
        out = _call(n, node, made, atom, name, [other], target)
        if out is not None:
            return out
    cls = (lm or rm).cls
    raise n.unsupported(
        node, f"an operator on a `{cls.__name__}` object (an object of your class): "
        f"Python calls {_its(cls, method)} (or the other operand's `{reflected}`), "
        "which s2s cannot call here", "call a method of it (`a.minus(b)`) or compute "
        "on its fields (`a.data - b.data`)")


def _order(n: Any, node: Any, lm: Any, rm: Any, left: Any, right: Any, method: str,
           reflected: str) -> list:
    """The calls Python tries, in its order, for the operands' classes."""
    right_first = rm is not None and lm is not None and rm.cls is not lm.cls and (
        issubclass(rm.cls, lm.cls)) and _defines(rm.cls, reflected) and (
        inspect.getattr_static(rm.cls, reflected) is not inspect.getattr_static(
            lm.cls, reflected, None))
    steps = []
    if lm is not None and _defines(lm.cls, method):
        steps.append((lm, left, method, right))
    if rm is not None and (lm is None or rm.cls is not lm.cls) and _defines(
            rm.cls, reflected):
        if lm is None and not _defers(left, rm.cls):
            raise n.unsupported(
                node, f"an operator with a `{rm.cls.__name__}` object (an object of your "
                "class) on its right and a value that is not a Python number on its left: "
                "NumPy's operator of an array and an object applies it to each element "
                f"(Python calls `{reflected}` only where the left operand does not know "
                "the object)", f"put the object on the left (`obj {_token(node)} "
                "value`), or call a method of it by name")
        step = (rm, right, reflected, left)
        steps = [step, *steps] if right_first else [*steps, step]
    return steps


def _defers(left: Any, cls: type) -> bool:
    """Does Python's operator on ``left`` (a Python number, known when s2s transforms,
    or any value where the class sets ``__array_ufunc__ = None``) give the right
    operand's reflected method its turn?"""
    if getattr(cls, "__array_ufunc__", False) is None:
        return True
    return isinstance(left, Const) and isinstance(left.value, numbers.Number) and not (
        hasattr(left.value, "dtype"))


def _token(node: Any) -> str:
    op = getattr(node, "operator", None)
    return op._get_token() if op is not None else "op"


def unary(n: Any, node: cst.UnaryOperation, value: Any, target: str | None) -> Any:
    """``-obj`` (``+obj``, ``~obj``) of an object of your class: its ``__neg__()``
    (``__pos__``, ``__invert__``); None where it is not such an object."""
    made = _made(n, value)
    if made is None:
        return None
    method = _UNARY.get(type(node.operator))
    out = None if method is None else _call(n, node, made, value, method, [], target)
    if out is None:
        cls = made.cls
        raise n.unsupported(
            node, f"an operator on a `{cls.__name__}` object (an object of your class): "
            + (f"Python calls {_its(cls, method)}" if method else "`not obj` calls its "
               "`__bool__` or `__len__`, a truth s2s does not decide"),
            "call a method of it (`a.negated()`) or compute on its fields "
            "(`-a.data`)")
    return out


_IN_PLACE = {"Add": "__iadd__", "Subtract": "__isub__", "Multiply": "__imul__",
             "Divide": "__itruediv__", "FloorDivide": "__ifloordiv__",
             "Modulo": "__imod__", "Power": "__ipow__", "MatrixMultiply": "__imatmul__",
             "BitOr": "__ior__", "BitAnd": "__iand__", "BitXor": "__ixor__",
             "LeftShift": "__ilshift__", "RightShift": "__irshift__"}


def augmented(n: Any, node: cst.AugAssign) -> bool:
    """Is ``a += b`` of an object of your class whose class has no ``__iadd__``
    (Python's ``a = a + b``: the name rebound, no array written into)?  Refused,
    located, where it has one: it changes the object in place, which s2s holds as
    the dict of its fields, a value."""
    target = node.target
    name = target.value if isinstance(target, cst.Name) else None
    made = _made(n, Var(n.env[name])) if name in n.env else None
    if made is None:
        return False
    op = type(node.operator).__name__.replace("Assign", "")
    method = _IN_PLACE.get(op, "an in-place method")
    if method in dir(made.cls) or method not in _IN_PLACE.values():
        raise n.unsupported(
            node, f"`{name} {node.operator._get_token()} ...` of a `{made.cls.__name__}` "
            f"object (an object of your class) calls its `{method}`, which changes the "
            "object in place: s2s holds it as the dict of its fields, a value",
            f"write `{name} = {name} {node.operator._get_token()[:-1]} ...` with a "
            "method that returns a new object")
    return True
