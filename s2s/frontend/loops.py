"""Loop lowering: ``for`` over ranges, arrays, ``enumerate`` and ``zip``, and ``while``.

A loop body is lowered once; the names it rebinds are carried from one iteration to
the next (``For.carried``), and each ``break`` records the values it leaves with.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

import libcst as cst

from ..errors import UnboundFunctionError, UnpackError, mark_shared_write
from ..ir.names import bound_names, read_names, rename, stem
from ..ir.nodes import Atom, Break, Const, For, Index, Let, Slice, Stmt, Var
from . import loop_keys
from .carried_records import rebuild_after, split_carried
from .desugar import leaves_somewhere, reject_inside_loop
from .dict_item_loops import unroll_dict_items
from .dicts import assigned_names
from .expressions import table_read
from .fncontainers import containers
from .fnlists import unroll_appending
from .generator_reads import rest
from .module_dicts import unroll_module_dict
from .named_attrs import unroll_named_records
from .objects import iterated_object
from .resolve import live_defaults
from .static import undo_watches
from .static_loops import unroll_static
from .windows import as_islice, as_zip, sliding_window


def _mentions(key: Any, names: set[str]) -> bool:
    """Does a test's key (a name, or a comparison of names) involve one of ``names``?"""
    if isinstance(key, str):
        return key in names
    return any(_mentions(k, names) for k in key if isinstance(k, (str, tuple)))


