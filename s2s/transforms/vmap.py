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

import re
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..emit.code import Line, render_function
from ..errors import TransformError
from ..ir.kinds import LEAF, Kind, Seq, Tree, leaf_paths, literal, path_text
from ..ir.nodes import (
    Const,
    For,
    Function,
    If,
    Let,
    Return,
    Var,
    walk,
)
from ..ir.peel import peel_first
from ..ir.spelling import atom_text
from ..ir.walk import param_atoms
from ..primitives.batching import (
    Batch,
    NoBatchRule,
    rule_for,
)
from .analysis import callee_of, const_kind, facts
from .base import StmtTransform
from .batched_if import BatchedIf
from .batched_lists import ListBatching
from .batched_loops import SEQ_ITEM, BatchedLoops, PeelFirst
from .collectives import COLLECTIVES, CollectiveBatching
from .kept import KeptBatching
from .list_operands import batched, per_call
from .module import Module, signature_text, stem
from .none_args import with_constant_tests
from .ranks import VALUES, RankInference, call_key, probe, probe_the_other_path, replay_args
from .replay import Replay, dead_code, spell_buffers
from .tape_order import TapeOrder


@dataclass
class VmapSpec:
    """What to emit: which leaves of each positional argument are batched, along
    which axis, and where the result's batch axis goes."""

    in_axes: tuple[Any, ...]  # per positional parameter: None, an int, or a tree of those
    out_axes: Any  # None, an int, or a tree of those (a prefix of the output's)
    arg_kinds: tuple[Kind, ...]
    example: tuple[Any, ...]  # one example's arguments (the probe runs on them)
    nargs: int | None = None
    shared_draws: bool = False  # every example one call's draws (jacfwd's basis)
    ranks: dict[tuple[str, tuple], int] = field(default_factory=dict)
    axis_name: Any = None  # the name collectives (s2s.lax.psum) reduce over
    # an `if` (in no loop, on an unbatched test) whose paths give a value different
    # ranks: its code made for the probe's path, the other raising runtime.OtherPath
    # (the caller, vmap called directly, makes that path's code); False: refused
    path_guards: bool = False
    # a branch or loop the probe never ran, whose ranks it never saw (a generator that
    # yields nothing on this call): its code raising runtime.OtherPath where a call
    # runs it; where the caller makes code per call, also in a function called in a
    # loop (path_guards is then False: its paths' ranks may differ per iteration)
    unprobed_guards: bool = False
    # loops peeled (their first iteration run apart: ir/peel.py), by id: not again
    peeled: set[int] = field(default_factory=set)


def emit_vmap(fn: Function, spec: VmapSpec, module: Module, name: str) -> str:
    module.taken.add(name)
    module.taken |= fn.names.taken  # helper names must not shadow its locals
    module.namespace.update(fn.namespace)
    fn = per_call(fn, spec.arg_kinds, batched(spec.in_axes))  # (probe: alike)
    text, _ = built(fn, spec, module, name)
    module.functions.append(text)
    return name


def built(fn: Function, spec: VmapSpec, module: Module, name: str) -> tuple[str, "_Vmap"]:
    """The batched function's text, and the builder that made it: where a loop
    carries a value whose rank its first iteration changes (``acc = 0.0``, then
    ``acc = acc * x + c``), made again with that iteration run apart (ir/peel.py),
    the ranks probed again."""
    while True:
        builder = _Vmap(fn, spec, module)
        try:
            return builder.build(name), builder
        except PeelFirst as err:
            fn, rest = peel_first(fn, err.loop)
            spec.peeled.add(id(rest))
            spec.ranks = probe(fn, spec.example, spec.arg_kinds, batched(spec.in_axes))


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


