"""Per-example ranks for vmap: the probe that records them on the first example, and
the inference of those the probe never saw (values on paths the first example did not
take), from the statements that produce them."""

from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import io
import logging
import warnings
from typing import Any

import numpy as np

from .. import runtime, syntax
from ..emit.code import Block, Comment, Line, compile_module, render_function
from ..ir.kinds import LEAF, Kind, Seq, Tree, kind_of
from ..ir.nodes import (
    Const,
    For,
    Function,
    If,
    Index,
    Let,
    Return,
    Slice,
    Stmt,
    Var,
    uses,
    walk,
)
from ..ir.spelling import atom_text
from ..primitives import PRIMITIVES, collectives
from ..primitives.batching import NoBatchRule
from .analysis import facts
from .list_operands import per_call
from .module import Module, default_text
from .replay import Replay, has_effects, spell_buffers

# primitives whose result has their first operand's rank
SAME_RANK = {"flip", "fliplr", "flipud", "roll", "sort", "argsort", "copy", "T", "isnan",
             "transpose", "matrix_transpose", "linalg.matrix_transpose", "moveaxis", "isfinite",
             "swapaxes", "rollaxis", "diff", "nan_to_num", "prod_of_others", "empty_like",
             "prod_of_others_jet", "cumprod_jet", "det_cofactor",
             "setitem"}  # (a write keeps the shape)
SECOND_RANK = {"cumprod_bar", "cumprod_tangent", "cumprod_bar_jet"}  # (b's rank, f(a, b))
# runtime helpers that act elementwise (broadcasting their operands)
ELEMENTWISE_RUNTIME = {"special_digamma", "special_polygamma", "special_erf",
                       "special_erfc", "special_erfinv", "special_expit", "special_gammaln",
                       "special_logit", "special_xlogy", "special_xlog1py", "in_place"}


def prim_family(prim: str) -> str | None:
    """A primitive's family (None: not a primitive, a runtime helper)."""
    return PRIMITIVES[prim].family if prim in PRIMITIVES else None


class _Cycle(NoBatchRule):
    """A rank inferred from itself (a value made from a list's items, appended to it)."""


