"""vmap: from a normalized function to its batched version, as code.

The emitted function takes the batched arguments, moves each batch axis to the front
(``x = np.moveaxis(x, 1, 0)`` for ``in_axes=1``), and runs the user's statements on
whole batches: a statement whose operands are all unbatched is kept as written, one
with a batched operand is rewritten by its primitive's batching rule
(:mod:`s2s.batching`).

Rules need each value's per-example rank (``x[:, None]`` lines up a batched vector
with an unbatched matrix; ``axis=None`` becomes ``axis=(1, 2)``).  NumPy code does not
say its ranks, so the first call runs the user's function once on the first example
(a *probe*) and records the rank of every value; the emitted code is specialized on
the argument ranks, as JAX specializes on shapes.

Control flow whose decisions do not depend on batched values is kept: a loop over
``range(n)`` stays a loop, an ``if`` on an unbatched value stays an ``if``.  An ``if``
on a batched value computes both branches and selects per example with ``np.where``.
A loop whose exit depends on batched values (a ``while`` on a batched test, a
``break`` under one) runs until every example has left it; an example that has left
keeps its values (``np.where`` on a mask of the examples still running).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..emit.code import Block, Comment, Line, compile_module, render_function
from ..errors import TransformError
from ..frontend.normalize import unroll_container_loops
from ..ir.kinds import LEAF, Kind, Seq, Tree, leaf_paths, literal, path_text
from ..ir.nodes import (
    Break,
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
from ..ir.spelling import atom_text, index_text
from ..primitives.batching import (
    Batch,
    NoBatchRule,
    align,
    batched_items,
    rule_for,
    shifted,
)
from .forward import effective_carried
from .reverse import (
    Module,
    Spec,
    _breaks,
    _callee,
    _dead_code,
    _forward,
    _Reverse,
    _signature,
    _spell_buffers,
    _unpack_text,
    _unpackable,
    default_text,
    stem,
)


@dataclass
class VmapSpec:
    """What to emit: which leaves of each positional argument are batched, along
    which axis, and where the result's batch axis goes."""

    in_axes: tuple[Any, ...]  # per positional parameter: None, an int, or a tree of those
    out_axes: Any  # None, an int, or a tree of those (a prefix of the output's)
    arg_kinds: tuple[Kind, ...]
    example: tuple[Any, ...]  # one example's arguments (the probe runs on them)
    nargs: int | None = None
    ranks: dict[tuple[str, tuple], int] = field(default_factory=dict)


def emit_vmap(fn: Function, spec: VmapSpec, module: Module, name: str) -> str:
    module.taken.add(name)
    module.taken |= fn.names.taken  # helper names must not shadow its locals
    module.namespace.update(fn.namespace)
    fn = unroll_container_loops(fn, spec.arg_kinds)  # (probe unrolls alike: same names)
    text = _Vmap(fn, spec, module).build(name)
    module.functions.append(text)
    return name


def _axes_of(axes: Any, kind: Kind) -> dict[tuple, Any]:
    """Each leaf path of ``kind`` -> its axis, from a prefix tree of axes."""
    if axes is None or isinstance(axes, int):
        return {p: axes for p in leaf_paths(kind)}
    out: dict[tuple, Any] = {}
    assert isinstance(kind, Tree)
    items = axes.items() if isinstance(axes, dict) else enumerate(axes)
    for key, sub in items:
        for p, a in _axes_of(sub, kind.child(key)).items():
            out[(key,) + p] = a
    return out


def _param_atoms(s: Let) -> list[Any]:
    from ..ir.nodes import atoms_in

    return [a for k, v in s.params.items() if k != "callee" for a in atoms_in(v)]