class LoopLowerer:
    """Lowers the loops of one function into its Normalizer's output."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer: output, scope, buffers, expressions

    def for_statement(self, node: cst.For) -> None:
        """``for`` over ``range(...)``, an array, ``enumerate(x)`` or ``zip(x, y)``.

        Iterating an array (or zipping several) is indexing it: ``for row in x`` is
        ``for k in range(len(x)): row = x[k]``, which is what reverse mode needs.
        """
        reject_inside_loop(node.body, self.n.unsupported)
        if _lowered_elsewhere(self.n, node):
            return
        loc_node = node.iter
        args, target_node, prefix, enum_start, backwards = self.iteration(node)
        bounds = self.n.emit(self.n.names.fresh("steps"), "range", tuple(args), {}, loc_node)
        if backwards:
            bounds = self.n.emit(self.n.names.fresh("steps_reversed"), "reversed", (bounds,), {},
                               loc_node)
        if target_node is not None and not isinstance(target_node, cst.Name):
            raise self.n.unsupported(target_node, "the loop variable must be a name",
                                   "write `for i in range(n):`")
        self.n.funcs.loops.prepare(node, _trips(args))  # (frontend/loop_functions.py)
        prebound = prebind(self.n, node)
        index_name = target_node.value if target_node is not None else "k"
        index = self.n.names.fresh(index_name) if (
            index_name in self.n.bound or target_node is None) else index_name
        reads_before = read_names(s for block in self.n._open for s in block)
        outer, before, bound_before = self.enter_loop(node)
        if target_node is not None:
            self.n._bind(index_name, index)
            self.n.bound.add(index_name)
        self.bind_items(index, enum_start, prefix)
        header = self.n.out
        body = header + self.n.stmts.block(self.n.desugar.loop_body(node))
        carried, breaks = self.leave_loop(outer, before, bound_before, [])
        self.n.funcs.loops.leave(self.n.funcs.values, node, _trips(args))
        carried = self.own_entries(carried, body, reads_before, node)
        carried, after = split_carried(self.n, carried, body, node)
        counter = self.n.names.fresh("n_iter") if breaks else None
        self.n.out.append(For(index, bounds, body, self.n.loc(node), carried, counter=counter))
        rebuild_after(self.n, after, node)
        self.versions_after_loop(carried, body, node)
        if not _trips(args):  # (a loop that surely runs binds them)
            check_ran(self.n, prebound, node)

    def iteration(self, node: cst.For) -> tuple:
        """What the loop walks: the range's arguments, the index's target node (None:
        a fresh index), ``(target node, sequence)`` per item to index, enumerate's
        ``(i's node, start)``, and whether it walks backwards."""
        iterable = _view_of_copy(self.n, node.iter)
        self.tables = False  # (set by _shortest)
        func = iterable.func if isinstance(iterable, cst.Call) else None
        resolved = _builtin(self.n, func)
        _check_widths(self.n, node.target, iterable, resolved)  # (Python's ValueError)
        prefix: list[tuple[Any, Any]] = []  # (target node, (sequence atom)) per iteration
        enum_start: tuple[Any, Atom] | None = None  # enumerate(x, start): (i's node, start)
        backwards = resolved is builtins.reversed
        if backwards:  # reversed(range(...)), reversed(x): walked from the end
            inner = iterable.args[0].value if len(iterable.args) == 1 else None
            inner_func = inner.func if isinstance(inner, cst.Call) else None
            resolved = _builtin(self.n, inner_func)  # (None: a sequence, indexed)
            if inner is None or iterable.args[0].keyword is not None or resolved in (
                builtins.enumerate, builtins.zip, builtins.reversed,
            ):
                raise self.n.unsupported(
                    iterable, "reversed() is supported over range(...) or one array",
                    "write `for i in reversed(range(len(x))):` and index x[i]",
                )
            iterable = inner
        if resolved is builtins.range:
            args, kwargs = self.n.calls.call_args(iterable)
            if kwargs or not 1 <= len(args) <= 3:
                raise self.n.unsupported(iterable, "range() takes 1 to 3 positional "
                                       "arguments", "write range(stop) or range(start, stop, step)")
            target_node = node.target
        elif resolved is builtins.enumerate:
            args, target_node, enum_start = self.enumerate_iteration(node, iterable, prefix)
        elif resolved is builtins.zip:
            _plain_zip(self.n, iterable)
            seqs = [self.n.exprs.expr(a.value) for a in iterable.args]
            if not isinstance(node.target, cst.Tuple) or len(node.target.elements) != len(seqs):
                raise self.n.unsupported(node.target, "unpack zip() into one name per "
                                       "sequence", "write `for a, b in zip(x, y):`")
            args, target_node = [_shortest(self, seqs, iterable)], None
            prefix += [(e.value, q) for e, q in zip(node.target.elements, seqs)]
        elif self.dict_iteration(node.target, iterable, resolved, prefix):
            args, target_node = [self.length(prefix[-1][1], iterable)], None
        else:
            seq = self.n.exprs.expr(iterable)
            args = [self.length(seq, iterable)]
            target_node = None
            prefix.append((node.target, seq))
        return args, target_node, prefix, enum_start, backwards

    def dict_iteration(self, target: Any, iterable: Any, resolved: Any,
                       prefix: list) -> bool:
        """``for k, p in d.items()``, ``d.keys()``, ``d.values()``, ``sorted(d)``,
        ``sorted(d.items())``: a loop over the dict's keys (its length, and so its keys,
        is known per call, as a pytree's are), binding each key with ``k = d[i]`` on the
        ``for`` line (unrolled per call into the key's string) and the value with
        ``p = d[k]``.  (Arrays have no ``.items()``: the receiver is a dict.)"""
        order = None
        if resolved is builtins.sorted:
            if len(iterable.args) != 1 or iterable.args[0].keyword or iterable.args[0].star:
                return False
            order, iterable = "sorted", iterable.args[0].value
        method = iterable.func.attr.value if isinstance(iterable, cst.Call) and isinstance(
            iterable.func, cst.Attribute) and not iterable.args else None
        if method not in ("items", "keys", "values") and order is None:
            return False
        if method == "values" and order is not None:
            raise self.n.unsupported(iterable, "sorted() over a dict's values would sort "
                                     "arrays in Python", "write `for k in sorted(d):` "
                                     "and read d[k]")
        receiver = iterable.func.value if method is not None else iterable
        seq = self.n.exprs.expr(receiver)
        key_node: Any = target
        value_node = None
        if method == "items":
            if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != 2:
                raise self.n.unsupported(target, "unpack a dict's items into two names",
                                         "write `for k, v in d.items():`")
            key_node, value_node = (e.value for e in target.elements)
        elif method == "values":
            key_node, value_node = None, target
        prefix.append(((key_node, value_node, order), seq))
        return True

    def enumerate_iteration(self, node: cst.For, iterable: Any, prefix: list) -> tuple:
        """``enumerate(x)`` / ``enumerate(zip(x, y))`` (and a start): the range's
        arguments, the index's target node and the ``(i's node, start)`` to add."""
        eargs = list(iterable.args)
        start_arg = eargs[1] if len(eargs) == 2 and not eargs[1].star and (
            eargs[1].keyword is None or eargs[1].keyword.value == "start") else None
        if not (len(eargs) == 1 or start_arg is not None) or eargs[0].keyword or \
                eargs[0].star or not (isinstance(node.target, (cst.Tuple, cst.List))
                                      and len(node.target.elements) == 2):
            raise self.n.unsupported(iterable, "enumerate over one sequence (and a "
                                   "start), unpacked into two names, is supported",
                                   "write `for i, item in enumerate(x):`")
        inner = _view_of_copy(self.n, eargs[0].value)
        inner_func = inner.func if isinstance(inner, cst.Call) else None
        item_target = node.target.elements[1].value
        if _builtin(self.n, inner_func) is builtins.zip:
            # enumerate(zip(x, y)) unpacked as i, (a, b)
            _plain_zip(self.n, inner)
            seqs = [self.n.exprs.expr(a.value) for a in inner.args]
            if not isinstance(item_target, (cst.Tuple, cst.List)) or len(
                    item_target.elements) != len(seqs) or any(
                    isinstance(e, cst.StarredElement) for e in item_target.elements):
                raise self.n.unsupported(item_target, "unpack enumerate(zip(...))'s "
                                       "items into one name per sequence",
                                       "write `for i, (a, b) in enumerate(zip(x, y)):`")
            args = [_shortest(self, seqs, iterable)]
            prefix += [(e.value, q) for e, q in zip(item_target.elements, seqs)]
        elif self.dict_iteration(item_target, inner, _builtin(self.n, inner_func), prefix):
            args = [self.length(prefix[-1][1], iterable)]  # enumerate(d.items()) ...
        else:
            seq = self.n.exprs.expr(inner)
            args = [self.length(seq, iterable)]
            prefix.append((item_target, seq))
        target_node = node.target.elements[0].value
        if start_arg is not None:
            start = self.n.exprs.expr(start_arg.value)
            return args, None, (target_node, start)
        return args, target_node, None

    def bind_items(self, index: str, enum_start: Any, prefix: list) -> None:
        """Bind enumerate's counter (``i = k + start``) and each item (``row = x[k]``)."""
        if enum_start is not None:  # i = k + start
            counter_node, start = enum_start
            if not isinstance(counter_node, cst.Name):
                raise self.n.unsupported(counter_node, "the loop variable must be a name",
                                       "write `for i, v in enumerate(x, 1):`")
            name = counter_node.value
            ssa = self.n.names.fresh(name) if name in self.n.bound else name
            self.n.emit(ssa, "add", (Var(index), start), {}, counter_node)
            if isinstance(start, Const) or start.name in self.n.shapes:
                self.n.shapes.add(ssa)
            self.n.bound.add(name)
            self.n._bind(name, ssa)
        for target, seq in prefix:
            if isinstance(target, tuple):  # a dict's keys (and values): its key first
                self.bind_dict_item(index, seq, *target)
                continue
            if isinstance(target, (cst.Tuple, cst.List)):  # for i, (a, b) in ...
                item = _item(self.n, self.tables, self.n.names.fresh(f"{stem(self.n.named(seq))}_item"),
                                 seq, index, target)
                self.n.stmts.bind_unpacked(target, item, target)
                continue
            if not isinstance(target, cst.Name):
                raise self.n.unsupported(target, "loop targets must be names",
                                       "unpack inside the loop body")
            name = target.value
            ssa = self.n.names.fresh(name) if name in self.n.bound else name
            _item(self.n, self.tables, ssa, seq, index, target)
            if isinstance(seq, Var) and seq.name in self.n.draws.params:
                self.n.dicts.per_call_keys.add(ssa)  # (`for k in p`: a key, if p is a dict)
            self.n.bound.add(name)
            self.n._bind(name, ssa)

    def bind_dict_item(self, index: str, seq: Atom, key_node: Any, value_node: Any,
                       order: str | None) -> None:
        """``k = d[i]`` (the i-th key; ``sorted``: of the sorted keys), then ``v = d[k]``."""
        for t in (key_node, value_node):
            if t is not None and not isinstance(t, cst.Name):
                raise self.n.unsupported(t, "loop targets must be names",
                                         "unpack inside the loop body")
        params: dict[str, Any] = {"index": Index((Var(index),), False)}
        if order is not None:
            params["order"] = order
        where = key_node if key_node is not None else value_node
        if key_node is None:
            key = self.n.names.fresh("key")
        else:
            name = key_node.value
            key = self.n.names.fresh(name) if name in self.n.bound else name
        self.n.emit(key, "getitem", (seq,), params, where)
        self.n.dicts.per_call_keys.add(key)  # (a constant per call: `out[k] = v` writes)
        if key_node is not None:
            self.n.bound.add(key_node.value)
            self.n._bind(key_node.value, key)
        if value_node is None:
            return
        name = value_node.value
        ssa = self.n.names.fresh(name) if name in self.n.bound else name
        self.n.emit(ssa, "getitem", (seq,), {"index": Index((Var(key),), False)}, value_node)
        self.n.bound.add(name)
        self.n._bind(name, ssa)

    def is_range_call(self, call: cst.Call) -> bool:
        return _builtin(self.n, call.func) is builtins.range

    def while_statement(self, node: cst.While) -> None:
        """``while test:``: the body computes the test again for the next iteration."""
        reject_inside_loop(node.body, self.n.unsupported)
        # (what the first test reads has no derivative to take: it is not counted)
        reads_before = read_names(s for block in self.n._open for s in block)
        test = self.n.exprs.expr(node.test)
        if isinstance(test, Const) and test.value is True and leaves_somewhere(
                node.body, cst.Break):
            # `while True:` left by `break`: the test is a name that stays True
            test = self.n.emit(self.n.names.fresh("forever"), "identity", (test,), {},
                             node.test)
        if not isinstance(test, Var):
            raise self.n.unsupported(
                node.test, "a `while` whose condition is a constant never ends or "
                "never runs", "loop over a range, or compute the condition",
            )
        counter = self.n.names.fresh("n_iter")
        self.n.funcs.loops.prepare(node, None)  # (frontend/loop_functions.py)
        prebound = prebind(self.n, node)
        outer, before, bound_before = self.enter_loop(node)
        body = self.n.stmts.block(self.n.desugar.loop_body(node))
        self.n.out = []
        again = self.n.exprs.expr(node.test)  # the condition, from this iteration's values
        body += self.n.out
        test_carried = [(test.name, again.name if isinstance(again, Var) else test.name)]
        carried, _ = self.leave_loop(outer, before, bound_before, test_carried)
        self.n.funcs.loops.leave(self.n.funcs.values, node, None)
        carried = self.own_entries(carried, body, reads_before, node)
        carried, after = split_carried(self.n, carried, body, node)
        self.n.out.append(For(counter, None, body, self.n.loc(node), carried, test=test))
        rebuild_after(self.n, after, node)
        self.versions_after_loop(carried, body, node)
        if not (isinstance(node.test, cst.Name) and node.test.value == "True"):
            check_ran(self.n, prebound, node)  # (`while True:` runs its body once at least)

    def own_entries(self, carried: list[tuple[str, str]], body: list[Stmt],
                     reads_before: set[str], node: Any) -> list[tuple[str, str]]:
        """A loop whose carried value enters under a name code before the loop read
        gets a name of its own for it (``y_3 = y`` before the loop), so that ``y``
        keeps the value before the loop: the backward of that earlier code reads it
        after the loop has run (it read the loop's last value).

        So does one entering a loop that is a branch's, under a name bound before the
        `if`: the loop's result is then a name the branch binds, which the `if` joins
        (``If.joins`` lists every name a branch rebinds for later code)."""
        out = []
        for entry, exit_ in carried:
            root = self.n.buffer_root.get(entry, entry)
            written_inside = any(  # a buffer the loop writes into stays one buffer
                self.n.buffer_root.get(t) == root for t in bound_names(body))
            if (entry in reads_before or self.from_outside_branch(entry)) and (
                    not written_inside and entry not in self.n.lists):
                own = self.n.names.fresh(entry)
                rename(body, entry, own)
                self.n.emit(own, "identity", (Var(entry),), {}, node)
                if entry in self.n.shapes:
                    self.n.shapes.add(own)
                for user, ssa in list(self.n.env.items()):
                    if ssa == entry:
                        self.n.env[user] = own
                exit_ = own if exit_ == entry else exit_
                entry = own
            out.append((entry, exit_))
        return out

    def from_outside_branch(self, entry: str) -> bool:
        """Is the loop being closed directly in a branch of an `if` (no loop between),
        carrying ``entry``, a name bound before that `if`?"""
        return bool(self.n._branches) and self.n._branches[-1][1] == len(self.n.loops) and (
            entry in self.n._branches[-1][0])

    def versions_after_loop(self, carried: list[tuple[str, str]], body: list[Stmt],
                             node: Any) -> None:
        """An array or list from before the `if` that a loop in its branch writes into
        (a tape appended to, ``y[i] = v``, here or in a nested loop) stays one buffer,
        so it gets no name of its own before the loop; after the loop it gets a new
        version (``tape_2 = tape``, spelled ``tape = tape``: no code), which the `if`
        joins."""
        if not self.n._branches or self.n._branches[-1][1] != len(self.n.loops):
            return
        outside = self.n._branches[-1][0]
        written = {self.n.buffer_root.get(t, t) for t in bound_names(body)}
        entries = [e for e, _ in carried if e in self.n.lists]
        entries += [ssa for ssa in self.n.env.values()
                    if self.n.buffer_root.get(ssa, ssa) in written and (
                        ssa in self.n.buffers or ssa in self.n.lists)]
        for entry in dict.fromkeys(entries):
            if entry not in outside:
                continue
            version = self.n.names.fresh(entry)
            self.n.out.append(Let(version, "identity", (Var(entry),), {}, self.n.loc(node)))
            self.n.lets[version] = self.n.out[-1]
            self.n.producers[version] = "identity"
            self.n.buffer_root[version] = self.n.buffer_root.get(entry, entry)
            self.n.buffers.add(version)  # (one object with the entry: see _MemoryCheck)
            if entry in self.n.lists:
                self.n.lists.add(version)
            for user, ssa in list(self.n.env.items()):
                if ssa == entry:
                    self.n.env[user] = version

    def enter_loop(self, node: Any) -> tuple[list[Stmt], dict[str, str], set[str]]:
        """Start a loop body: a fresh statement list, the names bound before it."""
        outer, before, bound_before = self.n.out, dict(self.n.env), set(self.n.bound)
        _entered(self.n, node, before)
        self.n.depth += 1
        self.n.out = []
        self.n.loops.append([])
        self.n.stmts.deletes.loop_entries.append(before)  # (`del` in the body)
        self.n.funcs.loops.enter(self.n.funcs.values)  # (frontend/loop_functions.py)
        # names bound on one path before the loop stay out of its body (their test
        # may be carried); those bound on one path inside it do not outlive it
        self.n._paths_outside.append(self.n.partial)
        self.n.partial = []
        return outer, before, bound_before

    def leave_loop(
        self, outer: list[Stmt], before: dict[str, str], bound_before: set[str],
        extra: list[tuple[str, str]],
    ) -> tuple[list[tuple[str, str]], list[Break]]:
        """End a loop body: the names it carries to the next iteration, its breaks.

        After the loop only the names bound before it are live (a carried one holds
        its last value under its entry name); names first bound in the body are not.
        A carried value is computed from shapes only where its last value is."""
        self.n.out, self.n.depth = outer, self.n.depth - 1
        carried = [(e, self.n.env[n]) for n, e in before.items()
                   if self.n.env.get(n) is not None and self.n.env[n] != e] + extra
        for entry, exit_ in carried:
            node = next((n for name, n in self.n._augmented if name == entry), None)
            if node is not None and (self.n.buffer.may_share(exit_) or (
                    exit_ in self.n.aliased and not self.n.buffer.immutable(exit_))):
                name = node.target.value
                op = node.operator._get_token()
                raise mark_shared_write(self.n.unsupported(
                    node, f"`{name} {op} ...` would write, from the second iteration on, "
                    f"into an array `{name}` shares with another name",
                    f"write `{name} = {name} {op[:-1]} ...` (a new array)",
                ))
        self.n.shapes -= {e for e, x in carried if x not in self.n.shapes}  # (`out = []`)
        self.n.dicts.leave_loop(carried)
        self.n.env = dict(before)
        self.n.bound = bound_before | self.n.bound
        entries = {e for e, _ in carried}
        self.n.partial = [r for r in self.n._paths_outside.pop()
                        if not any(_mentions(p[0], entries) for p in r.requires)]
        breaks = self.n.loops.pop()
        self.n.stmts.deletes.loop_entries.pop()
        self.close_breaks(breaks, carried, before)
        return carried, breaks

    def close_breaks(self, breaks: list[Break], carried: list[tuple[str, str]],
                      before: dict[str, str]) -> None:
        """Tell each break which names hold the carried values where it leaves."""
        entries = {e: user for user, e in before.items()}
        for brk in breaks:
            brk.copies = [
                (entry, brk.env.get(entries[entry], entry)) for entry, _ in carried
                if entry in entries
            ]

    def length(self, seq: Atom, node: Any) -> Atom:
        return self.n.emit(self.n.names.fresh(f"len_{stem(self.n.named(seq))}"), "len", (seq,), {}, node)


def _lowered_elsewhere(n: Any, node: cst.For) -> bool:
    """Lower ``node`` where a pass of its own does (True): ``for k, w in CFG.items():``
    (module_dicts.py, first: the others read the dict as a value), ``fs.append(lambda
    ...)``, ``for g in (np.tanh, relu):``, ``for k in ("a", "b"): out[k] = ...``, ``del
    parts[0]`` (windows.py)."""
    before = dict(n.resolver.free)
    if unroll_static(n, node) or unroll_module_dict(n, node) or unroll_appending(
            n, node) or containers(n).unroll(node) or n.dicts.unroll(node) or sliding_window(
            n, node) or unroll_dict_items(n, node) or unroll_named_records(  # (`for s in
            n, node):  # specs`: dict_item_loops.py; `for layer in layers`: named_attrs.py)
        return True
    it = node.iter  # (`for c in COEFFS`: its count keeps deciding the code, vmap's ranks)
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range":
        undo_watches(n, before)
    return False


def _item(n: Any, tables: bool, target: str, seq: Atom, index: str, node: Any) -> Atom:
    """``seq[k]`` at the loop's counter; of a constant tuple of numbers in a loop whose
    count is known only when the code runs (``zip(x, (1.0, 2.0))``: ``x``'s where it is
    shorter; ``tables``), the table read Python's item is (a Python number:
    expressions.table_read); a constant count's loop is unrolled, each item a constant."""
    at = Index((Var(index),), False)
    if tables and isinstance(seq, Const) and type(seq.value) in (tuple, list) and all(
            type(v) in (int, float) for v in seq.value):
        return table_read(n, node, seq, at, target)
    return n.emit(target, "getitem", (seq,), {"index": at}, node)


def _plain_zip(n: Any, call: Any) -> None:
    """Refuses a keyword of ``zip`` left by desugaring (strict_zip.py)."""
    for a in call.args:
        if a.keyword is not None:
            raise n.unsupported(a, f"`zip(..., {a.keyword.value}=...)` is supported as "
                                "`strict=True` or `strict=False` over names, in a loop whose "
                                "body has no `return`, `break` or `raise`",
                                "check the lengths before the loop (`if len(a) != len(b): "
                                "raise ValueError(...)`), then `zip(a, b)`")


def _made_length(n: Any, seq: Atom) -> Const | None:
    """The length of a tuple the function made (``scales = (1.0, 0.5)``), known now:
    ``zip(layers, scales)`` cuts ``layers[:2]``, a count known per call."""
    let = n.lets.get(seq.name) if isinstance(seq, Var) else None
    if let is None or let.prim != "make_tuple" or let.params:
        return None
    return Const(len(let.args), repr(len(let.args)))


def _shortest(loops: Any, seqs: list[Atom], node: Any) -> Atom:
    """``zip``'s length: its shortest sequence's, as Python's ``zip`` stops there
    (``zip(x, x[1:])``: one less than ``x``'s; the first's alone indexed past the end
    of the others: an IndexError on NumPy, a clamped read on JAX).  Spelled
    ``len(x[:len(y)])``, a slice whose length every transform and the per-call
    unrolling of tuples know (a Python ``min`` would be an ``if``).  A constant
    sequence's items read as constants: the loop is unrolled, its count known when
    transforming or per call (``zip(layers, (1.0, 0.5, 2.0))`` of a parameter left at
    a tuple default: ``len(layers[:3])``, the default's length read per call)."""
    n = loops.n
    known = {k: len(a.value) for k, a in enumerate(seqs) if isinstance(a, Const) and type(
        a.value) in (tuple, list)}  # (a module's constant: its length is known now)
    first, *others = seqs
    stops: list[Atom] = []
    if known:
        count = min(known.values())
        defaulted = live_defaults(n.fn) if n.plan is None else {}
        per_call = [a for a in seqs if isinstance(a, Var) and a.name in n.arguments and type(
            defaulted.get(a.name)) in (tuple, list)]  # (its length per call: ir/unroll.py)
        if not per_call:  # (the run-time sequences cut at the constants' count)
            per_call = [a for k, a in enumerate(seqs) if k not in known]
            if not per_call:
                return loops.length(seqs[min(known, key=known.__getitem__)], node)
            loops.tables = True  # (the constants read at a run-time counter: _item)
        first, *others = per_call
        stops = [Const(count, repr(count))]
    for stop in [_made_length(n, seq) or loops.length(seq, node) for seq in others] + stops:
        first = n.emit(n.names.fresh("shortest"), "getitem", (first,),
                       {"index": Index((Slice(None, stop, None),), False)}, node)
    return loops.length(first, node)


def _entered(n: Any, node: Any, before: dict[str, str]) -> None:
    """At a loop's start: the versions from before it of the names its body changes
    (``parts = parts + [v]``: not the literal at the second iteration), and of the
    dicts it writes by a key known per call (``seen[k] = v``: loop_keys.py)."""
    n.loop_carried |= {before[u] for u in _changed_names(node.body) if u in before}
    n.__dict__.setdefault("loop_fields", set()).update(  # (`c.out = c.out + [v]`: items)
        (before[u], k) for u, k in _changed_fields(node.body) if u in before)
    loop_keys.enter(n, node, before)


def _changed_names(body: Any) -> set[str]:
    """The names a loop body binds again or whose list it changes in place
    (``parts.append(v)``, ``parts[0] = v``): before the body, such a list is not
    the literal it was built from at the second iteration."""
    found = assigned_names(body)

    class Finder(cst.CSTVisitor):
        def visit_Call(self, n: cst.Call) -> None:
            f = n.func
            if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Name) and \
                    f.attr.value in ("append", "extend", "pop", "insert"):
                found.add(f.value.value)

        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            if isinstance(n.target, cst.Subscript) and isinstance(n.target.value, cst.Name):
                found.add(n.target.value.value)

    body.visit(Finder())
    return found


