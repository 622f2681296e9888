"""The steady-state call of a ``grad``-like transform whose arguments are pytrees (a
dict, tuple or list of arrays, a NamedTuple, a registered dataclass), beside
api/hotcalls.py's of plain arrays.

Such a call took the checked path every time: the arguments' plain form built
(``trees.plain_args``), the transform called again on it, its signature hashed, the
entry's guards, the result cast leaf by leaf against the arguments and the module's
arrays (``_postprocess``), the gradient rebuilt in the argument's types.  A *tree
plan* keeps what a specialized entry needs under one flat key (``tree_key``) of
everything the plan assumes:

- the containers' exact types (``dict``, ``tuple``, ``list``, a NamedTuple's class, a
  registered class), a dict's keys in their order, a registered object's child keys,
  the number of items;
- each leaf's type, an array's shape and dtype (so its ndim), an integer's value
  (integers are part of the call signature, ``signatures.call_signature``);

and any other leaf or node (``None``, an ``OrderedDict``, a complex or object leaf, a
registered object not differentiated, whose other attributes reach the code) takes
no plan.  A plan is made after a checked call ran the specialized entry of the plain
arguments' signature; a later call with the same key runs that entry's code after its
guards (the rules' generation, the free names' objects), and returns the gradient as
it is where the code returns fresh arrays (``returns_fresh``) of the primals' dtypes
and shapes (a NumPy scalar for a 0-d primal becomes a new 0-d array, as
``_cast_like`` makes it); anything else is cast as the checked path casts it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..primitives.registry import _GENERATION
from . import trees
from .arguments import zero_d
from .hotcode import MISS, hot_function
from .outputs import owned_items
from .signatures import call_signature, flat_key, read_free_names
from .tree_util import NODES

__all__ = ["TreeCalls", "tree_key"]

_NP_SCALARS = frozenset({np.float16, np.float32, np.float64, np.longdouble})
_SCALAR_RESULTS = frozenset({float, np.float64, np.float32, np.float16, np.longdouble})
_FLOAT64 = np.dtype(np.float64)


def _walk(a: Any, key: list, diff: bool) -> Any:
    """Append ``a``'s structure to ``key`` and return its plain form (``a`` itself
    where nothing in it changes: ``trees.plain`` of it, without ``None``), or MISS
    where the fast path takes no such argument.  (An array leaf of a container is
    read inline: a call less per leaf.)"""
    t = type(a)
    if t is np.ndarray:
        key.append(a.shape)
        key.append(a.dtype)
        return a
    if t is dict or t is tuple or t is list:
        key.append(t)
        key.append(tuple(a) if t is dict else len(a))
        changed = None
        for j, v in enumerate(a.values() if t is dict else a):
            if type(v) is np.ndarray:
                key.append(v.shape)
                key.append(v.dtype)
                continue
            got = _walk(v, key, diff)
            if got is MISS:
                return MISS
            if got is not v:
                if changed is None:
                    changed = {}
                changed[j] = got
        if changed is None:
            return a
        items = [changed.get(j, v) for j, v in enumerate(a.values() if t is dict else a)]
        return dict(zip(a, items)) if t is dict else t(items)
    if t is float or t in _NP_SCALARS:
        key.append(t)
        return a
    if t is int or t is bool:  # (their values are part of the signature)
        key.append(t)
        key.append(a)
        return a
    if isinstance(a, tuple) and hasattr(t, "_fields"):  # a NamedTuple
        key.append(t)
        fields = trees.of_class(trees.Record(), t)
        for k, v in zip(t._fields, a):
            got = _walk(v, key, diff)
            if got is MISS:
                return MISS
            fields[k] = got
        return fields
    if t in NODES and diff:  # (not differentiated, its other attributes reach the code)
        node = trees._fields(a)
        assert node is not None
        keys, children, _ = node
        key.append(t)
        key.append(tuple(keys))
        fields = trees.of_class(trees.Fields(), t)
        for k, v in zip(keys, children):
            got = _walk(v, key, diff)
            if got is MISS:
                return MISS
            fields[k] = got
        return fields
    return MISS


def tree_key(args: tuple, argnums: tuple[int, ...]) -> tuple[tuple | None, tuple]:
    """``(key, plain)``: the flat key of ``args`` (None where the fast path takes no
    such call) and the arguments' plain forms."""
    key: list[Any] = [len(args)]
    plain = []
    for i, a in enumerate(args):
        if type(a) is np.ndarray:
            key.append(a.shape)
            key.append(a.dtype)
            plain.append(a)
            continue
        got = _walk(a, key, i in argnums)
        if got is MISS:
            return None, args
        plain.append(got)
    return tuple(key), tuple(plain)


