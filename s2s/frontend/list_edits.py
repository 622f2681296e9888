"""A list the function built, changed at its front or in its middle: ``del parts[0]``,
``del parts[i]`` (an int known when s2s generates the code), ``del parts[1:3]``,
``v = parts.pop(0)`` and ``parts.insert(k, v)``, as Python changes it.

Each is the list's new version under the same name, built of the items Python keeps:

* a list whose items s2s knows one by one (a literal, not grown since) is a new
  literal of those items (``parts = [parts_1, parts_2]``: structure, decided now);
* a list grown in a loop (its length known when the function runs) is copied item by
  item, over ranges that Python's own slicing of ``range(len(parts))`` gives::

      kept = []
      for k in range(len(parts))[:1]:
          kept.append(parts[k])
      for k in range(len(parts))[3:]:
          kept.append(parts[k])
      parts = kept

  (``insert(0, v)`` is ``parts = [v] + parts``, the splice loops every transform
  reads: frontend/splices.py).  ``pop(i)`` reads ``parts[i]`` first, an index out of
  range being Python's ``IndexError`` at the user's line.

Python changes the list in place; s2s binds the name to the new list, so a list that
another name or a container also refers to is refused, located (it would still see
the old items).  A ``del``/``pop`` index an argument passes, or a slice with a step,
of a grown list is refused too (write the kept items' loop).
"""

from __future__ import annotations

import builtins
import linecache
from typing import Any

import libcst as cst

from ..errors import ListIndexError
from ..ir.nodes import Atom, Const, Var
from .buffers import is_minus_one
from .desugar import lower_in_place
from .kwdicts import _columns
from .sequences import items_of, list_target

__all__ = ["ListEdits"]

# statements whose arguments another name or container then holds (a list in them is
# shared: changing it in place would show there)
_HOLDERS = ("make_list", "make_tuple", "make_dict", "call", "append", "setitem")


