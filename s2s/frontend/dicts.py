"""Writes into a dict the function built: ``out = {}``, then ``out["w"] = v``.

A dict's keys are part of its structure (a pytree's), so s2s must know them when it
transforms the code.  A dict built in the function (a literal, ``dict(...)``, ``{}``)
has known keys; writing ``out[key] = v`` with a key known then (a string constant, a
name bound to one, a loop variable over constant strings: that loop is unrolled, see
``loops.py``) makes a new dict in IR, ``out_2 = {..., "w": v}``, and rebinds ``out``:
what Python's write leaves in ``out``.  The same object seen through another name
(``e = out``, ``ys.append(out)``, a tuple holding it) would see the write in Python
and not in IR, so a write there is refused; so is a write whose key is a run-time
value, and one that changes the dict's keys in a loop or on one branch of an ``if`` on
a run-time value (its structure would depend on values).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ..errors import mark_shared_write
from ..ir.nodes import Atom, Const, Index, Let, Var
from .comprehensions import substitute
from .held_dict_items import shared_holders
from .keyed_zips import tuple_walk
from .source import literal_value

_INSTEAD_KEY = (
    "write a constant key (`out[\"w\"] = v`), loop over constant keys (`for k in "
    "(\"a\", \"b\"):`), or collect the values in a list (`parts.append(v)`) and "
    "`np.stack` it"
)


class DictWrites:
    """The dicts one function built and writes into, with their keys."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer
        self.keys: dict[str, tuple] = {}  # a dict's SSA name -> its keys, in order
        # the dict names a write rebinds inside loops: (entry version, the write's node)
        self.in_loops: list[tuple[str, Any]] = []
        # a literal's SSA name -> how many loops enclose it; a dict a loop carries holds
        # the last iteration's values after the loop, not its literal's
        self.depth: dict[str, int] = {}
        self.carried: set[str] = set()  # (and the joins of an `if`)
        # dicts another name, a container or a call also refers to (an item read,
        # `d["w"]`, is not the dict): name -> where
        self.shared: dict[str, Any] = {}
        # the keys a loop over a dict's keys binds: a constant string per call
        self.per_call_keys: set[str] = set()
        self.grown: set[str] = set()  # (written by a per-call key in a loop: loop_keys.py)

    def known(self, ssa: str | None) -> tuple | None:
        """The keys of the dict ``ssa`` names, when the function built it."""
        if ssa is None:
            return None
        if ssa in self.keys:
            return self.keys[ssa]
        for entered, keys in getattr(self.n, "spread_keys", {}).values():
            if entered == ssa:  # (a dict parameter whose keys this call gives)
                return tuple(keys)
        let = self.n.lets.get(ssa)
        if isinstance(let, Let) and let.target == ssa and let.prim == "make_dict" and \
                "keys" in let.params:
            return tuple(let.params["keys"])
        return None

    def settled(self, ssa: str | None) -> tuple | None:
        """``known``, where a key's presence may be decided from it now: not inside a
        loop that writes the dict by a key known per call (loop_keys.py)."""
        return None if ssa in self.grown and self.n.loops else self.known(ssa)

    def is_dict(self, base: Any) -> bool:
        return isinstance(base, cst.Name) and base.value in self.n.local_names and \
            self.known(self.n.env.get(base.value)) is not None

    def built_per_call(self, base: Any) -> bool:
        """Is ``base`` a name of a dict the function built whose keys are known per
        call (``dict(p)``, ``{**p, "w": w}``, a comprehension over ``p.items()``)?"""
        if not (isinstance(base, cst.Name) and base.value in self.n.local_names):
            return False
        let = self.n.lets.get(self.n.env.get(base.value, ""))
        return isinstance(let, Let) and (let.prim in ("dict_merge", "dict_set") or (
            let.prim == "make_dict" and "from_items" in let.params))

    def merged(self, base: cst.Name, parts: list[Any], node: Any) -> None:
        """``base = {**base, <parts>}``: a write or an update of a dict whose keys are
        known per call (the dict itself unchanged for the names that refer to it:
        refused where another name, container or call does)."""
        name = base.value
        current = self.n.env[name]
        if current in self.shared:
            raise self.n.unsupported(
                node, f"this would change the dict `{name}` for another name, container "
                f"or call that also refers to it (line {self.n.loc(self.shared[current]).line})",
                f"make `{name}` a new dict: `{name} = {{**{name}, \"k\": v}}`")
        made = cst.Dict([cst.StarredDictElement(cst.Name(name)), *parts])
        self.n.desugar.alias_tree(made, node)
        ssa = self.n.names.fresh(name)
        self.n.exprs.expr(made, ssa)
        self.n.bound.add(name)
        self.n._bind(name, ssa)

    def keyed_by_loop(self, target: cst.Subscript, value: Any) -> bool:
        """``out[k] = v`` where ``k`` is the key of a loop over a dict's keys (``for k,
        v in p.items()``), into a dict the function built: a ``dict_set`` statement
        that the unrolling pass makes the dict literal of this call's keys (the loop
        is unrolled per call, ``k`` a constant string in each copy).  False for any
        other write."""
        base = target.value
        if not (isinstance(base, cst.Name) and base.value in self.n.local_names and (
                self.is_dict(base) or self.built_per_call(base))) or len(target.slice) != 1 \
                or not isinstance(target.slice[0].slice, cst.Index):
            return False
        key = self.n.exprs.expr(target.slice[0].slice.value)
        if not (isinstance(key, Var) and key.name in self.per_call_keys):
            return False
        name = base.value
        current = self.n.env[name]
        if current in self.shared:
            raise self.n.unsupported(
                target, f"writing into the dict `{name}` would change it for another "
                f"name, container or call that also refers to it (line "
                f"{self.n.loc(self.shared[current]).line})",
                f"write all of `{name}`'s keys before another name refers to it")
        atom = self.n.exprs.expr(value)
        ssa = self.n.names.fresh(name)
        self.n.emit(ssa, "dict_set", (Var(current), key, atom), {}, target)
        self.n.bound.add(name)
        self.n._bind(name, ssa)
        return True

    def write_per_call(self, target: cst.Subscript, value: Any) -> bool:
        """``d["k"] = v`` into a dict the function built whose keys are known per
        call: ``d = {**d, "k": v}`` (False for any other write)."""
        if self.keyed_by_loop(target, value):
            return True
        if not self.built_per_call(target.value):
            return False
        key = self.key(target)
        self.merged(target.value, [cst.DictElement(cst.SimpleString(repr(key)), value)],
                    target)
        return True

    def refuse_keyed_per_call(self, base: Any, target: Any) -> None:
        """A write into a dict whose keys s2s learns per call (a comprehension over an
        argument dict, ``dict(params)``): refused, saying what to write instead."""
        if not (isinstance(base, cst.Name) and base.value in self.n.local_names):
            return
        let = self.n.lets.get(self.n.env.get(base.value, ""))
        if isinstance(let, Let) and let.prim == "make_dict" and "from_items" in let.params:
            raise self.n.unsupported(
                target, f"the keys of `{base.value}` (made from a dict argument, or a "
                "comprehension over one) are known only when the function is called; s2s "
                "writes into dicts whose keys it knows when it transforms the code",
                f"build `{base.value}` as a literal of the keys you need "
                f"(`{base.value} = {{\"w\": params[\"w\"], ...}}`), then write into it")

    def write(self, target: cst.Subscript, value: Any) -> None:
        """``out[key] = value`` (``out[key] += v`` comes here as ``out[key] + v``)."""
        base = target.value
        name = base.value
        current = self.n.env[name]
        keys = self.known(current)
        key = self.key(target)
        if current in self.shared:
            where = self.n.loc(self.shared[current]).line
            raise self.n.unsupported(
                target, f"writing into the dict `{name}` would change it for another "
                f"name, container or call that also refers to it (line {where}); s2s "
                "gives every write a new dict", f"write all of `{name}`'s keys before another "
                "name, container or call refers to it",
            )
        value_atom = self.n.exprs.expr(value)
        new_keys = keys if key in keys else keys + (key,)
        values = tuple(value_atom if k == key else self.item(current, keys, k, target)
                       for k in new_keys)
        ssa = self.n.names.fresh(name)
        self.n.emit(ssa, "make_dict", values, {"keys": new_keys}, target)
        self.keys[ssa] = new_keys
        self.n.bound.add(name)
        self.n._bind(name, ssa)
        if self.n.loops:
            self.in_loops.append((current, target))

    def refuse_shared_item(self, node: cst.AugAssign) -> list[str] | None:
        """``d["k"] += v`` on a dict literal's array item: NumPy adds in place, into an
        array another name may also hold (the name it was built from, ``a =
        d["k"]`` read before, a view of an argument); s2s gives the dict a new item,
        so refuse where those differ."""
        target = node.target
        if not (isinstance(target, cst.Subscript) and self.is_dict(target.value)):
            return
        current = self.n.env[target.value.value]
        let, key = self.n.lets.get(current), self.key(target)
        keys = tuple(let.params.get("keys", ())) if isinstance(let, Let) and \
            let.prim == "make_dict" and let.target == current else ()
        item = let.args[keys.index(key)] if key in keys else None
        if not isinstance(item, Var) or self.n.buffer.immutable(item.name):
            return
        read = any(r.prim == "getitem" and r.args[:1] == (Var(current),) and [
            getattr(i, "value", None) for i in getattr(r.params.get("index"), "items", ())
        ] == [key] for r in self.n.lets.values())
        if read or item.name in self.n.env.values() or self.n.buffer.may_share(item.name):
            if (held := shared_holders(self.n, current, key, item)) is not None:
                return held  # (names rebound after the write: held_dict_items.py)
            op = node.operator._get_token()
            text = cst.Module([]).code_for_node(target)
            raise mark_shared_write(self.n.unsupported(
                node, f"`{text} {op} ...` would change in place an array that another "
                "name, view or container also refers to, so NumPy would change that too; "
                "s2s gives the dict a new item", f"write `{text} = {text} {op[:-1]} ...` "
                "(a new array)"))

    def pop(self, call: cst.Call, target: str | None) -> Atom:
        """``v = d.pop("k", default)`` on a dict of known keys: ``d["k"]`` (or the
        default, where ``d`` has no ``"k"``), then ``d`` rebound to a new dict without
        the key, as a write is (the same checks: a dict another name refers to, keys
        changed in a loop or on one path of an `if`)."""
        args, name = call.args, call.func.value.value
        if not 1 <= len(args) <= 2 or any(a.star or a.keyword for a in args):
            raise self.n.unsupported(call, "a dict's `.pop()` takes a key and an optional "
                                     "default", 'write d.pop("k") or d.pop("k", default)')
        current = self.n.env[name]
        keys = self.known(current)
        read = cst.Subscript(call.func.value, [cst.SubscriptElement(cst.Index(
            args[0].value))])  # (`d["k"]`, as a write's target: at the call's position)
        self.n.desugar.alias(read, call)
        key = self.key(read)
        if current in self.shared:
            raise self.n.unsupported(
                call, f"`.pop()` would change the dict `{name}` for another name, container "
                f"or call that also refers to it (line {self.n.loc(self.shared[current]).line})",
                f"read `{name}[{key!r}]` and build a dict of the other keys")
        if key not in keys and len(args) == 1:
            raise self.n.unsupported(
                call, f"`{name}` has no key {key!r} here (its keys: {list(keys)}): Python's "
                "`.pop()` raises KeyError", f'give a default: {name}.pop({key!r}, None)')
        value = self.item(current, keys, key, call) if key in keys else \
            self.n.exprs.expr(args[1].value)
        rest = tuple(k for k in keys if k != key)
        ssa = self.n.names.fresh(name)
        self.n.emit(ssa, "make_dict", tuple(self.item(current, keys, k, call) for k in rest),
                    {"keys": rest}, call)
        self.keys[ssa] = rest
        self.n._bind(name, ssa)
        if self.n.loops:
            self.in_loops.append((current, read))
        if target is not None and not (isinstance(value, Var) and value.name == target):
            return self.n.emit(target, "identity", (value,), {}, call)
        return value

    def key(self, target: cst.Subscript) -> str:
        """The write's key: a string known when s2s transforms the function."""
        if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
            raise self.n.unsupported(
                target, "a dict is written with one key", _INSTEAD_KEY)
        node = target.slice[0].slice.value
        atom = self.n.exprs.expr(node)
        let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
        if isinstance(let, Let) and let.prim == "identity" and let.args and \
                isinstance(let.args[0], Const):  # `k = "w"` (a loop over keys unrolled)
            atom = let.args[0]
        if isinstance(atom, Const) and isinstance(atom.value, str):
            return atom.value
        if isinstance(atom, Var) and type(getattr(self.n, "bound_strings", {}).get(
                atom.name)) is str:
            return self.n.bound_strings[atom.name]  # (a parameter: this call's string)
        err = self.n.unsupported(
            node, f"the key `{cst.Module([]).code_for_node(node)}` is known only when the "
            "function runs, so the dict's keys (its structure) would depend on run-time "
            "values", _INSTEAD_KEY,
        )
        err.per_call = True  # (a string argument: made per call's string, callables.py)
        raise err

    def item(self, current: str, keys: tuple, key: str, node: Any) -> Atom:
        """The value ``current`` holds under ``key``: the literal's own atom where it
        was built in the same loop body (a loop carrying it reads ``current[key]``)."""
        let = self.n.lets.get(current)
        if isinstance(let, Let) and let.target == current and let.prim == "make_dict" \
                and tuple(let.params.get("keys", ())) == keys and current not in \
                self.carried and self.depth.get(current) == len(self.n.loops):
            return let.args[keys.index(key)]
        return self.n.emit(self.n.names.fresh(key if key.isidentifier() else "item"),
                           "getitem", (Var(current),),
                           {"index": Index((Const(key, repr(key)),), False)}, node)

    # ---- joins ------------------------------------------------------------------------

    def join(self, join: str, a: str, b: str, node: Any, name: str) -> None:
        """After an ``if``: the join of two dicts is one with their keys, which must be
        the same on both paths."""
        ka, kb = self.known(a), self.known(b)
        if ka is None and kb is None:
            return
        if (ka is None and self._per_call(a)) or (kb is None and self._per_call(b)):
            return  # (compared per call: transforms/analysis.py, `_refuse_join`)
        if ka is None or kb is None or set(ka) != set(kb):
            raise self.n.unsupported(
                node, f"the dict `{name}` has other keys after this `if` on one path "
                f"({self.described(a, ka)}) than on the other ({self.described(b, kb)}), "
                "so its structure would depend on the test's run-time value",
                f"give `{name}` every key before the `if` (`{name}[\"w\"] = 0.0`), then "
                "assign it on each path" + ("" if ka is not None and kb is not None else
                                            ", as a dict literal of the keys you need"),
            )
        self.keys[join] = ka
        self.carried.add(join)  # (its values are the path's: read them as join[key])

    def described(self, ssa: str, keys: tuple | None) -> str:
        """The keys a path's dict has, in words (those of an argument's are known per
        call only; none: an empty dict's)."""
        if keys is not None:
            return ", ".join(map(repr, keys)) if keys else "no keys"
        return "a value whose keys s2s does not know when it transforms the function"

    def _per_call(self, ssa: str) -> bool:
        """Is ``ssa`` a dict whose keys are known per call: an argument, a dict made
        from one (``dict(p)``, ``{**p, "w": w}``, a comprehension)?"""
        let = self.n.lets.get(ssa)
        while isinstance(let, Let) and let.prim == "identity" and isinstance(
                let.args[0], Var):
            ssa, let = let.args[0].name, self.n.lets.get(let.args[0].name)
        if let is None:
            return ssa in self.n.draws.params  # (the function's parameters)
        return let.prim in ("dict_merge", "dict_set") or let.prim == "make_dict" and \
            "from_items" in let.params

    def leave_loop(self, carried: list[tuple[str, str]]) -> None:
        """A loop carrying a dict it writes into must keep its keys."""
        for entry, exit_ in carried:
            if self.known(entry) is not None:
                self.carried.add(entry)
            ka, kb = self.known(entry), self.known(exit_)
            if ka is not None and kb is None and self._per_call(exit_):
                self.keys[entry] = None  # (`out[k] = v` for a per-call k: its keys after
                continue  # the loop are the call's, not those it started with)
            node = next((n for e, n in self.in_loops if e == entry), None)
            if node is None:
                continue
            if ka is not None and kb is not None and tuple(ka) != tuple(kb):
                name = node.value.value
                raise self.n.unsupported(
                    node, f"this write changes the keys of the dict `{name}` from one "
                    "iteration of the loop to the next, so its structure would depend on "
                    "how many times the loop runs", f"give `{name}` its keys before the "
                    f"loop (`{name}[\"w\"] = 0.0`), or loop over constant keys "
                    "(`for k in (\"a\", \"b\"):`), which s2s unrolls",
                )
            if exit_ in self.shared:
                name = node.value.value
                raise self.n.unsupported(
                    node, f"from the loop's second iteration on, this write would change "
                    f"the dict `{name}` for another name or container that refers to it "
                    f"(line {self.n.loc(self.shared[exit_]).line})",
                    f"build `{name}` fully before the loop, or collect values in a list",
                )

    # ---- loops over constant keys -------------------------------------------------------

    def unroll(self, node: cst.For) -> bool:
        """``for k in ("a", "b"): out[k] = ...`` writing a dict the function built,
        keyed by the loop variable, over strings known now: unrolled, one copy of the
        body per key with the key in place of ``k`` (each write's key is then known).
        False (nothing emitted) for any other loop."""
        copies = self.unrolled(node)
        if copies is None:
            return False
        outer, lowered = self.n.out, []
        for body in copies:
            lowered += self.n.stmts.block(body)
        self.n.out = outer
        outer += lowered
        return True

    def unrolled(self, node: cst.For) -> list[list[Any]] | None:
        """The copies of the body ``unroll`` lowers, or None where it does not apply."""
        target = node.target
        if node.orelse is not None or node.asynchronous is not None or _jumps(node.body):
            return None
        if isinstance(target, cst.Name):
            items = self.n.comps.static.static_items(node.iter)
            if items is None or not all(isinstance(v, str) for _, v in items):
                return None
            tables, checks = [{target.value: spelling} for spelling, _ in items], []
        else:  # (`for k, v in zip("abab", x)`, `for i, k in enumerate("ab")`)
            walk = tuple_walk(self.n, node)
            if walk is None:
                return None
            tables, checks = walk
        static = self.n.comps.static
        keys = [name for name in (tables[0] if tables else ()) if all(
            isinstance(static.static_value(t[name]), str) for t in tables)]
        if not tables or set(tables[0]) & assigned_names(node.body) or not any(
                self._keyed_by(node.body, name) for name in keys):
            return None
        alias = self.n.desugar.alias
        copies = [[substitute(s, table, alias) for s in node.body.body] for table in tables]
        # after the loop its names hold the last item, as in Python
        last = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                                    value)]) for name, value in tables[-1].items()]
        for line in last:
            for new in (line, line.body[0], line.body[0].targets[0].target):
                alias(new, node.target)
        return ([checks] if checks else []) + copies + [last]

    def _keyed_by(self, body: Any, name: str) -> bool:
        """Does ``body`` write ``d[name] = ...`` into a dict the function built?"""
        found = []
        dicts = self

        class Finder(cst.CSTVisitor):
            def visit_AssignTarget(self, t: cst.AssignTarget) -> None:
                self.check(t.target)

            def visit_AugAssign(self, a: cst.AugAssign) -> None:
                self.check(a.target)

            def check(self, t: Any) -> None:
                if isinstance(t, cst.Subscript) and dicts.is_dict(t.value) and \
                        len(t.slice) == 1 and isinstance(t.slice[0].slice, cst.Index) and \
                        isinstance(t.slice[0].slice.value, cst.Name) and \
                        t.slice[0].slice.value.value == name:
                    found.append(t)

            def visit_FunctionDef(self, f: cst.FunctionDef) -> bool:
                return False

        body.visit(Finder())
        return bool(found)


