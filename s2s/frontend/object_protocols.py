"""Python syntax that calls a method of an object's class (issue 23): ``obj[k]``
(``__getitem__``), ``len(obj)`` (``__len__``), ``a - b``, ``2.0 * a``, ``a @ b``,
``-a`` (``__sub__``, ``__rmul__``, ``__matmul__``, ``__neg__``...) of an object of
your class that the function built or was passed.

s2s holds such an object as the dict of its fields, and these spellings are NumPy's
and Python's operations on values: on that dict they read a field by its name
(``box["a"]`` gave the field ``a``, not ``Box.__getitem__``'s result), counted the
fields (``len(obj)`` gave 1 for an object of one field, whatever ``__len__`` says), or
failed inside the emitted code (``dict - dict``).  Each is refused at the user's line
with what to write instead.  (``for v in obj`` calls ``__iter__``: objects.py.)
"""

from __future__ import annotations

from typing import Any

from ..ir.nodes import Var
from .objects import record_of_atom
from .source import emitted

_OPERATORS = {
    "add": "__add__", "subtract": "__sub__", "multiply": "__mul__",
    "true_divide": "__truediv__", "floor_divide": "__floordiv__", "power": "__pow__",
    "matmul": "__matmul__", "remainder": "__mod__", "negative": "__neg__",
}


def _object_class(n: Any, atom: Any) -> type | None:
    """The class of the object ``atom`` holds (None: not an object of your class, or
    code s2s emitted, which reads the dict of its fields as ``self["w"]``)."""
    made = record_of_atom(n, atom) if isinstance(atom, Var) and not emitted(n.fn) else None
    cls = getattr(made, "cls", None)  # (a field holding a list of objects: `Items`)
    return cls if isinstance(cls, type) else None


def _its(cls: type, method: str) -> str:
    return (f"its `{method}`" if method in dir(cls) else
            f"a `{method}` (Python's TypeError: the class defines none)")


def refuse_subscript(n: Any, node: Any, base: Any) -> Any:
    """``base`` (an atom) where it is not an object of your class; else refused:
    ``obj[k]`` would read the field named ``k``, not call ``__getitem__``."""
    cls = _object_class(n, base)
    if cls is not None:
        raise n.unsupported(
            node, f"indexing a `{cls.__name__}` object (an object of your class): s2s "
            f"holds it as the dict of its fields and does not call "
            f"{_its(cls, '__getitem__')}",
            "call a method of it (`obj.item(i)`) or index one of its fields "
            "(`obj.items[i]`)")
    return base


def refuse_len(n: Any, node: Any, atoms: list) -> None:
    """``len(obj)`` of an object of your class: refused (it counted the fields)."""
    cls = _object_class(n, atoms[0]) if len(atoms) == 1 else None
    if cls is not None:
        raise n.unsupported(
            node, f"`len` of a `{cls.__name__}` object (an object of your class): s2s "
            f"holds it as the dict of its fields and does not call {_its(cls, '__len__')}",
            "call a method of it (`obj.size()`) or take `len` of one of its fields "
            "(`len(obj.items)`)")


def refuse_operands(n: Any, node: Any, prim: str, *atoms: Any) -> tuple:
    """The operands where none is an object of your class; else refused: ``a - b``
    of two such objects failed in the emitted code (the dicts of their fields)."""
    for atom in atoms:
        cls = _object_class(n, atom)
        if cls is not None:
            method = _OPERATORS.get(prim, "operator method")
            raise n.unsupported(
                node, f"an operator on a `{cls.__name__}` object (an object of your "
                f"class): s2s holds it as the dict of its fields and does not call "
                f"{_its(cls, method)} (or the other operand's reflected one)",
                "call a method of it (`a.minus(b)`) or compute on its fields "
                "(`a.data - b.data`)")
    return atoms
