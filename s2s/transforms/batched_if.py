"""vmap's `if`s: one on an unbatched test stays an `if`; one on a batched test runs
both branches and selects per example with ``np.where`` (a join one path binds to
None is that path's value where every later read is on it)."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from ..emit.code import Block, Line
from ..errors import TransformError
from ..ir.kinds import LEAF, Seq, Tree, literal, path_text
from ..ir.nodes import Break, Const, For, If, Let, Stmt, Var, uses, walk
from ..ir.spelling import atom_text
from ..primitives.batching import NoBatchRule, align
from .batched_loops import SEQ_ITEM, stacked_items
from .module import bind_object
from .ranks import VALUES, prim_family
from .replay import has_effects

# primitives that write into their first operand (its value changes in place)
_IN_PLACE = ("setitem", "add_at", "append", "pop")


class BatchedIf:
    """The `if`s of one vmap pass (``vm``)."""

    def __init__(self, vm: Any) -> None:  # (the vmap transform, vmap._Vmap)
        self.vm = vm
        # an `if` renamed inside a selected branch -> (the copy, the function's own)
        self.origin: dict[int, tuple[If, If]] = {}
        # the tests of `if`s batched for the probe's path alone -> that path (0, 1)
        self.guards: dict[str, int] = {}
        self._once: set[int] | None = None  # (ids of the `if`s in no loop)
        # the names the probe saw bound (ranks inferred later are added to its dict)
        self.probed = {k[0] for k in vm.spec.ranks if isinstance(k, tuple)}

    def if_(self, s: If, out: list[Any]) -> None:
        if not self.vm.batched(s.test):
            # a join of another rank on each path: batched for the probe's path alone
            # where that may be (a later `if` on the same test: the same path)
            taken = self.guards.get(s.test.name) if isinstance(s.test, Var) else None
            if taken is None and _ranks_differ(self.vm, s):
                taken = self._probed_path(s)
                if taken is not None:
                    self.guards[s.test.name] = taken
            if taken is not None:
                self._one_path(s, taken, out)
                return
            bodies = []
            before = {k: set(v) for k, v in self.vm.b.items()}
            states = []
            for path, branch in enumerate((s.body, s.orelse)):
                self.vm.b = {k: set(v) for k, v in before.items()}
                items: list[Any] = []
                try:
                    self.vm.block(branch, items)
                except TransformError:
                    # a path the probe's example did not take, whose ranks inferred
                    # do not batch (a loop's carried value changing rank there): the
                    # code of the probe's path, the other made when a call takes it
                    taken = self._probed_path(s)
                    if taken is None:
                        taken = self._unprobed_path(s, path)
                    if taken is None or taken == path:
                        raise
                    self.vm.b = before
                    self.guards[s.test.name] = taken
                    self._one_path(s, taken, out)
                    return
                bodies.append(items)
                states.append(self.vm.b)
            self.vm.b = before
            # refused where it cannot be batched per path (in a loop, read by another
            # transform): which later code reads such a join's rank is not followed
            # through tapes (jacrev of such an `if` in a loop gave wrong Jacobians)
            if _ranks_differ(self.vm, s):
                # (ranks known only once the branches are batched: `reduce(f, xs,
                # 0.0)` over a list of a length per call, 0.0 where it is empty)
                taken = self._probed_path(s)
                if taken is not None:
                    self.guards[s.test.name] = taken
                    self._one_path(s, taken, out)
                    return
                clash = _join_rank_clash(self.vm, s, set(s.joins))
                if clash is None:
                    raise self.vm.fail(s, NoBatchRule(
                        "a value this `if` binds has another rank on each path (through "
                        "the `if`s in it): the batched code is made for the ranks of "
                        "the path the first example took",
                        "give the value the same shape on every path (np.broadcast_to)"))
                raise _rank_refusal(self.vm, s, *clash)
            for j in s.joins:
                paths = states[0].get(j, set()) | states[1].get(j, set())
                if paths:
                    self.vm.b[j] = paths
                    for state, items, branch in zip(states, bodies, (s.body, s.orelse)):
                        if state.get(j, set()) != paths and not _binds_none(branch, j,
                                                                              self.vm):
                            text = self._broadcast_join(j, paths, state.get(j, set()))
                            items.append(Line(f"{j} = {text}"))
            _keep_items_batched(self.vm, s, states)
            out.append(Block(f"if {atom_text(s.test)}:", bodies[0], bodies[1]))
            return
        clash = _join_rank_clash(self.vm, s, set(s.joins))
        if clash is not None:
            raise _rank_refusal(self.vm, s, *clash)
        self.select(s, out)

    def _probed_path(self, s: If) -> int | None:
        """The path (0: the body, 1: the else) the probe's example took through
        ``s``, where the batched code may be made for that path alone, the other
        raising ``OtherPath`` (the caller makes that path's code when a call takes
        it): the caller asked for it, ``s`` runs once per call (in no loop, and not
        as a branch of an ``if`` on a batched test), and the probe saw its test."""
        if not self.vm.spec.path_guards or self.vm.write_masks or not isinstance(
                s.test, Var):
            return None
        if self._once is None:
            self._once = {id(st) for st in _outside_loops(self.vm.fn.body)}
        if id(self.origin.get(id(s), (s, s))[1]) not in self._once:
            return None
        value = (self.vm.ranks.get(VALUES) or {}).get(s.test.name)
        if not isinstance(value, (bool, np.bool_, int, float, np.number, np.ndarray)) or (
                np.size(value) != 1):  # (None: the placeholder of a path not taken)
            return None
        return 0 if bool(value) else 1

    def _unprobed_path(self, s: If, path: int) -> int | None:
        """The other path of ``s`` where the probe never ran path ``path`` (in a loop:
        no iteration took it; a generator that yields nothing on this call), whose
        ranks it never saw, and the caller asked for code made per path: the code
        made for the other raises ``OtherPath`` where a call takes ``path`` (the
        caller makes that call's code, probed on it)."""
        if not (self.vm.spec.path_guards or self.vm.spec.unprobed_guards) or (
                self.vm.write_masks) or not isinstance(s.test, Var):
            return None
        branch = [st for st in walk((s.body, s.orelse)[path]) if isinstance(st, Let)]
        ids = {id(st) for st in branch}
        elsewhere = {st.target for st in walk(self.vm.fn.body) if isinstance(st, Let)
                     and id(st) not in ids}  # (a join, a buffer written in place)
        aliases = self.vm.fn.aliases  # (a buffer's versions: spelled as its root)
        bound = {st.target for st in branch if st.target not in aliases} - elsewhere - set(
            s.joins) - set(aliases.values())
        if not bound or bound & self.probed:
            return None
        return 1 - path

    def _one_path(self, s: If, taken: int, out: list[Any]) -> None:
        """``s`` batched for path ``taken`` alone: the other raises ``OtherPath``,
        checked first (``if not t: raise ...``, then the path's code: a check another
        vmap of this code keeps as written, ``vmap(vmap(f))``)."""
        items: list[Any] = []
        self.vm.block((s.body, s.orelse)[taken], items)
        test = atom_text(s.test)
        guard = [Line(f"raise OtherPath({test!r}, {taken == 1})", keep=True)]
        out.append(Block(f"if {'not ' if taken == 0 else ''}{test}:", guard, []))
        out += items

    def _broadcast_join(self, j: str, paths: set, had: set) -> str:
        """``j`` given a batch axis on the leaves (``paths``) that the other path of an
        `if` batched and this one did not (``had``); a container is built again, its
        other leaves as they are."""
        n = self.vm.use_batch_size()
        kind = self.vm.kind(j)
        if isinstance(kind, Seq):  # a list grown in a loop: each item's (it was the
            # list broadcast as one array: its length the batch size)
            return stacked_items(j, kind, {p[1:] for p in paths - had if p[:1] == (
                SEQ_ITEM,)}, n)

        def leaf(p: tuple) -> str:
            text = path_text(j, p)
            if any(q[: len(p)] == p for q in paths) and not any(
                    q[: len(p)] == p for q in had):
                return f"np.broadcast_to({text}, ({n}, *np.shape({text})))"
            return text

        return literal(self.vm.kind(j), leaf)

    def select(self, s: If, out: list[Any]) -> None:
        """An ``if`` on a batched value: both branches run, ``np.where`` picks.

        A branch's write into an array keeps the other path's examples' elements
        (``x_bar[:, i] = np.where(test, v, x_bar[:, i])``), and its pushes and pops of
        a list happen for every example: a gradient's tape, whose backward replays
        the same `if` on the same (popped) test, pops junk for the other path's
        examples exactly where it pushed junk for them."""
        self._check_selectable(s)
        # versions of one array or list written in place: one object, no selection;
        # but where a path binds the join's name to an array of its own (made there,
        # or another), each path's array is kept by a name of its own and the join
        # selects per example (`fresh`)
        buffers = {j for j in s.joins if j in self.vm.fn.aliases}
        fresh = {j for j in buffers if any(
            _makes(st, self.vm.fn.aliases[j], self.vm.fn.aliases)
            for st in walk(s.body + s.orelse))}
        for j in fresh:
            if self.vm.kind(j) != LEAF:
                raise self.vm.fail(s, NoBatchRule(
                    f"a path of this `if` binds `{self.vm.fn.aliases[j]}` to a list of "
                    "its own, the other keeps or changes the same list",
                    "bind the list on both paths, or before the `if`"))
        buffers -= fresh
        before_b = {j: (set(self.vm.b[j]) if j in self.vm.b else None) for j in fresh}
        restore = {}  # the array before the `if`, where the false path still uses it
        for j in fresh:
            root = self.vm.fn.aliases[j]
            if _first_touch(s.body, root, self.vm.fn.aliases) == "fresh" and (
                    _first_touch(s.orelse, root, self.vm.fn.aliases) != "fresh"):
                restore[j] = self.vm.names.fresh(f"{root}_before")
                out.append(Line(f"{restore[j]} = {root}"))
                restore_b = {n: (set(v) if v is not None else None) for n, v in (
                    (n, self.vm.b.get(n)) for n in self.vm.b
                    if self.vm.fn.aliases.get(n, n) == root)}
        written: dict[str, set] = {j: set() for j in buffers}
        results = []
        truth: dict[str, bool] = {}  # a branch's name bound to True or False
        for k, (tag, branch) in enumerate((("if_true", s.body), ("if_false", s.orelse))):
            if k == 1:
                for j, saved in restore.items():
                    out.append(Line(f"{self.vm.fn.aliases[j]} = {saved}"))
                    for n in [n for n in self.vm.b if self.vm.fn.aliases.get(n, n)
                              == self.vm.fn.aliases[j]]:
                        del self.vm.b[n]
                    for n, v in restore_b.items():
                        if v is not None:
                            self.vm.b[n] = v
            # a join the branch does not bind keeps its value from before the `if`
            bound = {st.target for st in branch if isinstance(st, Let)} | {
                j for st in branch if isinstance(st, If) for j in st.joins}
            renamed = {j: self.vm.names.fresh(f"{j}_{tag}") for j in s.joins
                       if j in bound and j not in buffers and j not in fresh}
            for j, r in renamed.items():
                if j in self.vm.flags:
                    self.vm.flags.add(r)
                if (j, ()) in self.vm.ranks:
                    self.vm.ranks.setdefault((r, ()), self.vm.ranks[(j, ())])
            items: list[Any] = []
            self.vm.write_masks.append((atom_text(s.test), k == 1))  # (this path's)
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
                            self.vm.facts.producer[st.target] = st
                        self.vm.let(st, items)
            finally:
                self.vm.write_masks.pop()
            for j in buffers:
                written[j] |= self.vm.b.get(j, set())
            out += items
            results.append({j: renamed.get(j, j) for j in s.joins})
            for j in fresh:
                if not _binds_none(branch, j):  # (else: the join's None path)
                    results[k][j] = self._keep_path_array(j, branch, tag, before_b, out)
        for j in buffers:
            if written[j]:
                self.vm.b[j] = written[j]
        self._select_joins(s, results, buffers, truth, out)

    def _check_selectable(self, s: If) -> None:
        """Refuse the branches ``select`` cannot run for every example."""
        for branch in (s.body, s.orelse):
            made: set[str] = set()  # arrays this branch makes (np.add.at into them is
            for st in walk(branch):  # this branch's own; the join selects per example)
                if isinstance(st, Let) and _makes(st, self.vm.fn.aliases.get(
                        st.target, st.target), self.vm.fn.aliases):
                    made.add(self.vm.fn.aliases.get(st.target, st.target))
                into = st.args[0].name if isinstance(st, Let) and (
                    st.prim == "add_at") else None
                if isinstance(st, (For, Break)) or (isinstance(st, Let) and (
                        st.prim == "call" and has_effects(st.params.get("callee"))
                        or into is not None
                        and self.vm.fn.aliases.get(into, into) not in made)):
                    raise self.vm.fail(s, NoBatchRule(
                        "an `if` on a batched value whose branches loop, call a "
                        "function that asserts, prints or draws, or write with "
                        "np.add.at into an array made before it",
                        "write the branches as expressions and select with np.where"))
                if isinstance(st, Let) and st.prim == "setitem" and (
                        self.vm.rank(s.test) != 0):
                    raise self.vm.fail(s, NoBatchRule(
                        "a write into an array under an `if` on an array per example"))

    def _keep_path_array(self, j: str, branch: list[Stmt], tag: str,
                         before_b: dict[str, set | None], out: list[Any]) -> str:
        """The array a path binds join ``j`` to, kept by a name of its own."""
        binds = any(isinstance(st, Let) and st.target == j for st in walk(
            branch)) or any(isinstance(st, If) and j in st.joins for st in walk(branch))
        name = self.vm.names.fresh(f"{self.vm.fn.aliases[j]}_{tag}")
        out.append(Line(f"{name} = {self.vm.fn.aliases[j]}"))
        paths = self.vm.b.get(j) if binds else before_b[j]
        if paths:
            self.vm.b[name] = set(paths)
        try:
            self.vm.ranks.setdefault((name, ()), self.vm.rank(Var(j)))
        except NoBatchRule:
            pass
        return name

    def _select_joins(self, s: If, results: list[dict[str, str]], buffers: set[str],
                      truth: dict[str, bool], out: list[Any]) -> None:
        """Each join of a batched `if`: the two paths' values, selected per example."""
        # a name one path binds to None (the normalizer's "not bound on this path"):
        # np.where cannot mix None with arrays; where every later read is under an
        # `if` on the same test, on the other path, the examples that took the None
        # path never read it, and the join is that path's value as it is
        nones = {j: [k for k, b in enumerate((s.body, s.orelse)) if _binds_none(b, j, self.vm)]
                 for j in s.joins}
        try:
            test_rank = self.vm.rank(s.test)
            for j in s.joins:
                if j in buffers:
                    continue
                if isinstance(self.vm.kind(j), Tree):
                    raise NoBatchRule("an `if` on a batched value joining containers")
                for k in (0, 1):
                    if k not in nones[j]:
                        self.vm.rank(Var(results[k][j]))
        except NoBatchRule as err:
            raise self.vm.fail(s, err) from None
        for j in s.joins:
            t, f = results[0][j], results[1][j]
            if j in buffers:
                continue
            if len(nones[j]) == 2:
                out.append(Line(f"{j} = None"))
                self.vm.b.pop(j, None)
                continue
            if nones[j]:
                side = 1 - nones[j][0]
                self.one_path_join(s, j, side, results[side][j], out)
                continue
            if j in self.vm.flags and test_rank == 0 and self._is_truth(s.test):
                out.append(Line(f"{j} = {_truth_join(atom_text(s.test), t, f, truth)}"))
                self.vm.b[j] = {()}
                continue
            rank = max(self.vm.rank(Var(t)), self.vm.rank(Var(f)), test_rank)
            self.vm.ranks[(j, ())] = rank
            if rank >= 1:  # (arrays per example: each path's shape the same)
                out.append(self._same_shapes(s, j, t, f))
            cond = align(self.vm, s.test, rank)
            out.append(Line(f"{j} = np.where({cond}, {align(self.vm, Var(t), rank)}, "
                            f"{align(self.vm, Var(f), rank)})"))
            self.vm.b[j] = {()}

    def _same_shapes(self, s: If, j: str, t: str, f: str) -> Block:
        """``if <t's shape per example> != <f's>: raise ...``: examples taking both
        paths of an ``if`` on a batched value hold one array, so the paths must give
        ``j`` one shape (np.where would broadcast (1,) against (2,), silently, or
        raise NumPy's error from emitted code).  Shapes of one rank only: a path
        giving a scalar beside an array keeps NumPy's broadcast, the zero cotangent a
        gradient's code spells as ``0.0`` (vmap of grad read it as an error)."""
        shapes = [f"np.shape({v}){'[1:]' if self.vm.batched(Var(v)) else ''}"
                  for v in (t, f)]
        raiser = bind_object(self.vm.module, "if_shapes_differ", partial(
            _shapes_differ, name=j, loc=s.loc, func=self.vm.fn.name))
        return Block(f"if len({shapes[0]}) == len({shapes[1]}) and {shapes[0]} != {shapes[1]}:",
                     [Line(f"raise {raiser}({shapes[0]}, {shapes[1]})", keep=True)], [])

    def _is_truth(self, test: Any) -> bool:
        """Whether a batched test holds booleans (a comparison, a logical operation),
        so that ``&``, ``|`` and ``~`` on it are the logical ones."""
        prod = self.vm.facts.producer.get(test.name) if isinstance(test, Var) else None
        if prod is None:
            return test.name in self.vm.flags if isinstance(test, Var) else False
        return prim_family(prod.prim) == "comparison" or prod.prim in (
            "logical_and", "logical_or", "logical_not", "logical_xor", "not_",
            "isnan", "isinf", "isfinite", "signbit", "isclose")

    def one_path_join(self, s: If, j: str, side: int, value: str,
                      out: list[Any]) -> None:
        """``j`` bound on path ``side`` of ``s`` only (None on the other): the join is
        that path's value, if every read of ``j`` after ``s`` is on the same path of an
        ``if`` on the same test; else the examples would differ in kind (a value for
        some, None for others) and vmap refuses, at the ``if``."""
        own = self.origin.get(id(s), (s, s))[1]
        if not _read_only_on_path(self.vm.fn.body, own, j, side):
            path = ("true", "false")[1 - side]
            raise self.vm.fail(s, NoBatchRule(
                f"`{j}` is bound on one path of this `if` only (None where the test is "
                f"{path}), and read after it where those examples reach",
                "bind it on both paths, or read it only under the same test"))
        if value != j:
            out.append(Line(f"{j} = {value}"))
        if (value, ()) in self.vm.ranks:
            self.vm.ranks[(j, ())] = self.vm.ranks[(value, ())]
        if self.vm.b.get(value):
            self.vm.b[j] = set(self.vm.b[value])
        else:
            self.vm.b.pop(j, None)


def _shapes_differ(t: tuple, f: tuple, name: str, loc: Any, func: str) -> TransformError:
    """vmap's error where the paths of an ``if`` on a batched value give ``name``
    shapes ``t`` and ``f`` per example, at the user's ``if``."""
    return TransformError(
        f"vmap cannot batch this: the paths of this `if` give `{name}` shape {t} and "
        f"shape {f} per example, and the examples taking each path must hold one array",
        loc, "give both paths one shape (pad or slice to it), then choose with "
        "np.where(test, a, b)", func)


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


def _outside_loops(body: list[Stmt]) -> list[If]:
    """The ``if``s of ``body`` in no loop (each runs at most once per call)."""
    out = []
    for st in body:
        if isinstance(st, If):
            out += [st, *_outside_loops(st.body), *_outside_loops(st.orelse)]
    return out


def _join_rank_clash(vm: Any, s: If, batched: set[str]) -> tuple | None:
    """An ``if`` binding a value whose per-example rank differs between its branches
    (``y = x * 2.0`` on one, ``y = np.sum(x)`` on the other): (the binding, the join,
    the two ranks), or None.  The batched code is made for the ranks the probe's
    example gave, so on the other path (a later call's, where the test is not
    batched) it reduced or expanded the wrong axes (wrong Jacobians, silently): the
    caller batches the probe's path alone (``_one_path``) or refuses; with a batched
    test the two ranks cannot be joined per example.  ``batched``: the joins whose
    rank the batched code reads (batched ones, those a batched value takes its rank
    from)."""
    for j in s.joins:
        if vm.kind(j) is not LEAF or j not in batched:
            continue
        lets = [next((st for st in reversed(branch) if isinstance(st, Let)
                      and st.target == j), None) for branch in (s.body, s.orelse)]
        ranks = [_path_rank(vm, let, branch)
                 for let, branch in zip(lets, (s.body, s.orelse))]
        if None not in ranks and ranks[0] != ranks[1]:
            return (lets[0] if ranks[0] > ranks[1] else lets[1]), j, ranks
    return None


def _ranks_differ(vm: Any, s: If) -> bool:
    """Whether a join of ``s`` may have another per-example rank on each path (its
    paths through the ``if``s nested in ``s`` too)."""
    for j in s.joins:
        if vm.kind(j) is LEAF:
            ranks = [_path_ranks(vm, branch, j) for branch in (s.body, s.orelse)]
            if None not in ranks and len(ranks[0] | ranks[1]) > 1:
                return True
    return False


def _path_ranks(vm: Any, branch: list[Stmt], j: str) -> set[int] | None:
    """The per-example ranks ``j`` may have at the end of ``branch`` (None: unknown)."""
    for st in reversed(branch):
        if isinstance(st, Let) and st.target == j:
            rank = _path_rank(vm, st, branch)
            return None if rank is None else {rank}
        if isinstance(st, If) and j in st.joins:
            inner = [_path_ranks(vm, b, j) for b in (st.body, st.orelse)]
            return None if None in inner else inner[0] | inner[1]
        if isinstance(st, For):
            return None
    return None


def _rank_refusal(vm: Any, s: If, let: Let, j: str, ranks: list[int]) -> TransformError:
    """The located refusal of a join whose rank differs between the paths of ``s``:
    under an ``if`` on a batched value (the ranks cannot be joined per example), or
    in a loop (another path per iteration), or inside a transform of the batched
    code (``s2s.jit``, an outer transform: one code for every call)."""
    what = "an item of the container" if let.prim == "getitem" else f"`{j}`"
    at = let if let.loc is not None and not let.loc.text.lstrip().startswith(
        "def ") else s  # (a loop's carried value: bound at the def, the if's)
    where = ("its test is batched, and `np.where` joins the examples' paths in one "
             "array of one rank") if vm.batched(s.test) else (
        "the batched code is made for the ranks of the path the first example took")
    return vm.fail(at, NoBatchRule(
        f"{what} bound here has {max(ranks)} dimension(s) per example, and "
        f"{min(ranks)} on the other path of its `if`: {where}",
        "give the value the same shape on both paths (np.broadcast_to, "
        "np.full_like), or compute it outside the vmapped function"))


def _path_rank(vm: Any, let: Let | None, branch: list[Stmt]) -> int | None:
    """The per-example rank of the value ``let`` (in ``branch``) binds (None: unknown,
    or bound by a statement nested deeper)."""
    if let is None or _binds_none(branch, let.target, vm) or let.prim == "identity" and isinstance(
            let.args[0], Const) and type(let.args[0].value) is int and let.args[0].value == 0:
        return None  # (sum's start: `sum` of a list empty on this path, broadcast)
    try:
        if let.prim == "getitem" and isinstance(let.args[0], Var) and isinstance(
                vm.kind(let.args[0].name), Tree):
            base = let.args[0].name
            key = vm.facts.container_key(let, vm.kind(base))
            prod = vm.facts.producer.get(base)
            while prod is not None and prod.prim == "identity" and isinstance(
                    prod.args[0], Var):
                base = prod.args[0].name
                prod = vm.facts.producer.get(base)
            if (base, (key,)) in vm.ranks:
                return vm.ranks[(base, (key,))]
            if prod is not None and prod.prim in ("make_dict", "make_tuple"):
                keys = list(prod.params.get("keys") or range(len(prod.args)))
                return vm.rank(prod.args[keys.index(key)]) if key in keys else None
            return None
        return vm.inference._infer_from(let.target, let)
    except (NoBatchRule, TransformError, ValueError):
        return None


def _binds_none(branch: list[Stmt], name: str, vm: Any = None) -> bool:
    """Whether ``branch`` ends binding ``name`` to None (how the normalizer joins a
    name the other path binds and this one does not; with ``vm``, also to a name
    holding None: emitted code's name bound None first, ``normalize._run``'s
    ``topbind``, that this path leaves as it was)."""
    last = None
    for st in branch:
        if isinstance(st, Let) and st.target == name:
            last = st
        elif isinstance(st, (If, For)) and name in (
                st.joins if isinstance(st, If) else [e for e, _ in st.carried]):
            last = None
    seen = set()
    while vm is not None and last is not None and last.prim == "identity" and isinstance(
            last.args[0], Var) and last.args[0].name not in seen and len(
                vm.facts.producers.get(last.args[0].name) or ()) <= 1:  # (one binding)
        seen.add(last.args[0].name)
        last = vm.facts.producer.get(last.args[0].name)
    return (isinstance(last, Let) and last.prim == "identity"
            and isinstance(last.args[0], Const) and last.args[0].value is None)


def _negation_root(body: list[Stmt], test: str) -> tuple[str, bool]:
    """The name ``test`` holds or negates (``not_t = not t``: ``t``) through names each
    bound once, and whether it is negated."""
    lets = {}
    counts: dict[str, int] = {}
    for st in walk(body):
        for bound in ([st.target] if isinstance(st, Let) else st.joins if isinstance(
                st, If) else []):
            counts[bound] = counts.get(bound, 0) + 1
        if isinstance(st, Let):
            lets[st.target] = st
    flips = False
    while True:
        st = lets.get(test)
        if st is None or counts.get(test) != 1 or st.prim not in (
                "not_", "logical_not", "identity") or len(st.args) != 1 or not isinstance(
                st.args[0], Var) or counts.get(st.args[0].name) != 1:
            return test, flips
        flips ^= st.prim != "identity"
        test = st.args[0].name


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
    # the test, and names holding it or its negation (`if not test:` backward), from
    # the name it negates (`not_t = not t` ... `not_t_2 = not t`: one test)
    root, flips = _negation_root(body, test)
    negated = {root: flips}
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


def _keep_items_batched(vm: Any, s: If, states: list[dict]) -> None:
    """A list a path of the ``if`` built, joined (``parts = [x, 2.0 * x]`` on one path,
    None on the other): its items are that path's names, which a later ``if`` on the
    same path reads through it (a join's gradient, ``split_like(g, parts, 0)``), so
    they stay batched as that path left them (they are bound nowhere else)."""
    for j in s.joins:
        for item in vm.items.get(j, ()):
            name = getattr(item, "name", None)
            if name is None or name in vm.b:
                continue
            for state in states:
                if state.get(name):
                    vm.b[name] = set(state[name])