def _changed_fields(body: Any) -> set[tuple[str, str]]:
    """``(name, attribute)`` of the fields a loop body sets or changes in place
    (``c.out = c.out + [v]``, ``c.out.append(v)``): before the body, such a field's
    literal is not its value at the second iteration (sequences.items_of)."""
    found: set[tuple[str, str]] = set()

    def add(node: Any) -> None:
        if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            found.add((node.value.value, node.attr.value))

    class Finder(cst.CSTVisitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            add(n.target)

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            add(n.target)

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            add(n.target)

        def visit_Call(self, n: cst.Call) -> None:
            if isinstance(n.func, cst.Attribute) and n.func.attr.value in (
                    "append", "extend", "pop", "insert"):
                add(n.func.value)

    body.visit(Finder())
    return found


def _trips(args: list[Any]) -> int | None:
    """How many times ``for ... in range(*args)`` runs, where that is known when
    transforming (constant bounds), else None."""
    values = [a.value for a in args if isinstance(a, Const)]
    if len(values) != len(args) or not all(type(v) is int for v in values):
        return None
    try:
        return len(range(*values))
    except (TypeError, ValueError):
        return None


def _builtin(n: Any, func: Any) -> Any:
    """What a called name that is not the function's own denotes (``sorted``...)."""
    if isinstance(func, cst.Name) and func.value not in n.local_names:
        return n.resolver.lookup_global(func)
    return None


def _view_of_copy(n: Any, iterable: Any) -> Any:
    """``list(d.values())`` (``tuple``; of ``.keys()``, ``.items()``) walked by a loop
    or a comprehension: the view itself, whose items the copy holds in its order."""
    if isinstance(iterable, cst.Call) and _builtin(n, iterable.func) in (
            builtins.list, builtins.tuple) and len(iterable.args) == 1 and not (
            iterable.args[0].keyword or iterable.args[0].star):
        inner = iterable.args[0].value
        if isinstance(inner, cst.Call) and not inner.args and isinstance(
                inner.func, cst.Attribute) and inner.func.attr.value in (
                "values", "items", "keys"):
            return inner
    made = as_islice(n, iterable) or iterated_object(n, iterable) or as_zip(
        n, rest(n, iterable))  # (`pairwise(xs)`, `list(zip(a, b))`: a zip;
    # a generator `next` read `k` items of: `g[k:]`)
    return made.for_in.iter if isinstance(made, cst.ListComp) else made


def prebind(n: Any, node: Any) -> list[str]:
    """``y = None`` before a loop for each name it binds that is read after it with
    no binding before (``normalize._run`` found them: ``Normalizer.prebind``): the
    loop carries the name out, holding its last iteration's value."""
    names = assigned_names(node.body)
    if isinstance(node, cst.For) and isinstance(node.target, cst.Name):
        names.add(node.target.value)
    bound = []
    for name in sorted(names & getattr(n, "prebind", set())):  # (set by normalize._run)
        if name in n.env:
            continue
        none = cst.Name("None")
        n.desugar.alias(none, node)
        n.stmts.assign(cst.Name(name), none)
        bound.append(name)
    return bound


def bound_before_loop(node: Any, name: str) -> bool:
    """Is ``name`` bound (on some path) before the first loop that binds it, in
    ``node`` (a function's CST)?  Then None bound before that loop (``prebind``) would
    drop the value an `if` gave it (``if a: y = ...`` then ``for ...: y = y + x``)."""
    found: list[bool] = []

    class First(cst.CSTVisitor):
        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is node  # (a nested function's names are its own)

        def visit_Lambda(self, inner: cst.Lambda) -> bool:
            return False

        def visit_For(self, loop: cst.For) -> bool:
            if not found and (name in assigned_names(loop.body) or isinstance(
                    loop.target, cst.Name) and loop.target.value == name):
                found.append(False)
            return not found

        def visit_While(self, loop: cst.While) -> bool:
            if not found and name in assigned_names(loop.body):
                found.append(False)
            return not found

        def visit_AssignTarget(self, target: cst.AssignTarget) -> None:
            if not found and name in assigned_names(target):
                found.append(True)

        def visit_AugAssign(self, target: cst.AugAssign) -> None:
            if not found and name in assigned_names(target):
                found.append(True)

    node.visit(First())
    return found[:1] == [True]


def check_ran(n: Any, names: list[str], node: Any) -> None:
    """After a loop that may run no iteration: a name ``prebind`` bound None still
    None raises Python's UnboundLocalError, located at the loop."""
    for name in names:
        raiser = n.names.fresh(f"{name}_unbound")
        n.resolver.namespace[raiser] = functools.partial(
            UnboundFunctionError, f"`{name}` is bound only inside this loop, which ran "
            "no iteration (Python's UnboundLocalError: cannot access local variable "
            f"'{name}' where it is not associated with a value)", n.loc(node),
            f"bind `{name}` before the loop too, or make sure the loop runs", n.display)
        key = "__s2s_operand_0__"
        n.emit(n.names.fresh("kept"), "kept", (Var(n.env[name]),), {
            "template": (f"if {key} is None:", (key,)), "kind": "check",
            "body": (f"raise {raiser}()", (key,)), "always": True}, node)


def _check_widths(n: Any, target: Any, iterable: Any, resolved: Any) -> None:
    """``for a, b in zip(x, y, z)``, ``for i, a, b in enumerate(x)``, ``for i, (a, b) in
    enumerate(zip(x, y, z))``: names unpacking items of another width is Python's
    ValueError, at the user's line."""
    def check(target: Any, call: Any, width: int | None = None) -> None:
        if width is None and any(a.star or a.keyword for a in call.args):
            return  # (zip(*rows), zip(x, y, strict=True): left to the lowering)
        width = len(call.args) if width is None else width
        if isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) != width and \
                not any(isinstance(e, cst.StarredElement) for e in target.elements):
            raise UnpackError.of(len(target.elements), width, n.loc(target))

    if resolved is builtins.zip:
        check(target, iterable)
    if resolved is not builtins.enumerate or not iterable.args:
        return
    check(target, iterable, 2)
    inner = iterable.args[0].value
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(inner, cst.Call) and \
            _builtin(n, inner.func) is builtins.zip:
        check(target.elements[1].value, inner)
