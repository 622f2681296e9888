"""Writes in place and lists: ``x[i] = v``, ``np.add.at``, ``ys.append``/``pop``.

Each write makes a new version of one buffer the function made itself (named after
its first name); a name that may share memory with something else is refused.  What
primitives do to memory is stated here too, for ``ir.memory``'s check.
"""

from __future__ import annotations

import inspect
from typing import Any

import libcst as cst
import numpy as np

from .. import runtime
from ..errors import TransformError, mark_shared_write
from ..ir.names import stem
from ..ir.nodes import Atom, Const, Index, Let, Slice, Var
from ..primitives import PRIMITIVES, lookup_object
from .expressions import root_name

# primitives whose result is a new array nothing else refers to
_ALLOCATING = {
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like",
    "full_like", "copy", "array", "eye", "arange", "linspace",
    # joins copy their operands into a new array (vmap stacks buffers with them)
    "stack", "concatenate", "hstack", "vstack", "dstack", "column_stack", "tile",
    "repeat",
}


# primitives whose result may share memory with (or, for containers and calls, hold)
# an argument
VIEWS = {
    "identity", "getitem", "reshape", "transpose", "T", "ravel", "squeeze",
    "expand_dims", "swapaxes", "moveaxis", "broadcast_to", "asarray", "diagonal",
    "linalg.diagonal", "matrix_transpose", "linalg.matrix_transpose",
    "make_tuple", "make_list", "make_dict", "call", "atleast_1d", "atleast_2d",
    "atleast_3d", "flip", "fliplr", "flipud", "rot90", "split", "array_split",
    "hsplit", "vsplit", "dsplit", "broadcast_arrays",
}


# statements after which another name or container refers to an operand's array
ALIASING = {
    "identity", "getitem", "reshape", "transpose", "T", "ravel", "squeeze",
    "expand_dims", "swapaxes", "moveaxis", "broadcast_to", "asarray", "diagonal",
    "linalg.diagonal", "matrix_transpose", "linalg.matrix_transpose", "make_tuple",
    "make_list", "make_dict", "atleast_1d", "atleast_2d", "atleast_3d", "flip", "fliplr",
    "flipud", "rot90", "append",
}


# statements that change their first argument in place (a new version of it in IR)
WRITES = {"setitem", "add_at", "append", "pop"}


# primitives that read only their arguments' shapes (or lengths), never their values
_SHAPE_ONLY = {
    "shape": {"a"}, "ndim": {"a"}, "size": {"a"}, "len": {"obj"},
    "zeros_like": {"a"}, "ones_like": {"a"}, "empty_like": {"prototype"},
    "full_like": {"a"},
}


def _runtime_prim(name: str) -> str | None:
    """The primitive an ``s2s.runtime`` helper is registered as, if it is."""
    prim = lookup_object(getattr(runtime, name, None))
    return prim.name if prim is not None else None


def _views(prim: str) -> bool:
    # unbroadcast(g, x) returns g itself when nothing was broadcast, weights_along a
    # reshape of its weights
    return prim in VIEWS or prim in (_runtime_prim("unbroadcast"),
                                      _runtime_prim("weights_along"))


def allocates(prim: str) -> bool:
    if _views(prim) or prim in WRITES:
        return False
    return prim in _ALLOCATING or PRIMITIVES[prim].family in ("elementwise", "binary",
                                                              "linalg")


def _shape_only(prim: str) -> set[str]:
    if prim == _runtime_prim("unbroadcast"):
        return {"x"}
    return _SHAPE_ONLY.get(prim, set())



def _is_last_index(index: Index) -> bool:
    """Is the index ``[-1]``?"""
    items = index.items
    return (not index.is_tuple and len(items) == 1 and isinstance(items[0], Const)
            and type(items[0].value) is int and items[0].value == -1)


def is_minus_one(arg: cst.Arg) -> bool:
    """Is the argument the literal ``-1`` (``ys.pop(-1)`` is ``ys.pop()``)?"""
    value = arg.value
    return not arg.star and arg.keyword is None and isinstance(value, cst.UnaryOperation) \
        and isinstance(value.operator, cst.Minus) and isinstance(
            value.expression, cst.Integer) and value.expression.value == "1"

