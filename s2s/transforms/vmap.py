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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..emit.code import Block, Line, render_function
from ..errors import TransformError
from ..frontend.normalize import unroll_container_loops
from ..ir.kinds import (
    LEAF,
    Kind,
    Seq,
    Tree,
    leaf_paths,
    literal,
    path_text,
    unpack_text,
    unpackable,
)
from ..ir.nodes import (
    Break,
    Const,
    For,
    Function,
    If,
    Let,
    Return,
    Slice,
    Stmt,
    Var,
    uses,
    walk,
)
from ..ir.spelling import atom_text, index_text
from ..ir.walk import effective_carried, loop_breaks, param_atoms
from ..primitives.batching import (
    Batch,
    NoBatchRule,
    align,
    batched_items,
    rule_for,
    shifted,
)
from .analysis import callee_of, facts
from .base import StmtTransform
from .batched_if import BatchedIf
from .module import Module, signature_text, stem
from .ranks import RankInference, probe
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


class _Vmap(StmtTransform, Batch):
    def __init__(self, fn: Function, spec: VmapSpec, module: Module) -> None:
        self.fn = fn
        self.spec = spec
        self.module = module
        self.facts = facts(fn, spec.arg_kinds)
        self.replay = Replay(self.facts)
        self.names = module.names_for(fn)
        self.inference = RankInference(self)  # ranks the probe did not record
        self.branches = BatchedIf(self)  # `if`s, on a batched test or not
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
        inferred = self.inference.infer(name) if not path else None
        if inferred is not None:
            self.ranks[(name, ())] = inferred
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
        TapeOrder(self).check()
        body = dead_code(body, set(ret_line.uses))
        items = spell_buffers(head + body + [ret_line], self.fn.aliases)
        signature = signature_text(self.fn, list(self.fn.params), False, self.module)
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

    def fail(self, s: Any, err: NoBatchRule) -> TransformError:
        return TransformError(
            f"vmap cannot batch this: {err.what}", s.loc,
            err.hint or "compute this part outside the vmapped function",
        )

    # ---- statements ---------------------------------------------------------------

    # structural primitives: list operations (whatever is batched; zeros_list, pop: as
    # the list's items), then containers and identities (`is`: one bool for every example)
    LIST_OPS = {"setitem": "setitem", "append": "append", "zeros_list": "same_list",
                "pop": "same_list", "getitem": "seq_item"}
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

    def append(self, s: Let, out: list[Any]) -> None:
        """``ys.append(v)``: a known-length list gets a slot, a grown one its items'."""
        if s.args[0].name in self.items:
            self.items[s.target] = self.items[s.args[0].name] + [s.args[1]]
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
        if self.write_masks:  # (under batched control flow: see TapeOrder)
            text = self.replay.statements([s])[0].text
            out.append(Line(f"{text}  # every example pushes; junk for those off "
                            "this path", keep=True))
            return
        out += self.replay.statements([s])

    def same_list(self, s: Let, out: list[Any]) -> None:
        if self.b.get(s.args[0].name):
            self.b[s.target] = set(self.b[s.args[0].name])
        out += self.replay.statements([s])

    def seq_item(self, s: Let, out: list[Any]) -> bool:
        """An item of a list grown in a loop: its batched leaves are the items'."""
        if not isinstance(self.kind(s.args[0].name), Seq):
            return False
        paths = self.b.get(s.args[0].name, set())
        self.b[s.target] = {p[1:] for p in paths if p[:1] == (SEQ_ITEM,)}
        out += self.replay.statements([s])
        return True

    def identity_test(self, s: Let, out: list[Any]) -> None:
        self.b.pop(s.target, None)
        out += self.replay.statements([s])

    def identity(self, s: Let, out: list[Any]) -> None:
        self.b[s.target] = set(self.b.get(s.args[0].name, set()))
        out += self.replay.statements([s])

    def list_copy(self, s: Let, out: list[Any]) -> bool:
        """A copy of a list or tuple (not an array's rows): its items keep their axes."""
        if not (isinstance(s.args[0], Var) and self.kind(s.args[0].name) != LEAF):
            return False
        self.b[s.target] = set(self.b.get(s.args[0].name, set()))
        if s.args[0].name in self.items:
            self.items[s.target] = list(self.items[s.args[0].name])
        out += self.replay.statements([s])
        return True

    def container(self, s: Let, out: list[Any]) -> None:
        kind = self.facts.stmt_kind(s)  # (an if's join another path grows: known here)
        assert isinstance(kind, Tree)
        self.b[s.target] = {
            (key,) + p for key, a in zip(kind.keys, s.args)
            if isinstance(a, Var) for p in self.b.get(a.name, set())
        }
        out += self.replay.statements([s])

    def tree_item(self, s: Let, out: list[Any]) -> bool:
        if not isinstance(self.kind(s.args[0].name), Tree):
            return False
        key = self.facts.container_key(s, self.kind(s.args[0].name))
        self.b[s.target] = {p[1:] for p in self.b.get(s.args[0].name, set())
                            if p[:1] == (key,)}
        out += self.replay.statements([s])
        return True

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
            from ..primitives.batching_shape import (
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
            out += self.replay.statements([s])
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
                    item.name in self.facts.int_vars or self.rank(item) == 0):
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
            elif isinstance(item, Var) and (item.name in self.facts.int_vars or (
                    self.rank(item) == 0)):
                rank -= 1  # an int (a scalar index the probe saw)
            elif isinstance(item, Var):
                raise NoBatchRule("writing at an array index into a batched array")
        return rank

    def call(self, s: Let, out: list[Any]) -> None:
        """A user function called with batched arguments: its own batched version."""
        callee = callee_of(s)
        if not any(self.batched(a) for a in s.args):
            out += self.replay.statements([s])
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
        self.branches.if_(s, out)

    def for_(self, s: For, out: list[Any]) -> None:
        count = None  # a batched count: `for _ in range(n)`, n one int per example
        if s.iter is not None and self.batched(s.iter):
            count = self._batched_count(s)
        carried_pairs = effective_carried(s)
        # a `break` becomes a per-example flag, joined like any value: where its test is
        # batched, the examples leave the loop at different iterations (masked lanes)
        flag, body_ir = None, s.body
        if loop_breaks(s.body):
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
            prod = self.facts.producer.get(entry)
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
        prod = self.facts.producer.get(s.iter.name)
        if prod is not None and prod.prim == "reversed" and isinstance(
                prod.args[0], Var):
            prod = self.facts.producer.get(prod.args[0].name)
        n = prod.args[0] if prod is not None and prod.prim == "range" and len(
            prod.args) == 1 and not prod.params else None
        if not isinstance(n, Var) or not self.batched(n) or self.rank(n) != 0 or (
                loop_breaks(s.body)):
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
        before = self._values_at_start(body_ir, carried, buffers, body)
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
        test_exit = self._keep_left(s, carried, buffers, before, (mask, done), body)
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

    def _values_at_start(self, body_ir: list[Stmt], carried: list[tuple[str, str]],
                         buffers: set[str], body: list[Any]) -> dict[str, str]:
        """Values a nested loop (or a join) rebinds: their value at the start, named."""
        before = {}
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
        return before

    def _keep_left(self, s: For, carried: list[tuple[str, str]], buffers: set[str],
                   before: dict[str, str], masking: tuple[str, bool], body: list[Any]) -> Any:
        """An example that has left keeps its values (``np.where`` on the mask, one
        of the examples running or, ``done``, of those done); the while-test's exit."""
        mask, done = masking
        test_exit = None
        for e, x in carried:
            if e == (s.test.name if s.test is not None else None):
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
        return test_exit

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
        prod = self.facts.producer.get(s.iter.name)
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
        example (checked to pop per example what it pushed: ``TapeOrder``)."""
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
        for brk in loop_breaks(s.body):
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
            elif isinstance(st, If) and (loop_breaks(st.body) or loop_breaks(st.orelse)):
                branches = []
                for branch in (st.body, st.orelse):
                    if loop_breaks(branch):
                        branches.append(self._lower_breaks(branch, flag, bound)[0])
                    else:
                        branches.append(list(branch) + ([] if bound else [Let(
                            flag, "identity", (Const(False, "False"),), {}, st.loc)]))
                joins = st.joins + ([] if flag in st.joins else [flag])
                lowered = If(st.test, branches[0], branches[1], st.loc, joins)
                own = self.branches.origin.get(id(st), (st, st))[1]
                self.branches.origin[id(lowered)] = (lowered, own)
                out.append(lowered)
                bound = True
            else:
                out.append(st)
        return out, bound


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
    if unpackable(item):  # `for (v0, v1) in tape_bar`: one name per leaf
        names = {p: "v" + "".join(str(k) for k in p) for p in leaves}
        target = unpack_text(item, names)
    else:  # a dict among the leaves: read them by key
        names, target = {p: path_text("v", p) for p in leaves}, "v"
    value = literal(item, lambda p: f"np.stack([{names[p]}] * {n})" if p in paths else names[p])
    return f"[{value} for {target} in {name}]"


# primitives the transform batches itself (containers, calls, writes, joins of lists)
HANDLED = {"setitem", "append", "pop", "zeros_list", "call", "make_dict", "make_list", "make_tuple",
           "identity", "array", "stack", "concatenate", "hstack", "vstack"}

SEQ_ITEM = "*"  # batched paths of a list grown in a loop: "*" then the item's path

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


# ---- the probe: one example, run once, to learn every value's rank ------------------