class ListEdits:
    """``del``/``pop``/``insert`` at any position of one function's lists."""

    def __init__(self, n: Any) -> None:
        self.n = n  # the Normalizer

    # ---- entry points -------------------------------------------------------------

    def delete(self, target: cst.Subscript) -> bool:
        """``del parts[i]``, ``del parts[a:b]``: True where lowered (False: not a list
        the function built)."""
        name = self._own(target.value)
        if name is None or len(target.slice) != 1:
            return False
        part = target.slice[0].slice
        self._unshared(name, target, "del")
        if isinstance(part, cst.Index):
            k = self._int(part.value)
            self._edit(name, target, self._positions(name, target, k, "del"), None)
        else:
            self._edit(name, target, self._slice(name, part, target), None)
        return True

    def pop(self, call: cst.Call, target: str | None) -> Atom | None:
        """``parts.pop(i)`` (a value or a statement): ``parts[i]``, then the list
        without it; None where ``call`` is not such a pop."""
        name = self._own(call.func.value)
        if name is None or len(call.args) != 1 or call.args[0].keyword or (
                call.args[0].star or is_minus_one(call.args[0])):
            return None  # (`parts.pop()`, `pop(-1)`: buffers.py)
        self._unshared(name, call, "pop")
        k = self._int(call.args[0].value)
        keep = self._positions(name, call, k, "pop")
        found = items_of(self.n, Var(self.n.env[name]))
        if found is not None:
            value = found[1][k]
        else:
            read = cst.Subscript(call.func.value, [cst.SubscriptElement(cst.Index(
                cst.Integer(str(k)) if k >= 0 else cst.UnaryOperation(
                    cst.Minus(), cst.Integer(str(-k)))))])
            self.n.desugar.alias_tree(read, call)
            value = self.n.exprs.expr(read, target)
        self._edit(name, call, keep, None)
        return value

    def insert(self, call: cst.Call) -> None:
        """``parts.insert(k, v)``: ``v`` at position ``k`` (clamped, as Python does)."""
        name = self._own(call.func.value)
        if name is None:
            self.n.buffer.own_list(call, "insert")  # (refused, located)
            raise AssertionError("own_list refuses")  # pragma: no cover
        args = call.args
        if len(args) != 2 or any(a.keyword or a.star for a in args):
            raise self.n.unsupported(call, "insert takes a position and a value",
                                     "write `parts.insert(0, v)`")
        self._unshared(name, call, "insert")
        found = items_of(self.n, Var(self.n.env[name]))
        k = self._int(args[0].value) if found is not None else None
        if found is not None and k is not None:
            value = self.n.exprs.expr(args[1].value)
            items = list(found[1])
            items.insert(k, value)
            self._rebind(name, items, call)
            return
        if found is not None:
            self._dynamic(call, "insert")
        if isinstance(args[0].value, cst.Integer) and args[0].value.value == "0":
            self._lower([cst.SimpleStatementLine([cst.Assign(
                [cst.AssignTarget(cst.Name(name))], cst.BinaryOperation(
                    cst.List([cst.Element(args[1].value)]), cst.Add(), cst.Name(name)))])],
                call)  # `parts = [v] + parts` (splices.py)
            return
        item = self._fresh("inserted")
        self._lower([_assign(item, args[1].value)], call)
        self._edit(name, call, [(None, args[0].value), (args[0].value, None)], item)

    def reorder(self, call: cst.Call) -> bool:
        """``parts.sort(key=..., reverse=...)`` / ``parts.reverse()`` of a list the
        function built: the name bound to ``sorted(parts, ...)`` /
        ``list(reversed(parts))`` (refused, located, where another name or a
        container refers to the list); False (nothing done) for any other call."""
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        name = self._own(call.func.value) if method in ("sort", "reverse") else None
        if name is None:
            return False
        args = call.args
        if any(a.keyword is None or a.star for a in args) or (method == "reverse" and args):
            raise self.n.unsupported(call, f"`{name}.{method}` takes "
                                     + ("keyword arguments (`key=`, `reverse=`)"
                                        if method == "sort" else "no arguments"),
                                     f"write `{name}.sort(key=...)`" if method == "sort"
                                     else f"write `{name}.reverse()`")
        self._unshared(name, call, method)
        if method == "sort":
            value = cst.Call(cst.Name("sorted"), [cst.Arg(cst.Name(name)), *args])
        else:
            value = cst.Call(cst.Name("list"), [cst.Arg(cst.Call(cst.Name("reversed"),
                                                                 [cst.Arg(cst.Name(name))]))])
        self.n.desugar.alias_tree(value, call)
        self._lower([_assign(name, value)], call)
        return True

    def zip_columns(self, target: Any, value: Any) -> bool:
        """``xs, ys = zip(*pts)`` where ``pts``'s length is known only when the function
        runs (a list argument, a list grown in a loop): each column its own list,
        appended row by row (``for row in pts: a, b = row``, ``xs.append(a)``...), and
        Python's ValueError where ``pts`` is empty (``zip()`` then gives no column to
        unpack).  True where lowered; a list of known length is kwdicts.py's."""
        if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Call)
                and isinstance(value.func, cst.Name) and value.func.value == "zip"
                and value.func.value not in self.n.local_names and len(value.args) == 1
                and value.args[0].star == "*" and isinstance(value.args[0].value, cst.Name)
                and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name)
                        for e in target.elements)):
            return False
        rows = value.args[0].value
        if rows.value not in self.n.local_names or _columns(self.n, rows) is not None or (
                self.n.resolver.lookup_global(value.func) is not builtins.zip):
            return False
        names = [e.value.value for e in target.elements]
        columns = [self._fresh(f"{name}_column") for name in names]
        parts = [self._fresh("part") for _ in names]
        count = self._fresh(f"{rows.value}_count")
        loc = self.n.loc(value)
        line = linecache.getline(str(loc.file), loc.line).strip()
        say = (f"not enough values to unpack (expected {len(names)}, got 0): `{rows.value}` "
               f"has no rows here (Python's ValueError), at File \"{loc.file}\", line "
               f"{loc.line}: {line}")
        row, width = self._fresh("row"), self._fresh("width")
        wrong = (f"zip(*{rows.value}) unpacked into {len(names)} names needs rows of "
                 f"{len(names)} items (Python's ValueError where the shortest row has "
                 f"another length), at File \"{loc.file}\", line {loc.line}: {line}")
        body = f"    {width} = len({row})\n    if {width} != {len(names)}:\n        " \
            f"raise ValueError({self._message(wrong)})\n" + "".join(  # (read by index:
                f"    {v} = {row}[{i}]\n" for i, v in enumerate(parts)) + "".join(  # checked)
                f"    {c}.append({v})\n" for c, v in zip(columns, parts))
        self._lower([
            cst.parse_statement(f"{count} = len({rows.value})\n"),
            cst.parse_statement(
                f"if {count} == 0:\n    raise ValueError({self._message(say)})\n"),
            *[_assign(c, cst.List([])) for c in columns],
            cst.parse_statement(f"for {row} in {rows.value}:\n{body}"),
            *[_assign(name, cst.Name(c)) for name, c in zip(names, columns)]], value)
        return True

    # ---- the new list ---------------------------------------------------------------

    def _positions(self, name: str, node: Any, k: int | None, verb: str) -> Any:
        """The kept items around position ``k``: a list of Python positions for a
        literal, else the two slices (of ``range(len(parts))``) before and after it."""
        if k is None:
            self._dynamic(node, verb)
        found = items_of(self.n, Var(self.n.env[name]))
        if found is not None:
            count = len(found[1])
            if not -count <= k < count:
                raise ListIndexError(
                    f"{verb} index {k} out of range: `{name}` has {count} items here "
                    "(Python's IndexError)", self.n.loc(node),
                    f"{verb} an item `{name}` has", self.n.display)
            drop = k % count
            return [j for j in range(count) if j != drop]
        after = None if k == -1 else cst.Integer(str(k + 1)) if k + 1 >= 0 else \
            cst.UnaryOperation(cst.Minus(), cst.Integer(str(-(k + 1))))
        at = cst.Integer(str(k)) if k >= 0 else cst.UnaryOperation(
            cst.Minus(), cst.Integer(str(-k)))
        if verb == "del":  # (Python's IndexError where the item is missing, located)
            loc = self.n.loc(node)
            say = (f"list assignment index out of range (Python's IndexError), at "
                   f"File \"{loc.file}\", line {loc.line}: {loc.text.strip()}")
            count = self._fresh(f"{name}_count")  # (an int: vmap keeps the check)
            self._lower([cst.parse_statement(f"{count} = len({name})\n"), cst.parse_statement(
                f"if not -{count} <= {k} < {count}:\n    raise IndexError("
                f"{self._message(say)})\n")],
                node)
        if after is None:
            return [(None, at)]
        return [(after, None)] if k == 0 else [(None, at), (after, None)]

    def _slice(self, name: str, part: cst.Slice, node: Any) -> Any:
        found = items_of(self.n, Var(self.n.env[name]))
        if found is not None:
            bounds = [None if b is None else self._int(b) for b in (
                part.lower, part.upper, part.step)]
            if any(b is None and e is not None for b, e in zip(bounds, (
                    part.lower, part.upper, part.step))):
                self._dynamic(node, "del")
            dropped = set(range(len(found[1]))[slice(*bounds)])
            return [j for j in range(len(found[1])) if j not in dropped]
        if part.step is not None and self._int(part.step) != 1:
            raise self.n.unsupported(
                node, f"`del {name}[a:b:step]` of a list grown in a loop (its length "
                "known only when the function runs) is not supported",
                f"build the list of the items to keep (`kept = []`, then `for k in "
                f"range(len({name})): ... kept.append({name}[k])`)")
        spans = []
        if part.lower is not None:
            spans.append((None, part.lower))
        if part.upper is not None:
            spans.append((part.upper, None))
        return spans

    def _edit(self, name: str, node: Any, keep: Any, item: str | None) -> None:
        """Bind ``name`` to its kept items: a literal (``keep`` Python positions) or
        the copy loops over ``keep``'s slices of ``range(len(name))`` (``item`` between
        the two, for an insert)."""
        if keep and isinstance(keep[0], int) or not keep and items_of(
                self.n, Var(self.n.env[name])) is not None:
            found = items_of(self.n, Var(self.n.env[name]))
            self._rebind(name, [found[1][j] for j in keep], node)
            return
        kept = self._fresh(f"{name}_kept")
        statements: list[Any] = [_assign(kept, cst.List([]))]
        for k, (lower, upper) in enumerate(keep):
            if item is not None and k == 1:
                statements.append(_append(kept, cst.Name(item)))
            index = self._fresh("k")
            span = cst.Subscript(cst.Call(cst.Name("range"), [cst.Arg(cst.Call(
                cst.Name("len"), [cst.Arg(cst.Name(name))]))]), [cst.SubscriptElement(
                    cst.Slice(lower, upper))])
            statements.append(cst.For(cst.Name(index), span, cst.IndentedBlock([
                cst.SimpleStatementLine([cst.Expr(cst.Call(cst.Attribute(
                    cst.Name(kept), cst.Name("append")), [cst.Arg(cst.Subscript(
                        cst.Name(name), [cst.SubscriptElement(cst.Index(
                            cst.Name(index)))]))]))])])))
        statements.append(_assign(name, cst.Name(kept)))
        self._lower(statements, node)
        self.n.buffers.add(self.n.env[name])

    def _rebind(self, name: str, items: list[Atom], node: Any) -> None:
        ssa = self.n.names.fresh(name)
        self.n.emit(ssa, "make_list", tuple(items), {}, node)
        self.n.lists.add(ssa)
        self.n.bound.add(name)
        self.n._bind(name, ssa)

    # ---- checks ---------------------------------------------------------------------

    def _own(self, node: Any) -> str | None:
        """The name of a list the function built that ``node`` names, else None."""
        if isinstance(node, cst.Name) and node.value in self.n.local_names and (
                list_target(self.n, node.value)):
            return node.value
        return None

    def _unshared(self, name: str, node: Any, verb: str) -> None:
        """Refuse where another name or a container refers to the list: Python
        changes that list in place, so they would see the change too."""
        n = self.n
        root_of = n.buffer_root.get
        current = n.env[name]
        root = root_of(current, current)
        users = set(n.fn.__code__.co_varnames) | set(n.fn.__code__.co_cellvars)
        other = next((u for u, v in n.env.items() if u != name and u in users
                      and isinstance(v, str) and root_of(v, v) == root), None)
        held = any(let.prim in _HOLDERS and any(
            isinstance(a, Var) and root_of(a.name, a.name) == root
            for a in (let.args[1:] if let.prim in ("append", "setitem") else let.args))
            for let in n.lets.values())
        if other is not None or held:
            where = f"the name `{other}`" if other else "a container or a call"
            raise n.unsupported(
                node, f"`{verb}` changes the list `{name}` in place, and {where} refers "
                "to it too: s2s builds the changed list anew, which only "
                f"`{name}` would see", f"copy it first (`{name} = list({name})`), or "
                "change the list before the other name refers to it")

    def _dynamic(self, node: Any, verb: str) -> None:
        raise self.n.unsupported(
            node, f"`{verb}` at a position s2s knows only when the function runs (an "
            "argument, a value computed here) is not supported: the item kept at each "
            "position would depend on it", f"use an int constant (`{verb} ...[0]`, "
            "`[-2]`), or build the list of the items to keep in a loop")

    def _int(self, node: Any) -> int | None:
        """The int ``node`` stands for when s2s generates the code, or None."""
        atom = self.n.exprs.expr(node)
        for _ in range(20):
            if isinstance(atom, Const):
                return atom.value if type(atom.value) is int else None
            let = self.n.lets.get(atom.name)
            if let is None or let.prim != "identity":
                return None
            atom = let.args[0]
        return None

    # ---- emitting -------------------------------------------------------------------

    def _message(self, text: str) -> str:
        """A name the emitted code reads ``text`` from (a kept ``raise`` would have
        the function's names in a string literal renamed with the code's)."""
        name = self.n.names.fresh("error_message")
        self.n.resolver.namespace[name] = text
        return name

    def _fresh(self, base: str) -> str:
        name = self.n.names.fresh(base)
        self.n.local_names.add(name)
        return name

    def _lower(self, statements: list[Any], node: Any) -> None:
        lower_in_place(self.n, statements, node)


def _assign(name: str, value: Any) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _append(name: str, value: Any) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Expr(cst.Call(cst.Attribute(
        cst.Name(name), cst.Name("append")), [cst.Arg(value)]))])