def _same_plain(a: Any, b: Any) -> bool:
    """The same containers (types, keys, order) holding the same leaf objects."""
    t = type(a)
    if t is not type(b):
        return False
    if t is tuple or t is list:
        return len(a) == len(b) and all(_same_plain(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_plain(a[k], b[k]) for k in a)
    return a is b


def _fresh_like(g: Any, p: Any) -> Any:
    """The gradient ``g`` (arrays the code made) as casting it like the primal ``p``
    would give it, where that needs no cast: the same containers (``g`` itself where
    every leaf is already right), each array of its primal's dtype and shape, a
    NumPy scalar of a 0-d primal as a new 0-d array; else MISS."""
    tg = type(g)
    if tg is np.ndarray:
        if type(p) is np.ndarray and g.dtype is p.dtype and g.shape == p.shape and \
                g.flags.writeable:
            return g
        return MISS
    if tg is dict:
        tp = type(p)
        if not (tp is dict or tp is trees.Fields or tp is trees.Record) or len(g) != len(p):
            return MISS
        changed = None
        for (k, v), (kp, q) in zip(g.items(), dict.items(p)):
            if k != kp:
                return MISS
            if type(v) is np.ndarray and type(q) is np.ndarray and v.dtype is q.dtype \
                    and v.shape == q.shape and v.flags.writeable:
                continue
            got = _fresh_like(v, q)
            if got is MISS:
                return MISS
            if changed is None:
                changed = {}
            changed[k] = got
        return g if changed is None else {k: changed.get(k, v) for k, v in g.items()}
    if tg is tuple or tg is list:
        if type(p) is not tg or len(g) != len(p):
            return MISS
        items = [_fresh_like(v, q) for v, q in zip(g, p)]
        if any(x is MISS for x in items):
            return MISS
        return g if all(x is v for x, v in zip(items, g)) else tg(items)
    if tg in _SCALAR_RESULTS:
        tp = type(p)
        if tp is float:
            return np.asarray(g, dtype=_FLOAT64)
        if tp is np.ndarray and p.shape == () or tp in _NP_SCALARS:
            return np.asarray(g, dtype=p.dtype)
    return MISS


def _guards_pass(plan: tuple, spec_error: Exception | None, token: object) -> bool:
    """The checks ``HotCalls._plan_call`` makes inline: the rules' generation, no
    background specializing failed, the free names' objects; and the jit's token
    (``token``: it must have run the entry)."""
    return plan[4] == _GENERATION[0] and spec_error is None and (
        plan[2] is None or plan[2]()) and (token is None or token in plan[0].jits)


class TreeCalls:
    """``_tree_plans``: ``tree_key`` -> ``(entry, code, free-names check or None,
    whether the code reads free names, the rules' generation, the resolved argnums,
    whether the gradient needs rebuilding in the arguments' types, whether the
    transform is a value_and_grad, whether its argnums are a tuple)``."""

    _tree_plans: dict[tuple, tuple]
    _spec_error: Exception | None

    def _tree_call(self, args: tuple, plans: dict | None = None, token: object = None,
                   keep: dict | None = None) -> Any:
        """The result of the code planned for the arguments' tree key, or ``MISS``.
        ``plans``: where the plan is looked up (the transform's own, or an s2s.jit's
        copies of those it has counted); ``token``: an s2s.jit's, which must have
        run the entry before; ``keep``: that jit's copies, where the plan goes."""
        argnums = self._argnums_by_count.get(len(args))  # type: ignore[attr-defined]
        if argnums is None:
            return MISS
        key, plain = tree_key(args, argnums)
        plan = (self._tree_plans if plans is None else plans).get(key) \
            if key is not None else None
        if plan is None or not _guards_pass(plan, self._spec_error, token):
            return MISS
        if keep is not None:  # (an s2s.jit's copies: its calls run them directly)
            keep[key] = plan
        elif token is None and plan[9] is not None:  # (the next call's hot path)
            self._hotfn = plan[9]
        fn = plan[1]
        if plan[3]:
            read_free_names(fn)
        return self._tree_result(plan, args, plain, fn(*plain))

    def _tree_result(self, plan: tuple, args: tuple, plain: tuple, result: Any) -> Any:
        """The result of a tree plan's code on ``plain`` (the plain forms of ``args``)
        as the checked path makes it."""
        hit, fn, argnums = plan[0], plan[1], plan[5]
        vag = plan[7]
        if vag:  # (a value that is an argument's array, copied: api/outputs.py)
            result = owned_items(result, (0,), plain, fn, fn)
        grads = result[1] if vag else result
        fixed: Any = MISS
        if hit.fresh:
            if plan[8]:  # (argnums a tuple)
                fixed = tuple(_fresh_like(g, plain[i]) for g, i in zip(grads, argnums))
                if any(x is MISS for x in fixed):
                    fixed = MISS
            else:
                fixed = _fresh_like(grads, plain[argnums[0]])
        if fixed is MISS:  # (cast as the checked path casts)
            out = self._postprocess(result, plain, argnums, hit.fresh, fn, fn)  # type: ignore[attr-defined]
            fixed = out[1] if vag else out
        if plan[6]:  # the gradient in the arguments' own types
            if plan[8]:
                fixed = tuple(trees.unplain(args[i], g) for i, g in zip(argnums, fixed))
            else:
                fixed = trees.unplain(args[argnums[0]], fixed)
        return (zero_d(result[0]), fixed) if vag else fixed  # (a 0-d value: JAX's Array)

    def _plan_tree(self, args: tuple) -> None:
        """After a checked call of pytree arguments: a tree plan for them, where the
        plain arguments' signature has an entry ready (specialized, not pending)."""
        argnums = self._argnums_by_count.get(len(args))  # type: ignore[attr-defined]
        if argnums is None:
            return
        if flat_key(args) is not None:  # (plain arrays: api/hotcalls.py plans them)
            return
        key, plain = tree_key(args, argnums)
        if key is None:
            return
        if not _same_plain(plain, trees.plain_args(args, argnums)):
            return  # (the walk must make the plain forms trees.plain makes)
        nodes = any(trees.has_nodes(args[i], True) for i in argnums)
        sig = call_signature(plain)
        hit = self._by_signature.get(sig) if sig is not None else None  # type: ignore[attr-defined]
        if hit is None or hit.pending or hit.text is None or tuple(hit.argnums) != argnums \
                or not hit.valid():
            return
        check = None
        if hit.free.items:
            hit.free.same()  # (compiles the check: FreeSnapshot.same)
            check = hit.free.same
        plan = (hit, hit.fn, check, hit.free_names, hit.generation, argnums, nodes,
                self.mode == "value_and_grad", self.tuple_out)  # type: ignore[attr-defined]
        # (a generated hot path where plain is args: no node, no None, in args)
        simple = all(p is a for p, a in zip(plain, args)) and not nodes
        primal = argnums[0] if hit.fresh and not plan[7] and not plan[8] else None
        self._tree_plans[key] = plan + (hot_function(
            self, plan, args, lambda args, r: self._tree_result(plan, args, args, r),
            primal) if simple else None,)

    def _mark_tree(self, args: tuple, token: object) -> None:
        """An s2s.jit's call of these arguments counted: their tree plan's entry as
        one the jit may run directly."""
        argnums = self._argnums_by_count.get(len(args))  # type: ignore[attr-defined]
        if argnums is None:
            return
        key, _ = tree_key(args, argnums)
        plan = self._tree_plans.get(key) if key is not None else None
        if plan is not None:
            plan[0].jits.add(token)