def assigned_names(body: Any) -> set[str]:
    """The names a statement block binds (assignments, loops, ``with``... targets)."""
    found: set[str] = set()

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            found.update(x.value for x in _names_in(n.target))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            found.update(x.value for x in _names_in(n.target))

        def visit_For(self, n: cst.For) -> None:
            found.update(x.value for x in _names_in(n.target))

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            found.update(x.value for x in _names_in(n.target))

    body.visit(Finder())
    return found


def _names_in(target: Any) -> list[cst.Name]:
    if isinstance(target, cst.Name):
        return [target]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [x for e in target.elements for x in _names_in(e.value)]
    if isinstance(target, cst.StarredElement):
        return _names_in(target.value)
    return []


def _jumps(body: Any) -> bool:
    """A ``break``, ``continue`` or ``return`` of the loop itself (not a nested one's)."""
    found = []

    class Finder(cst.CSTVisitor):
        def visit_Break(self, n: cst.Break) -> None:
            found.append(n)

        def visit_Continue(self, n: cst.Continue) -> None:
            found.append(n)

        def visit_Return(self, n: cst.Return) -> None:
            found.append(n)

        def visit_For(self, n: cst.For) -> bool:
            return False

        def visit_While(self, n: cst.While) -> bool:
            return False

        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return False

    body.visit(Finder())
    return bool(found)