class RankInference:
    """A value's per-example rank from its producer's operands' ranks."""

    def __init__(self, vm: Any) -> None:  # (the vmap transform, vmap._Vmap)
        self.vm = vm
        self.inferring: set[str] = set()  # (names whose rank is being inferred)
        self.items_inferring: set[tuple] = set()  # (lists whose items' rank is, by root)
        self.items_again: set[tuple] = set()  # (of those, the ones read from their starts)

    def infer(self, name: str) -> int | None:
        """The rank of a value the probe did not see (a branch the first example did
        not take), where its primitive says it: broadcasting takes the largest rank,
        a full reduction gives a scalar.  A value that depends on itself (a loop the
        first example never ran reads the list it grows, ``parts[-1]``) takes the
        rank its other operands give."""
        if name in self.inferring:
            raise _Cycle(f"the rank of `{name}` depends on itself")
        self.inferring.add(name)
        try:
            return self._infer(name)
        finally:
            self.inferring.discard(name)

    def _max_rank(self, args: Any) -> int:
        """The largest rank among ``args``, those whose rank depends on the value
        being inferred left out (one must be known)."""
        ranks = []
        for a in args:
            try:
                ranks.append(self.vm.rank(a))
            except _Cycle:
                continue
        if args and not ranks:
            raise _Cycle("every operand's rank depends on the value itself")
        return max(ranks, default=0)

    def _infer(self, name: str) -> int | None:
        s = self.vm.facts.producer.get(name)
        several = self.vm.facts.producers.get(name)
        if several and s is several[-1]:  # bound on several paths (an if's branches):
            # the largest rank they give (a zero on one path broadcasts against the
            # other's array: `sum` of a list empty on one path is 0), none if one is
            # unknown (not the last path's alone: a loop that grows the rank is then
            # seen, and refused)
            ranks = []
            for t in several:
                try:
                    ranks.append(self._infer_from(name, t))
                except _Cycle:  # (a path that reads the value itself: the others say)
                    continue
            if not ranks:
                raise _Cycle(f"the rank of `{name}` depends on itself on every path")
            return None if None in ranks else max(ranks)
        return self._infer_from(name, s)

    def _infer_from(self, name: str, s: Let | None) -> int | None:
        if s is None and name in self.vm.facts.int_vars:
            return 0  # a loop's index (a Python int)
        if s is not None and s.prim == "getitem" and isinstance(s.args[0], Var) and (
                isinstance(self.vm.kind(s.args[0].name), (Seq, Tree))):
            try:
                return self._leaf_rank(name, ())
            except _Cycle:
                raise
            except NoBatchRule:
                return None
        if s is None or s.prim not in PRIMITIVES:
            return None
        if s.prim == "stack" and len(s.args) == 1 and isinstance(s.args[0], Var) and (
                isinstance(self.vm.kind(s.args[0].name), Seq)) and "axis" not in s.params:
            return self._stacked_rank(s.args[0].name)  # (a loop that ran no iteration)
        family = PRIMITIVES[s.prim].family
        try:
            if family in ("elementwise", "piecewise-constant", "binary", "comparison",
                          "special") or s.prim in ("identity", "zeros_like", "ones_like"):
                return self._max_rank(s.args)
            if family == "reduction" and "axis" not in s.params and not s.prim.startswith(
                    ("cum", "nancum")):  # (a cumulative reduction keeps a flat axis)
                return 0
            if s.prim.startswith(("cum", "nancum")) and "axis" not in s.params:
                return 1
            axis = getattr(s.params.get("axis"), "value", s.params.get("axis"))
            keep = getattr(s.params.get("keepdims"), "value", s.params.get("keepdims"))
            if family == "reduction" and type(axis) is int and not keep and not (
                    s.prim.startswith(("cum", "nancum"))):  # (one axis reduced away)
                return max(self.vm.rank(s.args[0]) - 1, 0)
            if s.prim in ("size", "ndim", "len", "float", "int", "dtype", "isdtype",
                          "iscomplexobj", "isrealobj"):
                return 0
            if s.prim == "shape":
                return 1
            if s.prim == "eye":
                return 2
            if s.prim in ("unbroadcast", "matmul_lhs_bar", "dot_lhs_bar",
                          "matmul_rhs_bar", "dot_rhs_bar"):
                target = {"unbroadcast": 1}.get(s.prim, 1 if "lhs" in s.prim else 2)
                return self.vm.rank(s.args[target])
            if s.prim == "broadcast_to":
                shape = s.args[1] if len(s.args) > 1 else s.params.get("shape")
                if isinstance(shape, Const):
                    return len(shape.value) if isinstance(shape.value, tuple) else 1
                prod = self.vm.facts.producer.get(shape.name) if isinstance(shape, Var) else None
                if prod is not None and prod.prim == "shape":
                    return self.vm.rank(prod.args[0])
            return self._infer_shape_rank(s)
        except NoBatchRule:
            return None
        return None

    def _stacked_rank(self, name: str) -> int | None:
        """The rank of ``np.stack`` of the list ``name``: one more than its items',
        the values appended to it."""
        root = self.vm.fn.aliases.get(name, name)
        for st in walk(self.vm.fn.body):
            if isinstance(st, Let) and st.prim == "append" and isinstance(
                    st.args[0], Var) and isinstance(st.args[1], Var) and (
                    self.vm.fn.aliases.get(st.args[0].name, st.args[0].name) == root):
                try:
                    return self.vm.rank(st.args[1]) + 1
                except NoBatchRule:
                    return None
        return None

    def _leaf_rank(self, name: str, path: tuple) -> int:
        """The rank of the leaf at ``path`` in ``name``, followed through the tuples
        and lists it was read from (a popped tape entry: the value pushed)."""
        key = (name, path)
        if key in self.vm.ranks:
            return self.vm.ranks[key]
        s = self.vm.facts.producer.get(name)
        if s is not None and s.prim == "getitem" and isinstance(s.args[0], Var):
            base = s.args[0].name
            if isinstance(self.vm.kind(base), Seq):  # an item: what was appended
                return self._item_rank(name, base, path)
            elif isinstance(self.vm.kind(base), Tree):
                return self._leaf_rank(base, (self.vm.facts.container_key(
                    s, self.vm.kind(base)),) + path)
        if path and s is not None and s.prim in ("append", "pop") and isinstance(
                s.args[0], Var):  # a list of known length, one item more or less
            kind = self.vm.kind(name)
            if s.prim == "append" and isinstance(kind, Tree) and isinstance(
                    s.args[1], Var) and path[0] == len(kind.keys) - 1:
                return self._leaf_rank(s.args[1].name, path[1:])
            return self._leaf_rank(s.args[0].name, path)
        if path and s is not None and s.prim in ("make_tuple", "make_list", "make_dict"):
            kind = self.vm.kind(name)
            if isinstance(kind, Tree):
                inner = s.args[list(kind.keys).index(path[0])]
                if isinstance(inner, Var):
                    return self._leaf_rank(inner.name, path[1:])
                return self.vm.rank(inner)
        if not path and self._infer_rank_of_producer(name) is not None:
            return self.vm.ranks[(name, ())]
        raise NoBatchRule(f"the rank of `{name}` is unknown (the first example never "
                          "computed it)")

    def _item_rank(self, name: str, base: str, path: tuple) -> int:
        """The rank of the leaf at ``path`` of ``name``, an item of the list ``base``
        grown in a loop: of what was appended to it (or written into it: ``ys[k] =
        v``), or of the items it starts with (``zeros_list(xs)``'s: ``xs``'s); a
        list a loop makes anew (``acc = [t] + acc``), of those the new one holds."""
        root = self.vm.fn.aliases.get(base, base)
        if (root, path) in self.items_inferring:  # (its items made from its own items:
            if (root, path) in self.items_again:  # those it starts with, if they say;
                raise _Cycle(f"the rank of `{name}` depends on itself")  # (two lists
            self.items_again.add((root, path))  # copied from each other: once each)
            try:
                return self._item_rank_of(name, root, path, again=True)
            except NoBatchRule:
                raise _Cycle(f"the rank of `{name}` depends on itself") from None
            finally:
                self.items_again.discard((root, path))
        self.items_inferring.add((root, path))
        try:
            return self._item_rank_of(name, root, path)
        finally:
            self.items_inferring.discard((root, path))

    def _item_rank_of(self, name: str, root: str, path: tuple, again: bool = False) -> int:
        roots = self._carried_roots(root)
        cycled = again
        for st in [] if again else walk(self.vm.fn.body):
            if isinstance(st, Let) and st.prim in ("append", "setitem") and (
                    isinstance(st.args[0], Var) and isinstance(st.args[1], Var)
                    and self.vm.fn.aliases.get(st.args[0].name, st.args[0].name) in roots
                    and isinstance(self.vm.kind(st.target), Seq)):
                try:
                    return self._leaf_rank(st.args[1].name, path)
                except _Cycle:  # (made from the list's own items: another)
                    cycled = True
                except NoBatchRule:
                    if st.prim == "append":
                        raise
        starts = [self.vm.facts.producer.get(r) for r in [root, *sorted(roots - {root})]]
        for start in starts:  # (the items it starts with: another list's, rows)
            if start is None or start.prim not in ("zeros_list", "list") or not isinstance(
                    start.args[0], Var):
                continue
            if isinstance(self.vm.kind(start.args[0].name), Seq):
                try:
                    return self._item_rank(name, start.args[0].name, path)
                except _Cycle:
                    cycled = True
            elif start.prim == "list" and not path and self.vm.kind(start.args[0].name) == LEAF:
                return self.vm.rank(start.args[0]) - 1  # (an array's rows)
        for start in starts if cycled else []:
            if start is None or start.prim != "make_list" or not start.args:
                continue
            first = start.args[0]  # (the items it starts with)
            try:
                return self._leaf_rank(first.name, path) if isinstance(
                    first, Var) else self.vm.rank(first)
            except _Cycle:
                continue
        if cycled:
            raise _Cycle(f"the rank of `{name}` depends on itself")
        raise NoBatchRule(f"the rank of `{name}` is unknown (the first example never "
                          "computed it)")

    def _carried_roots(self, root: str) -> set[str]:
        """``root`` and the lists a loop carries into it (``acc = [t] + acc`` makes
        the list anew at each iteration: the next one's ``acc`` holds its items)."""
        aliases = self.vm.fn.aliases
        roots = {root}
        fors = [st for st in walk(self.vm.fn.body) if isinstance(st, For)]
        while True:
            more = {aliases.get(x, x) for f in fors for e, x in f.carried
                    if aliases.get(e, e) in roots} - roots
            if not more:
                return roots
            roots |= more

    def _infer_rank_of_producer(self, name: str) -> int | None:
        s = self.vm.facts.producer.get(name)
        if s is None or s.prim == "getitem" and isinstance(s.args[0], Var) and (
                isinstance(self.vm.kind(s.args[0].name), (Seq, Tree))):
            return None
        r = self.infer(name)
        if r is not None:
            self.vm.ranks[(name, ())] = r
        return r

    def _infer_shape_rank(self, s: Let) -> int | None:
        """More of ``_infer_rank``: indexing, products and rearrangements, where the
        operands' ranks and constant arguments say the result's."""
        args, params = s.args, s.params
        axis = params.get("axis")
        static_axis = axis is None or isinstance(axis, Const)
        if s.prim == "getitem" and isinstance(params.get("index"), Index):
            return self._index_rank(s)
        if s.prim in SAME_RANK and args:
            if s.prim in ("sort", "argsort") and isinstance(axis, Const) and (
                    axis.value is None):
                return 1  # sorted flat
            return self.vm.rank(args[0])
        if s.prim in SECOND_RANK and len(args) > 1:
            return self.vm.rank(args[1])
        if s.prim in ("array", "asarray") and len(args) == 1 and isinstance(
                args[0], Var) and self.vm.kind(args[0].name) == LEAF:
            return self.vm.rank(args[0])  # a copy (the gradient's copy before a write)
        if s.prim in ELEMENTWISE_RUNTIME:
            return max((self.vm.rank(a) for a in args), default=0)
        if s.prim == "ravel":
            return 1
        if s.prim in ("outer", "linalg.outer"):
            return 2
        if s.prim in ("matmul", "dot", "inner") and len(args) == 2:
            ra, rb = self.vm.rank(args[0]), self.vm.rank(args[1])
            if s.prim == "matmul":
                return (0 if ra == rb == 1 else rb - 1 if ra == 1 else ra - 1 if rb == 1
                        else max(ra, rb))
            if ra == 0 or rb == 0:
                return max(ra, rb)
            return ra + rb - 2
        if s.prim == "vdot":
            return 0
        if s.prim in ("trace", "linalg.trace") and len(args) == 1 and not params:
            return self.vm.rank(args[0]) - 2
        if s.prim == "linalg.solve" and len(args) == 2:
            return self.vm.rank(args[1])
        if s.prim == "reshape" and len(args) == 2 and isinstance(args[1], Const):
            shape = args[1].value
            return len(shape) if isinstance(shape, tuple) else 1
        if s.prim in ("reshape", "zeros", "ones", "full") and args and isinstance(
                args[s.prim == "reshape"], Var):  # np.reshape(g, np.shape(a))
            prod = self.vm.facts.producer.get(args[s.prim == "reshape"].name)
            if prod is not None and prod.prim == "shape" and not prod.params:
                return self.vm.rank(prod.args[0])
            return None
        if s.prim == "add_at" and args:
            return self.vm.rank(args[0])
        if s.prim == "expand_dims" and len(args) == 2 and isinstance(args[1], Const):
            n = args[1].value
            return self.vm.rank(args[0]) + (len(n) if isinstance(n, tuple) else 1)
        if s.prim == "rhs_columns" and len(args) == 2:
            return self.vm.rank(args[0]) + (self.vm.rank(args[1]) == 1)
        if s.prim in ("concatenate", "stack") and args and isinstance(args[0], Var):
            prod = self.vm.facts.producer.get(args[0].name)
            if prod is None or prod.prim not in ("make_list", "make_tuple") or not (
                    prod.args) or not static_axis:
                return None
            if s.prim == "concatenate" and isinstance(axis, Const) and (
                    axis.value is None):
                return 1
            return self.vm.rank(prod.args[0]) + (s.prim == "stack")
        if s.prim == "tile" and len(args) == 2 and isinstance(args[1], Const):
            reps = args[1].value
            return max(self.vm.rank(args[0]), len(reps) if isinstance(reps, tuple) else 1)
        if s.prim == "take" and len(args) == 2 and static_axis:
            if axis is None or axis.value is None:
                return self.vm.rank(args[1])
            return self.vm.rank(args[0]) - 1 + self.vm.rank(args[1])
        if (prim_family(s.prim) == "reduction" and isinstance(axis, Const)
                and not s.prim.startswith(("cum", "nancum")) and len(args) == 1
                and set(params) <= {"axis", "keepdims"}):
            keep = params.get("keepdims")
            if isinstance(keep, Const) and keep.value:
                return self.vm.rank(args[0])
            if axis.value is None:
                return 0
            n = len(axis.value) if isinstance(axis.value, tuple) else 1
            return self.vm.rank(args[0]) - n
        return None

    def _index_rank(self, s: Let) -> int | None:
        """Per-example rank of ``y[index]`` with basic or integer-array indexing."""
        rank = self.vm.rank(s.args[0])
        advanced = []
        for item in s.params["index"].items:
            if isinstance(item, Slice):
                continue
            if isinstance(item, Const):
                v = item.value
                if v is None:
                    rank += 1
                elif v is Ellipsis:
                    continue
                elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
                    rank -= 1
                elif isinstance(v, np.ndarray) and v.dtype.kind in "iu":
                    advanced.append(v.ndim)
                    rank -= 1
                else:
                    return None
            elif isinstance(item, Var):
                if self.vm.batched(item):
                    return None
                r = self.vm.rank(item)
                if r > 1:
                    return None  # (an int index array or a mask of rank 1: one axis)
                advanced.append(r)
                rank -= 1
        return rank + max(advanced, default=0)


