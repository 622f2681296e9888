"""Loops over tuple and list arguments, unrolled per call structure (an IR pass).

A container's structure, length included, is fixed per call signature, as a pytree's
is in JAX; the transforms generate code per signature, so they run this first.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..errors import Loc, TransformError, UnsupportedSyntaxError
from .kinds import LEAF, Leaf, Tree, kind_of
from .names import NameTable, bound_names
from .nodes import (
    Atom,
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
from .settled_checks import any_constant_check, settled_checks, settled_widths
from .unroll_calls import call_tree, kind_of_atom
from .unroll_chains import appended, compose, keyed_per_call
from .unroll_dicts import key_order, keys_literal, merged
from .unroll_lengths import cut_default, defaulted_lengths, folded_length, length_const
from .unroll_reads import StackedReads, run_time_key


def unroll_container_loops(fn: Function, arg_kinds: tuple) -> Function:
    """``fn`` with each loop over a tuple or list argument unrolled for its length.

    ``for W, b in params[:-1]`` (or ``for layer in layers``, ``enumerate``, ``zip``,
    ``reversed``) is normalized as a loop over ``range(len(params))`` whose body indexes
    the container with the loop index.  A container's structure, length included, is
    fixed per call signature (``kinds``, as a pytree's structure is in JAX), so the
    transforms, which generate code per signature, run this first: each iteration's body
    is copied with the index a constant (``params[0]``), its names fresh, and the loop's
    carried values handed from one copy to the next.  The copies keep the user's lines,
    so emitted code quotes ``for W, b in params[:-1]:`` above each unrolled layer.
    """
    trees = {p: k for p, k in zip(fn.params, arg_kinds) if isinstance(k, Tree)}
    taken = sorted(p for p, path in fn.leaf_params if _not_leaf(fn, arg_kinds, p, path))
    if taken:  # (frontend/nested_types.py)
        raise UnsupportedSyntaxError(
            f"`{fn.name}` is given a container for `{taken[0]}` here where its code takes "
            "an array (it decided a type test, `isinstance(v, tuple)` of an item built "
            "from it, when s2s transformed it)", fn.loc,
            f"pass an array for `{taken[0]}` (or the structure its first call passed)")
    # a parameter left at a dict default (`weights={"a": 1.0}`, its kind a leaf: the
    # call passed nothing) has the default's keys: `for k, v in weights.items()` unrolls
    # over them (else it indexed the dict by the loop's counter: KeyError)
    trees.update({p: kind_of(fn.defaults[p]) for p, k in zip(fn.params, arg_kinds)
                  if k == LEAF and isinstance(fn.defaults.get(p), dict)})
    if not trees and not any(_per_call(s) for s in walk(fn.body)):
        _sorted_values(fn.body)
        body, settled = settled_checks(fn.body) if any_constant_check(walk(fn.body)) else (
            fn.body, False)
        return replace(fn, body=body) if settled else fn
    u = _Unroller(fn, trees)
    u.sized = defaulted_lengths(fn, arg_kinds)  # (`zip(layers, (1.0, 2.0))`'s count)
    u.leaves = {p for p, k in zip(fn.params, arg_kinds) if isinstance(k, Leaf)}
    # (a loop's carried entry names hold another value at each iteration: never the
    # constant they start as, `t = (x, 0.0)` then `t = (t[0] * 2, t[1] + 1)` in a loop)
    u.carried = {e for t in walk(fn.body) if isinstance(t, For) for e, _ in t.carried}
    body, subst = u.block(fn.body)
    _sorted_values(body)
    body, settled = settled_checks(_empty_sums(u, settled_widths(u, body)))
    u.changed |= settled
    test = next((s for s in walk(body) if isinstance(s, Let) and s.prim == "str_test"), None)
    if test is not None:
        raise TransformError(
            f"`.{test.params['method']}()` of a value that is not a dict's key here (a "
            "key of a loop over a dict argument's keys is a string per call)", test.loc,
            "test a dict's key in a loop over its keys, with string constants")
    left = next((s for s in walk(body) if keyed_per_call(s)), None)
    if left is not None:
        raise UnsupportedSyntaxError(
            "a dict comprehension is supported over what is known when s2s transforms "
            "the function (constants, literals) or per call (a dict argument, or a dict "
            "built from one, whose keys are then constant strings)", left.loc,
            'write a dict literal {"a": ...}')
    sliced = _sliced_items(u, _drop_unused(u, body) if u.changed else body)
    if not u.changed and sliced == body:
        return fn
    return replace(fn, body=sliced, names=u.names, aliases=u.aliases,
                   operators=frozenset(u.operators))


def _not_leaf(fn: Function, arg_kinds: tuple, param: str, path: tuple) -> bool:
    """Is ``param[i][j]`` (``path``) not an array in a call of ``arg_kinds``?"""
    if param not in fn.params[:len(arg_kinds)]:
        return True
    kind = arg_kinds[fn.params.index(param)]
    for k in path:
        if isinstance(kind, Leaf):
            return False  # (an item of an array: an array)
        if not (isinstance(kind, Tree) and kind.type in (tuple, list) and (
                -len(kind.children) <= k < len(kind.children))):
            return True
        kind = kind.children[k]
    return not isinstance(kind, Leaf)


@dataclass(frozen=True)
class UnrolledLoc(Loc):
    """The position of a statement in one copy of an unrolled loop's body, with the
    iterations it belongs to (outermost first): ``(the loop's line, iteration, count)``,
    so emitted code can say which layer a quoted line's derivative is for."""

    unrolled: tuple[tuple[str, int, int], ...] = ()


def unrolled_header(loc: Any) -> str | None:
    """For a statement in a copy of an unrolled loop's body, the comment that heads its
    iteration's code (``(unrolled) for W, b in params[:-1]: iteration 2 of 2``); the
    user's line itself is quoted on its own comment line, as everywhere."""
    if not isinstance(loc, UnrolledLoc) or not loc.unrolled:
        return None
    return "(unrolled) " + "; ".join(f"{line} iteration {j + 1} of {n}"
                                     for line, j, n in loc.unrolled)


def _tagged(s: Stmt, tag: tuple[str, int, int]) -> Stmt:
    """A copy of ``s`` (nested blocks too) whose positions say it is in iteration
    ``tag`` of an unrolled loop."""
    loc = s.loc
    if loc is not None:
        outer = loc.unrolled if isinstance(loc, UnrolledLoc) else ()
        loc = UnrolledLoc(loc.file, loc.line, loc.col, loc.text, outer + (tag,))
    if isinstance(s, Let):
        return Let(s.target, s.prim, s.args, s.params, loc)
    if isinstance(s, If):
        return If(s.test, [_tagged(t, tag) for t in s.body],
                  [_tagged(t, tag) for t in s.orelse], loc, s.joins)
    if isinstance(s, For):
        return For(s.target, s.iter, [_tagged(t, tag) for t in s.body], loc, s.carried,
                   s.test, s.counter)
    if isinstance(s, Break):
        return Break(loc, s.env, s.copies)
    return Return(s.value, loc)


def _renamed(x: Any, m: dict[str, Atom]) -> Any:
    if isinstance(x, Var):
        return m.get(x.name, x)
    if isinstance(x, Index):
        return Index(tuple(_renamed(i, m) for i in x.items), x.is_tuple, unpack=x.unpack)
    if isinstance(x, Slice):
        return Slice(*(None if a is None else _renamed(a, m) for a in (x.lower, x.upper, x.step)))
    if isinstance(x, tuple):
        return tuple(_renamed(i, m) for i in x)
    if isinstance(x, list):
        return [_renamed(i, m) for i in x]
    return x


def _name(a: Atom, m: dict[str, Atom]) -> str:
    """A name position (a carried exit, a break's copy): renamed to a name only."""
    new = m.get(a, Var(a))
    return new.name if isinstance(new, Var) else a


def _renamed_stmt(s: Stmt, m: dict[str, Atom]) -> Stmt:
    """A copy of ``s`` with names replaced (``m``: name -> atom; a name a statement binds
    is replaced only by a name)."""
    if not m:
        return s
    if isinstance(s, Let):
        params = {k: (v if k == "callee" else _renamed(v, m)) for k, v in s.params.items()}
        return Let(_name(s.target, m), s.prim, _renamed(s.args, m), params, s.loc)
    if isinstance(s, If):
        return If(_renamed(s.test, m), [_renamed_stmt(t, m) for t in s.body],
                  [_renamed_stmt(t, m) for t in s.orelse], s.loc,
                  [_name(j, m) for j in s.joins])
    if isinstance(s, For):
        return For(_name(s.target, m), _renamed(s.iter, m),
                   [_renamed_stmt(t, m) for t in s.body], s.loc,
                   [(_name(e, m), _name(x, m)) for e, x in s.carried],
                   _renamed(s.test, m), None if s.counter is None else _name(s.counter, m))
    if isinstance(s, Break):
        return Break(s.loc, {k: _name(v, m) for k, v in s.env.items()},
                     [(_name(e, m), _name(x, m)) for e, x in s.copies])
    if isinstance(s, Return):
        return Return(_renamed(s.value, m), s.loc)
    return s


_LITERALS = ("make_tuple", "make_list", "make_dict")


class _Unroller:
    def __init__(self, fn: Function, trees: dict[str, Any]) -> None:
        self.fn = fn
        self.trees = dict(trees)  # name -> its Tree kind
        self.views: dict[str, tuple[str, tuple[int, ...]]] = {}  # slice -> base, positions
        self.lens: dict[str, int] = {}
        self.ranges: dict[str, list[int]] = {}
        self.names = NameTable(fn.names.taken)
        self.aliases = dict(fn.aliases)
        self.operators = set(fn.operators)
        self.changed = False
        self.carried: set[str] = set()  # loops' carried entry names (never constants)
        self.removable: set[str] = set()  # structure reads the unrolling may leave unread
        self.literals: dict[str, tuple] = {}  # a tuple or list literal -> its atoms
        self.constants: dict[str, Const] = {}  # an element of one that is a constant
        self.chains: dict[str, tuple] = {}  # a list built by appending -> its atoms
        self.leaves: set[str] = set()  # the parameters that are arrays in this call
        self.made: dict[str, Let] = {}  # each name bound so far -> its statement
        self.decided: set[str] = set()  # key tests decided for this call (`"k" in d`)
        self.length_consts: dict[int, Const] = {}  # (ir/unroll_lengths.py)
        self.depth = 0  # (a callee's unrolling, for the structure it returns: its depth)
        self.opaque: set[str] = set()  # calls' results whose structure is not known
        self.sized: dict[str, tuple[int, bool]] = {}  # (and cut_default's cuts)
        # a list literal a loop carries (`items = [m]`, appended to in the loop): its
        # structure, where that loop is unrolled (each copy then binds a name of its own)
        self.held: dict[str, Tree] = {}
        self.reads = StackedReads(self)  # (ir/unroll_reads.py)
        # a loop's carried entries: a list literal bound to one is rebound at each
        # iteration (`acc = [x]`, then `acc = joined` in the loop), so its length is not
        # the literal's (main read `len(acc)` as 1: `for item in acc` copied one item)
        self.rebound = {entry for s in walk(fn.body) if isinstance(s, For)
                        for entry, _ in s.carried}

    def block(self, stmts: list[Stmt]) -> tuple[list[Stmt], dict[str, Atom]]:
        """The block with its loops over containers unrolled, and the names later code
        must read instead (a carried value's entry name -> its last iteration's exit)."""
        out: list[Stmt] = []
        subst: dict[str, Atom] = {}
        stacks = dict(self.reads.stacks)  # (those made in this block: its own)
        for s in stmts:
            read = uses(s) if isinstance(s, (Let, If)) else ()
            if any(isinstance(subst.get(n), Const) for n in read):
                self.changed = True  # (a key or string read as the constant it is)
            s = _renamed_stmt(s, subst)
            if isinstance(s, If) and isinstance(s.test, Const) and any(
                    n in self.decided for n in read):
                taken, later = self.block(s.body if s.test.value else s.orelse)
                out += taken  # (the branch a key test decided: the other is never read)
                compose(subst, later)
                self.changed = True
            elif isinstance(s, Let):
                if s.prim == "dict_keys" or s.prim in ("list", "copy", "setitem") and \
                        self.is_dict(s.args[0]) or s.prim in ("dict_merge", "dict_set") or \
                        s.prim == "bitwise_or" and any(self.is_dict(a) for a in s.args):
                    made = keys_literal(self, s) if s.prim in ("dict_keys", "list") else \
                        merged(self, s)
                    self.changed = True
                    out += [self.let(t) for t in made[:-1]]
                    s = made[-1]
                elif s.prim == "contains" or s.prim in ("not_", "and_", "or_") and read and \
                        all(n in self.decided for n in read) or _of_keys(s):
                    made = self.decide(s)
                    self.changed = True
                    out += made[:-1]
                    s = made[-1]
                elif (folded := folded_length(self, s, read)) is not None:
                    s = folded
                    self.changed = True
                elif run_time_key(self, s):
                    made, s = self.reads.read(s)
                    self.changed = True
                    out += made
                elif _rebound_list(self, s, out):
                    subst[s.target] = s.args[0]
                    self.changed = True
                    continue
                out.append(self.let(s))
                known = self.constants.get(out[-1].target)
                if known is not None and out[-1].target not in self.carried:
                    # a key or string from a literal: later code reads it
                    subst[out[-1].target] = known
            elif isinstance(s, For) and self.unrollable(s):
                self.trees.update({e: self.held.pop(e) for e, _ in s.carried if e in self.held})
                stmts_, final = self.unroll(s)
                out += stmts_
                compose(subst, final)
                self.changed = True
            elif isinstance(s, For):
                for e in {e for t in walk([s]) if isinstance(t, For) for e, _ in t.carried}:
                    self.chains.pop(e, None)  # (appended to at each pass: no length)
                self.reads.enter(s)
                body, inner = self.block(s.body)
                placed = self.reads.leave()  # (stacks of what the loop reads by its key)
                carried = [(e, _name(x, inner)) for e, x in s.carried]
                # a loop unrolled inside carried a value from before this loop under its
                # entry name (`for _ in range(3): for W, b in params: h = ...`): this
                # loop carries it now, from that name to the unrolled copies' last exit
                bound = set(bound_names(s.body)) | {c for c, _ in carried}
                more = [(e, a.name) for e, a in inner.items()
                        if isinstance(a, Var) and e not in bound]
                if more and any(isinstance(t, Break) for t in walk(s.body)):
                    out.append(s)  # (a `break` would leave without it: stays a loop)
                else:
                    out += placed
                    out.append(For(s.target, s.iter, body, s.loc, carried + more, s.test,
                                   s.counter))
                # a value a loop carries may change there (a list it appends to grows):
                # what was known of it before the loop no longer holds
                for e in {e for t in walk([s]) if isinstance(t, For) for e, _ in t.carried}:
                    for known in (self.trees, self.views, self.lens, self.ranges,
                                  self.chains, self.literals, self.held):  # (appended to)
                        known.pop(e, None)
                    self.reads.rebound(e)
            elif isinstance(s, If):
                out.append(self.branches(s, subst))
            else:
                out.append(s)
        rebound = set(bound_names(stmts))  # (a stack of what this block binds again:
        self.reads.stacks = {k: v for k, v in stacks.items() if k not in rebound}  # stale)
        return out, subst

    def branches(self, s: If, subst: dict[str, Atom]) -> If:
        """An ``if`` with the loops in its branches unrolled.  A value such a loop
        carried out of the ``if`` under its entry name (a join, or a name from before
        the ``if``) is joined under a new name, each branch binding it to its own last
        value (``h_4 = h_3_2`` on one path, ``h_4 = h`` on the other), and later code
        reads that name."""
        body, sb = self.block(s.body)
        orelse, so = self.block(s.orelse)
        for j in s.joins:  # each path may have made it something else
            for known in (self.trees, self.views, self.lens, self.ranges, self.chains,
                          self.literals):
                known.pop(j, None)
        local = (set(bound_names(s.body)) | set(bound_names(s.orelse))) - set(s.joins)
        out = [e for e in dict.fromkeys([*sb, *so]) if e not in local]
        if not out:
            return If(s.test, body, orelse, s.loc, s.joins)
        if any(isinstance(t, Break) for t in walk(s.body + s.orelse)):
            return s  # (a `break` would leave before the join: the loops stay)
        joins = list(s.joins)
        for e in out:
            j = self.names.fresh(e)
            body = body + [Let(j, "identity", (sb.get(e, Var(e)),), {}, s.loc)]
            orelse = orelse + [Let(j, "identity", (so.get(e, Var(e)),), {}, s.loc)]
            joins.append(j)
            subst[e] = Var(j)
        return If(s.test, body, orelse, s.loc, joins)

    def decide(self, s: Let) -> list[Let]:
        """``contains`` for this call's structure: a constant for a dict's key (`not`,
        `and`, `or` of those too), ``np.any(y == x)`` for an array, the ``==``s of a
        tuple's or list's items (``x == a or x == b``, as Python's ``in``)."""
        if s.prim in ("equal", "not_equal"):  # (a key, per call, and a string)
            same = s.args[0].value == s.args[1].value
            return [self.constant(s, same == (s.prim == "equal"))]
        if s.prim == "str_test":  # `k.startswith("w")`
            values = [a.value for a in s.args]
            return [self.constant(s, bool(getattr(values[0], s.params["method"])(
                *values[1:])))]
        if s.prim != "contains":  # (its operands are key tests decided above)
            values = [a.value for a in s.args]
            value = not values[0] if s.prim == "not_" else (
                values[0] and values[1] if s.prim == "and_" else values[0] or values[1])
            return [self.constant(s, bool(value))]
        seq, item = s.args
        negated = bool(s.params.get("negated"))
        if isinstance(seq, Const) and isinstance(item, Const) and isinstance(
                seq.value, str) and isinstance(item.value, str):  # `"bias" in k`, a key
            return [self.constant(s, (item.value in seq.value) != negated)]
        kind = self.kind_of(seq)
        if isinstance(kind, Tree) and kind.type is dict and not kind.positional:
            if not isinstance(item, Const):
                raise TransformError(
                    "`in` over a dict argument with a key known only when the function "
                    "runs: a dict's keys are its structure, fixed per call", s.loc,
                    "test a constant key (`\"w\" in params`)")
            return [self.constant(s, (item.value in kind.keys) != negated)]
        if isinstance(kind, Leaf):
            if isinstance(item, Const) and isinstance(item.value, str):
                raise TransformError(
                    "a string key tested in (or read with `.get` from) an array: only a "
                    "dict has keys", s.loc, "pass a dict, or test a number: `2.0 in x`")
            found = self.names.fresh(f"{s.target}_each")
            tests = [Let(found, "equal", (seq, item), {}, s.loc)]
            if not negated:
                return tests + [Let(s.target, "any", (Var(found),), {}, s.loc)]
            anywhere = self.names.fresh(f"{s.target}_any")
            return tests + [Let(anywhere, "any", (Var(found),), {}, s.loc),
                            Let(s.target, "not_", (Var(anywhere),), {}, s.loc)]
        if isinstance(kind, Tree) and all(not isinstance(c, Tree) for c in kind.children):
            if not kind.keys:
                return [Let(s.target, "identity", (Const(negated, repr(negated)),), {}, s.loc)]
            out: list[Let] = []
            prim, join = ("not_equal", "and_") if negated else ("equal", "or_")
            so_far = None
            for key in kind.keys:  # (Python's `in` over a tuple: `x == a or x == b`)
                element = self.names.fresh(f"{s.target}_item")
                out.append(Let(element, "getitem", (seq,), {"index": Index(
                    (Const(key, repr(key)),), False)}, s.loc))
                test = self.names.fresh(f"{s.target}_test")
                out.append(Let(test, prim, (item, Var(element)), {}, s.loc))
                if so_far is not None:
                    out.append(Let(self.names.fresh(f"{s.target}_so_far"), join,
                                   (Var(so_far), Var(test)), {}, s.loc))
                so_far = out[-1].target
            last = out[-1]
            return out[:-1] + [Let(s.target, last.prim, last.args, last.params, s.loc)]
        raise TransformError(
            "`in` over a value whose structure is not known for this call (a tuple of "
            "tuples, the result of a call)", s.loc,
            "test an array: `np.any(y == x)`, or each item: `x == a or x == b`")

    def is_dict(self, a: Any) -> bool:
        kind = self.kind_of(a)
        return isinstance(kind, Tree) and kind.type is dict

    def constant(self, s: Let, value: bool) -> Let:
        const = Const(value, repr(value))
        self.decided.add(s.target)
        self.constants[s.target] = const
        return Let(s.target, "identity", (const,), {}, s.loc)

    def kind_of(self, a: Any) -> Any:
        """The structure of ``a`` in this call: a Tree, LEAF for an array, or None."""
        return kind_of_atom(self, a)

    def _read_of(self, s: Let, name: str | None) -> Let | None:
        """A read of ``name``'s structure: a call's result's known (``c.terms`` of ``c =
        Terms(xs)``: its length), a tuple default cut per call (``cut_default``)."""
        if s.prim == "getitem" and name is not None:
            call_tree(self, name)
        return cut_default(self, s, name) if name in self.sized else None

    def let(self, s: Let) -> Let:
        self.made[s.target] = s
        for known in (self.trees, self.views, self.literals, self.held, self.chains):
            known.pop(s.target, None)  # (its last binding's)
        self.reads.rebound(s.target)
        s = appended(self, s)
        a = s.args[0] if s.args else None
        name = a.name if isinstance(a, Var) else None
        if (cut := self._read_of(s, name)) is not None:
            return cut
        if s.target in self.constants and s.prim == "getitem" and name in self.trees and \
                self.trees[name].type is dict:  # a dict's key, iterated: bound as itself
            return Let(s.target, "identity", (self.constants[s.target],), {}, s.loc)
        if s.prim in ("make_tuple", "make_list"):
            self.literals[s.target] = s.args
        if s.prim in _LITERALS and not keyed_per_call(s) and not (
                s.prim == "make_list" and s.target in self.rebound):  # `[(W1, b1), ...]`
            keys = tuple(s.params["keys"]) if s.prim == "make_dict" else tuple(range(len(s.args)))
            kind = {"make_tuple": tuple, "make_list": list, "make_dict": dict}[s.prim]
            self.trees[s.target] = Tree(kind, keys, tuple(self.trees.get(b.name, LEAF) if isinstance(
                b, Var) else LEAF for b in s.args), _positional(s))  # (a NamedTuple's)
        elif s.prim == "make_list" and not keyed_per_call(s):
            self.held[s.target] = Tree(list, tuple(range(len(s.args))), tuple(
                self.trees.get(b.name, LEAF) if isinstance(b, Var) else LEAF for b in s.args))
        elif (s.prim == "identity" or s.prim == "list" and s.target not in self.rebound) and (
                name in self.trees):  # (`list(t[1:])`; not a list a loop rebinds)
            tree = self.trees[name]
            self.trees[s.target] = Tree(list, tree.keys, tree.children) if (
                s.prim == "list" and tree.type is tuple) else tree
            if name in self.literals and s.target not in self.rebound:
                self.literals[s.target] = self.literals[name]
            if name in self.views:
                self.views[s.target] = self.views[name]
        elif s.prim == "len" and name in self.trees:
            self.lens[s.target] = n = len(self.trees[name].keys)
            self.removable.add(s.target)
            # (its value for this call: a batched container's length is not its
            # arrays' batch axis, which vmap's rule for `len` of an array reads)
            self.constants[s.target] = length_const(self, n)
            return Let(s.target, "identity", (self.constants[s.target],), {}, s.loc)
        elif s.prim == "len" and name in self.chains and name not in self.rebound:
            self.lens[s.target] = len(self.chains[name])  # (`range(len(items))`)
            self.removable.add(s.target)
        elif s.prim == "len" and isinstance(a, Const) and type(a.value) in (tuple, list):
            self.lens[s.target] = len(a.value)  # `for name in ("W1", "W2")`
            self.removable.add(s.target)
        elif s.prim == "getitem" and isinstance(a, Const) and type(a.value) in (tuple, list):
            item = s.params["index"].items[0] if len(s.params["index"].items) == 1 else None
            if isinstance(item, Const) and type(item.value) is int and \
                    -len(a.value) <= item.value < len(a.value) and \
                    type(a.value[item.value]) in (str, int, float, bool):
                value = a.value[item.value]
                # a number of a module constant is read at each call (`WEIGHTS[0]`)
                text = f"{a.text}[{item.value}]" if a.text.isidentifier() and type(
                    value) in (int, float) else repr(value)
                self.constants[s.target] = Const(value, text)
                return Let(s.target, "identity", (self.constants[s.target],), {}, s.loc)
        elif s.prim == "range" and s.args and all(
                isinstance(b, Const) and type(b.value) is int
                or isinstance(b, Var) and b.name in self.lens for b in s.args) and not s.params:
            bounds = [b.value if isinstance(b, Const) else self.lens[b.name] for b in s.args]
            self.ranges[s.target] = list(range(*bounds))
            self.removable.add(s.target)
        elif s.prim == "reversed" and name in self.ranges:
            self.ranges[s.target] = self.ranges[name][::-1]
            self.removable.add(s.target)
        elif s.prim == "getitem" and name in self.trees:
            base: Tree = self.trees[name]
            index: Index = s.params["index"]
            item = index.items[0] if len(index.items) == 1 and not index.is_tuple else None
            root, where = self.views.get(name, (name, tuple(range(len(base.keys)))))
            if isinstance(item, Slice) and base.type is not dict and all(
                    b is None or isinstance(b, Const) and type(b.value) is int
                    for b in (item.lower, item.upper, item.step)):
                bounds = [None if b is None else b.value for b in (item.lower, item.upper, item.step)]
                picked = tuple(range(len(base.keys)))[slice(*bounds)]
                self.trees[s.target] = Tree(base.type, tuple(range(len(picked))),
                                            tuple(base.children[i] for i in picked))
                self.views[s.target] = (root, tuple(where[i] for i in picked))
                self.removable.add(s.target)
            elif isinstance(item, Const):
                key = item.value
                if base.type is not dict and type(key) is int and -len(base.keys) <= key < len(base.keys):
                    key %= len(base.keys)
                    if name in self.views:  # read the element from the sliced container
                        self.changed = True
                        s = Let(s.target, s.prim, (Var(root),),
                                {**s.params, "index": Index((Const(where[key], repr(where[key])),), False)},
                                s.loc)
                if key in base.keys and isinstance(base.child(key), Tree):
                    self.trees[s.target] = base.child(key)
                literal = self.literals.get(name)
                inner = literal[key] if literal is not None and base.type is not dict and \
                    key in base.keys else None
                if isinstance(inner, Var) and inner.name in self.literals:
                    self.literals[s.target] = self.literals[inner.name]  # (`ks, ls = ...`)
                if literal is not None and base.type is not dict and key in base.keys and \
                        isinstance(literal[key], Const):  # `for name in ("W1", "W2")`
                    self.constants[s.target] = literal[key]
        return s

    def unrollable(self, s: For) -> bool:
        if s.test is not None or s.counter is not None or s.iter is None:
            return False
        if s.iter.name not in self.ranges or any(isinstance(t, Break) for t in walk(s.body)):
            return False
        # the index, or a constant it picks (`name` in `for name in ("W1", "W2")`)
        picks = {s.target} | {
            t.target for t in walk(s.body)
            if isinstance(t, Let) and t.prim == "getitem" and isinstance(t.args[0], Const)
            and t.params["index"].items == (Var(s.target),)
        }
        # (or a loop over constants, `for i, w in enumerate([1.0, 2.0])`: its items
        # are then constants too, as JAX's trace unrolls it)
        return len(picks) > 1 or any(
            isinstance(t, Let) and t.prim == "getitem" and isinstance(t.args[0], Var)
            and (t.args[0].name in self.trees or t.args[0].name in self.chains)
            and any(isinstance(i, Var) and i.name in picks for i in t.params["index"].items)
            for t in walk(s.body)
        )

    def unroll(self, s: For) -> tuple[list[Stmt], dict[str, Atom]]:
        carried = {e for e, _ in s.carried}
        bound = [n for n in bound_names(s.body) if n not in carried]
        # a loop inside carries a value from before this loop under its entry name, and
        # this loop carries it along (`for W, b in params: for _ in range(2): h = ...`):
        # each copy after the first enters it under a name of its own, as two loops in
        # a row do (`h_4 = h`)
        inner = [e for t in walk(s.body) if isinstance(t, For) for e, _ in t.carried
                 if e not in bound and e not in carried]
        now: dict[str, Atom] = {e: Var(e) for e in list(carried) + inner}
        out: list[Stmt] = []
        # `for name in params` over a dict is over its keys: the normalizer's item
        # statement (`name = params[k]`, on the `for` line) binds the key
        keyed = {  # (`sorted(d)`, `sorted(d.items())`: the keys in sorted order)
            t.target: key_order(self.trees[t.args[0].name], t) for t in s.body
            if isinstance(t, Let) and t.prim == "getitem" and isinstance(t.args[0], Var)
            and t.args[0].name in self.trees and self.trees[t.args[0].name].type is dict
            and not self.trees[t.args[0].name].positional and t.params["index"].items == (Var(s.target),) and s.loc is not None
            and t.loc is not None and t.loc.line == s.loc.line
        }
        for j, value in enumerate(self.ranges[s.iter.name]):
            m: dict[str, Atom] = {s.target: Const(value, repr(value))}
            m.update(now)
            for n in bound:
                if n != s.target:
                    m[n] = Var(n) if j == 0 else Var(self.names.fresh(n))
            for n, keys in keyed.items():
                if 0 <= value < len(keys):
                    self.constants[m[n].name] = Const(keys[value], repr(keys[value]))
            tag = (s.loc.text.strip() if s.loc else "for", j, len(self.ranges[s.iter.name]))
            for e in dict.fromkeys(inner):
                if j > 0:
                    m[e] = Var(self.names.fresh(e))
                    out.append(_tagged(Let(m[e].name, "identity", (now[e],), {}, s.loc), tag))
            for new, old in [(m[n].name, n) for n in bound if n in self.fn.aliases and n != s.target]:
                first = self.fn.aliases[old]
                spelled = m[first].name if first in m and isinstance(m[first], Var) else first
                # (the previous copy's version is itself spelled with the first name)
                self.aliases[new] = self.aliases.get(spelled, spelled)
            self.operators.update(m[n].name for n in bound if n in self.fn.operators)  # (`/`)
            body, later = self.block([_tagged(_renamed_stmt(t, m), tag) for t in s.body])
            out += body
            for e, x in s.carried + [(e, e) for e in inner]:
                exit_ = m.get(x, Var(x))
                now[e] = later.get(exit_.name, exit_) if isinstance(exit_, Var) else exit_
        return out, {e: a for e, a in now.items() if a != Var(e)}

def _positional(s: Let) -> bool:
    """Is ``s`` a NamedTuple's dict of fields (read by position too, iterated by value)?"""
    return bool(getattr(s.params.get("built"), "positional", False))


def _drop_unused(u: "_Unroller", stmts: list[Stmt]) -> list[Stmt]:
    """Drop the structure reads (``len(params)``, ``range``, ``params[:-1]``) the
    unrolled loops no longer read."""
    while True:
        read: set[str] = set()
        for t in walk(stmts):
            read |= set(uses(t))
        dead = {n for n in u.removable if n not in read}
        if not dead:
            return stmts
        u.removable -= dead
        stmts = _without(stmts, dead)


def _rebound_list(u: "_Unroller", s: Let, out: list[Stmt]) -> bool:
    """``items = identity(items_2)``: a list's buffer name bound again to its version
    after an ``append`` (frontend/buffers.py), where the list's items are known this
    call.  Later code reads the version itself: two values of one name would be two
    containers whose cotangents the reverse sweep adds (each item's twice)."""
    a = s.args[0] if s.prim == "identity" and s.args else None
    return isinstance(a, Var) and getattr(u.trees.get(a.name), "type", None) is list and (
        s.target not in u.carried and s.target not in u.rebound) and any(
        isinstance(t, Let) and t.target == s.target for t in out)


def _sliced_items(u: "_Unroller", stmts: list[Stmt]) -> list[Stmt]:
    """A constant slice of a tuple or list argument read as a whole (``sum(t[1:])``,
    ``list(t[::-1])``, ``a, *rest = t``): the tuple (list) of the items it picks this
    call, each read from the argument by its position, which the transforms follow
    one by one (the analysis refuses a slice of an argument: its items' derivatives
    are the argument's)."""
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Let) and s.prim == "getitem" and s.target in u.trees and \
                isinstance(s.args[0], Var) and s.args[0].name in u.trees and \
                isinstance(s.params["index"].items[0], Slice) and (
                    u.trees[s.args[0].name].type is not dict):
            root, where = u.views.get(s.target, (None, ()))
            if root is None:
                out.append(s)
                continue
            items = []
            for position in where:
                item = u.names.fresh(f"{s.target}_item")
                out.append(Let(item, "getitem", (Var(root),), {"index": Index(
                    (Const(position, repr(position)),), False)}, s.loc))
                items.append(Var(item))
            kind = "make_list" if u.trees[s.target].type is list else "make_tuple"
            out.append(Let(s.target, kind, tuple(items), {}, s.loc))
        elif isinstance(s, If):
            out.append(replace(s, body=_sliced_items(u, s.body),
                               orelse=_sliced_items(u, s.orelse)))
        elif isinstance(s, For):
            out.append(replace(s, body=_sliced_items(u, s.body)))
        else:
            out.append(s)
    return out


def _empty_sums(u: "_Unroller", stmts: list[Stmt]) -> list[Stmt]:
    """``sum(f(v) for v in xs)`` (``Function.sums``) over a list that has no items this
    call: Python's 0 (after its start), not NumPy's ValueError for a stack of none."""
    empty = {s.target for s in walk(stmts) if isinstance(s, Let) and s.prim == "stack"
             and s.target in u.fn.sums and isinstance(s.args[0], Var)
             and u.chains.get(s.args[0].name) == ()}
    if not empty:
        return stmts
    u.changed = True

    def rewrite(block: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in block:
            if isinstance(s, Let) and s.target in empty:
                continue
            if isinstance(s, Let) and s.prim == "sum" and isinstance(s.args[0], Var) and (
                    s.args[0].name in empty):
                s = Let(s.target, "identity", (Const(0, "0"),), {}, s.loc)
            elif isinstance(s, If):
                s = replace(s, body=rewrite(s.body), orelse=rewrite(s.orelse))
            elif isinstance(s, For):
                s = replace(s, body=rewrite(s.body))
            out.append(s)
        return out

    return rewrite(stmts)


def _sorted_values(body: list[Stmt]) -> None:
    """``for v in sorted(xs)`` of a list or an array (not a dict, whose keys the loop
    walks in sorted order once unrolled): the loop reads ``xs[k]``, unsorted; Python
    compares the values.  Refused, located (it was a wrong derivative)."""
    left = next((s for s in walk(body) if isinstance(s, Let) and s.prim == "getitem"
                 and s.params.get("order") is not None), None)
    if left is not None:
        raise TransformError(
            "sorted() of a list, an array or a generator's values in a loop would "
            "compare its values in Python", left.loc, "sort an array with np.sort "
            "(`for v in np.sort(np.stack(values))`); sorted(d) walks a dict's keys")


def _per_call(s: Any) -> bool:
    """Does ``s`` read a structure this pass decides per call (with no container
    argument: a literal, a key test, ``tuple(x)``)?"""
    return keyed_per_call(s) or isinstance(s, Let) and (
        s.prim in ("contains", "dict_keys", "dict_merge", "dict_set") or s.prim in _LITERALS or (
            s.prim == "getitem" and isinstance(s.args[0], Const)
            and type(s.args[0].value) in (tuple, list)))


def _of_keys(s: Let) -> bool:
    """``k == "w"`` (``!=``), ``k.startswith("w")`` of strings: a key, made a constant
    per call, tested.  Not a module's string (``MODE == "l2"``, spelled by its name in
    the emitted code a transform reads again: jacrev's vmap of the VJP): its code reads
    it at each call, and decided here the test kept the value it had when the code was
    made (jacrev gave the old branch's Jacobian after ``MODE`` changed)."""
    return (s.prim in ("equal", "not_equal") and len(s.args) == 2 or s.prim == "str_test"
            ) and all(isinstance(a, Const) and isinstance(a.value, str) and _spelled(a)
                      for a in s.args)


def _spelled(a: Const) -> bool:
    """Is the string constant ``a`` written as itself (a literal, a key made a literal
    per call: ``"w"``, ``'w'``), not a name whose value may change between calls?"""
    return a.text.lstrip("rRuUbB")[:1] in ("'", '"')


def _without(stmts: list[Stmt], dead: set[str]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, Let) and s.target in dead:
            continue
        if isinstance(s, For):
            s = For(s.target, s.iter, _without(s.body, dead), s.loc, s.carried, s.test, s.counter)
        elif isinstance(s, If):
            s = If(s.test, _without(s.body, dead), _without(s.orelse, dead), s.loc, s.joins)
        out.append(s)
    return out
