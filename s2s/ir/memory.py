"""The memory check: writes in place are sound in emitted code only if no value that
shares memory with the written buffer is read afterwards.

An IR pass run after lowering.  What a primitive does to memory (writes its first
argument, returns a view, allocates) is the rules' knowledge: the frontend passes it
in as an ``Effects``, so the IR does not import the primitives.
"""

from __future__ import annotations

import inspect
import itertools
import re
from typing import Any, Callable, Protocol

from ..errors import TransformError, UnsupportedSyntaxError, mark_shared_write
from .nodes import (
    KEYWORD_OPERANDS,
    Break,
    Const,
    For,
    If,
    Index,
    Let,
    Return,
    Stmt,
    Var,
    atoms_in,
    walk,
)


class Effects(Protocol):
    """What a primitive (by name) does to the memory of its arguments."""

    def writes(self, prim: str) -> bool:
        """Does it change its first argument in place (a new version of it in IR)?"""

    def views(self, prim: str) -> bool:
        """May its value share memory with its arguments?"""

    def allocates(self, prim: str) -> bool:
        """Is its value a new array?"""

    def shape_only(self, prim: str) -> set[str]:
        """The parameters whose shapes (or lengths) only it reads."""

    def signature(self, prim: str) -> inspect.Signature:
        """Its parameters."""


_STALE = ("stale",)  # the epoch of a value known to be out of date
_HOLDERS = ("make_list", "list", "zeros_list", "make_tuple")  # hold their arguments




class State:
    """What the memory check knows at one point of a function.

    ``own[name]``: the buffers (by first name) the name's object may be, when it is
    certainly one the function made (None: it may be anything else, e.g. an argument
    or a view).  ``refs[name]``: for each buffer the value shares memory with (a view,
    a container holding it, an older version), the epoch of the buffer's contents
    when the value was made.  ``epoch[buffer]``: its contents now.
    """

    def __init__(self) -> None:
        self.own: dict[str, frozenset[str] | None] = {}
        self.refs: dict[str, dict[str, Any]] = {}
        self.epoch: dict[str, Any] = {}
        # the refs of each item of a tuple, and of each item of the tuples a list
        # holds (a tape): a value taken out of one shares only its own item's memory
        self.slots: dict[str, tuple[dict[str, Any], ...]] = {}
        self.items: dict[str, tuple[dict[str, Any], ...]] = {}  # () for an empty list

    def copy(self) -> "State":
        new = State()
        new.own = dict(self.own)
        new.refs = {k: dict(v) for k, v in self.refs.items()}
        new.epoch = dict(self.epoch)
        new.slots = {k: tuple(dict(d) for d in v) for k, v in self.slots.items()}
        new.items = {k: tuple(dict(d) for d in v) for k, v in self.items.items()}
        return new

    def key(self) -> Any:
        return (self.own, self.refs, self.epoch, self.slots, self.items)

    def all_refs(self) -> list[dict[str, Any]]:
        return (list(self.refs.values()) + [d for v in self.slots.values() for d in v]
                + [d for v in self.items.values() for d in v])

    def alias(self, target: str, source: str) -> None:
        """``target`` holds what ``source`` holds (its items' refs too)."""
        for table in (self.slots, self.items):
            table.pop(target, None)
            if source in table:
                table[target] = tuple(dict(d) for d in table[source])

    def retire(self, root: str) -> None:
        """``root`` is about to name a new array: what referred to the one it named
        (in a loop, the previous iteration's) now refers to it as one of the earlier
        arrays of ``root``, all kept under one key ``("old", root)``."""
        current = self.epoch.pop(root, None)
        if current is None:
            return
        key = ("old", root)
        before = self.epoch.get(key)
        for refs in self.all_refs():
            found = []
            if key in refs:
                found.append(refs[key] == before)
            if root in refs:
                found.append(refs.pop(root) == current)
            if found:
                refs[key] = key if all(found) else _STALE
        self.epoch[key] = key
        for name, own in self.own.items():
            if own and root in own:
                self.own[name] = (own - {root}) | {key}

    def stale(self, name: str, roots: Any = None) -> str | None:
        """A buffer the value of ``name`` shares memory with and that changed since
        (only among ``roots``, when given), or None."""
        for root, epoch in self.refs.get(name, {}).items():
            if (roots is None or root in roots) and self.epoch.get(root) != epoch:
                return root
        return None