# the key of the probe's recorded argument values (a dict: name -> one example's value)
VALUES = ("__values__", ())


def _copied(value: Any) -> Any:
    """``value`` as it is now (its arrays copied: the code may write into them later)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, list)):
        return type(value)(_copied(v) for v in value) if type(value) in (tuple, list) \
            else value
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    return value


# A user callee's result as the code reads it (the objects it built, a NamedTuple or a
# registered class, as the dicts of their fields): installed by s2s/api/records.py
PLAIN: Any = None


def probe(fn: Function, example: tuple, kinds: tuple | None = None,
          arrays: tuple[int, ...] = ()) -> dict[tuple[str, tuple], Any]:
    """Run ``fn``'s statements on one example; the rank of each value it computes
    (per leaf path), and the arguments of each call to a user function (``kinds``:
    their structures where the caller knows more, a NamedTuple it built as a dict).

    An example holding an array with an empty axis (a body vmap over a batch of no
    row) runs no iteration of the loops over that axis, so calls in them (the
    gradient's callee in its reverse loop) have no arguments recorded: the body runs
    again on the example with each empty axis one long (zeros standing for a row;
    ranks do not depend on sizes), and what only that run saw is added.  Where it
    loops, again with short axes two long (``range(1, len(m))``), counts 0 to 2 two more,
    then four long (frontend/reduces.py's calls): a longer example's code serves this."""
    found = _probe(fn, example, kinds, arrays)
    loops = any(isinstance(s, For) for s in walk(fn.body))
    for size in (1, 2, 4) if loops else (1,):
        padded = _padded(example, size)
        if padded is None:
            continue
        try:  # (its values stand for a row: NumPy's warnings are not the user's)
            with np.errstate(all="ignore"):
                more = _probe(fn, padded, kinds, arrays)
        except Exception:  # noqa: BLE001 - (then what the example ran is all there is)
            more = {}
        for key, value in more.items():
            if key != VALUES:
                found.setdefault(key, value)
    return found


def _padded(value: Any, size: int = 1) -> Any:
    """``value`` with each axis of its arrays shorter than ``size`` made ``size`` long
    (an empty one zeros, else its elements cycled: not each repeated ``size`` times, 3
    long to 12, where a carry gaining a rank per element made 12 ** 12 of them), and for
    ``size`` 2 each integer from 0 to 2 two more, or None where it holds no such value."""
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        items = [_padded(v, size) for v in value]
        if all(v is None for v in items):
            return None
        return type(value)(v if p is None else p for v, p in zip(value, items))
    if isinstance(value, dict):
        items = {k: _padded(v, size) for k, v in value.items()}
        if all(v is None for v in items.values()):
            return None
        return {k: value[k] if items[k] is None else items[k] for k in value}
    if size == 2 and isinstance(value, (int, np.integer)) and not isinstance(
            value, (bool, np.bool_)) and 0 <= value <= 2:  # (a count: `range(1, n)`)
        return value + 2
    if not isinstance(value, np.ndarray) or value.dtype == object or not any(
            d < size for d in value.shape):
        return None
    if value.size == 0:
        return np.zeros([max(d, size) for d in value.shape], value.dtype)
    for axis in [a for a, d in enumerate(value.shape) if d < size]:
        value = np.take(value, np.arange(size) % value.shape[axis], axis=axis)  # (cycled)
    return value


def _probe(fn: Function, example: tuple, kinds: tuple | None = None,
           arrays: tuple[int, ...] = ()) -> dict[tuple[str, tuple], Any]:
    if kinds is None:
        kinds = tuple(_kind(x) for x in example)
    kinds = tuple(kinds[: len(example)]) + (LEAF,) * (len(fn.params) - len(example))
    fn = per_call(fn, kinds, arrays)  # (as the vmap's own: the same names)
    replay = Replay(facts(fn, kinds), effects=False)  # (the batched run prints, checks)
    replay.redraw = True  # (its draws run on the random state restored after)
    items = [Line(f"__record__({p!r}, {p})") for p in fn.params + fn.kwonly]
    items += _instrument(replay.statements(fn.body[:-1]))
    ret = fn.body[-1]
    assert isinstance(ret, Return)
    items.append(Line(f"__record__({atom_text(ret.value)!r}, {atom_text(ret.value)})"))
    items = spell_buffers(items, fn.aliases)
    params = list(fn.params[: len(example)])
    defaults = Module()
    rest = [f"{p}={default_text(fn, p, defaults)}" for p in fn.params[len(example):]]
    if fn.kwonly:  # keyword-only parameters take their defaults (vmap passes none)
        rest += ["*"] + [f"{p}={default_text(fn, p, defaults)}" if p in fn.defaults
                         else p for p in fn.kwonly]
    text = render_function("__probe__", ", ".join(params + rest), items)
    found: dict[tuple[str, tuple], Any] = {}
    # the example's values: a call on a path this example did not take is probed on
    # arguments computed from them (see ``replay_args``)
    wanted = set(fn.params) | {n for s in walk(fn.body) if isinstance(s, Let)
                               for n in uses(s)} | {  # (and the path each `if` took)
        s.test.name for s in walk(fn.body) if isinstance(s, If) and isinstance(
            s.test, Var)} if any(isinstance(s, (If, For)) for s in walk(fn.body)) else set()
    values: dict[str, Any] = {}
    found[VALUES] = values

    def record(name: str, value: Any) -> None:
        for path, leaf in _leaf_items(value):
            found.setdefault((name, path), int(np.ndim(leaf)))
        if name in wanted and name not in values:
            values[name] = _copied(value)

    def record_call(name: str, args: tuple, func: str) -> None:
        found.setdefault(("__call__", f"{name} = {func}(...)"), args)

    ns = {"np": np, **{k: getattr(runtime, k) for k in runtime.__all__}}
    ns.update(zip(fn.namespace, _unshared(tuple(fn.namespace.values()))))  # (a module's
    ns.update(defaults.namespace)  # generator: a copy draws, as an argument's does)
    ns["__record__"], ns["__record_call__"] = record, record_call
    ns["__plain__"] = PLAIN if PLAIN is not None else (lambda value: value)
    # the batched run prints and draws; psum(x) stands for x's rank
    with silenced(has_effects(fn)), random_state_kept(), collectives.probing():
        compile_module(text, ns, f"probe_{fn.name}")["__probe__"](*_unshared(example))
    return found


def run_silenced(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` printing, logging and warning nothing: a run that only learns a
    fact (an output's shape), whose kept statements the transformed run runs."""
    with silenced(True), random_state_kept():
        return fn(*_unshared(args))


@contextlib.contextmanager
def random_state_kept():
    """NumPy's global random state as it was before: a run that only learns a fact
    draws numbers the transformed run draws again."""
    state = np.random.get_state()
    try:
        yield
    finally:
        np.random.set_state(state)


def _unshared(args: tuple) -> tuple:
    """The arguments, each generator (a ``np.random.Generator`` passed in) a copy: the
    probe's draws leave the caller's generator where it was."""
    return tuple(copy.deepcopy(a) if isinstance(a, (np.random.Generator,
                 np.random.RandomState)) else a for a in args)


@contextlib.contextmanager
def silenced(effects: bool):
    """Nothing printed, logged or warned, where ``effects`` (the probe calls the user's
    own callees, whose kept statements the batched code runs again)."""
    if not effects:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        level = logging.root.manager.disable
        logging.disable(logging.CRITICAL)
        try:
            yield
        finally:
            logging.disable(level)


def _kind(x: Any) -> Kind:
    return kind_of(x)


def _leaf_items(value: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    if isinstance(value, (tuple, list)):  # namedtuples (np.linalg.eigh's) too
        out = []
        for i, v in enumerate(value):
            out += _leaf_items(v, path + (i,))
        return out
    if isinstance(value, dict):
        out = []
        for k, v in value.items():
            out += _leaf_items(v, path + (k,))
        return out
    if value is None or isinstance(value, (str, range, type)) or callable(value):
        return []
    if getattr(value, "dtype", None) == object:  # made from a None (np.zeros_like(None)
        return []  # on a path that left a name unbound): its rank says nothing
    return [(path, value)]


def _instrument(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if isinstance(item, Line):
            call = _call_target(item.text)
            if call is not None:
                args = f"({call[1]},)" if call[1] else "()"  # (`d.rvs(size=3)`: none)
                out.append(Line(f"__record_call__({call[0]!r}, {args}, {call[2]!r})"))
            out.append(item)
            if call is not None:  # (a NamedTuple it built, read as the dict of its fields)
                out.append(Line(f"{call[0]} = __plain__({call[0]})"))
            for name in sorted(item.defines):
                out.append(Line(f"__record__({name!r}, {name})"))
        elif isinstance(item, Block):
            out.append(Block(item.header, _instrument(item.body), _instrument(item.orelse)))
        elif not isinstance(item, Comment):
            out.append(item)
    return out


def _call_target(text: str) -> tuple[str, str, str] | None:
    """``h = helper(a, b)`` -> ("h", "a, b") for calls to functions that are not
    NumPy's or s2s's (user functions, whose batched versions need their own probe)."""
    tree = syntax.parse(text).body[0]
    if not (isinstance(tree, ast.Assign) and isinstance(tree.value, ast.Call)
            and len(tree.targets) == 1 and isinstance(tree.targets[0], ast.Name)):
        return None
    root = tree.value.func
    while isinstance(root, ast.Attribute):  # (`Model.loss(self, x)`: a user's, by
        root = root.value  # its class; NumPy's and the math modules' are not)
    if not isinstance(root, ast.Name) or (root is not tree.value.func and root.id in (
            "np", "math", "scipy", "special", "stats", "linalg", "signal")):
        return None
    return (tree.targets[0].id, ", ".join(ast.unparse(a) for a in tree.value.args),
            ast.unparse(tree.value.func))


def call_key(s: Let) -> tuple:
    """The key of the arguments the probe recorded for the call ``s``: its target and
    the function it calls (the branches of a choice of functions, ``(f if c else
    g)(x)``, bind one target, each calling its own function)."""
    return ("__call__", f"{s.target} = {s.params.get('spelling')}(...)")


def probe_the_other_path(fn: Function, s: Let, example: tuple,
                         kinds: tuple | None = None) -> tuple | None:
    """One example's arguments of the call ``s`` on a path the probe's example did
    not take: ``fn`` run again on the example with each `if` holding ``s`` (and every
    other `if` on the same test: the reverse sweep's replay of it) taking the branch
    that holds ``s``, its statements run as written (loops, tapes, pops), the values
    standing for an example there; None where that run fails or does not reach it."""
    sides = _path_to(fn.body, s)
    if not sides:
        return None

    def forced(block: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for st in block:
            if isinstance(st, If):
                test = st.test
                if isinstance(test, Var) and test.name in sides:
                    test = Const(sides[test.name] == 0, repr(sides[test.name] == 0))
                st = dataclasses.replace(st, test=test, body=forced(st.body),
                                         orelse=forced(st.orelse))
            elif isinstance(st, For):
                st = dataclasses.replace(st, body=forced(st.body))
            out.append(st)
        return out

    try:  # (values standing for an example: NumPy's warnings are not the user's)
        with np.errstate(all="ignore"):
            found = _probe(dataclasses.replace(fn, body=forced(fn.body)), example, kinds)
    except Exception:  # noqa: BLE001 - (then the call stays refused)
        return None
    args = found.get(call_key(s))
    return None if args is None else tuple(args)


def replay_args(fn: Function, s: Let, values: dict[str, Any]) -> tuple | None:
    """One example's arguments of the call ``s`` (a statement of ``fn``) on a path the
    probe's example did not take: computed from the values the probe recorded
    (``VALUES``) by the statements before ``s`` on its path that make them
    (``w = 2.0 * x`` before ``act(x, w)``), run as Python.  None where one cannot be
    computed so (a value bound in a loop, a write in place, a draw)."""
    joins: set[str] = set()  # (the joins of the `if`s around it: the probe's are the
    before = _before(fn.body, s, _path_to(fn.body, s) or {}, joins)  # other path's)
    if before is None:
        return None
    values = {k: v for k, v in values.items() if k not in joins}
    made: dict[str, Let] = {}
    loops: list[str] = []  # (the loops around ``s``: their first iteration, index 0)
    for st in before:
        if isinstance(st, Let):
            made[st.target] = st
        elif isinstance(st, For):
            loops.append(st.target)
        else:
            for j in st.joins:
                made.pop(j, None)
    if loops:  # (a loop the example ran no iteration of: its arrays' empty axes are
        # one long, zeros standing for a row, which only the ranks are read from)
        values = {k: np.zeros([max(d, 1) for d in v.shape], v.dtype) if isinstance(
            v, np.ndarray) and v.size == 0 else v for k, v in values.items()}
        values.update({k: 0 for k in loops})
    needed: dict[str, Let] = {}
    stack = [a.name for a in s.args if isinstance(a, Var) and a.name not in values]
    inputs: set[str] = set()
    while stack:
        name = stack.pop()
        if name in needed or name in inputs:
            continue
        if name in values:
            inputs.add(name)
            continue
        st = made.get(name)
        if st is None or st.prim in ("setitem", "add_at", "append", "pop", "kept", "draw"):
            return None
        needed[name] = st
        stack += list(uses(st))
    inputs |= {a.name for a in s.args if isinstance(a, Var) and a.name in values}
    lets = [st for st in before if isinstance(st, Let) and needed.get(st.target) is st]
    replay = Replay(facts(fn, tuple(LEAF for _ in fn.params)), effects=False)
    items = spell_buffers(replay.statements(lets), fn.aliases)
    items.append(Line(f"return ({', '.join(atom_text(a) for a in s.args)},)"))
    names = sorted(inputs)
    text = render_function("__args__", ", ".join(names), items)
    ns = {"np": np, **{k: getattr(runtime, k) for k in runtime.__all__}}
    ns.update(zip(fn.namespace, _unshared(tuple(fn.namespace.values()))))
    try:
        with silenced(True), random_state_kept():
            return compile_module(text, ns, f"args_{fn.name}")["__args__"](
                *(_copied(values[n]) for n in names))
    except Exception:  # noqa: BLE001 - (then the call stays refused)
        return None


def _before(block: list[Stmt], target: Any, sides: dict[str, int],
            joins: set[str]) -> list[Stmt] | None:
    """The statements that run before ``target`` on its path, in order, or None where
    ``target`` is not in ``block`` (or is in a loop).  An `if` holding it is entered,
    and so is an earlier `if` on the test of one holding it (``sides``: test name ->
    the branch taken, 0 or 1), their joins added to ``joins``: what the probe
    recorded for those names is the other path's value."""
    acc: list[Stmt] = []
    for st in block:
        if st is target:
            return acc
        if isinstance(st, If):
            for k, branch in enumerate((st.body, st.orelse)):
                inner = _before(branch, target, sides, joins)
                if inner is not None:
                    joins.update(st.joins)
                    return acc + inner
            side = sides.get(st.test.name) if isinstance(st.test, Var) else None
            if side is not None:
                joins.update(st.joins)
                end = Return(Const(None, "None"), None)
                acc += _before([*(st.body, st.orelse)[side], end], end, sides, joins) or []
                continue
        elif isinstance(st, For) and _path_to(st.body, target) is not None:
            if st.iter is None:
                return None  # (in a while loop: its values are per iteration)
            inner = _before(st.body, target, sides, joins)
            if inner is None:
                return None
            joins.add(st.target)  # (its first iteration: see ``replay_args``)
            return acc + [st] + inner
        acc.append(st)
    return None


def _path_to(block: list[Stmt], target: Any) -> dict[str, int] | None:
    """The tests of the `if`s holding ``target``, with the branch it is on."""
    for st in block:
        if st is target:
            return {}
        if isinstance(st, If):
            for k, branch in enumerate((st.body, st.orelse)):
                inner = _path_to(branch, target)
                if inner is not None:
                    return {**inner, **({st.test.name: k} if isinstance(st.test, Var)
                                        else {})}
        elif hasattr(st, "body"):
            inner = _path_to(st.body, target)
            if inner is not None:
                return inner
    return None