class _PrimEffects:
    """What the registered primitives do to memory (``ir.memory.Effects``)."""

    def writes(self, prim: str) -> bool:
        return prim in WRITES

    def views(self, prim: str) -> bool:
        return _views(prim)

    def allocates(self, prim: str) -> bool:
        return allocates(prim)

    def shape_only(self, prim: str) -> set[str]:
        return _shape_only(prim)

    def signature(self, prim: str) -> inspect.Signature:
        return PRIMITIVES[prim].signature


EFFECTS = _PrimEffects()


class BufferLowerer:
    """Lowers the writes in place and list operations of one function."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, scope, expressions

    def may_share(self, name: str) -> bool:
        """May ``name``'s value share memory with another name's (so that NumPy's
        ``name += v`` writes through it)?  Not a Python number (``s = 0.0``, ``n =
        len(x)``): ``+=`` on an immutable value rebinds the name, as s2s does."""
        if self.n.producers.get(name) not in VIEWS or _advanced_read(self.n.lets.get(name)):
            return False  # (`c = z[[0, 1]]`: NumPy's advanced indexing copies)
        return not self.immutable(name)

    def immutable(self, name: str, depth: int = 0) -> bool:
        let = self.n.lets.get(name)
        if let is None or depth > 50:
            return False
        if let.prim in ("len", "ndim", "size", "shape"):
            return True
        if let.prim in ("identity", "getitem") and let.args:
            arg = let.args[0]
            if let.prim == "identity" and isinstance(arg, Const):
                return isinstance(arg.value, (bool, int, float, complex, str, type(None)))
            if isinstance(arg, Var):
                base = self.n.lets.get(arg.name)
                if let.prim == "getitem":  # an element of a shape is an int
                    return base is not None and (base.prim == "shape" or self._item_immutable(
                        base, let, depth))
                return self.immutable(arg.name, depth + 1)
        return False

    def _item_immutable(self, base: Any, let: Any, depth: int) -> bool:
        """``state["step"]`` of a dict literal whose item there is a Python number
        (``{"step": 0, ...}``): ``state["step"] += 1`` rebinds it, as NumPy does."""
        items = getattr(let.params.get("index"), "items", None)
        keys = tuple(base.params.get("keys", ())) if base.prim == "make_dict" else ()
        if not items or len(items) != 1 or not isinstance(items[0], Const) or \
                items[0].value not in keys or "from_items" in base.params:
            return False
        item = base.args[keys.index(items[0].value)]
        if isinstance(item, Const):
            return isinstance(item.value, (bool, int, float, complex, str, type(None)))
        return isinstance(item, Var) and self.immutable(item.name, depth + 1)

    def assign_element(self, target: cst.Subscript, value: Any) -> None:
        """``y[i] = v``: in IR a new version of ``y``; in emitted code, in place.

        Only arrays the function made itself may be written into (s2s never writes
        into its caller's arrays).  Other names that share the array's memory (a view
        ``row = y[0]``, an older version) go out of date: reading their values later
        is refused where it happens (see ``_MemoryCheck``).
        """
        base = target.value
        if self.n.dicts.keyed_by_loop(target, value):  # `out[k] = v`, `for k in p`
            return
        if self.n.dicts.is_dict(base):  # `out["w"] = v` into a dict the function built
            self.n.dicts.write(target, value)
            return
        if self.n.dicts.write_per_call(target, value):  # `d["k"] = v`: {**d, "k": v}
            return
        self.n.dicts.refuse_keyed_per_call(base, target)
        if not isinstance(base, cst.Name) or base.value not in self.n.local_names:
            raise self.n.unsupported(
                target, "only a local array can be assigned into",
                "make a copy first: `y = x.copy()`, then `y[i] = ...`",
            )
        if self.n.env.get(base.value) in self.n.lists:
            self.assign_item(base, target, value)
            return
        name, current = self.writable(base, target)
        index = self.n.exprs.index(target)
        atom = self.n.exprs.expr(value)
        self.write(name, current, "setitem", (Var(current), atom), {"index": index}, target)

    def assign_item(self, base: cst.Name, target: cst.Subscript, value: Any) -> None:
        """``ys[k] = v`` into a list this function built: its item ``k`` (an integer)
        replaced, in place (emitted backward code adds into a list cotangent's items
        so: ``hs_bar[k] = hs_bar[k] + v_bar``)."""
        index = self.n.exprs.index(target)
        if index.is_tuple or len(index.items) != 1 or isinstance(index.items[0], Slice):
            raise self.n.unsupported(
                target, "only one item of a list can be assigned: `ys[k] = v`",
                "assign one item at a time: `ys[k] = v`",
            )
        name, current = self.own_list_named(base.value, target, "[k] = ...")
        atom = self.n.exprs.expr(value)
        self.write(name, current, "setitem", (Var(current), atom), {"index": index}, target)

    def writable(self, base: cst.Name, node: Any) -> tuple[str, str]:
        """The user name and current version of an array the function may write into."""
        name = base.value
        if name not in self.n.env:
            raise TransformError(
                f"`{name}` may be used before it is assigned", self.n.loc(base),
                f"assign `{name}` before writing into it", self.n.display,
            )
        current = self.n.env[name]
        if current == name and name in self.n.arguments:
            raise mark_shared_write(self.n.unsupported(
                node, f"`{name}` is an argument: writing into it would change the "
                "caller's value, which s2s never does",
                f"write into a copy: `{name} = {name}.copy()` first",
            ))
        if current not in self.n.buffers or current in self.n.lists:
            raise mark_shared_write(self.n.unsupported(
                node, f"`{name}` may share memory with an argument or another array, "
                "so writing into it would change that too",
                f"write into a fresh array: `{name} = {name}.copy()` (or np.zeros...) first",
            ))
        return name, current

    def write(self, name: str, current: str, prim: str, args: tuple, params: dict,
               node: Any) -> None:
        """Emit a statement that changes a buffer in place: a new version of it."""
        ssa = self.n.names.fresh(name)
        self.n.emit(ssa, prim, args, params, node)
        root = self.n.buffer_root.get(current, current)
        self.n.buffers.add(ssa)
        if current in self.n.lists:
            self.n.lists.add(ssa)
        self.n.buffer_root[ssa] = root
        self.n._bind(name, ssa)

    def is_add_at(self, call: Any) -> bool:
        """Is ``call`` ``np.add.at(...)`` (NumPy's unbuffered in-place add)?"""
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
            return False
        root = root_name(call.func)
        if root is None or root in self.n.local_names:
            return False
        try:
            obj, _ = self.n.resolver.resolve_dotted(call.func)
        except TransformError:
            return False
        return getattr(obj, "__self__", None) is np.add and getattr(obj, "__name__", "") == "at"

    def add_at_statement(self, call: cst.Call) -> None:
        """``np.add.at(y, index, v)``: like ``y[index] += v``, but an element the
        index names several times gets every one of its values added."""
        args = call.args
        if len(args) != 3 or any(a.keyword is not None or a.star for a in args):
            raise self.n.unsupported(
                call, "np.add.at takes three positional arguments here",
                "write np.add.at(y, index, values)",
            )
        base = args[0].value
        if not isinstance(base, cst.Name) or base.value not in self.n.local_names:
            raise self.n.unsupported(
                base, "np.add.at can only add into a local array",
                "make a copy first: `y = x.copy()`, then `np.add.at(y, ...)`",
            )
        name, current = self.writable(base, call)
        index = self.index_argument(args[1].value)
        values = self.n.exprs.expr(args[2].value)
        self.write(name, current, "add_at", (Var(current), values), {"index": index}, call)

    def index_argument(self, node: Any) -> Index:
        """An index passed as a value: ``np.s_[...]``, a tuple of items, or one item."""
        if isinstance(node, cst.Subscript) and root_name(node.value) not in self.n.local_names:
            try:
                obj, _ = self.n.resolver.resolve_dotted(node.value)
            except TransformError:
                obj = None
            if obj is np.s_ or obj is np.index_exp:
                index = self.n.exprs.index(node)
                return index if obj is np.s_ else Index(index.items, True)
        if isinstance(node, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                raise self.n.unsupported(node, "starred elements are not supported",
                                       "list each index item")
            return Index(tuple(self.n.exprs.expr(e.value) for e in node.elements), True)
        return Index((self.n.exprs.expr(node),), False)

    def own_list(self, call: cst.Call, method: str) -> tuple[str, str]:
        """The user name and current version of the list ``ys`` in ``ys.method()``."""
        return self.own_list_named(call.func.value.value, call, f".{method}")

    def own_list_named(self, name: str, node: Any, what: str) -> tuple[str, str]:
        current = self.n.env.get(name)
        if current is None or current not in self.n.lists:
            err = self.n.unsupported(
                node, f"`{name}{what}` needs a list this function built itself (or a "
                "dict whose keys s2s knows when it transforms the function)",
                f"start it with `{name} = []` in the function",
            )
            err.per_call = True  # (a dict argument: its keys known per call, callables.py)
            raise err
        return name, current

    def pop_statement(self, call: cst.Call) -> None:
        """``ys.pop()`` or ``d.pop("k")`` as a statement of its own (``del ys[-1]``,
        ``del d["k"]`` too): the container's new version without the item."""
        if self.n.dicts.is_dict(call.func.value):
            self.n.dicts.pop(call, None)
            return
        if self.n.stmts.list_edits.pop(call, None) is not None:
            return  # (`parts.pop(0)`: list_edits.py)
        name, current = self.own_list(call, "pop")
        self.pop_args(call)
        last = self.n._last_let
        if not (isinstance(last, Let) and last.prim == "getitem"
                and last.args[:1] == (Var(current),) and _is_last_index(last.params["index"])):
            # its value unused, but reverse mode reads it (after ``v = ys[-1]``, as
            # emitted code spells a pop, that read)
            self.n.emit(self.n.exprs.target(None, f"{stem(self.n.named(Var(current)))}_last"),
                        "getitem", (Var(current),),
                        {"index": Index((Const(-1, "-1"),), False)}, call)
        self.pop(name, current, call)

    def pop_args(self, call: cst.Call) -> None:
        if call.args and not (len(call.args) == 1 and is_minus_one(call.args[0])):
            raise self.n.unsupported(
                call, "only `ys.pop()` (the last element) is supported",
                "pop the last element: `v = ys.pop()`",
            )

    def pop_expression(self, call: cst.Call, target: str | None) -> Atom:
        """``v = ys.pop()``: in IR ``v = ys[-1]``, then a new version of ``ys``
        without it (spelled ``ys.pop()`` in place, like append)."""
        if self.n.dicts.is_dict(call.func.value):  # `kw.pop("k", default)`
            return self.n.dicts.pop(call, target)
        edited = self.n.stmts.list_edits.pop(call, target)
        if edited is not None:
            return edited  # (`v = parts.pop(0)`: list_edits.py)
        name, current = self.own_list(call, "pop")
        self.pop_args(call)
        last = self.n.emit(
            self.n.exprs.target(target, f"{stem(self.n.named(Var(current)))}_last"), "getitem",
            (Var(current),), {"index": Index((Const(-1, "-1"),), False)}, call,
        )
        self.pop(name, current, call)
        return last

    def pop(self, name: str, current: str, call: cst.Call) -> None:
        self.write(name, current, "pop", (Var(current),), {}, call)

    def append_statement(self, call: cst.Call) -> None:
        """``ys.append(v)`` on a list this function built (``ys = []``)."""
        name, current = self.own_list(call, "append")
        if len(call.args) != 1 or call.args[0].keyword is not None:
            raise self.n.unsupported(call, "append takes one value", "write ys.append(v)")
        atom = self.n.exprs.expr(call.args[0].value)
        self.write(name, current, "append", (Var(current), atom), {}, call)


def _advanced_read(let: Any) -> bool:
    """Is ``let`` a read ``z[...]`` at a constant list or array of positions (NumPy's
    advanced indexing, whose result is a new array, never a view)?"""
    return isinstance(let, Let) and let.prim == "getitem" and any(
        isinstance(i, Const) and (isinstance(i.value, list) or isinstance(
            i.value, np.ndarray) and i.value.ndim > 0)
        for i in getattr(let.params.get("index"), "items", ()))
