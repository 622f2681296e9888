"""vmap's check that batched code pops, for every example, what that example pushed
(lists pushed under an `if` on a batched value, or in a loop the examples leave
apart, hold entries that are junk for some examples)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir.nodes import Break, Const, For, If, Index, Let, Stmt, Var, uses, walk
from ..ir.spelling import atom_text
from ..ir.walk import loop_breaks
from ..primitives.batching import NoBatchRule


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


class TapeOrder:
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

    def __init__(self, vm: Any) -> None:  # (the vmap transform, vmap._Vmap)
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
            inc = self.vm.facts.producer.get(x)
            for _ in range(len(s.body)):  # (through copies: `n = n_2`)
                if inc is None or inc.prim != "identity" or not isinstance(
                        inc.args[0], Var):
                    break
                inc = self.vm.facts.producer.get(inc.args[0].name)
            init = self.vm.facts.producer.get(e)
            if inc is not None and inc.prim == "add" and init is not None and (
                    init.prim == "identity" and isinstance(init.args[0], Const)
                    and init.args[0].value == 0) and sorted(
                        atom_text(a) for a in inc.args) == sorted([e, "1"]) and any(
                            st is inc for st in s.body):
                counters.append(e)
        prod = self.vm.facts.producer.get(s.iter.name) if isinstance(s.iter, Var) else None
        while prod is not None and prod.prim == "reversed" and isinstance(
                prod.args[0], Var):  # the same count either way
            prod = self.vm.facts.producer.get(prod.args[0].name)
        args = None
        if s.test is None and prod is not None and prod.prim == "range" and not (
                prod.params):
            args = tuple(self.resolve(a.name) if isinstance(a, Var) else atom_text(a)
                         for a in prod.args)
        for c in counters[1:]:  # (counting the same iterations from 0: equal)
            self.eq.setdefault(c, counters[0])
        return (args, frozenset(self.resolve(c) for c in counters),
                s.test is None and not loop_breaks(s.body))

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
            prod = self.vm.facts.producer.get(self.resolve(base))
            if isinstance(item, Const) and isinstance(item.value, int) and (
                    prod is not None and prod.prim in ("make_tuple", "make_list")
                    and -len(prod.args) <= item.value < len(prod.args)):
                got = prod.args[item.value]
                if isinstance(got, Var):
                    self.eq[st.target] = got.name


class _Frame:
    """The lists' entries as one iteration of a loop sees them (the function's own
    frame at the top)."""

    def __init__(self, loop: For | None, parent: "_Frame | None", order: TapeOrder
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