class MemoryCheck:
    """Writes into arrays and lists in place are sound in emitted code only if no
    value that shares memory with the written buffer is read afterwards: in IR such
    a value still denotes what it was bound to, in Python it would see the write.
    Walks the IR (loops to a fixed point: what one iteration writes, the next one
    reads), refusing such reads where they happen, and writes into names that may
    hold an array the function did not make (a loop or a branch may rebind them).

    Reading only a value's shape (``np.shape``, ``np.zeros_like``) is always fine;
    so is holding an out-of-date value without reading it.
    """

    def __init__(self, effects: Effects, lists: set[str], buffers: set[str],
                 user_name: Callable[[str], str], func: str,
                 fresh: Callable[[str], str] | None = None) -> None:
        self.effects = effects
        self.lists = lists  # lists the function built (its elements are its own)
        self.buffers = buffers  # versions of arrays and lists the function made
        self.user_name = user_name  # an IR name -> the user's name for it
        self.func = func  # the function's name, for errors
        self.where: dict[Any, Any] = {}  # epoch -> the statement that made it
        self.breaks: list[list[State]] = []  # per enclosing loop: states at its breaks
        self.ranks: dict[str, int] = {}  # arrays whose rank the code says (known_ranks)
        # ``t = y[0]`` of an array of known rank (a NumPy scalar: NumPy copies it) and
        # those read after ``y`` changed: made copies in the IR (``np.copy``), for the
        # transforms read an element of ``y`` as a view, where it is used
        self.fresh = fresh
        self.elements: dict[str, Let] = {}
        self.copied: dict[int, Let] = {}

    def run(self, body: list[Stmt], params: list[str]) -> None:
        self.ranks = known_ranks(body, self.lists)
        state = State()
        for p in params:
            state.own[p] = None
        self.block(body, state)
        if self.copied:  # (emitted code may spell an element where it is read: a copy)
            _spelled_as_copies(body, self.copied, self.fresh)

    # ---- statements -------------------------------------------------------------

    def block(self, stmts: list[Stmt], state: State) -> None:
        for s in stmts:
            if isinstance(s, Let):
                self.let(s, state)
            elif isinstance(s, If):
                self.read(s.test, state, s)
                body, orelse = state.copy(), state.copy()
                self.block(s.body, body)
                self.block(s.orelse, orelse)
                self.replace(state, self.join(body, orelse, ("if", id(s)), s))
            elif isinstance(s, For):
                self.loop(s, state)
            elif isinstance(s, Break):
                after = state.copy()
                for entry, name in s.copies:
                    after.own[entry] = after.own.get(name)
                    after.refs[entry] = dict(after.refs.get(name, {}))
                    after.alias(entry, name)
                self.breaks[-1].append(after)
            elif isinstance(s, Return):
                self.read(s.value, state, s)

    def loop(self, s: For, state: State) -> None:
        for a in (s.iter, s.test):
            if a is not None:
                self.read(a, state, s)
        before = state.copy()
        head = state.copy()
        for passes in itertools.count():  # a pass can only make more values out of date
            if passes == 50:
                raise TransformError(
                    "s2s could not work out which values this loop's writes change",
                    s.loc, "write into arrays outside the loop, or copy them first",
                    self.func,
                )
            end = head.copy()
            self.breaks.append([])
            self.block(s.body, end)
            exits = self.breaks.pop()
            for entry, exit_ in s.carried:  # the back edge
                end.own[entry] = end.own.get(exit_)
                end.refs[entry] = dict(end.refs.get(exit_, {}))
                end.alias(entry, exit_)
            new_head = self.join(before, end, ("loop", id(s)), s)
            if new_head.key() == head.key():
                break
            head = new_head
        after = head
        for i, leaving in enumerate(exits):
            after = self.join(after, leaving, ("break", id(s), i), s)
        self.replace(state, after)

    @staticmethod
    def replace(state: State, new: State) -> None:
        state.own, state.refs, state.epoch = new.own, new.refs, new.epoch
        state.slots, state.items = new.slots, new.items

    def join(self, a: State, b: State, tag: Any, stmt: Any) -> State:
        """The state after two paths meet (the branches of an if, a loop's entry and
        its back edge): a buffer written on either path has new contents; a value
        is up to date only if it is on both paths."""
        out = State()
        for root in set(a.epoch) | set(b.epoch):
            ea, eb = a.epoch.get(root), b.epoch.get(root)
            if ea == eb:
                out.epoch[root] = ea
            else:
                out.epoch[root] = tag + (root,)
                self.where.setdefault(out.epoch[root], stmt)
        for name in set(a.refs) | set(b.refs) | set(a.own) | set(b.own):
            states = [st for st in (a, b) if name in st.refs or name in st.own]
            owns = [st.own.get(name) for st in states]
            out.own[name] = None if any(o is None for o in owns) else frozenset().union(*owns)
            out.refs[name] = _joined(out, [(st, st.refs.get(name, {})) for st in states])
            for table, out_table in ((a.slots, out.slots), (a.items, out.items)):
                other = b.slots if table is a.slots else b.items
                parts = [t[name] for t in (table, other) if name in t]
                if len(parts) != len(states) or len({len(p) for p in parts if p}) > 1:
                    continue  # not the same structure on every path: items unknown
                known = [(st, p) for st, p in zip(states, parts) if p]
                if not known:
                    out_table[name] = ()
                    continue
                out_table[name] = tuple(
                    _joined(out, [(st, p[i]) for st, p in known])
                    for i in range(len(known[0][1]))
                )
        return out

    def let(self, s: Let, state: State) -> None:
        for name, only in self.reads(s, state):
            self.read(Var(name), state, s, only)
        args = [a.name if isinstance(a, Var) else None for a in s.args]
        refs: dict[str, Any] = {}
        if self.effects.writes(s.prim):
            base = args[0]
            owned = state.own.get(base)
            if not owned:
                raise self.error(
                    s, f"`{self.display(base)}` may hold an array this function did not "
                    "make here (a loop or a branch rebinds it), so writing into it "
                    "could change that array", f"copy it first: `{self.display(base)} = "
                    f"{self.display(base)}.copy()`",
                )
            epoch = ("write", id(s))
            self.where[epoch] = s
            for root in owned:
                state.epoch[root] = epoch
            if s.prim in ("append", "pop") or base in self.lists:  # a list holds its items
                refs = {r: e for r, e in state.refs.get(base, {}).items() if r not in owned}
                items = state.items.get(base)
                state.items.pop(s.target, None)
                if s.prim == "setitem" and args[1] is not None:  # `ys[k] = v`: one more
                    refs = _merged(refs, state.refs.get(args[1], {}))
                elif s.prim == "append" and args[1] is not None:
                    refs = _merged(refs, state.refs.get(args[1], {}))
                    new = state.slots.get(args[1])
                    if new is not None and items == ():
                        state.items[s.target] = tuple(dict(d) for d in new)
                    elif new is not None and items and len(items) == len(new):
                        state.items[s.target] = tuple(_merged(o, n) for o, n in zip(items, new))
                elif s.prim == "pop" and items is not None:
                    state.items[s.target] = items
            refs.update({root: epoch for root in owned})
            state.own[s.target] = owned
        elif self.effects.allocates(s.prim) or s.prim in ("make_list", "list", "zeros_list") or (
                s.prim == "call" and self.fresh_result(s)):
            state.retire(s.target)  # (in a loop, last iteration's array is another one)
            epoch = ("new", id(s))
            self.where[epoch] = s
            state.epoch[s.target] = epoch
            refs = {s.target: epoch}
            state.slots.pop(s.target, None)
            state.items.pop(s.target, None)
            if s.prim in ("make_list", "list"):  # it holds its elements (views, for rows)
                for a in args:
                    if a is not None:
                        refs = _merged(refs, state.refs.get(a, {}))
                if s.prim == "make_list" and not s.args:
                    state.items[s.target] = ()
            state.own[s.target] = frozenset({s.target})
        elif self.effects.views(s.prim):
            if s.prim == "getitem" and self.ranks.get(s.target) == 0:
                self.elements[s.target] = s  # (NumPy's element of it: a scalar, a copy)
            shape_only = self.effects.shape_only(s.prim)
            state.slots.pop(s.target, None)
            state.items.pop(s.target, None)
            for i, (a, pname) in enumerate(zip(args, self.arg_params(s))):
                if a is None or pname in shape_only:
                    continue
                part = state.refs.get(a, {})
                if i == 0 and s.prim == "getitem" and a in self.lists:
                    owned = state.own.get(a) or frozenset()  # an element, not the list
                    part = {r: e for r, e in part.items() if r not in owned}
                    if state.items.get(a):  # a tuple of the tape's
                        state.slots[s.target] = tuple(dict(d) for d in state.items[a])
                elif i == 0 and s.prim == "getitem" and a in state.slots:
                    k = _constant_position(s.params["index"], len(state.slots[a]))
                    if k is not None:  # one item of a tuple: only its memory
                        part = state.slots[a][k]
                refs = _merged(refs, part)
            if s.prim == "make_tuple":
                state.slots[s.target] = tuple(
                    dict(state.refs.get(a, {})) if a is not None else {} for a in args)
            elif s.prim == "identity" and args[0] is not None:
                state.alias(s.target, args[0])
            # a branch's join binds the value of the other branch's name: one object
            aliased = s.prim == "identity" and s.target in self.buffers and args[0]
            state.own[s.target] = state.own.get(args[0]) if aliased else None
            if s.prim == "identity" and isinstance(s.args[0], Const) and (
                    s.args[0].value is None):  # (None holds no array: a join of it and
                state.own[s.target] = frozenset()  # an array made here is that array)
        else:
            state.own[s.target] = None
            state.slots.pop(s.target, None)
            state.items.pop(s.target, None)
        state.refs[s.target] = refs

    def fresh_result(self, s: Let, depth: int = 0) -> bool:
        """Is the value of the call ``s`` an array its callee made, on every return
        (``return r_bar + r_bar_2``; a callee of s2s's emitted code, say), so that it
        shares no memory with the arguments (a tuple of such arrays, for a call
        returning several)?  False where unsure (a parameter, a module value, a list
        returned, calls nested deeper than 8)."""
        body = getattr(s.params.get("callee"), "body", None)
        if body is None or depth > 8:
            return False
        lets: dict[str, list[Let]] = {}
        for t in walk(body):
            if isinstance(t, Let):
                lets.setdefault(t.target, []).append(t)

        def made(atom: Any, seen: frozenset = frozenset()) -> bool:
            if not isinstance(atom, Var) or atom.name not in lets or atom.name in seen:
                return False
            return all(
                self.effects.allocates(t.prim) and t.prim not in _HOLDERS
                or t.prim == "make_tuple" and all(  # (a value and its tangent, say)
                    made(a, seen | {atom.name}) for a in t.args)
                or t.prim == "call" and self.fresh_result(t, depth + 1)
                or self.effects.writes(t.prim) and t.prim not in ("append", "pop")
                and bool(t.args) and made(t.args[0], seen | {atom.name})
                for t in lets[atom.name])

        returns = [t.value for t in walk(body) if isinstance(t, Return)]
        return bool(returns) and all(made(r) for r in returns)

    def reads(self, s: Let, state: State) -> list[tuple[str, Any]]:
        """The names whose values ``s`` reads: (name, the buffers that matter), where
        None means all; a list's own buffer only, when only its elements are taken."""
        out: list[tuple[str, Any]] = []
        for p in s.params.values():
            out += [(a.name, None) for a in atoms_in(p) if isinstance(a, Var)]
        names = self.arg_params(s)
        shape_only = self.effects.shape_only(s.prim)
        for i, (a, pname) in enumerate(zip(s.args, names)):
            if not isinstance(a, Var):
                continue
            own = state.own.get(a.name) if a.name in self.lists else None
            if self.effects.writes(s.prim):
                if i > 0 and s.prim in ("setitem", "add_at"):
                    out.append((a.name, None))  # the value written is copied in
            elif self.effects.views(s.prim) and s.prim != "call":
                if i == 0 and s.prim == "getitem" and own:
                    out.append((a.name, own))  # which element is the list's now
            elif pname in shape_only:
                if own:
                    out.append((a.name, own))  # a list's length
            else:
                out.append((a.name, None))
        return out

    def arg_params(self, s: Let) -> list[str]:
        """The parameter each of a statement's arguments is passed to."""
        keywords = s.params.get(KEYWORD_OPERANDS, ())
        names: list[str] = []
        for pname, p in self.effects.signature(s.prim).parameters.items():
            if p.kind is p.VAR_POSITIONAL:
                names += [pname] * (len(s.args) - len(names) - len(keywords))
                break
            if p.default is p.empty and pname not in s.params:
                names.append(pname)
        return names + list(keywords)

    def read(self, atom: Any, state: State, s: Any, only: Any = None) -> None:
        if not isinstance(atom, Var):
            return
        root = state.stale(atom.name, only)
        if root is None:
            return
        if atom.name in self.elements and self.fresh is not None:
            element = self.elements[atom.name]
            self.copied[id(element)] = element
            state.refs[atom.name] = {}  # (a copy, made where it was bound)
            return
        name = self.display(atom.name)
        epoch = state.epoch.get(root)
        maker = self.where.get(epoch)
        line = f" at line {maker.loc.line}" if maker is not None and maker.loc else ""
        if isinstance(epoch, tuple) and epoch[0] == "loop":
            what = (f"the loop{line} writes into `{self.display(root)}`, and `{name}` "
                    "shares its memory: from the second iteration on it would hold "
                    "the new values")
        elif (other := self._writer(maker)) not in (None, name) and self.display(
                root) == name:  # (`b = a; b.append(v)`: `a` is the object `b` changed)
            what = (f"`{name}` is the object `{other}` also names, changed in place "
                    f"through `{other}`{line}: Python's `{name}` would hold the change "
                    "here, s2s's would not")
            raise self.error(s, what, f"read `{other}` here (the changed object), or "
                             f"make `{other}` a copy where it is bound")
        elif self.display(root) == name:  # (the other name not known: the line's)
            what = (f"`{name}` was changed in place{line} through another name for the "
                    f"same object: Python's `{name}` would hold the change here, "
                    "s2s's would not")
            raise self.error(s, what, "read that other name here (the changed object), "
                             "or make it a copy where it is bound")
        else:
            what = (f"`{name}` shares memory with `{self.display(root)}`, written into"
                    f"{line} after `{name}` was bound: it would hold the new values "
                    "here")
        raise self.error(
            s, what, f"copy it where it is bound (`{name} = np.copy(...)`), or use it "
            f"before writing into `{self.display(root)}`",
        )

    def _writer(self, maker: Any) -> str | None:
        """The user's name a write in place went through (``b`` of ``b.append(v)``,
        as the line spells it: the IR's name for it may be the object's first)."""
        if isinstance(maker, Let) and maker.args and isinstance(maker.args[0], Var) and (
                maker.loc is not None):
            name = maker.args[0].name
            if re.search(rf"(?<![\w.]){re.escape(name)}\s*[.\[]", maker.loc.text or ""):
                return name
        return None

    def display(self, name: Any) -> str:
        if isinstance(name, tuple):  # ("old", root): an earlier array of root's
            name = name[1]
        return self.user_name(name)

    def error(self, s: Any, what: str, hint: str) -> TransformError:
        return mark_shared_write(UnsupportedSyntaxError(what, s.loc, hint, self.func))