class _Vmap(StmtTransform, Batch, ListBatching, KeptBatching, CollectiveBatching):
    def __init__(self, fn: Function, spec: VmapSpec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        self.facts = facts(fn, spec.arg_kinds)
        self.replay = Replay(self.facts)
        self.names = module.names_for(fn)
        self.inference = RankInference(self)  # ranks the probe did not record
        self.branches = BatchedIf(self)  # `if`s, on a batched test or not
        self.loops = BatchedLoops(self)  # loops, left by every example together or not
        self.b: dict[str, set[tuple]] = {}  # value -> its batched leaf paths
        self.ranks = spec.ranks
        self.batch_size = self.names.fresh("n_batch")
        self.size_used = False
        self.items: dict[str, list[Any]] = {}  # a list of known length -> its items
        self.result_batched: set[tuple] = set()
        self.flags: set[str] = set()  # names a lowered `break` binds (True: leaving)
        # the masks of the loops being emitted whose examples leave apart: (name,
        # True for a mask of those done); a write keeps the done examples' elements
        self.write_masks: list[tuple[str, bool]] = []
        # loops the examples leave apart (masked), by id: their list pushes and pops
        # are checked to pair up per example (TapeOrder)
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
        return self.facts.kinds.get(var, LEAF)

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
        inferred = self.inference.infer(name) if not path else _or_none(
            self.inference._leaf_rank, name, path)  # (a container's leaf: its item's)
        if inferred is not None:
            self.ranks[(name, path)] = inferred
            return inferred
        raise NoBatchRule(
            f"the rank of `{name}` is unknown (the first example never computed it)",
            "make the first example take every branch and loop the others take",
        )

    def out_rank(self, s: Let) -> int:
        return self.rank(Var(s.target))

    def use_batch_size(self) -> str:
        self.size_used = True
        return self.batch_size

    # ---- building -----------------------------------------------------------------

    def build(self, name: str) -> str:
        nargs = len(self.fn.params) if self.spec.nargs is None else self.spec.nargs
        head: list[Any] = []
        for i, p in enumerate(self.fn.params[:nargs]):
            axes = _axes_of(self.spec.in_axes[i], self.kind(p))
            for path, axis in axes.items():
                if axis is None:
                    continue
                kind = _kind_at(self.kind(p), path)
                self.b.setdefault(p, set()).update(  # (a list grown in a loop: its items)
                    {path + (SEQ_ITEM,) + q for q in leaf_paths(kind.item)} if isinstance(
                        kind, Seq) else {path})
                if axis != 0:
                    if path:
                        raise TransformError(
                            "in_axes other than 0 for a leaf inside a container are not "
                            "supported yet", self.fn.loc, "move the axis to the front first",
                        )
                    head.append(Line(f"{p} = np.moveaxis({p}, {axis}, 0)"))
        first_batched = _size_leaf(self, self.fn.params[:nargs])
        size_param = _size_param(self, name, nargs, first_batched)
        body: list[Any] = []
        self.block(self.fn.body[:-1], body)
        ret = self.fn.body[-1]
        assert isinstance(ret, Return)
        result = ret.value
        kind = self.kind(result.name) if isinstance(result, Var) else LEAF
        if self.spec.out_axes == "auto":  # a callee: its unbatched results stay so
            out_axes = {p: 0 if self.batched(result, p) else None for p in leaf_paths(kind)}
            self.result_batched = _result_paths(self.b.get(result.name, set()), out_axes)
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
            if self._per_axis(self._leaf_atom(result, path)):
                # np.gradient's per-axis results, stacked after the batch axis while
                # batched: returned as NumPy's tuple, one batched array per axis
                each = "g" if axis == 0 else f"np.moveaxis(g, 0, {axis})"
                text = f"tuple({each} for g in np.moveaxis({text}, 1, 0))"
            elif axis != 0:
                text = f"np.moveaxis({text}, 0, {axis})"
            leaves[path] = text
        ret_line = Line(f"return {literal(kind, lambda p: leaves[p])}")
        if self.size_used and not size_param:
            if first_batched is None:
                raise TransformError("vmap needs a batched argument", self.fn.loc)
            head.append(Line(f"{self.batch_size} = np.shape({first_batched})[0]"))
        TapeOrder(self).check()
        body = dead_code(body, set(ret_line.uses))
        items = spell_buffers(head + body + [ret_line], self.fn.aliases)
        signature = _signature(self, size_param)
        return render_function(name, signature, items)

    def _iter_text(self, atom: Any) -> str:
        """A loop's iterable spelled from its ``range`` (and ``reversed``) statements."""
        prod = self.facts.producer.get(atom.name) if isinstance(atom, Var) else None
        if prod is None:
            return atom_text(atom)
        if prod.prim == "reversed":
            return f"reversed({self._iter_text(prod.args[0])})"
        return f"range({', '.join(atom_text(a) for a in prod.args)})"

    def leaf_text(self, atom: Any, path: tuple) -> str:
        """A leaf of a container, read through the literal that built it."""
        prod = self.facts.producer.get(atom.name) if isinstance(atom, Var) and path else None
        if prod is not None and atom.name in self.if_joins:
            prod = None  # (its producer is one branch's: the join is either)
        if prod is not None and prod.prim in ("make_tuple", "make_list", "make_dict"):
            kind = self.kind(atom.name)
            assert isinstance(kind, Tree)
            inner = prod.args[list(kind.keys).index(path[0])]
            if isinstance(inner, Var):
                return self.leaf_text(inner, path[1:])
        return path_text(atom_text(atom), path)

    def _leaf_atom(self, atom: Any, path: tuple) -> Any:
        """The atom a container's leaf is, through the literal that built it (None
        where it is read out of a value instead)."""
        if not path:
            return atom
        prod = self.facts.producer.get(atom.name) if isinstance(atom, Var) else None
        if prod is None or prod.prim not in ("make_tuple", "make_list", "make_dict") or \
                atom.name in self.if_joins:
            return None
        kind = self.kind(atom.name)
        inner = prod.args[list(kind.keys).index(path[0])]
        return self._leaf_atom(inner, path[1:]) if isinstance(inner, Var) else None

    def _per_axis(self, atom: Any) -> bool:
        """``np.gradient(f)`` of a batched ``f`` of several axes per example, axis=
        left out: one result per axis, batched as one array (batch axis, then axis)."""
        prod = self.facts.producer.get(atom.name) if isinstance(atom, Var) else None
        if prod is not None and prod.prim == "asarray" and isinstance(prod.args[0], Var):
            prod = self.facts.producer.get(prod.args[0].name)  # (as s2s spells it)
        return (prod is not None and prod.prim == "gradient" and self.batched(atom)
                and prod.params.get("axis", Const(None, "None")).value is None
                and self.rank(prod.args[0]) > 1)

    def fail(self, s: Any, err: NoBatchRule) -> TransformError:
        return TransformError(
            f"vmap cannot batch this: {err.what}", s.loc,
            err.hint or "compute this part outside the vmapped function",
        )

    # ---- statements ---------------------------------------------------------------

    # structural primitives: list operations (whatever is batched; zeros_list, pop: as
    # the list's items), then containers and identities (`is`: one bool for every example)
    LIST_OPS = {"setitem": "setitem", "append": "append", "zeros_list": "same_list",
                "pop": "same_list", "getitem": "seq_item", "len": "seq_length",
                "kept": "kept", "draw": "draw", "add_at": "masked_add",
                **COLLECTIVES}
    CONTAINER_OPS = {"is_": "identity_test", "is_not": "identity_test",
                     "identity": "identity", "list": "list_copy", "make_tuple": "container",
                     "make_list": "container", "make_dict": "container",
                     "getitem": "tree_item", "call": "call"}

    def let(self, s: Let, out: list[Any]) -> None:
        # operands, and atoms among the parameters (an index, an axis): any batched?
        batched_args = [a for a in list(s.args) + param_atoms(s) if self.batched(a)]
        if s.prim in ("make_list", "make_tuple"):
            self.items[s.target] = list(s.args)
        if self.structural(self.LIST_OPS, s, out):
            return
        if not batched_args and s.prim != "call":
            out += self.replay.statements([s])
            return
        if self.structural(self.CONTAINER_OPS, s, out):
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

    def call(self, s: Let, out: list[Any]) -> None:
        """A user function called with batched arguments: its own batched version."""
        callee = callee_of(s)
        if not any(self.batched(a) for a in s.args):
            out += self.replay.statements([s])
            if call_key(s) not in self.spec.ranks:
                self._unprobed_result_ranks(s, callee)
            return
        example = self.spec.ranks.get(call_key(s))
        try:
            in_axes = tuple(_prefix_of(self.b.get(a.name, set()), self.kind(a.name))
                            if isinstance(a, Var) else None for a in s.args)
        except NoBatchRule as err:
            raise self.fail(s, err) from None
        kinds = tuple(self.kind(a.name) if isinstance(a, Var) else const_kind(a)
                      for a in s.args)  # (a dict default passed: its keys)
        probed = example is not None
        if example is None:
            example = self._unprobed_call(s, callee, in_axes, kinds)
        callee = with_constant_tests(callee, s.args)  # (`k is None` of a constant k)
        # its code may be made for the path its probe took through an `if` whose
        # paths give a value different ranks where this call runs once per call (not
        # in a loop, nor under an `if` on a batched value): a version per call site
        guards = self.spec.path_guards and probed and not self.write_masks and (
            id(s) in _once_lets(self))
        key = ("vmap", id(callee), repr(in_axes), kinds, tuple(
            _ranks_of(x) for x in example)) + ((id(s),) if guards else ())
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
                            tuple(example), len(s.args), self.spec.shared_draws,
                            axis_name=self.spec.axis_name,
                            path_guards=guards, unprobed_guards=unprobed_guards(self))
            arrays = batched(spec.in_axes)
            unrolled = per_call(callee, spec.arg_kinds, arrays)  # (as probe does)
            try:  # (on the other path's values: NumPy's warnings are not the user's)
                with np.errstate(**({} if probed else {"all": "ignore"})):
                    spec.ranks = probe(unrolled, spec.example, spec.arg_kinds, arrays)
            except Exception:  # noqa: BLE001 - (values standing for an example)
                if probed:
                    raise
                del self.module.names[key]
                raise self.fail(s, NoBatchRule(
                    f"`{callee.name}` was not called by the probe")) from None
            self.module.taken.add(name)
            self.module.namespace.update(callee.namespace)
            _result_ranks(self.module, name, spec, unrolled)  # (a recursive call's)
            text, builder = built(unrolled, spec, self.module, name)
            _result_ranks(self.module, name, spec, builder.fn)  # (a loop peeled: its own)
            self.module.functions.append(text)
            self.module.names[("vmap result", name)] = builder.result_batched
        for path, r in self.module.names.get(("vmap result ranks", name), {}).items():
            self.ranks.setdefault((s.target, path), r)  # (a call the probe never made)
        out.append(Line(f"{s.target} = {name}({_call_args(self, s, name)})"))
        # a recursive call, while its own batched version is being built: all batched
        self.b[s.target] = self.module.names.get(
            ("vmap result", name), set(leaf_paths(self.kind(s.target))))

    def _unprobed_result_ranks(self, s: Let, callee: Function) -> None:
        """The ranks of an unbatched call's result the probe never computed: the
        callee's return, probed on the arguments ``_unprobed_call`` stands for one
        example (left unknown where there are none)."""
        kinds = tuple(self.kind(a.name) if isinstance(a, Var) else const_kind(a)
                      for a in s.args)  # (a dict default passed: its keys)
        ret = callee.body[-1]
        if not (isinstance(ret, Return) and isinstance(ret.value, Var)):
            return
        try:
            with np.errstate(all="ignore"):  # (values standing for an example)
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
        (whose batched version, keyed by those ranks, is the one being built);
        another function's taken by position must run it (`_runs`)."""
        try:
            own = self._own_example(s, callee, kinds)
            if callee is self.fn or callee.name == self.fn.name or _runs(callee, own):
                return own
            raise self.fail(s, NoBatchRule(f"`{callee.name}` was not called by the probe"))
        except TransformError:
            # (on a path the example did not take: its arguments computed from the
            # example's values, a function chosen by a run-time test, a gradient's
            # callee on the other branch)
            own = next((st for st in walk(self.fn.body) if st is s), None) or next((
                st for st in walk(self.fn.body) if isinstance(st, Let) and st.prim == "call"
                and callee_of(st) is callee and st.loc == s.loc), None)
            example = None if own is None else replay_args(
                self.fn, own, self.spec.ranks.get(VALUES, {}))
            if example is None and own is not None:  # (computed in a loop, popped)
                example = probe_the_other_path(self.fn, own, self.spec.example,
                                               self.spec.arg_kinds)
            if example is None:
                raise
            return example

    def _own_example(self, s: Let, callee: Function, kinds: tuple) -> tuple:
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
            same = self._probed_elsewhere(s, callee)
            if same is not None:
                return same
            raise self.fail(s, missing)
        try:
            ranks = tuple(self.rank(a) for a in s.args)
        except NoBatchRule:
            raise self.fail(s, missing) from None
        if ranks != tuple(_ranks_of(x) for x in own):
            same = self._probed_elsewhere(s, callee)
            if same is not None:
                return same
            raise self.fail(s, missing)
        return own

    def _probed_elsewhere(self, s: Let, callee: Function) -> tuple | None:
        """The arguments the probe gave the same callee at another call, with the
        ranks of this one's (a body vmap's `g` called in a loop that ran no iteration,
        and on a row of zeros for the empty batch's shape, or the other way round)."""
        try:  # (per argument, its leaves' ranks)
            ranks = tuple(tuple(self.rank(a, p) for p in leaf_paths(self.kind(a.name)))
                          if isinstance(a, Var) else (self.rank(a),) for a in s.args)
        except NoBatchRule:
            return None
        for st in walk(self.fn.body):
            example = self.spec.ranks.get(call_key(st)) if isinstance(
                st, Let) and st.prim == "call" and st is not s else None
            if example is not None and _same_code(callee_of(st), callee) and len(example) == len(
                    s.args) and tuple(tuple(_leaf_ranks(x)) for x in example) == ranks:
                return tuple(example)
        return None

    def if_(self, s: If, out: list[Any]) -> None:
        self.branches.if_(s, out)

    def for_(self, s: For, out: list[Any]) -> None:
        self.loops.for_(s, out)


