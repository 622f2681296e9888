"""vmap's writes at a boolean mask that differs per example: ``y[m] = v``.

Per example, ``y[m] = v`` sets the elements ``m`` selects and leaves the others; for
the whole batch that is ``y[:] = np.where(m, v, y)`` (``m`` given unit axes after its
own for the axes of ``y`` it does not index), written into ``y`` as NumPy writes.
``v`` is a scalar, a value that broadcasts against one selected element (its
per-example rank at most the axes ``m`` leaves), or ``w[m]`` read at the same mask:
such a read, used only by copies and by writes at that mask (a derivative's saved
elements: ``y_overwritten = np.copy(y[m])``, restored later), is kept whole
(``np.copy(w)``), since ``y[m] = w[m]`` is ``np.where(m, w, y)``; one summed to a
value's shape (a value's cotangent, ``unbroadcast(g[m], v)``) is kept whole with the
other elements zero (``np.where(m, g, 0)``): the same sums.  Anything else read at
such a mask would hold its own number of elements per example, and stays refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..emit.code import Line
from ..ir.nodes import Let, Var, uses, walk
from ..ir.spelling import atom_text
from ..primitives.batching import NoBatchRule, align

# what makes a boolean array of its operands' shape
_MASKS = {"less", "less_equal", "greater", "greater_equal", "equal", "not_equal",
          "isnan", "isinf", "isfinite", "isneginf", "isposinf", "signbit", "isclose",
          "logical_and", "logical_or", "logical_xor", "logical_not"}
# ... and what keeps masks masks (on integers these are bitwise: their operands decide)
_OF_MASKS = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert"}
_COPIES = ("copy", "array", "asarray")


def is_mask(vm: Any, atom: Any) -> bool:
    """Is ``atom`` a boolean array, known from the statement that made it?"""
    return made_a_mask(vm.facts.producer, atom)


def made_a_mask(producer: dict[str, Let], atom: Any) -> bool:
    """Is ``atom`` a boolean array, known from the statement that made it (``producer``
    of each name)?"""
    prod = producer.get(atom.name) if isinstance(atom, Var) else None
    if prod is None:
        return False
    if prod.prim in _MASKS:
        return True
    return prod.prim in _OF_MASKS and all(  # (`m & 1` is an int array: not a mask)
        made_a_mask(producer, a) if isinstance(a, Var) else isinstance(
            a.value, (bool, np.bool_)) for a in prod.args)


def _mask_item(vm: Any, s: Let) -> Var | None:
    """The index of ``y[m]`` (read or written) when it is one batched mask, written
    nowhere in the function (its elements are the same at the read and the write)."""
    items = s.params["index"].items
    if len(items) != 1 or not isinstance(items[0], Var):
        return None
    m = items[0]
    if not vm.batched(m) or not is_mask(vm, m) or vm.rank(m) < 1:
        return None
    root = vm.fn.aliases.get(m.name, m.name)
    if any(isinstance(t, Let) and t.target != m.name and vm.fn.aliases.get(
            t.target, t.target) == root for t in walk(vm.fn.body)):
        return None
    return m


def masked_read(vm: Any, s: Let, out: list[Any]) -> bool:
    """``t = w[m]`` at a per-example mask, where ``t`` (and its copies) are read only as
    the value of writes at ``m``: ``t = np.copy(w)``, whole (see the module's text)."""
    base = s.args[0]
    m = _mask_item(vm, s)
    if m is None or vm.rank(m) > vm.rank(base):
        return False
    held, todo, summed = {s.target}, [s.target], False
    while todo:
        name = todo.pop()
        for t in walk(vm.fn.body):
            if name not in uses(t):
                continue
            if isinstance(t, Let) and t.prim in _COPIES and t.args == (Var(name),) and \
                    not t.params:
                held.add(t.target)
                todo.append(t.target)
            elif isinstance(t, Let) and t.prim == "unbroadcast" and t.args[0] == Var(
                    name) and t.args[1] != Var(name):
                summed = True  # (a value's cotangent: the sum of the elements selected)
            elif not (isinstance(t, Let) and t.prim == "setitem" and t.args[1] == Var(
                    name) and t.args[0] != Var(name) and _mask_item(vm, t) == m):
                return False
    rank = vm.rank(base)
    for name in held:  # (whole: the rank of `w`, not of the elements selected)
        vm.ranks[(name, ())] = rank
        _held(vm)[name] = m.name
    if vm.batched(base):
        vm.b[s.target] = {()}
    else:
        vm.b.pop(s.target, None)
    if summed:  # (the others zero: summed, they add nothing)
        out.append(Line(f"{s.target} = np.where({_spread(m, vm.rank(m), rank)}, "
                        f"{atom_text(base)}, 0)"))
    else:
        out.append(Line(f"{s.target} = np.copy({atom_text(base)})"))
    return True


def masked_write(vm: Any, s: Let, out: list[Any]) -> bool:
    """``y[m] = v`` at a per-example mask ``m``: ``y[:] = np.where(m, v, y)``."""
    base, value = s.args
    m = _mask_item(vm, s)
    if m is None:
        return False
    if vm.write_masks:
        raise vm.fail(s, NoBatchRule(
            "a write at a mask that differs per example, under an `if` on a batched "
            "value or in a loop whose exit depends on batched values",
            "write `y = np.where(m, v, y)`"))
    rank, kept = vm.rank(base), vm.rank(m)
    if kept > rank:
        raise vm.fail(s, NoBatchRule("a mask with more axes than the array it indexes"))
    if isinstance(value, Var) and value.name in _held(vm):
        if _held(vm)[value.name] != m.name or vm.rank(value) != rank:
            raise vm.fail(s, NoBatchRule(
                "writing elements read at another mask, or from an array of another rank"))
        v = atom_text(value)
    elif vm.rank(value) <= rank - kept:  # one value for every selected element
        v = align(vm, value, rank) if vm.batched(value) else atom_text(value)
    else:
        raise vm.fail(s, NoBatchRule(
            "writing one value per selected element at a mask that differs per example "
            "(each example selects its own number of elements)",
            "write `y = np.where(m, w, y)` with `w` of `y`'s shape"))
    name = atom_text(base)
    if not vm.batched(base):
        out.append(Line(f"{name} = np.stack([{name}] * {vm.use_batch_size()})"))
    mask = _spread(m, kept, rank)
    out.append(Line(f"{name}[:] = np.where({mask}, {v}, {name})", keep=True))
    vm.b[s.target] = {()}
    vm.b[base.name] = {()}
    return True


def _spread(m: Var, kept: int, rank: int) -> str:
    """The batched mask ``m`` given unit axes after its own, up to ``rank``."""
    return atom_text(m) + ("[..." + ", None" * (rank - kept) + "]" if rank > kept else "")


def _held(vm: Any) -> dict[str, str]:
    """The values kept whole by ``masked_read``, each with the name of its mask."""
    return vm.__dict__.setdefault("masked_reads", {})