class _Items(cst.CSTTransformer):
    """``d["k"]`` -> a local name per key, for the dicts in ``names`` (``d`` -> its keys
    and the local names); ``ok`` turns False where a dict is used otherwise."""

    def __init__(self, names: dict[str, tuple], fresh: Any, alias: Any) -> None:
        super().__init__()
        self.names = names
        self.fresh = fresh
        self.alias = alias
        self.locals: dict[tuple[str, str], str] = {}  # (dict, key) -> its local name
        self.written: set[tuple[str, str]] = set()
        self.ok = True
        self._in_target = 0

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._note_write(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._note_write(node.target)

    def _note_write(self, target: Any) -> None:
        key = self._key(target)
        if key is not None:
            self.written.add(key)

    def _key(self, node: Any) -> tuple[str, str] | None:
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and \
                node.value.value in self.names and len(node.slice) == 1 and \
                isinstance(node.slice[0].slice, cst.Index) and \
                isinstance(node.slice[0].slice.value, cst.SimpleString):
            key = literal_value(node.slice[0].slice.value.value)  # (ast, thread-safe)
            if isinstance(key, str) and key in self.names[node.value.value]:
                return node.value.value, key
        return None

    def visit_Subscript(self, node: cst.Subscript) -> bool:
        return self._key(node) is None  # (the dict's name in `d["k"]` is the item's)

    def leave_Subscript(self, original: cst.Subscript, updated: Any) -> Any:
        key = self._key(original)
        if key is None:
            return updated
        if key not in self.locals:
            self.locals[key] = self.fresh(f"{key[0]}_{key[1]}" if key[1].isidentifier()
                                          else key[0] + "_item")
        new = cst.Name(self.locals[key])
        self.alias(new, original)
        return new

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        if original.value in self.names:
            self.ok = False  # the dict itself (not one of its items) is used here
        return updated

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.alias(out, original)  # (a rebuilt statement keeps the user's line)
        return out


def split_items(dicts: DictWrites, node: Any) -> list[Any] | None:
    """An ``if`` or loop that writes items of a dict the function built, with constant
    string keys, and uses the dict only through such items: the items become local
    names for the statement (``out_acc = out["acc"]`` before it, and ``out = {...,
    "acc": out_acc}`` after), so branches and loops carry arrays, not a container.  A
    key the dict lacks is allowed in an ``if`` that assigns it on every path (in the
    same order).  The statements to lower instead of ``node``, or None."""
    n = dicts.n
    names = {name: dicts.known(ssa) for name, ssa in n.env.items()
             if name in n.local_names and ssa not in dicts.shared}
    names = {name: keys for name, keys in names.items() if keys is not None}
    if not names:
        return None
    added = _added_on_every_path(node, names) if isinstance(node, cst.If) else {}
    if added is None:
        return None
    widened = {name: keys + tuple(added.get(name, ())) for name, keys in names.items()}
    node = _unroll_inner(dicts, node)  # (`for k in ("a", "b"): out[k] = ...` inside)
    items = _Items(widened, n.names.fresh, n.desugar.alias)
    new = node.visit(items)
    written = {name for name, _ in items.written}
    if not items.ok or not written:
        return None
    alias = n.desugar.alias
    before, after = [], []
    for (name, key), local in items.locals.items():
        n.local_names.add(local)
        if key in names[name]:
            before.append(cst.Assign([cst.AssignTarget(cst.Name(local))], _item(name, key)))
    for name in sorted(written):
        elements = []
        for key in widened[name]:
            local = items.locals.get((name, key))
            value = cst.Name(local) if local is not None else _item(name, key)
            elements.append(cst.DictElement(cst.SimpleString(repr(key)), value))
        after.append(cst.Assign([cst.AssignTarget(cst.Name(name))], cst.Dict(elements)))
    out = []
    for small in before + after:
        line = cst.SimpleStatementLine([small])
        for piece in (line, small, *_all_nodes(small)):
            alias(piece, node)
        out.append(line)
    alias(new, node)
    return out[:len(before)] + [new] + out[len(before):]


def _unroll_inner(dicts: DictWrites, node: Any) -> Any:
    """``node`` with the loops over constant keys inside it unrolled (as ``unroll``
    lowers them), so that their writes have known keys to split."""
    alias = dicts.n.desugar.alias

    class Unroll(cst.CSTTransformer):
        def leave_For(self, original: cst.For, updated: cst.For) -> Any:
            if original is node:
                return updated
            copies = dicts.unrolled(updated)
            if copies is None:
                return updated
            return cst.FlattenSentinel([s for body in copies for s in body])

        def on_leave(self, original: Any, updated: Any) -> Any:
            out = super().on_leave(original, updated)
            if out is not original and isinstance(out, cst.CSTNode):
                alias(out, original)
            return out

    new = node.visit(Unroll())
    if new is not node:
        alias(new, node)
    return new


def _item(name: str, key: str) -> cst.Subscript:
    return cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(
        cst.SimpleString(repr(key))))])