def _same_code(a: Function, b: Function) -> bool:
    """Are ``a`` and ``b`` one function's code, up to its name and the lines it was
    read from (each call of a lambda that `functools.reduce` lowers to a loop is its
    own copy, and so is each of a gradient's callees of it)?"""
    return a is b or (a.params == b.params and a.kwonly == b.kwonly and
                      a.namespace.keys() == b.namespace.keys() and
                      _code_text(a) == _code_text(b))


def _code_text(fn: Function) -> str:
    """``fn``'s statements without their lines, each name it binds or reads spelled by
    the order it first appears in (the parameters first)."""
    def bare(s: Any) -> Any:
        if isinstance(s, If):
            return replace(s, loc=None, body=[bare(t) for t in s.body],
                           orelse=[bare(t) for t in s.orelse])
        if isinstance(s, For):
            return replace(s, loc=None, body=[bare(t) for t in s.body])
        return replace(s, loc=None) if hasattr(s, "loc") else s

    text = repr([bare(s) for s in fn.body])
    order = dict.fromkeys([*fn.params, *fn.kwonly, *_NAMED.findall(text)])
    spelled = {name: f"<{k}>" for k, name in enumerate(order)}
    return re.sub(r"'([A-Za-z_]\w*)'", lambda m: spelled.get(m.group(1), m.group(0)), text)


