"""vmap's writes at a boolean mask that differs per example: ``y[m] = v``.

Per example, ``y[m] = v`` sets the elements ``m`` selects and leaves the others; for
the whole batch that is ``y[:] = np.where(m, v, y)`` (``m`` given unit axes after its
own for the axes of ``y`` it does not index), written into ``y`` as NumPy writes.
``v`` is a scalar, a value that broadcasts against one selected element (its
per-example rank at most the axes ``m`` leaves), or ``w[m]`` read at the same mask.
Such reads (a derivative's too: the saved elements ``y_overwritten = np.copy(y[m])``,
a value's cotangent ``unbroadcast(g[m], v)``) are kept whole, the elements ``m`` does
not select zero, ``np.where(m, w, 0)``, where every use reads them through the mask
again (``y[m] = t``: ``np.where(m, t, y)``; ``np.add.at(a, m, t)``: ``a += t``) or
sums them (``unbroadcast(t, v)``: zeros add nothing).  Anything else read at such a
mask would hold its own number of elements per example, and stays refused.
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


def at_mask(vm: Any, m: Var) -> set[str] | None:
    """The names holding elements read at the per-example mask ``m`` (``t = w[m]``,
    its copies, ``unbroadcast(t, u)`` of two such: a cotangent), when every one is read
    only as the value of a write at ``m`` (``y[m] = t``, ``np.add.at(a, m, t)``), summed
    to a value's shape (``unbroadcast(t, v)``) or by those; None where any is read
    otherwise (it would hold its own number of elements per example)."""
    found = vm.__dict__.setdefault("at_masks", {})
    if m.name in found:
        return found[m.name]
    lets = [t for t in walk(vm.fn.body) if isinstance(t, Let)]
    held = {t.target for t in lets if t.prim == "getitem" and _mask_item(vm, t) == m}
    grown = True
    while grown:
        more = {t.target for t in lets if t.target not in held and (
            t.prim in _COPIES and not t.params and len(t.args) == 1 and t.args[0] in map(
                Var, held) or t.prim == "unbroadcast" and all(
                isinstance(a, Var) and a.name in held for a in t.args))}
        held |= more
        grown = bool(more)
    bases = {vm.rank(t.args[0]) for t in lets if t.target in held and t.prim == "getitem"}
    ok = len(bases) <= 1 and all(_use_ok(vm, t, m, held) for t in walk(vm.fn.body)
                                 if held & set(uses(t)))
    found[m.name] = held if ok else None
    if ok:
        for name in held:  # (whole: the rank of `w`, not of the elements selected)
            vm.ranks[(name, ())] = next(iter(bases))
            _held(vm)[name] = m.name
    return found[m.name]


def _use_ok(vm: Any, t: Any, m: Var, held: set[str]) -> bool:
    """Is ``t``'s read of names in ``held`` one ``at_mask`` allows?"""
    if not isinstance(t, Let):
        return False
    read = [isinstance(a, Var) and a.name in held for a in t.args]
    if t.target in held:  # (a read at the mask of a whole array, a copy, a sum of two)
        return t.prim != "getitem" or not read[0]
    if t.prim in ("setitem", "add_at"):
        return read == [False, True] and _mask_item(vm, t) == m
    return t.prim == "unbroadcast" and read == [True, False]  # (summed)


def masked_read(vm: Any, s: Let, out: list[Any]) -> bool:
    """``t = w[m]`` at a per-example mask, its elements held as ``at_mask`` allows:
    ``t = np.where(m, w, 0)``, whole, the others zero (see the module's text)."""
    base = s.args[0]
    m = _mask_item(vm, s)
    if m is None or vm.rank(m) > vm.rank(base) or at_mask(vm, m) is None:
        return False
    vm.b[s.target] = {()}
    out.append(Line(f"{s.target} = np.where({_spread(m, vm.rank(m), vm.rank(base))}, "
                    f"{atom_text(base)}, 0)"))
    return True


def masked_add(vm: Any, s: Let, out: list[Any]) -> bool:
    """``np.add.at(a, m, t)`` of elements held at the mask ``m``: ``a += t`` (the others
    are zero), into ``a`` as ``np.add.at`` adds."""
    base, value = s.args
    if not isinstance(value, Var) or value.name not in _held(vm) or (
            m := _mask_item(vm, s)) is None or _held(vm)[value.name] != m.name:
        return False
    if vm.rank(base) != vm.rank(value):
        raise vm.fail(s, NoBatchRule("adding elements read from an array of another rank"))
    name = atom_text(base)
    if not vm.batched(base):
        out.append(Line(f"{name} = np.stack([{name}] * {vm.use_batch_size()})"))
    out.append(Line(f"{name} += {value.name}", keep=True))
    vm.b[s.target] = {()}
    vm.b[base.name] = {()}
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