class _Vmap(Batch):
    def __init__(self, fn: Function, spec: VmapSpec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        self.a = _Reverse(fn, Spec("vjp", (), True, False, spec.arg_kinds), module)
        self.names = self.a.names
        self.b: dict[str, set[tuple]] = {}  # value -> its batched leaf paths
        self.ranks = spec.ranks
        self.batch_size = self.names.fresh("n_batch")
        self.size_used = False
        self.items: dict[str, list[Any]] = {}  # a list of known length -> its items
        self.result_batched: set[tuple] = set()
        # an `if` renamed inside a selected branch -> (the copy, the function's own)
        self.origin: dict[int, tuple[If, If]] = {}
        self.flags: set[str] = set()  # names a lowered `break` binds (True: leaving)
        # the masks of the loops being emitted whose examples leave apart: (name,
        # True for a mask of those done); a write keeps the done examples' elements
        self.write_masks: list[tuple[str, bool]] = []
        # loops the examples leave apart (masked), by id: their list pushes and pops
        # are checked to pair up per example (_TapeOrder)
        self.lane_loops: set[int] = set()
        # which steps of such a loop an example runs ("first" or "last" ones), and
        # for a list, those of the loop that last pushed it
        self.lane_align: dict[int, str] = {}
        self.list_align: dict[str, str] = {}

    @property
    def if_joins(self) -> set[str]:
        """The names an `if` joins (bound on either path)."""
        if getattr(self, "_joined", None) is None:
            self._joined = {j for st in walk(self.fn.body) if isinstance(st, If)
                            for j in st.joins}
        return self._joined

    # ---- the facts rules ask for ------------------------------------------------

    def kind(self, var: str) -> Kind:
        return self.a.kinds.get(var, LEAF)

    def batched(self, atom: Any, path: tuple = ()) -> bool:
        if not isinstance(atom, Var):
            return False
        paths = self.b.get(atom.name, set())
        return any(p[: len(path)] == path for p in paths)

    def rank(self, atom: Any, path: tuple = ()) -> int:
        if isinstance(atom, Const):
            return int(np.ndim(atom.value)) if not isinstance(
                atom.value, (tuple, list, str, type(None))) else 0
        name = atom.name
        for key in ((name, path), (self.fn.aliases.get(name, name), path)):
            if key in self.ranks:
                return self.ranks[key]
        inferred = self._infer_rank(name) if not path else None
        if inferred is not None:
            self.ranks[(name, ())] = inferred
            return inferred
        raise NoBatchRule(
            f"the rank of `{name}` is unknown (the first example never computed it)",
            "make the first example take every branch and loop the others take",
        )

    def _infer_rank(self, name: str) -> int | None:
        """The rank of a value the probe did not see (a branch the first example did
        not take), where its primitive says it: broadcasting takes the largest rank,
        a full reduction gives a scalar."""
        from ..primitives import PRIMITIVES

        s = self.a.producer.get(name)
        if s is None and name in self.a.int_vars:
            return 0  # a loop's index (a Python int)
        if s is not None and s.prim == "getitem" and isinstance(s.args[0], Var) and (
                isinstance(self.kind(s.args[0].name), (Seq, Tree))):
            try:
                return self._leaf_rank(name, ())
            except NoBatchRule:
                return None
        if s is None or s.prim not in PRIMITIVES:
            return None
        family = PRIMITIVES[s.prim].family
        try:
            if family in ("elementwise", "piecewise-constant", "binary", "comparison",
                          "special") or s.prim in ("identity", "zeros_like", "ones_like"):
                return max((self.rank(a) for a in s.args), default=0)
            if family == "reduction" and "axis" not in s.params and not s.prim.startswith(
                    ("cum", "nancum")):  # (a cumulative reduction keeps a flat axis)
                return 0
            if s.prim.startswith(("cum", "nancum")) and "axis" not in s.params:
                return 1
            if s.prim in ("size", "ndim", "len", "float", "int"):
                return 0
            if s.prim == "shape":
                return 1
            if s.prim == "eye":
                return 2
            if s.prim in ("unbroadcast", "matmul_lhs_bar", "dot_lhs_bar",
                          "matmul_rhs_bar", "dot_rhs_bar"):
                target = {"unbroadcast": 1}.get(s.prim, 1 if "lhs" in s.prim else 2)
                return self.rank(s.args[target])
            if s.prim == "broadcast_to":
                shape = s.args[1] if len(s.args) > 1 else s.params.get("shape")
                if isinstance(shape, Const):
                    return len(shape.value) if isinstance(shape.value, tuple) else 1
                prod = self.a.producer.get(shape.name) if isinstance(shape, Var) else None
                if prod is not None and prod.prim == "shape":
                    return self.rank(prod.args[0])
            return self._infer_shape_rank(s)
        except NoBatchRule:
            return None
        return None

    def _leaf_rank(self, name: str, path: tuple) -> int:
        """The rank of the leaf at ``path`` in ``name``, followed through the tuples
        and lists it was read from (a popped tape entry: the value pushed)."""
        key = (name, path)
        if key in self.ranks:
            return self.ranks[key]
        s = self.a.producer.get(name)
        if s is not None and s.prim == "getitem" and isinstance(s.args[0], Var):
            base = s.args[0].name
            if isinstance(self.kind(base), Seq):  # an item: what was appended
                root = self.fn.aliases.get(base, base)
                for st in walk(self.fn.body):
                    if isinstance(st, Let) and st.prim == "append" and (
                            self.fn.aliases.get(st.args[0].name, st.args[0].name) == root
                            and isinstance(st.args[1], Var)):
                        return self._leaf_rank(st.args[1].name, path)
            elif isinstance(self.kind(base), Tree):
                return self._leaf_rank(base, (self.a._container_key(
                    s, self.kind(base)),) + path)
        if path and s is not None and s.prim in ("append", "pop") and isinstance(
                s.args[0], Var):  # a list of known length, one item more or less
            kind = self.kind(name)
            if s.prim == "append" and isinstance(kind, Tree) and isinstance(
                    s.args[1], Var) and path[0] == len(kind.keys) - 1:
                return self._leaf_rank(s.args[1].name, path[1:])
            return self._leaf_rank(s.args[0].name, path)
        if path and s is not None and s.prim in ("make_tuple", "make_list", "make_dict"):
            kind = self.kind(name)
            if isinstance(kind, Tree):
                inner = s.args[list(kind.keys).index(path[0])]
                if isinstance(inner, Var):
                    return self._leaf_rank(inner.name, path[1:])
                return self.rank(inner)
        if not path and self._infer_rank_of_producer(name) is not None:
            return self.ranks[(name, ())]
        raise NoBatchRule(f"the rank of `{name}` is unknown (the first example never "
                          "computed it)")

    def _infer_rank_of_producer(self, name: str) -> int | None:
        s = self.a.producer.get(name)
        if s is None or s.prim == "getitem" and isinstance(s.args[0], Var) and (
                isinstance(self.kind(s.args[0].name), (Seq, Tree))):
            return None
        r = self._infer_rank(name)
        if r is not None:
            self.ranks[(name, ())] = r
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
            return self.rank(args[0])
        if s.prim in ("array", "asarray") and len(args) == 1 and isinstance(
                args[0], Var) and self.kind(args[0].name) == LEAF:
            return self.rank(args[0])  # a copy (the gradient's copy before a write)
        if s.prim in ELEMENTWISE_RUNTIME:
            return max((self.rank(a) for a in args), default=0)
        if s.prim == "ravel":
            return 1
        if s.prim in ("outer", "linalg.outer"):
            return 2
        if s.prim in ("matmul", "dot", "inner") and len(args) == 2:
            ra, rb = self.rank(args[0]), self.rank(args[1])
            if s.prim == "matmul":
                return (0 if ra == rb == 1 else rb - 1 if ra == 1 else ra - 1 if rb == 1
                        else max(ra, rb))
            if ra == 0 or rb == 0:
                return max(ra, rb)
            return ra + rb - 2
        if s.prim == "vdot":
            return 0
        if s.prim in ("trace", "linalg.trace") and len(args) == 1 and not params:
            return self.rank(args[0]) - 2
        if s.prim == "linalg.solve" and len(args) == 2:
            return self.rank(args[1])
        if s.prim == "reshape" and len(args) == 2 and isinstance(args[1], Const):
            shape = args[1].value
            return len(shape) if isinstance(shape, tuple) else 1
        if s.prim in ("reshape", "zeros", "ones", "full") and args and isinstance(
                args[s.prim == "reshape"], Var):  # np.reshape(g, np.shape(a))
            prod = self.a.producer.get(args[s.prim == "reshape"].name)
            if prod is not None and prod.prim == "shape" and not prod.params:
                return self.rank(prod.args[0])
            return None
        if s.prim == "add_at" and args:
            return self.rank(args[0])
        if s.prim == "expand_dims" and len(args) == 2 and isinstance(args[1], Const):
            n = args[1].value
            return self.rank(args[0]) + (len(n) if isinstance(n, tuple) else 1)
        if s.prim == "rhs_columns" and len(args) == 2:
            return self.rank(args[0]) + (self.rank(args[1]) == 1)
        if s.prim in ("concatenate", "stack") and args and isinstance(args[0], Var):
            prod = self.a.producer.get(args[0].name)
            if prod is None or prod.prim not in ("make_list", "make_tuple") or not (
                    prod.args) or not static_axis:
                return None
            if s.prim == "concatenate" and isinstance(axis, Const) and (
                    axis.value is None):
                return 1
            return self.rank(prod.args[0]) + (s.prim == "stack")
        if s.prim == "tile" and len(args) == 2 and isinstance(args[1], Const):
            reps = args[1].value
            return max(self.rank(args[0]), len(reps) if isinstance(reps, tuple) else 1)
        if s.prim == "take" and len(args) == 2 and static_axis:
            if axis is None or axis.value is None:
                return self.rank(args[1])
            return self.rank(args[0]) - 1 + self.rank(args[1])
        if (_family(s.prim) == "reduction" and isinstance(axis, Const)
                and not s.prim.startswith(("cum", "nancum")) and len(args) == 1
                and set(params) <= {"axis", "keepdims"}):
            keep = params.get("keepdims")
            if isinstance(keep, Const) and keep.value:
                return self.rank(args[0])
            if axis.value is None:
                return 0
            n = len(axis.value) if isinstance(axis.value, tuple) else 1
            return self.rank(args[0]) - n
        return None

    def _index_rank(self, s: Let) -> int | None:
        """Per-example rank of ``y[index]`` with basic or integer-array indexing."""
        rank = self.rank(s.args[0])
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
                if self.batched(item):
                    return None
                r = self.rank(item)
                if r > 1:
                    return None  # (an int index array or a mask of rank 1: one axis)
                advanced.append(r)
                rank -= 1
        return rank + max(advanced, default=0)

    def out_rank(self, s: Let) -> int:
        return self.rank(Var(s.target))

    def use_batch_size(self) -> str:
        self.size_used = True
        return self.batch_size

    # ---- building -----------------------------------------------------------------

    def build(self, name: str) -> str:
        self.a.analyse()
        nargs = len(self.fn.params) if self.spec.nargs is None else self.spec.nargs
        head: list[Any] = []
        first_batched = None
        for i, p in enumerate(self.fn.params[:nargs]):
            axes = _axes_of(self.spec.in_axes[i], self.kind(p))
            for path, axis in axes.items():
                if axis is None:
                    continue
                self.b.setdefault(p, set()).add(path)
                leaf = path_text(p, path)
                if first_batched is None:
                    first_batched = leaf
                if axis != 0:
                    if path:
                        raise TransformError(
                            "in_axes other than 0 for a leaf inside a container are not "
                            "supported yet", self.fn.loc, "move the axis to the front first",
                        )
                    head.append(Line(f"{p} = np.moveaxis({p}, {axis}, 0)"))
        body: list[Any] = []
        self.block(self.fn.body[:-1], body)
        ret = self.fn.body[-1]
        assert isinstance(ret, Return)
        result = ret.value
        kind = self.kind(result.name) if isinstance(result, Var) else LEAF
        if self.spec.out_axes == "auto":  # a callee: its unbatched results stay so
            out_axes = {p: 0 if self.batched(result, p) else None for p in leaf_paths(kind)}
            self.result_batched = {p for p, a in out_axes.items() if a is not None}
        else:
            out_axes = _axes_of(self.spec.out_axes, kind)
        leaves = {}
        for path in leaf_paths(kind):
            text = self.leaf_text(result, path)
            axis = out_axes[path]
            if axis is None:
                if self.batched(result, path):
                    raise ValueError(  # JAX's words
                        "at vmap out_axes, got axis spec None but output was batched "
                        "on axis 0"
                    )
                leaves[path] = text
                continue
            if not self.batched(result, path):  # unbatched: the same for every example
                n = self.use_batch_size()
                text = f"np.broadcast_to({text}, ({n}, *np.shape({text})))"
            if axis != 0:
                text = f"np.moveaxis({text}, 0, {axis})"
            leaves[path] = text
        ret_line = Line(f"return {literal(kind, lambda p: leaves[p])}")
        if self.size_used:
            if first_batched is None:
                raise TransformError("vmap needs a batched argument", self.fn.loc)
            head.append(Line(f"{self.batch_size} = np.shape({first_batched})[0]"))
        _TapeOrder(self).check()
        body = _dead_code(body, set(ret_line.uses))
        items = _spell_buffers(head + body + [ret_line], self.fn.aliases)
        signature = _signature(self.fn, list(self.fn.params), False, self.module)
        return render_function(name, signature, items)

    def _iter_text(self, atom: Any) -> str:
        """A loop's iterable spelled from its ``range`` (and ``reversed``) statements."""
        prod = self.a.producer.get(atom.name) if isinstance(atom, Var) else None
        if prod is None:
            return atom_text(atom)
        if prod.prim == "reversed":
            return f"reversed({self._iter_text(prod.args[0])})"
        return f"range({', '.join(atom_text(a) for a in prod.args)})"

    def leaf_text(self, atom: Any, path: tuple) -> str:
        """A leaf of a container, read through the literal that built it."""
        prod = self.a.producer.get(atom.name) if isinstance(atom, Var) and path else None
        if prod is not None and atom.name in self.if_joins:
            prod = None  # (its producer is one branch's: the join is either)
        if prod is not None and prod.prim in ("make_tuple", "make_list", "make_dict"):
            kind = self.kind(atom.name)
            assert isinstance(kind, Tree)
            inner = prod.args[list(kind.keys).index(path[0])]
            if isinstance(inner, Var):
                return self.leaf_text(inner, path[1:])
        return path_text(atom_text(atom), path)

    def block(self, stmts: list[Stmt], out: list[Any]) -> None:
        for s in stmts:
            if isinstance(s, Let):
                self.let(s, out)
            elif isinstance(s, If):
                self.if_(s, out)
            elif isinstance(s, For):
                self.for_(s, out)
            elif isinstance(s, Break):
                out += _forward([s], self.a)

    def fail(self, s: Any, err: NoBatchRule) -> TransformError:
        return TransformError(
            f"vmap cannot batch this: {err.what}", s.loc,
            err.hint or "compute this part outside the vmapped function",
        )

    # ---- statements ---------------------------------------------------------------

    def let(self, s: Let, out: list[Any]) -> None:
        # operands, and atoms among the parameters (an index, an axis): any batched?
        batched_args = [a for a in list(s.args) + _param_atoms(s) if self.batched(a)]
        if s.prim == "setitem":
            self.setitem(s, out)
            return
        if s.prim in ("make_list", "make_tuple"):
            self.items[s.target] = list(s.args)
        if s.prim == "append" and s.args[0].name in self.items:
            self.items[s.target] = self.items[s.args[0].name] + [s.args[1]]
        if s.prim == "append":
            base, item = s.args
            kind = self.kind(s.target)
            paths = set(self.b.get(base.name, set()))
            item_paths = self.b.get(item.name, set()) if isinstance(item, Var) else set()
            if isinstance(kind, Tree):  # a list of known length: a slot per item
                n = len(kind.keys) - 1
                paths |= {(n,) + p for p in item_paths}
            else:  # a list grown in a loop: its items' batched leaves, under "*"
                paths |= {(SEQ_ITEM,) + p for p in item_paths}
            if paths:
                self.b[s.target] = paths
            if self.write_masks:  # (under batched control flow: see _TapeOrder)
                text = _forward([s], self.a)[0].text
                out.append(Line(f"{text}  # every example pushes; junk for those off "
                                "this path", keep=True))
                return
            out += _forward([s], self.a)
            return
        if s.prim == "zeros_list":  # zeros batched where the list's items are
            if self.b.get(s.args[0].name):
                self.b[s.target] = set(self.b[s.args[0].name])
            out += _forward([s], self.a)
            return
        if s.prim == "pop":  # the same list, one item shorter
            if self.b.get(s.args[0].name):
                self.b[s.target] = set(self.b[s.args[0].name])
            out += _forward([s], self.a)
            return
        if s.prim == "getitem" and isinstance(self.kind(s.args[0].name), Seq):
            paths = self.b.get(s.args[0].name, set())
            self.b[s.target] = {p[1:] for p in paths if p[:1] == (SEQ_ITEM,)}
            out += _forward([s], self.a)
            return
        if not batched_args and s.prim != "call":
            out += _forward([s], self.a)
            return
        if s.prim in ("is_", "is_not"):  # identity: one Python bool for every example
            self.b.pop(s.target, None)
            out += _forward([s], self.a)
            return
        if s.prim == "identity":
            self.b[s.target] = set(self.b.get(s.args[0].name, set())) if batched_args else set()
            out += _forward([s], self.a)
            return
        if s.prim == "list" and isinstance(s.args[0], Var) and \
                self.kind(s.args[0].name) != LEAF:
            # a copy of a list or tuple (not the rows of an array): its items keep
            # their batch axes
            self.b[s.target] = set(self.b.get(s.args[0].name, set()))
            if s.args[0].name in self.items:
                self.items[s.target] = list(self.items[s.args[0].name])
            out += _forward([s], self.a)
            return
        if s.prim in ("make_tuple", "make_list", "make_dict"):
            kind = self.a.stmt_kind(s)  # (an if's join another path grows: known here)
            assert isinstance(kind, Tree)
            self.b[s.target] = {
                (key,) + p for key, a in zip(kind.keys, s.args)
                if isinstance(a, Var) for p in self.b.get(a.name, set())
            }
            out += _forward([s], self.a)
            return
        if s.prim == "getitem" and isinstance(self.kind(s.args[0].name), Tree):
            key = self.a._container_key(s, self.kind(s.args[0].name))
            self.b[s.target] = {p[1:] for p in self.b.get(s.args[0].name, set())
                                if p[:1] == (key,)}
            out += _forward([s], self.a)
            return
        if s.prim == "call":
            self.call(s, out)
            return
        try:
            text = self.rule(s)
        except NoBatchRule as err:
            raise self.fail(s, err) from None
        kind = self.kind(s.target)
        if s.prim in PER_EXAMPLE_FACTS:  # the same for every example
            self.b.pop(s.target, None)
        elif isinstance(kind, Seq):  # a list of batched items (`list(x)`'s rows)
            self.b[s.target] = {(SEQ_ITEM,) + p for p in leaf_paths(kind.item)}
        else:
            self.b[s.target] = set(leaf_paths(kind))
        out.append(Line(f"{s.target} = {text}"))

    def rule(self, s: Let) -> str:
        if s.prim in ("stack", "concatenate", "array", "hstack", "vstack") or (
                s.prim == "asarray" and isinstance(s.args[0], Var)
                and self.kind(s.args[0].name) != LEAF):  # np.asarray of a list
            return self.joined(s)
        rule = rule_for(s.prim)
        if rule is None:
            raise NoBatchRule(f"`{s.prim}` has no batching rule yet")
        return rule(self, s)

    def joined(self, s: Let) -> str:
        """Functions of a list of arrays: each item batched (or repeated), the axis
        moved past the batch axis."""
        seq = s.args[0]
        kind = self.kind(seq.name) if isinstance(seq, Var) else LEAF
        if isinstance(kind, Tree) and isinstance(seq, Var) and seq.name in self.items:
            atoms = self.items[seq.name]
            rank = max(self.rank(a) for a in atoms)
            items = batched_items(self, atoms, rank)
            seq_text = "[" + ", ".join(items) + "]"
        elif isinstance(kind, Seq) or kind == LEAF:
            if isinstance(kind, Seq) and not self.b.get(seq.name):
                raise NoBatchRule("internal: unbatched list")
            seq_text = atom_text(seq)
            rank = self.rank(seq) - 1 if kind == LEAF else self._seq_rank(seq.name)
            if kind == LEAF and s.prim == "array":  # np.array(x) of an array
                return f"np.array({seq_text})"
            from ..primitives.batching import (
                joined_rows,  # an array's rows, or a list's items
            )

            return joined_rows(self, s, rank)
        else:
            raise NoBatchRule(f"`{s.prim}` of a list the function did not build")
        from ..primitives.batching import static

        if s.prim in ("array", "asarray", "stack"):
            axis = static(s, "axis", 0)
            axis = axis + 1 if axis >= 0 else axis
            return f"np.stack({seq_text}, axis={axis})"
        if s.prim == "concatenate":
            axis = static(s, "axis", 0)
            if axis is None:
                raise NoBatchRule("np.concatenate with axis=None")
            return f"np.concatenate({seq_text}, axis={shifted(axis, rank)})"
        if s.prim == "hstack":
            return f"np.concatenate({seq_text}, axis={1 if rank <= 1 else 2})"
        return f"np.concatenate({seq_text}, axis=1)" if rank >= 2 else \
            f"np.stack({seq_text}, axis=1)"

    def _seq_rank(self, name: str) -> int:
        key = (name, (0,))
        root = self.fn.aliases.get(name, name)
        for k in (key, (root, (0,))):
            if k in self.ranks:
                return self.ranks[k]
        raise NoBatchRule(f"the rank of the items of `{name}` is unknown (empty list)")

    def setitem(self, s: Let, out: list[Any]) -> None:
        """``y[i] = v``: into a batched ``y`` as ``y[:, i] = v``; an unbatched ``y``
        receiving a batched value is first given a batch axis."""
        base, value = s.args
        index = s.params["index"]
        per_example = [a for a in index.atoms() if isinstance(a, Var) and self.batched(a)]
        if per_example and not self._scalar_indexes(s):
            raise self.fail(s, NoBatchRule("writing at a batched index"))
        if not self.batched(base) and not self.batched(value) and not (
                self.write_masks):
            out += _forward([s], self.a)
            return
        name = atom_text(base)
        if not self.batched(base):
            n = self.use_batch_size()
            out.append(Line(f"{name} = np.stack([{name}] * {n})"))
        inner = index_text(index).rstrip(",")
        first = index.items[0] if index.items else None
        if per_example:  # one element per example: y[np.arange(n), k] (k batched)
            n = self.use_batch_size()
            target = f"{name}[np.arange({n}), {inner}]"
        elif isinstance(first, Const) and first.value is Ellipsis:
            if self.write_masks:
                raise self.fail(s, NoBatchRule(
                    "a write at `...` in a loop whose exit depends on batched values",
                    "write the leading axes as `:`"))
            target = f"{name}[{inner}]"
        else:
            target = f"{name}[:, {inner}]" if inner else f"{name}[:]"
        v = atom_text(value)
        try:
            rank = self._selected_rank(s) if self.batched(value) or self.write_masks \
                else 0
            if self.batched(value):  # its per-example axes line up with the region's
                v = align(self, value, rank)
            if self.write_masks:  # examples that have left the loop keep theirs
                mask = " & ".join(("~" if done else "") + align(self, Var(m), rank)
                                  for m, done in self.write_masks)
                v = f"np.where({mask}, {v}, {target})"
        except NoBatchRule as err:
            raise self.fail(s, err) from None
        out.append(Line(f"{target} = {v}", keep=True))
        self.b[s.target] = {()}
        self.b[base.name] = {()}

    def _scalar_indexes(self, s: Let) -> bool:
        """Whether ``y[index] = v`` indexes with ints and slices only, its batched
        items one int per example (written as ``y[np.arange(n), k]``)."""
        for item in s.params["index"].items:
            if isinstance(item, Slice):
                if any(isinstance(a, Var) and self.batched(a)
                       for a in (item.lower, item.upper, item.step)):
                    return False
            elif isinstance(item, Const):
                if not isinstance(item.value, (int, np.integer)) or isinstance(
                        item.value, bool):
                    return False
            elif self.batched(item) and self.rank(item) != 0:
                return False
            elif not self.batched(item) and not (
                    item.name in self.a.int_vars or self.rank(item) == 0):
                return False
        return True

    def _selected_rank(self, s: Let) -> int:
        """Per-example rank of ``y[index]``: ints remove an axis, ``None`` adds one."""
        rank = self.rank(s.args[0])
        for item in s.params["index"].items:
            if isinstance(item, Const) and item.value is None:
                rank += 1
            elif isinstance(item, Const) and isinstance(item.value, int):
                rank -= 1
            elif isinstance(item, Var) and (item.name in self.a.int_vars or (
                    self.rank(item) == 0)):
                rank -= 1  # an int (a scalar index the probe saw)
            elif isinstance(item, Var):
                raise NoBatchRule("writing at an array index into a batched array")
        return rank

    def call(self, s: Let, out: list[Any]) -> None:
        """A user function called with batched arguments: its own batched version."""
        callee = _callee(s)
        if not any(self.batched(a) for a in s.args):
            out += _forward([s], self.a)
            if ("__call__", s.target) not in self.spec.ranks:
                self._unprobed_result_ranks(s, callee)
            return
        example = self.spec.ranks.get(("__call__", s.target))
        in_axes = tuple(
            _prefix_of(self.b.get(a.name, set()), self.kind(a.name))
            if isinstance(a, Var) else None
            for a in s.args
        )
        kinds = tuple(self.kind(a.name) if isinstance(a, Var) else LEAF for a in s.args)
        probed = example is not None
        if example is None:
            example = self._unprobed_call(s, callee, in_axes, kinds)
        key = ("vmap", id(callee), repr(in_axes), kinds, tuple(
            _ranks_of(x) for x in example))
        name = self.module.names.get(key)
        if name is None:
            base = f"{stem(callee)}_vmap"
            name, i = base, 2
            while name in self.module.taken:
                name = f"{base}_{i}"
                i += 1
            self.module.names[key] = name
            spec = VmapSpec(in_axes + (None,) * (len(callee.params) - len(in_axes)),
                            "auto", kinds + (LEAF,) * (len(callee.params) - len(kinds)),
                            tuple(example), len(s.args))
            unrolled = unroll_container_loops(callee, spec.arg_kinds)  # (as probe does)
            try:
                spec.ranks = probe(unrolled, spec.example)
            except Exception:  # noqa: BLE001 - (values standing for an example)
                if probed:
                    raise
                del self.module.names[key]
                raise self.fail(s, NoBatchRule(
                    f"`{callee.name}` was not called by the probe")) from None
            ret = unrolled.body[-1]
            if isinstance(ret, Return) and isinstance(ret.value, Var):
                self.module.names[("vmap result ranks", name)] = {
                    path: r for (n, path), r in spec.ranks.items()
                    if n == ret.value.name}
            builder = _Vmap(unrolled, spec, self.module)
            self.module.taken.add(name)
            self.module.namespace.update(callee.namespace)
            self.module.functions.append(builder.build(name))
            self.module.names[("vmap result", name)] = builder.result_batched
        for path, r in self.module.names.get(("vmap result ranks", name), {}).items():
            self.ranks.setdefault((s.target, path), r)  # (a call the probe never made)
        args = ", ".join(atom_text(a) for a in s.args)
        out.append(Line(f"{s.target} = {name}({args})"))
        # a recursive call, while its own batched version is being built: all batched
        self.b[s.target] = self.module.names.get(
            ("vmap result", name), set(leaf_paths(self.kind(s.target))))

    def _unprobed_result_ranks(self, s: Let, callee: Function) -> None:
        """The ranks of an unbatched call's result the probe never computed: the
        callee's return, probed on the arguments ``_unprobed_call`` stands for one
        example (left unknown where there are none)."""
        kinds = tuple(self.kind(a.name) if isinstance(a, Var) else LEAF for a in s.args)
        ret = callee.body[-1]
        if not (isinstance(ret, Return) and isinstance(ret.value, Var)):
            return
        try:
            ranks = probe(callee, self._unprobed_call(s, callee, (), kinds))
        except Exception:  # noqa: BLE001 - (no example: the rank stays unknown)
            return
        for (n, path), r in ranks.items():
            if n == ret.value.name:
                self.ranks.setdefault((s.target, path), r)

    def _unprobed_call(self, s: Let, callee: Function, in_axes: tuple,
                       kinds: tuple) -> tuple:
        """Arguments standing for one example of a call the probe never made (the
        recursive call of a path the first example did not take): where the call is
        the function's own, with its arguments' ranks, the function's own example
        (whose batched version, keyed by those ranks, is the one being built)."""
        missing = NoBatchRule(f"`{callee.name}` was not called by the probe")
        mine = dict(zip(self.fn.params, self.spec.example))
        if callee is self.fn or callee.name == self.fn.name:
            own = tuple(self.spec.example[: len(s.args)])
        else:  # another function (a gradient's forward call): its parameters named
            # like the caller's take their example's values, others the one in place
            own = tuple(mine[p] if p in mine else self.spec.example[k]
                        for k, p in enumerate(callee.params[: len(s.args)])
                        if p in mine or k < len(self.spec.example))
        if len(own) < len(s.args) or any(k != LEAF for k in kinds):
            raise self.fail(s, missing)
        try:
            ranks = tuple(self.rank(a) for a in s.args)
        except NoBatchRule:
            raise self.fail(s, missing) from None
        if ranks != tuple(_ranks_of(x) for x in own):
            raise self.fail(s, missing)
        return own

    def if_(self, s: If, out: list[Any]) -> None:
        if not self.batched(s.test):
            bodies = []
            before = {k: set(v) for k, v in self.b.items()}
            states = []
            for branch in (s.body, s.orelse):
                self.b = {k: set(v) for k, v in before.items()}
                items: list[Any] = []
                self.block(branch, items)
                bodies.append(items)
                states.append(self.b)
            self.b = before
            for j in s.joins:
                paths = states[0].get(j, set()) | states[1].get(j, set())
                if paths:
                    self.b[j] = paths
                    for state, items, branch in zip(states, bodies, (s.body, s.orelse)):
                        if state.get(j, set()) != paths and not _binds_none(branch, j):
                            text = self._broadcast_join(j, paths, state.get(j, set()))
                            items.append(Line(f"{j} = {text}"))
            out.append(Block(f"if {atom_text(s.test)}:", bodies[0], bodies[1]))
            return
        self.select(s, out)

    def _broadcast_join(self, j: str, paths: set, had: set) -> str:
        """``j`` given a batch axis on the leaves (``paths``) that the other path of an
        `if` batched and this one did not (``had``); a container is built again, its
        other leaves as they are."""
        n = self.use_batch_size()

        def leaf(p: tuple) -> str:
            text = path_text(j, p)
            if any(q[: len(p)] == p for q in paths) and not any(
                    q[: len(p)] == p for q in had):
                return f"np.broadcast_to({text}, ({n}, *np.shape({text})))"
            return text

        return literal(self.kind(j), leaf)

    def select(self, s: If, out: list[Any]) -> None:
        """An ``if`` on a batched value: both branches run, ``np.where`` picks.

        A branch's write into an array keeps the other path's examples' elements
        (``x_bar[:, i] = np.where(test, v, x_bar[:, i])``), and its pushes and pops of
        a list happen for every example: a gradient's tape, whose backward replays
        the same `if` on the same (popped) test, pops junk for the other path's
        examples exactly where it pushed junk for them."""
        for branch in (s.body, s.orelse):
            made: set[str] = set()  # arrays this branch makes (np.add.at into them is
            for st in walk(branch):  # this branch's own; the join selects per example)
                if isinstance(st, Let) and _makes(st, self.fn.aliases.get(
                        st.target, st.target), self.fn.aliases):
                    made.add(self.fn.aliases.get(st.target, st.target))
                into = st.args[0].name if isinstance(st, Let) and (
                    st.prim == "add_at") else None
                if isinstance(st, (For, Break)) or (isinstance(st, Let) and (
                        st.prim == "call" or into is not None
                        and self.fn.aliases.get(into, into) not in made)):
                    raise self.fail(s, NoBatchRule(
                        "an `if` on a batched value whose branches loop, call, or "
                        "write with np.add.at into an array made before it",
                        "write the branches as expressions and select with np.where"))
                if isinstance(st, Let) and st.prim == "setitem" and (
                        self.rank(s.test) != 0):
                    raise self.fail(s, NoBatchRule(
                        "a write into an array under an `if` on an array per example"))
        # versions of one array or list written in place: one object, no selection;
        # but where a path binds the join's name to an array of its own (made there,
        # or another), each path's array is kept by a name of its own and the join
        # selects per example (`fresh`)
        buffers = {j for j in s.joins if j in self.fn.aliases}
        fresh = {j for j in buffers if any(
            _makes(st, self.fn.aliases[j], self.fn.aliases)
            for st in walk(s.body + s.orelse))}
        for j in fresh:
            if self.kind(j) != LEAF:
                raise self.fail(s, NoBatchRule(
                    f"a path of this `if` binds `{self.fn.aliases[j]}` to a list of "
                    "its own, the other keeps or changes the same list",
                    "bind the list on both paths, or before the `if`"))
        buffers -= fresh
        before_b = {j: (set(self.b[j]) if j in self.b else None) for j in fresh}
        restore = {}  # the array before the `if`, where the false path still uses it
        for j in fresh:
            root = self.fn.aliases[j]
            if _first_touch(s.body, root, self.fn.aliases) == "fresh" and (
                    _first_touch(s.orelse, root, self.fn.aliases) != "fresh"):
                restore[j] = self.names.fresh(f"{root}_before")
                out.append(Line(f"{restore[j]} = {root}"))
                restore_b = {n: (set(v) if v is not None else None) for n, v in (
                    (n, self.b.get(n)) for n in self.b
                    if self.fn.aliases.get(n, n) == root)}
        written: dict[str, set] = {j: set() for j in buffers}
        results = []
        truth: dict[str, bool] = {}  # a branch's name bound to True or False
        for k, (tag, branch) in enumerate((("if_true", s.body), ("if_false", s.orelse))):
            if k == 1:
                for j, saved in restore.items():
                    out.append(Line(f"{self.fn.aliases[j]} = {saved}"))
                    for n in [n for n in self.b if self.fn.aliases.get(n, n)
                              == self.fn.aliases[j]]:
                        del self.b[n]
                    for n, v in restore_b.items():
                        if v is not None:
                            self.b[n] = v
            # a join the branch does not bind keeps its value from before the `if`
            bound = {st.target for st in branch if isinstance(st, Let)} | {
                j for st in branch if isinstance(st, If) for j in st.joins}
            renamed = {j: self.names.fresh(f"{j}_{tag}") for j in s.joins
                       if j in bound and j not in buffers and j not in fresh}
            for j, r in renamed.items():
                if j in self.flags:
                    self.flags.add(r)
                if (j, ()) in self.ranks:
                    self.ranks.setdefault((r, ()), self.ranks[(j, ())])
            items: list[Any] = []
            self.write_masks.append((atom_text(s.test), k == 1))  # (this path's)
            try:
                for st in branch:
                    own = self.origin.get(id(st), (st, st))[1]
                    st = _renamed(st, renamed)
                    if isinstance(st, Let) and st.target in renamed.values() and (
                            st.prim == "identity" and isinstance(st.args[0], Const)
                            and isinstance(st.args[0].value, bool)):
                        truth[st.target] = st.args[0].value
                    if isinstance(st, If):
                        self.origin[id(st)] = (st, own)
                        self.if_(st, items)
                    else:
                        if st.target in renamed.values():  # a rank may be inferred
                            self.a.producer[st.target] = st
                        self.let(st, items)
            finally:
                self.write_masks.pop()
            for j in buffers:
                written[j] |= self.b.get(j, set())
            out += items
            results.append({j: renamed.get(j, j) for j in s.joins})
            for j in fresh:
                binds = any(isinstance(st, Let) and st.target == j for st in walk(
                    branch)) or any(isinstance(st, If) and j in st.joins
                                    for st in walk(branch))
                if _binds_none(branch, j):
                    continue  # (the join's None path)
                name = self.names.fresh(f"{self.fn.aliases[j]}_{tag}")
                out.append(Line(f"{name} = {self.fn.aliases[j]}"))
                paths = self.b.get(j) if binds else before_b[j]
                if paths:
                    self.b[name] = set(paths)
                try:
                    self.ranks.setdefault((name, ()), self.rank(Var(j)))
                except NoBatchRule:
                    pass
                results[k][j] = name
        for j in buffers:
            if written[j]:
                self.b[j] = written[j]
        # a name one path binds to None (the normalizer's "not bound on this path"):
        # np.where cannot mix None with arrays; where every later read is under an
        # `if` on the same test, on the other path, the examples that took the None
        # path never read it, and the join is that path's value as it is
        nones = {j: [k for k, b in enumerate((s.body, s.orelse)) if _binds_none(b, j)]
                 for j in s.joins}
        try:
            test_rank = self.rank(s.test)
            for j in s.joins:
                if j in buffers:
                    continue
                if isinstance(self.kind(j), Tree):
                    raise NoBatchRule("an `if` on a batched value joining containers")
                for k in (0, 1):
                    if k not in nones[j]:
                        self.rank(Var(results[k][j]))
        except NoBatchRule as err:
            raise self.fail(s, err) from None
        for j in s.joins:
            t, f = results[0][j], results[1][j]
            if j in buffers:
                continue
            if len(nones[j]) == 2:
                out.append(Line(f"{j} = None"))
                self.b.pop(j, None)
                continue
            if nones[j]:
                side = 1 - nones[j][0]
                self.one_path_join(s, j, side, results[side][j], out)
                continue
            if j in self.flags and test_rank == 0 and self._is_truth(s.test):
                out.append(Line(f"{j} = {_truth_join(atom_text(s.test), t, f, truth)}"))
                self.b[j] = {()}
                continue
            rank = max(self.rank(Var(t)), self.rank(Var(f)), test_rank)
            self.ranks[(j, ())] = rank
            cond = align(self, s.test, rank)
            out.append(Line(f"{j} = np.where({cond}, {align(self, Var(t), rank)}, "
                            f"{align(self, Var(f), rank)})"))
            self.b[j] = {()}

    def _is_truth(self, test: Any) -> bool:
        """Whether a batched test holds booleans (a comparison, a logical operation),
        so that ``&``, ``|`` and ``~`` on it are the logical ones."""
        prod = self.a.producer.get(test.name) if isinstance(test, Var) else None
        if prod is None:
            return test.name in self.flags if isinstance(test, Var) else False
        return _family(prod.prim) == "comparison" or prod.prim in (
            "logical_and", "logical_or", "logical_not", "logical_xor", "not_",
            "isnan", "isinf", "isfinite", "signbit", "isclose")

    def one_path_join(self, s: If, j: str, side: int, value: str,
                      out: list[Any]) -> None:
        """``j`` bound on path ``side`` of ``s`` only (None on the other): the join is
        that path's value, if every read of ``j`` after ``s`` is on the same path of an
        ``if`` on the same test; else the examples would differ in kind (a value for
        some, None for others) and vmap refuses, at the ``if``."""
        own = self.origin.get(id(s), (s, s))[1]
        if not _read_only_on_path(self.fn.body, own, j, side):
            path = ("true", "false")[1 - side]
            raise self.fail(s, NoBatchRule(
                f"`{j}` is bound on one path of this `if` only (None where the test is "
                f"{path}), and read after it where those examples reach",
                "bind it on both paths, or read it only under the same test"))
        if value != j:
            out.append(Line(f"{j} = {value}"))
        if (value, ()) in self.ranks:
            self.ranks[(j, ())] = self.ranks[(value, ())]
        if self.b.get(value):
            self.b[j] = set(self.b[value])
        else:
            self.b.pop(j, None)

    def for_(self, s: For, out: list[Any]) -> None:
        count = None  # a batched count: `for _ in range(n)`, n one int per example
        if s.iter is not None and self.batched(s.iter):
            count = self._batched_count(s)
        carried_pairs = effective_carried(s)
        # a `break` becomes a per-example flag, joined like any value: where its test is
        # batched, the examples leave the loop at different iterations (masked lanes)
        flag, body_ir = None, s.body
        if _breaks(s.body):
            flag = self.names.fresh("breaking")
            body_ir = self._lower_breaks(s.body, flag, False)[0]
            self.ranks[(flag, ())] = 0
            self.flags.add(flag)
        if s.test is not None or flag is not None:
            for entry, exit_ in carried_pairs:  # (an exit the first example never made)
                if (entry, ()) in self.ranks:
                    self.ranks.setdefault((exit_, ()), self.ranks[(entry, ())])
        at_entry = {k: set(v) for k, v in self.b.items()}
        state = {k: set(v) for k, v in at_entry.items()}
        masked = False
        while True:  # a carried value is batched if any iteration makes it so
            self.b = {k: set(v) for k, v in state.items()}
            self.block(body_ir, [])
            masked = masked or count is not None or (
                s.test is not None and self.batched(s.test)) or (
                flag is not None and self.batched(Var(flag)))
            if masked:
                self._check_masked_body(s, body_ir)
            grown = False
            for entry, exit_ in carried_pairs:
                new = self.b.get(exit_, set()) - state.get(entry, set())
                if masked:  # examples stop at different iterations: all differ
                    self._check_masked_carry(s, entry)
                if masked and not isinstance(self.kind(entry), Seq):  # (a list's
                    # items are batched as appended: each iteration appends for all)
                    new = set(leaf_paths(self.kind(entry))) - state.get(entry, set())
                if new:
                    state[entry] = state.get(entry, set()) | new
                    grown = True
            if not grown:
                break
        self.b = state
        for entry, exit_ in carried_pairs:
            ranks = (self.ranks.get((entry, ())), self.ranks.get((exit_, ())))
            if state.get(entry) and self.kind(entry) == LEAF and None not in ranks and (
                    ranks[0] != ranks[1]):
                raise self.fail(s, NoBatchRule(
                    f"`{entry}` changes rank in the loop (rank {ranks[0]} before it, "
                    f"{ranks[1]} after an iteration): its batched code has one rank",
                    "start it with the shape it has after an iteration "
                    "(np.zeros_like(...), np.full(shape, value))"))
        for entry, _ in carried_pairs:
            if state.get(entry, set()) == at_entry.get(entry, set()):
                continue
            kind = self.kind(entry)
            prod = self.a.producer.get(entry)
            if isinstance(kind, Seq) and prod is not None and prod.prim == "zeros_list":
                # zero cotangents (reverse mode over a popped list): the same for
                # every example, stacked where the loop appends batched items
                new = {p[1:] for p in state.get(entry, set()) if p[:1] == (SEQ_ITEM,)}
                out.append(Line(f"{entry} = {_stacked_items(entry, kind, new, self.use_batch_size())}"))
                continue
            if isinstance(kind, Seq):
                if not (prod is not None and prod.prim == "make_list" and not prod.args):
                    raise self.fail(s, NoBatchRule(
                        f"the list `{entry}` gets batched items in the loop after "
                        "unbatched ones"))
                continue
            if isinstance(kind, Tree):
                raise self.fail(s, NoBatchRule(
                    f"the container `{entry}` becomes batched in the loop"))
            n = self.use_batch_size()
            out.append(Line(f"{entry} = np.stack([{entry}] * {n})"))
        if masked:
            self.masked_loop(s, body_ir, flag, carried_pairs, out, count)
            return
        body: list[Any] = []
        self.block(s.body, body)
        body += [Line(f"{e} = {x}") for e, x in s.carried]
        if s.test is None:
            header = f"for {s.target} in {self._iter_text(s.iter)}:"
            out.append(Block(header, body, []))
        else:
            out.append(Block(f"while {atom_text(s.test)}:", body, []))

    def _batched_count(self, s: For) -> str:
        """``n`` of a loop ``for i in range(n)`` (or ``reversed(range(n))``) whose
        count ``n`` is batched (one int per example); other loops over batched
        ranges are refused."""
        prod = self.a.producer.get(s.iter.name)
        if prod is not None and prod.prim == "reversed" and isinstance(
                prod.args[0], Var):
            prod = self.a.producer.get(prod.args[0].name)
        n = prod.args[0] if prod is not None and prod.prim == "range" and len(
            prod.args) == 1 and not prod.params else None
        if not isinstance(n, Var) or not self.batched(n) or self.rank(n) != 0 or (
                _breaks(s.body)):
            raise self.fail(s, NoBatchRule(
                "a loop over a batched range other than `range(n)` (n one int per "
                "example, no `break`)",
                "loop to the largest count and keep each example's values past its "
                "own count with np.where, or compute the count outside the vmapped "
                "function"))
        return n.name

    def masked_loop(self, s: For, body_ir: list[Stmt], flag: str | None,
                    carried: list[tuple[str, str]], out: list[Any],
                    count: str | None = None) -> None:
        """A loop the examples leave at different iterations.  Every example runs
        each iteration; one that has left keeps its values (``np.where``), and the
        loop ends when every example has left.  A ``while`` on a batched test keeps
        that test as the mask of examples still running::

            while np.any(test):
                <body>
                y = np.where(test, y_2, y)
                test = test & ~breaking & test_2

        and a ``for`` with a ``break`` under a batched test a mask of those done::

            for i in range(n):
                <body>
                s = np.where(done, s, s_2)
                done = done | breaking
                if np.all(done):
                    break

        and a loop over a batched count ``range(n)`` runs the largest count, an
        example running ``n`` of the iterations: the first ones, or the last ones
        where the body pops a list a loop the examples left apart pushed, so that the
        entries pushed after an example had left (the list's top) are popped while it
        waits::

            n_max = np.max(n)
            for step in range(n_max):
                running = step >= n_max - n
                <body>
                y = np.where(running, y_2, y)
        """
        test = s.test.name if s.test is not None else None
        if test is not None and self.rank(s.test) != 0:
            raise self.fail(s, NoBatchRule(
                "a `while` whose condition is an array per example",
                "reduce the condition to one truth value per example (np.all, np.any)"))
        # arrays written in place: the writes keep the done examples' elements
        roots = set(self.fn.aliases.values())
        buffers = {e for e, x in carried if self.fn.aliases.get(e, e) in roots
                   and self.fn.aliases.get(e, e) == self.fn.aliases.get(x, x)}
        body: list[Any] = []
        before = {}  # values a nested loop (or a join) rebinds: their value at the start
        rebound = {st.target for st in walk(body_ir) if isinstance(st, Let)} | {
            n for st in walk(body_ir) if isinstance(st, For) for n, _ in st.carried} | {
            n for st in walk(body_ir) if isinstance(st, If) for n in st.joins}
        for e, x in carried:
            if (e == x or e in rebound) and e not in buffers:
                before[e] = self.names.fresh(f"{e}_before")
                body.append(Line(f"{before[e]} = {e}"))
                if (e, ()) in self.ranks:
                    self.ranks[(before[e], ())] = self.ranks[(e, ())]
                self.b[before[e]] = set(self.b.get(e, set()))
        self.lane_loops.add(id(s))
        self.lane_align[id(s)] = "first"  # (its steps an example runs: see _count_mask)
        done = test is None and count is None  # a mask of the examples done
        target = s.target
        if count is not None:
            target, mask, steps = self._count_mask(s, body_ir, count, out, body)
        elif test is None:
            n = self.use_batch_size()
            mask = self.names.fresh("done")
            out.append(Line(f"{mask} = np.full({n}, False)"))
            self.ranks[(mask, ())] = 0
        else:
            mask = test
        self.b[mask] = {()}
        self.write_masks.append((mask, done))
        try:
            self.block(body_ir, body)
        finally:
            self.write_masks.pop()
        for st in walk(body_ir):  # the lists it pushed: which steps are real for whom
            if isinstance(st, Let) and st.prim == "append" and isinstance(
                    st.args[0], Var):
                root = self.fn.aliases.get(st.args[0].name, st.args[0].name)
                self.list_align[root] = self.lane_align[id(s)]
        test_exit = None
        for e, x in carried:
            if e == test:
                test_exit = x
                continue
            if e in buffers:
                continue
            old, new = (before[e], e) if e == x else (before.get(e, e), x)
            try:
                rank = self.rank(Var(e))
                if done:
                    old, new = new, old  # np.where(done, the value kept, the new one)
                kept = [align(self, Var(v), rank) for v in (mask, new, old)]
                line = f"{e} = np.where({', '.join(kept)})"
            except NoBatchRule as err:
                raise self.fail(s, err) from None
            body.append(Line(line))
        if count is not None:
            out.append(Block(f"for {target} in {steps}:", body, []))
            return
        leaving = None
        if flag is not None:
            leaving = f"~{flag}" if self.batched(Var(flag)) else f"(not {flag})"
        if test is not None:
            assert test_exit is not None  # (a while loop carries its test)
            parts = [test] + ([leaving] if leaving else []) + [str(test_exit)]
            body.append(Line(f"{test} = {' & '.join(parts)}"))
            out.append(Block(f"while {_any(test)}:", body, []))
            return
        body.append(Line(f"{mask} = {mask} | {flag}"))
        body.append(Block(f"if {_all(mask)}:", [Line("break", keep=True)], []))
        out.append(Block(f"for {s.target} in {self._iter_text(s.iter)}:", body, []))

    def _count_mask(self, s: For, body_ir: list[Stmt], count: str, out: list[Any],
                    body: list[Any]) -> tuple[str, str, str]:
        """The loop variable, the mask of the examples running and the steps, for a
        loop over ``range(count)`` with ``count`` batched (see ``masked_loop``).

        An example runs its first ``count`` steps (``i < count``; over
        ``reversed(range(...))`` its last ones, with the same indexes), except in a
        loop that pops lists a masked loop pushed with its examples in their first
        steps: the entries of the examples that had left are on top, so each runs
        its last ``count`` steps (the backward of a ``while``, ``for _ in
        range(n_iter)``)."""
        top = self.names.fresh(f"{count}_max")
        out.append(Line(f"{top} = np.max({count})"))
        mask = self.names.fresh("running")
        self.ranks[(mask, ())] = 0
        read = any(s.target in uses(st) for st in walk(body_ir))
        prod = self.a.producer.get(s.iter.name)
        backwards = prod is not None and prod.prim == "reversed"
        popped = {self.list_align.get(self.fn.aliases.get(st.args[0].name,
                                                          st.args[0].name))
                  for st in walk(body_ir) if isinstance(st, Let) and st.prim == "pop"}
        # the steps each example runs: its indexes i < count where it reads them,
        # else the other end than the entries it pops were pushed from
        align = "last" if backwards else "first"
        if popped and not read:
            align = "first" if popped == {"last"} else "last"
        elif popped and popped != {"first" if align == "last" else "last"}:
            raise self.fail(s, NoBatchRule(
                "a loop over a batched count that pops a list and reads its index"))
        self.lane_align[id(s)] = align
        if read:
            body.append(Line(f"{mask} = {s.target} < {count}"))
            steps = f"range({top})"
            return s.target, mask, f"reversed({steps})" if backwards else steps
        step = self.names.fresh("step")
        if align == "first":
            body.append(Line(f"{mask} = {step} < {count}"))
        else:  # the entries pushed after an example had left are on top
            body.append(Line(f"{mask} = {step} >= {top} - {count}  # its last {count} "
                             "steps"))
        return step, mask, f"range({top})"

    def _check_masked_carry(self, s: For, entry: str) -> None:
        kind = self.kind(entry)
        if kind != LEAF and not isinstance(kind, Seq):
            raise self.fail(s, NoBatchRule(
                f"`{entry}` is a container (list, tuple or dict) carried by a loop "
                "whose exit depends on batched values",
                "carry its arrays as separate names, or loop to a fixed count"))

    def _check_masked_body(self, s: For, body: list[Stmt]) -> None:
        """A loop whose examples stop at different iterations runs the body for the
        stopped ones too: values are kept per example and writes `y[i] = v` keep the
        stopped ones' elements, but `np.add.at` cannot; lists are pushed for every
        example (checked to pop per example what it pushed: ``_TapeOrder``)."""
        for st in walk(body):
            if isinstance(st, Let) and st.prim == "add_at":
                name = atom_text(st.args[0])
                raise self.fail(st, NoBatchRule(
                    f"a write into `{self.fn.aliases.get(name, name)}` in a loop whose "
                    "exit depends on batched values (the examples that have left the "
                    "loop would be written too)",
                    "compute the new array as a value (np.where(mask, new, old), "
                    "np.concatenate), or loop to a fixed count and mask with np.where"))
        # the values a `break` leaves are the body's ends on its path (the normalizer
        # moves what follows a breaking `if` into its other branch)
        for brk in _breaks(s.body):
            env = _path_aliases(s.body, brk) or {}
            copies = dict(brk.copies)
            for e, x in s.carried:
                if s.test is not None and e == s.test.name:
                    continue
                if _resolve(env, x) != _resolve(env, copies.get(e, e)):
                    raise self.fail(brk, NoBatchRule(
                        f"a `break` leaving `{e}` unlike the end of the loop body "
                        "under a batched test",
                        "set a flag and test it instead of breaking"))

    def _lower_breaks(self, stmts: list[Stmt], flag: str, bound: bool
                      ) -> tuple[list[Stmt], bool]:
        """The body with each ``break`` (of this loop, not nested ones) replaced by
        ``flag = True``: an ``if`` holding one joins ``flag``, its other paths bind
        ``flag = False`` (where nothing earlier on the path has bound it)."""
        out: list[Stmt] = []
        for st in stmts:
            if isinstance(st, Break):
                out.append(Let(flag, "identity", (Const(True, "True"),), {}, st.loc))
                bound = True
            elif isinstance(st, If) and (_breaks(st.body) or _breaks(st.orelse)):
                branches = []
                for branch in (st.body, st.orelse):
                    if _breaks(branch):
                        branches.append(self._lower_breaks(branch, flag, bound)[0])
                    else:
                        branches.append(list(branch) + ([] if bound else [Let(
                            flag, "identity", (Const(False, "False"),), {}, st.loc)]))
                joins = st.joins + ([] if flag in st.joins else [flag])
                lowered = If(st.test, branches[0], branches[1], st.loc, joins)
                own = self.origin.get(id(st), (st, st))[1]
                self.origin[id(lowered)] = (lowered, own)
                out.append(lowered)
                bound = True
            else:
                out.append(st)
        return out, bound


class _Unpaired(Exception):
    def __init__(self, stmt: Any, why: str) -> None:
        super().__init__(why)
        self.stmt, self.why = stmt, why


@dataclass
class _Push:
    ctx: tuple  # the `if` paths and masked loops around the push
    item: Any  # the atom pushed
    stmt: Any


@dataclass
class _Rep:
    """What one iteration of a loop pushed, once per iteration."""

    key: tuple
    seq: list
    lane: int | None  # the loop's id where the examples leave it apart


class _TapeOrder:
    """Checks that batched code pops, for every example, what that example pushed.

    Under vmap both branches of an ``if`` on a batched value run, and a loop the
    examples leave apart runs for all of them until the last leaves, so a list
    pushed there holds entries that are junk for some examples.  The batched code
    is right if each pop takes an entry pushed on the same paths: under ``if``s on
    the same tests (a gradient's backward replays its forward ``if``s on the tests
    it pushed), and in the iteration of the loop it mirrors (the backward
    ``for _ in range(n_iter)`` of a masked ``while`` counting ``n_iter``).  This
    follows the emitted order (both branches, true first; one iteration of each
    loop standing for all) and pairs each pop with its push; a list used other than
    by pushing and popping, or a pop paired with a push on other paths, is refused.
    Functions whose lists are pushed and popped outside batched control flow are
    left alone (the order is the same for every example)."""

    def __init__(self, vm: "_Vmap") -> None:
        self.vm = vm
        fn = vm.fn
        self.alias = lambda n: fn.aliases.get(n, n)
        self.roots = {self.alias(st.args[0].name) for st in walk(fn.body)
                      if isinstance(st, Let) and st.prim in ("append", "pop")
                      and isinstance(st.args[0], Var)}
        self.eq: dict[str, str] = {}  # a name -> the name it certainly equals
        self.lane_eq: dict[int, int] = {}  # a backward loop -> the loop it mirrors

    def check(self) -> None:
        if not self.roots or not self._under_lanes(self.vm.fn.body, False):
            return
        try:
            self._other_uses()
            top = _Frame(None, None, self)
            self.run(self.vm.fn.body[:-1], (), top)
        except _Unpaired as err:
            st = err.stmt
            names = sorted({self.alias(n) for n in uses(st)} & self.roots) or sorted(
                self.roots)
            names = ", ".join(f"`{r}`" for r in names)
            raise self.vm.fail(st, NoBatchRule(
                f"the list {names} is pushed and popped under control flow that "
                f"depends on batched values, and vmap cannot pair each pop with the "
                f"push of the same example: {err.why}",
                "take the per-example results in a Python loop")) from None

    def _under_lanes(self, stmts: list[Stmt], inside: bool) -> bool:
        for st in stmts:
            if isinstance(st, Let) and st.prim in ("append", "pop") and inside:
                return True
            if isinstance(st, If):
                here = inside or self.vm.batched(st.test)
                if self._under_lanes(st.body, here) or self._under_lanes(st.orelse, here):
                    return True
            if isinstance(st, For) and self._under_lanes(
                    st.body, inside or id(st) in self.vm.lane_loops):
                return True
        return False

    def _other_uses(self) -> None:
        lists = lambda n: self.alias(n) in self.roots  # noqa: E731
        for st in walk(self.vm.fn.body):
            read = [n for n in uses(st) if lists(n)]
            if not read:
                continue
            if isinstance(st, Let) and (
                    st.prim in ("append", "pop", "identity", "zeros_list") and read == [
                        st.args[0].name] or st.prim == "getitem" and _is_top(st)
                    and read == [st.args[0].name]):
                continue
            if isinstance(st, For) and not (st.iter is not None and isinstance(
                    st.iter, Var) and lists(st.iter.name)) or isinstance(st, Break):
                continue  # (carried, or left with at a `break`)
            raise _Unpaired(st, "it is used other than by append and pop")

    def resolve(self, name: str) -> str:
        seen = set()
        while name in self.eq and name not in seen:
            seen.add(name)
            name = self.eq[name]
        return name

    def same_paths(self, a: tuple, b: tuple) -> bool:
        def norm(ctx: tuple) -> tuple:
            out = []
            for c in ctx:
                if c[0] == "if":
                    out.append(("if", self.resolve(c[1]) if c[1] else None, c[2]))
                else:
                    lane = c[1]
                    while lane in self.lane_eq:
                        lane = self.lane_eq[lane]
                    out.append(("lane", lane))
            return tuple(out)

        return norm(a) == norm(b)

    def loop_key(self, s: For) -> tuple:
        """(the arguments of its ``range``, or None; the names counting its
        iterations: ``n = 0`` before it, ``n = n + 1`` in it)."""
        counters = []
        for e, x in s.carried:
            inc = self.vm.a.producer.get(x)
            for _ in range(len(s.body)):  # (through copies: `n = n_2`)
                if inc is None or inc.prim != "identity" or not isinstance(
                        inc.args[0], Var):
                    break
                inc = self.vm.a.producer.get(inc.args[0].name)
            init = self.vm.a.producer.get(e)
            if inc is not None and inc.prim == "add" and init is not None and (
                    init.prim == "identity" and isinstance(init.args[0], Const)
                    and init.args[0].value == 0) and sorted(
                        atom_text(a) for a in inc.args) == sorted([e, "1"]) and any(
                            st is inc for st in s.body):
                counters.append(e)
        prod = self.vm.a.producer.get(s.iter.name) if isinstance(s.iter, Var) else None
        while prod is not None and prod.prim == "reversed" and isinstance(
                prod.args[0], Var):  # the same count either way
            prod = self.vm.a.producer.get(prod.args[0].name)
        args = None
        if s.test is None and prod is not None and prod.prim == "range" and not (
                prod.params):
            args = tuple(self.resolve(a.name) if isinstance(a, Var) else atom_text(a)
                         for a in prod.args)
        for c in counters[1:]:  # (counting the same iterations from 0: equal)
            self.eq.setdefault(c, counters[0])
        return (args, frozenset(self.resolve(c) for c in counters),
                s.test is None and not _breaks(s.body))

    @staticmethod
    def mirrors(pushed: tuple, popping: tuple) -> bool:
        """Whether a loop with key ``popping`` runs as many iterations as the loop
        with key ``pushed``, per example (its range, where it cannot break, else a
        count of its iterations)."""
        if popping[0] is None:
            return False
        if pushed[0] is not None and pushed[0] == popping[0] and pushed[2]:
            return True
        return len(popping[0]) == 1 and popping[0][0] in pushed[1]

    def run(self, stmts: list[Stmt], ctx: tuple, frame: "_Frame") -> None:
        for st in stmts:
            if isinstance(st, If):
                test = st.test.name if isinstance(st.test, Var) else None
                for side, branch in ((True, st.body), (False, st.orelse)):
                    self.run(branch, ctx + (("if", test, side),), frame)
            elif isinstance(st, For):
                lane = id(st) in self.vm.lane_loops
                self.loop_key(st)  # (its counters are one value)
                inner = _Frame(st, frame, self)
                self.run(st.body, ctx + ((("lane", id(st)),) if lane else ()), inner)
                inner.finish()
            elif isinstance(st, Let):
                self.let(st, ctx, frame)

    def let(self, st: Let, ctx: tuple, frame: "_Frame") -> None:
        base = st.args[0].name if st.args and isinstance(st.args[0], Var) else None
        if st.prim == "make_list" and st.target in self.roots:
            frame.own(st.target)
            for a in st.args:
                frame.stack(st.target, False, st).append(_Push(ctx, a, st))
        elif st.prim == "zeros_list" and base is not None and (
                self.alias(base) in self.roots):  # zeros for each entry, on its paths
            if frame.loop is not None:
                raise _Unpaired(st, "zeros of a list inside a loop")
            frame.own(st.target)
            frame.local[st.target] = _zeros(frame.stack(self.alias(base), False, st))
        elif st.prim == "append" and base is not None:
            frame.stack(self.alias(base), False, st).append(_Push(ctx, st.args[1], st))
        elif st.prim in ("pop", "getitem") and base is not None and (
                self.alias(base) in self.roots):
            stack = frame.stack(self.alias(base), True, st)
            if not stack:
                raise _Unpaired(st, "a pop finds no entry pushed on its paths")
            top = stack[-1]
            if not isinstance(top, _Push):
                raise _Unpaired(st, "a pop outside the loop that pushed the entry")
            if not self.same_paths(top.ctx, ctx):
                raise _Unpaired(st, "a pop on other paths than its push")
            if st.prim == "pop":
                stack.pop()
            elif isinstance(top.item, Var):
                self.eq[st.target] = top.item.name
        elif st.prim == "identity" and isinstance(st.args[0], Var):
            self.eq[st.target] = st.args[0].name
        elif st.prim == "getitem" and base is not None and isinstance(
                st.params.get("index"), Index) and len(st.params["index"].items) == 1:
            item = st.params["index"].items[0]
            prod = self.vm.a.producer.get(self.resolve(base))
            if isinstance(item, Const) and isinstance(item.value, int) and (
                    prod is not None and prod.prim in ("make_tuple", "make_list")
                    and -len(prod.args) <= item.value < len(prod.args)):
                got = prod.args[item.value]
                if isinstance(got, Var):
                    self.eq[st.target] = got.name


class _Frame:
    """The lists' entries as one iteration of a loop sees them (the function's own
    frame at the top)."""

    def __init__(self, loop: For | None, parent: "_Frame | None", order: _TapeOrder
                 ) -> None:
        self.loop, self.parent, self.order = loop, parent, order
        self.local: dict[str, list] = {}
        self.mode: dict[str, str] = {}

    def own(self, root: str) -> None:
        self.local[root] = []
        self.mode[root] = "own"

    def stack(self, root: str, popping: bool, st: Any) -> list:
        if root in self.local:
            return self.local[root]
        if self.loop is None:
            return self.local.setdefault(root, [])
        if not popping:
            self.mode[root] = "push"
            return self.local.setdefault(root, [])
        outer = self.parent.stack(root, True, st)
        top = outer[-1] if outer else None
        key = self.order.loop_key(self.loop)
        if not isinstance(top, _Rep) or not self.order.mirrors(top.key, key):
            raise _Unpaired(st, "a loop pops entries that no loop of the same count "
                            "pushed")
        lane = id(self.loop) if id(self.loop) in self.order.vm.lane_loops else None
        if (top.lane is None) != (lane is None):
            raise _Unpaired(st, "a loop the examples leave apart mirrors one they "
                            "do not")
        if lane is not None:
            aligns = self.order.vm.lane_align
            if aligns.get(lane) == aligns.get(top.lane):
                raise _Unpaired(st, "a loop pops the entries of the examples that had "
                                "left the loop that pushed them as their own")
            self.order.lane_eq[lane] = top.lane
        outer.pop()
        self.mode[root] = "pop"
        self.local[root] = list(top.seq)
        return self.local[root]

    def finish(self) -> None:
        key = self.order.loop_key(self.loop)
        lane = id(self.loop) if id(self.loop) in self.order.vm.lane_loops else None
        for root, mode in self.mode.items():
            entries = self.local[root]
            if mode == "push" and entries:
                self.parent.stack(root, False, self.loop).append(_Rep(key, entries, lane))
            elif mode == "pop" and entries:
                raise _Unpaired(self.loop, "a loop pops fewer entries per iteration "
                                "than the loop it mirrors pushed")


def _zeros(entries: list) -> list:
    """A list's entries with their values forgotten (``zeros_list``'s)."""
    return [_Push(e.ctx, None, e.stmt) if isinstance(e, _Push)
            else _Rep(e.key, _zeros(e.seq), e.lane) for e in entries]


def _is_top(s: Let) -> bool:
    """``ys[-1]``: a pop's read of the last entry."""
    index = s.params.get("index")
    return isinstance(index, Index) and len(index.items) == 1 and isinstance(
        index.items[0], Const) and index.items[0].value == -1


def _any(mask: str) -> str:
    """``np.any(mask)``, spelled with primitives s2s reads back (emitted code is
    transformed again: ``vmap(vmap(f))``)."""
    from ..primitives import lookup_object

    if lookup_object(np.any):
        return f"np.any({mask})"
    return f"np.count_nonzero({mask}) > 0"


def _all(mask: str) -> str:
    from ..primitives import lookup_object

    if lookup_object(np.all):
        return f"np.all({mask})"
    return f"np.count_nonzero(~{mask}) == 0"


def _truth_join(test: str, t: str, f: str, truth: dict[str, bool]) -> str:
    """``np.where(test, t, f)`` for a flag, as logic: ``test``, ``test | f``, ..."""
    a, b = truth.get(t), truth.get(f)
    if a is not None and a == b:
        return str(a)
    if a is True:
        return test if b is False else f"{test} | {f}"
    if a is False:
        return f"~{test}" if b is True else f"~{test} & {f}"
    if b is False:
        return f"{test} & {t}"
    if b is True:
        return f"~{test} | {t}"
    return f"np.where({test}, {t}, {f})"


_IN_PLACE = ("setitem", "add_at", "append", "pop")


def _first_touch(stmts: list[Stmt], root: str, aliases: dict[str, str]) -> str | None:
    """How a path first meets the array ``root`` (any version of it): "uses" (reads
    or writes the one it had before), "fresh" (binds the name to an array of its own)
    or None (never)."""
    for st in walk(stmts):
        if any(aliases.get(n, n) == root for n in uses(st)):
            return "uses"
        if isinstance(st, Let) and aliases.get(st.target, st.target) == root:
            return "fresh" if _makes(st, root, aliases) else "uses"
    return None


def _makes(st: Stmt, root: str, aliases: dict[str, str]) -> bool:
    """Whether ``st`` binds a version of the array ``root`` to another object than
    the one it had (not a write in place, nor a join's `y = y_before`)."""
    if not isinstance(st, Let) or aliases.get(st.target, st.target) != root or (
            st.prim in _IN_PLACE):
        return False
    return not (st.prim == "identity" and isinstance(st.args[0], Var)
                and aliases.get(st.args[0].name, st.args[0].name) == root)


def _path_aliases(stmts: list[Stmt], brk: Break) -> dict[str, str] | None:
    """The copies ``a = b`` on the path through ``stmts`` that reaches ``brk`` (None
    where ``brk`` is not in them): what each name holds there."""
    env: dict[str, str] = {}
    found = False
    for st in stmts:
        if st is brk:
            found = True
        elif isinstance(st, If) and not found:
            for branch in (st.body, st.orelse):
                sub = _path_aliases(branch, brk)
                if sub is not None:
                    env.update(sub)
                    found = True
                    break
        elif isinstance(st, Let) and st.prim == "identity" and isinstance(
                st.args[0], Var):
            env[st.target] = st.args[0].name
    return env if found else None


def _resolve(env: dict[str, str], name: str) -> str:
    for _ in range(len(env) + 1):
        if name not in env:
            break
        name = env[name]
    return name


def _stacked_items(name: str, kind: Seq, paths: set, n: str) -> str:
    """``[... for item in name]`` with the item's leaves at ``paths`` stacked n times."""
    item = kind.item
    leaves = leaf_paths(item)
    if _unpackable(item):  # `for (v0, v1) in tape_bar`: one name per leaf
        names = {p: "v" + "".join(str(k) for k in p) for p in leaves}
        target = _unpack_text(item, names)
    else:  # a dict among the leaves: read them by key
        names, target = {p: path_text("v", p) for p in leaves}, "v"
    value = literal(item, lambda p: f"np.stack([{names[p]}] * {n})" if p in paths else names[p])
    return f"[{value} for {target} in {name}]"


# primitives the transform batches itself (containers, calls, writes, joins of lists)
HANDLED = {"setitem", "append", "pop", "zeros_list", "call", "make_dict", "make_list", "make_tuple",
           "identity", "array", "stack", "concatenate", "hstack", "vstack"}

SEQ_ITEM = "*"  # batched paths of a list grown in a loop: "*" then the item's path

# primitives whose result has their first operand's rank
SAME_RANK = {"flip", "fliplr", "flipud", "roll", "sort", "argsort", "copy", "T",
             "transpose", "matrix_transpose", "linalg.matrix_transpose", "moveaxis",
             "swapaxes", "rollaxis", "diff", "nan_to_num", "prod_of_others"}
# runtime helpers that act elementwise (broadcasting their operands)
ELEMENTWISE_RUNTIME = {"special_digamma", "special_polygamma", "special_erf",
                       "special_erfc", "special_erfinv", "special_expit", "special_gammaln",
                       "special_logit", "special_xlogy", "special_xlog1py"}


def _family(prim: str) -> str | None:
    from ..primitives import PRIMITIVES

    return PRIMITIVES[prim].family if prim in PRIMITIVES else None


# facts about one example's array: its shape, rank, size and dtype do not vary
PER_EXAMPLE_FACTS = {"shape", "len", "ndim", "size", "dtype"}


def _prefix_of(paths: set[tuple], kind: Kind) -> Any:
    """in_axes for a callee's argument: 0 where a leaf is batched."""
    if not isinstance(kind, Tree):
        return 0 if () in paths else None
    children = [_prefix_of({p[1:] for p in paths if p[:1] == (k,)}, c)
                for k, c in zip(kind.keys, kind.children)]
    if kind.type is dict:
        return dict(zip(kind.keys, children))
    return tuple(children)


def _ranks_of(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return tuple(_ranks_of(v) for v in x)
    if isinstance(x, dict):
        return tuple((k, _ranks_of(v)) for k, v in x.items())
    return int(np.ndim(x))


def _binds_none(branch: list[Stmt], name: str) -> bool:
    """Whether ``branch`` ends binding ``name`` to None (how the normalizer joins a
    name the other path binds and this one does not)."""
    last = None
    for st in branch:
        if isinstance(st, Let) and st.target == name:
            last = st
        elif isinstance(st, (If, For)) and name in (
                st.joins if isinstance(st, If) else [e for e, _ in st.carried]):
            last = None
    return (last is not None and last.prim == "identity"
            and isinstance(last.args[0], Const) and last.args[0].value is None)


def _read_only_on_path(body: list[Stmt], target: If, name: str, side: int) -> bool:
    """Whether the examples that take the other path of ``target`` (where ``name`` is
    None) never need ``name``.  Under vmap the join holds path ``side``'s value for
    them too: garbage.  Follow it: code under path ``side`` of a later ``if`` on the
    same test (a name bound once, so the same value) does not run for those examples
    and may read anything; elsewhere garbage may only be copied or given to
    ``np.zeros_like`` (both take None without error, as the loop of examples would);
    any other read, or a garbage result, would differ from the loop."""
    test = target.test.name if isinstance(target.test, Var) else None
    if test is None:
        return False
    bindings = 0
    for st in walk(body):
        if isinstance(st, Let) and st.target == test:
            bindings += 1
        elif isinstance(st, If) and test in st.joins or isinstance(st, For) and (
                st.target == test or any(test in pair for pair in st.carried)):
            return False
    if bindings != 1:
        return False
    # the test, and names holding it or its negation (`if not test:` backward)
    negated = {test: False}
    for st in walk(body):
        if isinstance(st, Let) and st.prim in ("not_", "logical_not", "identity") and (
                len(st.args) == 1 and isinstance(st.args[0], Var)
                and st.args[0].name in negated):
            if sum(1 for o in walk(body) if isinstance(o, Let) and o.target == st.target
                   or isinstance(o, If) and st.target in o.joins) == 1:
                negated[st.target] = negated[st.args[0].name] != (st.prim != "identity")
    garbage: set[str] = set()  # names holding garbage for those examples
    state = {"on": False, "ok": True}

    def run(stmts: list[Stmt], guarded: bool) -> None:
        for st in stmts:
            if st is target:
                state["on"] = True
                garbage.add(name)
                continue
            read = set(uses(st)) & garbage
            if read and not guarded and not (
                    isinstance(st, (For, Break)) or isinstance(st, Let)
                    and st.prim in ("identity", "zeros_like")):
                state["ok"] = False
            if isinstance(st, Let):
                if read:
                    garbage.add(st.target)
                else:
                    garbage.discard(st.target)
            elif isinstance(st, If):
                before = set(garbage)
                same = isinstance(st.test, Var) and st.test.name in negated
                # on the same test, those examples take path `theirs`
                theirs = (1 - side) ^ negated[st.test.name] if same else None
                ends = []
                for k, branch in enumerate((st.body, st.orelse)):
                    garbage.clear()
                    garbage.update(before)
                    run(branch, guarded or (same and k != theirs))
                    ends.append(set(garbage))
                garbage.clear()
                garbage.update(ends[0] | ends[1])
                for j in st.joins:
                    if j in (ends[theirs] if same else ends[0] | ends[1]):
                        garbage.add(j)
                    else:
                        garbage.discard(j)
            elif isinstance(st, For):
                while True:
                    size = len(garbage)
                    run(st.body, guarded)
                    garbage.update(e for e, x in st.carried if x in garbage)
                    if len(garbage) == size:
                        break
            elif isinstance(st, Break):
                garbage.update(c for c, here in st.copies if here in garbage)

    run(body, False)
    return state["on"] and state["ok"]


def _renamed(s: Any, renamed: dict[str, str]) -> Any:
    """The statement binding (and reading) a branch's own names for the joins."""
    def atom(a: Any) -> Any:
        return Var(renamed[a.name]) if isinstance(a, Var) and a.name in renamed else a

    if isinstance(s, If):
        return If(atom(s.test), [_renamed(t, renamed) for t in s.body],
                  [_renamed(t, renamed) for t in s.orelse], s.loc,
                  [renamed.get(j, j) for j in s.joins])
    args = tuple(atom(a) for a in s.args)
    return Let(renamed.get(s.target, s.target), s.prim, args, s.params, s.loc)


# ---- the probe: one example, run once, to learn every value's rank ------------------


def probe(fn: Function, example: tuple) -> dict[tuple[str, tuple], Any]:
    """Run ``fn``'s statements on one example; the rank of each value it computes
    (per leaf path), and the arguments of each call to a user function."""
    kinds = tuple(_kind(x) for x in example) + (LEAF,) * (len(fn.params) - len(example))
    fn = unroll_container_loops(fn, kinds)
    r = _Reverse(fn, Spec("vjp", (), True, False, kinds), Module())
    r.analyse()
    items = [Line(f"__record__({p!r}, {p})") for p in fn.params + fn.kwonly]
    items += _instrument(_forward(fn.body[:-1], r))
    ret = fn.body[-1]
    assert isinstance(ret, Return)
    items.append(Line(f"__record__({atom_text(ret.value)!r}, {atom_text(ret.value)})"))
    items = _spell_buffers(items, fn.aliases)
    params = list(fn.params[: len(example)])
    defaults = Module()
    rest = [f"{p}={default_text(fn, p, defaults)}" for p in fn.params[len(example):]]
    if fn.kwonly:  # keyword-only parameters take their defaults (vmap passes none)
        rest += ["*"] + [f"{p}={default_text(fn, p, defaults)}" if p in fn.defaults
                         else p for p in fn.kwonly]
    text = render_function("__probe__", ", ".join(params + rest), items)
    found: dict[tuple[str, tuple], Any] = {}

    def record(name: str, value: Any) -> None:
        for path, leaf in _leaf_items(value):
            found.setdefault((name, path), int(np.ndim(leaf)))

    def record_call(name: str, args: tuple) -> None:
        found.setdefault(("__call__", name), args)

    from .. import runtime

    ns = {"np": np, **{k: getattr(runtime, k) for k in runtime.__all__}}
    ns.update(fn.namespace)
    ns.update(defaults.namespace)
    ns["__record__"], ns["__record_call__"] = record, record_call
    compile_module(text, ns, f"probe_{fn.name}")["__probe__"](*example)
    return found


def _kind(x: Any) -> Kind:
    from ..ir.kinds import kind_of

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
                out.append(Line(f"__record_call__({call[0]!r}, ({call[1]},))"))
            out.append(item)
            for name in sorted(item.defines):
                out.append(Line(f"__record__({name!r}, {name})"))
        elif isinstance(item, Block):
            out.append(Block(item.header, _instrument(item.body), _instrument(item.orelse)))
        elif not isinstance(item, Comment):
            out.append(item)
    return out


def _call_target(text: str) -> tuple[str, str] | None:
    """``h = helper(a, b)`` -> ("h", "a, b") for calls to functions that are not
    NumPy's or s2s's (user functions, whose batched versions need their own probe)."""
    tree = ast.parse(text).body[0]
    if not (isinstance(tree, ast.Assign) and isinstance(tree.value, ast.Call)
            and isinstance(tree.value.func, ast.Name) and len(tree.targets) == 1
            and isinstance(tree.targets[0], ast.Name)):
        return None
    return tree.targets[0].id, ", ".join(ast.unparse(a) for a in tree.value.args)