_NAMED = re.compile(r"(?:Var\(name|target)='([A-Za-z_]\w*)'")


def _runs(callee: Function, example: tuple) -> bool:
    """Does ``callee`` run on ``example``, values standing for one example?  Those a
    call the probe never made takes from its caller's example by position may not be
    its arguments (a gradient's callee on a branch not taken, `lambda_vjp_jvp(b,
    out_bar, ...)` in code whose third parameter is a string): then they are computed
    from the example's values, as for any such call (``_unprobed_call``)."""
    try:
        with np.errstate(all="ignore"):
            probe(callee, example)
    except Exception:  # noqa: BLE001 - (they are not its arguments)
        return False
    return True


# primitives the transform batches itself (containers, calls, writes, joins of lists)
HANDLED = {"setitem", "append", "pop", "zeros_list", "call", "make_dict", "make_list", "make_tuple",
           "identity", "array", "stack", "concatenate", "hstack", "vstack", *COLLECTIVES}

# facts about one example's array: its shape, rank, size and dtype do not vary (nor
# whether its dtype is complex: the absolute value's derivative asks)
PER_EXAMPLE_FACTS = {"shape", "len", "ndim", "size", "dtype", "iscomplexobj", "isrealobj"}


def _size_param(vm: Any, name: str, nargs: int, first_batched: str | None) -> bool:
    """Does the callee ``name`` take the batch size from its caller (keyword-only
    ``n_batch``)?  Where its batched arguments are lists' items only: a list empty on
    a call (a generator's items) has no first item to read it off."""
    params = vm.fn.params[:nargs]
    if vm.spec.out_axes != "auto" or first_batched is None or first_batched in {
            path_text(p, q) for p in params for q in vm.b.get(p, ())}:
        return False
    vm.module.names[("vmap size", name)] = vm.batch_size  # (the keyword's name)
    return True