def _added_on_every_path(node: cst.If, names: dict[str, tuple]) -> dict | None:
    """The keys each path of an ``if``/``elif``/``else`` chain assigns at its top level
    that the dict lacks: the same, in the same order, on every path (else None)."""
    paths = []
    branch: Any = node
    while isinstance(branch, cst.If):
        paths.append(branch.body.body)
        branch = branch.orelse
    paths.append(branch.body.body if branch is not None else [])
    found = []
    for stmts in paths:
        keys: dict[str, list[str]] = {}
        for stmt in stmts:
            for small in getattr(stmt, "body", []) if isinstance(
                    stmt, cst.SimpleStatementLine) else []:
                if not isinstance(small, cst.Assign):
                    continue
                for t in small.targets:
                    t = t.target
                    if isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and \
                            t.value.value in names and len(t.slice) == 1 and \
                            isinstance(t.slice[0].slice, cst.Index) and \
                            isinstance(t.slice[0].slice.value, cst.SimpleString):
                        key = literal_value(t.slice[0].slice.value.value)
                        new = keys.setdefault(t.value.value, [])
                        if key not in names[t.value.value] and key not in new:
                            new.append(key)
        found.append({k: v for k, v in keys.items() if v})
    return found[0] if all(f == found[0] for f in found) else None


def _all_nodes(tree: Any) -> list[Any]:
    found: list[Any] = []

    class Walk(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            found.append(n)
            return True

    tree.visit(Walk())
    return found