def _joined(out: State, parts: list[tuple[State, dict[str, Any]]]) -> dict[str, Any]:
    """Refs where paths meet: up to date with a buffer only if so on every path."""
    refs: dict[str, Any] = {}
    for st, part in parts:
        for root, epoch in part.items():
            fresh = epoch == st.epoch.get(root) and refs.get(root) is not _STALE
            refs[root] = out.epoch.get(root) if fresh else _STALE
    return refs


def _constant_position(index: Any, n: int) -> int | None:
    """The position a constant integer index names in a sequence of length n."""
    if not (isinstance(index, Index) and len(index.items) == 1 and not index.is_tuple):
        return None
    item = index.items[0]
    if isinstance(item, Const) and type(item.value) is int and -n <= item.value < n:
        return item.value % n
    return None


def _merged(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Refs of a value made from two: the older contents where they differ."""
    out = dict(a)
    for root, epoch in b.items():
        if root in out and out[root] != epoch:
            out[root] = _STALE
        else:
            out[root] = epoch
    return out


# primitives whose value has their first operand's rank (a new version of a written
# array, a copy, an array like it)
_SAME_RANK = ("identity", "setitem", "add_at", "copy", "zeros_like", "ones_like",
              "empty_like", "full_like")
_CONFLICT = -1  # (a name bound with two ranks, or one unknown: no rank)


def known_ranks(body: list[Stmt], lists: set[str]) -> dict[str, int]:
    """The rank of each array whose every binding says it: made with a constant shape
    (``np.zeros(3)``, ``np.ones((2, 3))``), a new version, copy or element of one.
    ``y[0]`` of a 1-D ``y`` is a NumPy scalar (a copy), of a 2-D one a row (a view):
    the memory check tells them apart only where the rank is known here; a name also
    bound by a loop (its counter, its back edge) or a ``break`` takes those bindings'
    ranks too, and any unknown one leaves it unknown."""
    bindings: dict[str, list[Any]] = {}
    for s in walk(body):
        if isinstance(s, Let):
            bindings.setdefault(s.target, []).append(s)
        elif isinstance(s, For):
            bindings.setdefault(s.target, []).append(None)
            for entry, exit_ in s.carried:
                bindings.setdefault(entry, []).append(Var(exit_))
        elif isinstance(s, Break):
            for entry, name in s.copies:
                bindings.setdefault(entry, []).append(Var(name))
    ints = _int_names(bindings)
    ranks: dict[str, int] = {}
    changed = True
    while changed:
        changed = False
        for name, ways in bindings.items():
            if name in lists or ranks.get(name) == _CONFLICT:
                continue
            found = {_rank_of(w, ranks, ints) for w in ways} - {None}
            rank = found.pop() if len(found) == 1 and _CONFLICT not in found else (
                _CONFLICT if found else None)
            if rank is not None and ranks.get(name) != rank:
                ranks[name] = _CONFLICT if name in ranks else rank
                changed = True
    while True:  # (kept: a rank every binding gives, none left unknown)
        wrong = [name for name, r in ranks.items() if r != _CONFLICT and {
            _rank_of(w, ranks, ints) for w in bindings[name]} != {r}]
        if not wrong:
            return {name: r for name, r in ranks.items() if r != _CONFLICT}
        ranks.update(dict.fromkeys(wrong, _CONFLICT))


def _rank_of(way: Any, ranks: dict[str, int], ints: set[str]) -> int | None:
    """The rank one binding gives (None: not known yet, from a name not yet ranked;
    _CONFLICT: not known at all)."""
    if isinstance(way, Var):
        return ranks.get(way.name)
    if not isinstance(way, Let) or not way.args:
        return _CONFLICT
    first = way.args[0]
    if way.prim in ("zeros", "ones", "empty", "full") and isinstance(first, Const):
        shape = first.value
        if type(shape) is int:
            return 1
        if type(shape) is tuple and all(type(d) is int for d in shape):
            return len(shape)
        return _CONFLICT
    if not isinstance(first, Var):
        return _CONFLICT
    if way.prim in _SAME_RANK:
        return ranks.get(first.name)
    index = way.params.get("index")
    if way.prim != "getitem" or not isinstance(index, Index) or index.mask or (
            index.attribute) or not index.items or first.name not in ranks:
        return _CONFLICT if first.name in ranks or way.prim != "getitem" else None
    whole = all(isinstance(i, Const) and type(i.value) is int or isinstance(
        i, Var) and (i.name in index.ints or i.name in ints) for i in index.items)
    rank = ranks[first.name]
    if not whole or rank == _CONFLICT or len(index.items) > rank:
        return _CONFLICT
    return rank - len(index.items)


def _spelled_as_copies(body: list[Stmt], lets: dict[int, Let], fresh: Any) -> None:
    """Each of ``lets`` (``t = y[0]``, an element of an array of known rank) made the copy
    NumPy makes: ``y_0 = y[0]`` then ``t = np.copy(y_0)``, in place in ``body``."""
    for k in range(len(body) - 1, -1, -1):
        s = body[k]
        if isinstance(s, If):
            _spelled_as_copies(s.body, lets, fresh)
            _spelled_as_copies(s.orelse, lets, fresh)
        elif isinstance(s, For):
            _spelled_as_copies(s.body, lets, fresh)
        elif isinstance(s, Let) and id(s) in lets:
            item = fresh(f"{s.target}_item")
            body[k:k + 1] = [Let(item, "getitem", s.args, s.params, s.loc),
                             Let(s.target, "copy", (Var(item),), {}, s.loc)]


def _int_names(bindings: dict[str, list[Any]]) -> set[str]:
    """Names that hold Python ints: a loop's counter (``for i in range(n)``; loops over
    arrays count too) and, bound once, ``i + 1``-like arithmetic of them and int
    constants."""
    ints = {name for name, ways in bindings.items() if ways == [None]}
    changed = True
    while changed:
        changed = False
        for name, ways in bindings.items():
            s = ways[0]
            if name in ints or len(ways) != 1 or not isinstance(s, Let) or s.params or (
                    s.prim not in ("add", "subtract", "multiply", "floor_divide")):
                continue
            if all(isinstance(a, Const) and type(a.value) is int or isinstance(
                    a, Var) and a.name in ints for a in s.args):
                ints.add(name)
                changed = True
    return ints