def _signature(vm: Any, size_param: bool) -> str:
    """The batched function's parameters: its own, and the batch size given by its
    caller after them (keyword-only: after those with defaults), ``_size_param``."""
    text = signature_text(vm.fn, list(vm.fn.params), False, vm.module)
    if not size_param:
        return text
    return f"{text}{', ' if text else ''}{'' if vm.fn.kwonly else '*, '}{vm.batch_size}"


def _call_args(vm: Any, s: Let, name: str) -> str:
    """The arguments of a call of the batched callee ``name``: the call's, and the
    batch size where the callee takes it (``_size_param``)."""
    args = ", ".join(atom_text(a) for a in s.args)
    if (size := vm.module.names.get(("vmap size", name))) is not None:
        args += f", {size}={vm.use_batch_size()}"
    return args


def unprobed_guards(vm: Any) -> bool:
    """May a callee's code raise ``OtherPath`` where a call runs a branch or loop its
    probe never ran (``VmapSpec.unprobed_guards``)?"""
    return (vm.spec.path_guards or vm.spec.unprobed_guards) and not vm.write_masks


def _size_leaf(vm: Any, params: list[str]) -> str | None:
    """The argument leaf emitted code reads the batch size off: the first batched
    array, else the first item of a batched list grown in a loop (None: no leaf)."""
    listed = None
    for p in params:
        paths = vm.b.get(p, set())
        for path in leaf_paths(vm.kind(p)):
            if path in paths:
                return path_text(p, path)
            item = sorted(q[len(path) + 1:] for q in paths if q[:len(path) + 1] == (
                *path, SEQ_ITEM))
            listed = listed or (item and path_text(f"{path_text(p, path)}[0]", item[0]))
    return listed or None


def _result_paths(own: set[tuple], out_axes: dict) -> set[tuple]:
    """A callee's batched result paths: those of its leaves, and for a list grown in
    a loop among them, of its items' leaves (``SEQ_ITEM`` paths)."""
    batched = {p for p, a in out_axes.items() if a is not None}
    return {q for q in own if any(q[:len(p)] == p for p in batched)} or batched


def _kind_at(kind: Kind, path: tuple) -> Kind:
    """The kind of the leaf at ``path`` of a container of ``kind``."""
    for key in path:
        if not isinstance(kind, Tree) or key not in kind.keys:
            return LEAF
        kind = kind.children[kind.keys.index(key)]
    return kind


def _prefix_of(paths: set[tuple], kind: Kind) -> Any:
    """in_axes for a callee's argument: 0 where a leaf is batched."""
    if isinstance(kind, Seq) and paths and () not in paths:  # (a list grown in a loop)
        if paths != {(SEQ_ITEM,) + q for q in leaf_paths(kind.item)}:
            raise NoBatchRule("a list whose items are batched in part, passed to a function",
                              "pass the batched and the unbatched values as two lists")
        return 0  # (each item batched: the callee's items, batched.build)
    if not isinstance(kind, Tree):
        return 0 if () in paths else None
    children = [_prefix_of({p[1:] for p in paths if p[:1] == (k,)}, c)
                for k, c in zip(kind.keys, kind.children)]
    if kind.type is dict:
        return dict(zip(kind.keys, children))
    return tuple(children)


def _or_none(f: Any, *args: Any) -> Any:
    try:
        return f(*args)
    except NoBatchRule:
        return None


def _leaf_ranks(x: Any) -> list[int]:
    if isinstance(x, (tuple, list)):
        return [r for v in x for r in _leaf_ranks(v)]
    if isinstance(x, dict):
        return [r for v in x.values() for r in _leaf_ranks(v)]
    return [int(np.ndim(x))]


def _result_ranks(module: Module, name: str, spec: VmapSpec, fn: Function) -> None:
    """Record the probed ranks of the leaves of the result of ``fn``, a callee
    batched as ``name``, where calls of it read them (its return's name: a peeled
    loop's result has a name of its own)."""
    ret = fn.body[-1]
    if isinstance(ret, Return) and isinstance(ret.value, Var):
        module.names[("vmap result ranks", name)] = {
            path: r for (n, path), r in spec.ranks.items() if n == ret.value.name}


def _ranks_of(x: Any) -> Any:
    if isinstance(x, (tuple, list)):
        return tuple(_ranks_of(v) for v in x)
    if isinstance(x, dict):
        return tuple((k, _ranks_of(v)) for k, v in x.items())
    return int(np.ndim(x))


def _once_lets(vm: Any) -> set[int]:
    """The ids of ``vm``'s statements in no loop (each runs at most once per call)."""
    if getattr(vm, "_once", None) is None:
        def once(body: list) -> list:
            return [x for st in body for x in (
                [st] if isinstance(st, Let) else once(st.body) + once(st.orelse)
                if isinstance(st, If) else [])]
        vm._once = {id(st) for st in once(vm.fn.body)}
    return vm._once


# ---- the probe: one example, run once, to learn every value's rank ------------------


