"""Comprehensions and generator expressions, desugared to what the lowerers read.

``[f(v) for v in it if c]`` is rewritten, as libcst, into one of two forms:

* **unrolled**, when what it walks is known when the function is transformed (a
  ``range`` of constants, a literal tuple or list, a module constant, ``zip``,
  ``enumerate``, ``reversed``, ``sorted`` and ``.items()``/``.keys()``/``.values()``
  of those): a literal ``[f(v0), f(v1), ...]`` (a tuple, a dict), each variable
  replaced by how its item is spelled (``SCALES[1]``, ``2``, ``x``), and each ``if``
  decided then, so ``sum``, indexing, ``np.stack`` and ``max`` read a list of known
  length, as JAX's trace unrolls the comprehension;
* **a loop**, over an array's rows or a container argument: ``items = []; for v in
  it: items.append(f(v))`` (``sum`` of a generator: ``np.sum(np.stack(items),
  axis=0)``), lowered as the ``for`` loops the transforms already follow.

An ``if`` of a loop that reads only the counters of its ``range`` clauses
(``if i % 2 == 0`` over ``range(len(x))``) stays an ``if`` in the loop; one that
reads other values only known at run time would make the list's length depend on
them, and is refused where it is written.  Comprehensions over shapes and
constants only are still one ``pyexpr`` (``CallLowerer.python_expression``).
"""

from __future__ import annotations

import itertools
from typing import Any

import libcst as cst

from ..errors import TransformError
from ..ir.nodes import Atom, Const, Let, Var
from .desugar import lower_in_place
from .objects import iterated_object
from .resolve import is_literal
from .sequences import carried
from .static import COMPREHENSIONS, NOVALUE, StaticReader, paren
from .targets import target_names


class _Dynamic(Exception):
    """A comprehension's ``for`` walks values known only when the function runs."""


class Rename(cst.CSTTransformer):
    """Replace free uses of names by expressions, the rebuilt nodes keeping the
    positions of the nodes they replace."""

    def __init__(self, table: dict[str, cst.BaseExpression], alias: Any,
                 late: bool = False) -> None:
        self.table, self.alias, self.late = table, alias, late
        self.called: set[int] = set()  # (lambdas called where they are made)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Lambda):
            self.called.add(id(node.func))

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        new = self.table.get(original.value)
        if new is None:
            return updated
        self.alias(new, original)
        return new

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False  # (its parameters hide the names they share: see leave_Lambda)

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> Any:
        """``lambda t, k=k: k * t``: the defaults read the names replaced, the body
        the lambda's own parameters."""
        ps = original.params
        own = {p.name.value for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)}
        own |= {p.name.value for p in (ps.star_arg, ps.star_kwarg) if isinstance(p, cst.Param)}

        class Defaults(cst.CSTTransformer):
            def leave_Param(inner, p: cst.Param, new: cst.Param) -> Any:  # noqa: N805
                return new if p.default is None else new.with_changes(
                    default=p.default.visit(self))

        params = ps.visit(Defaults())
        free = {k: v for k, v in self.table.items() if k not in own}
        if self.late and id(original) not in self.called:  # (LateBound)
            read = _names_in(original.body) & set(free)
            if read:
                raise LateBound(original, min(read))
        body = original.body.visit(Rename(free, self.alias))
        return updated.with_changes(params=params, body=body)

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
        return updated.with_changes(attr=original.attr)  # (`x.i` is not the variable)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> Any:
        return updated.with_changes(keyword=original.keyword)  # nor is `f(i=...)`

    def leave_FormattedString(self, original: Any, updated: Any) -> Any:
        """A string put into an f-string's field (``f"{k}_sq"`` for ``k`` in
        ``("a", "b")``) must not close the f-string (Python before 3.12): its quotes
        become the other kind's, three of them."""
        quote = updated.end[0]
        inner = [n for p in updated.parts if isinstance(p, cst.FormattedStringExpression)
                 for n in _strings(p)]
        if not any(quote in s.quote for s in inner):
            return updated
        other = "'" if quote == '"' else '"'
        return updated.with_changes(start=updated.start[:-len(updated.end)] + other * 3,
                                    end=other * 3)

    def on_leave(self, original: Any, updated: Any) -> Any:
        out = super().on_leave(original, updated)
        if out is not original and isinstance(out, cst.CSTNode):
            self.alias(out, original)
        return out


class LateBound(Exception):
    """A lambda made in a comprehension reads the comprehension's variable, which
    Python reads when the lambda is called (its last value), not where it is made."""

    def __init__(self, node: cst.Lambda, name: str) -> None:
        super().__init__(name)
        self.node, self.name = node, name


def _names_in(node: Any) -> set[str]:
    found: set[str] = set()

    class Find(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            found.add(n.value)

        def visit_Attribute(self, n: cst.Attribute) -> bool:
            n.value.visit(self)
            return False

    node.visit(Find())
    return found


def _strings(node: Any) -> list[cst.SimpleString]:
    found: list[cst.SimpleString] = []

    class Find(cst.CSTVisitor):
        def visit_SimpleString(self, s: cst.SimpleString) -> None:
            found.append(s)

    node.visit(Find())
    return found


def substitute(node: Any, table: dict[str, cst.BaseExpression], alias: Any) -> Any:
    return node.visit(Rename(table, alias)) if table else node



class Comprehensions:
    """Desugars the comprehensions of one function for its Normalizer."""

    def __init__(self, n: Any) -> None:
        self.n = n
        self.static = StaticReader(n)
        self.user_locals = set(n.fn.__code__.co_varnames) | set(n.fn.__code__.co_cellvars)

    # ---- entry points -------------------------------------------------------------

    def comprehension(self, node: Any, target: str | None, kind: str = "list") -> Atom:
        """A list (``kind="list"``), tuple or dict comprehension, or a generator
        read as a list, lowered as its literal or its loop."""
        if isinstance(node, cst.ListComp) and kind == "list":
            kept = self.as_python_expression(node, target)
            if kept is not None:
                return kept
        items = self.unrolled(node)
        if items is not None:
            return self.n.exprs.expr(self.literal(node, items, kind), target)
        if isinstance(node, cst.DictComp) and _over_a_dict(node.for_in.iter):
            return self.loop(node, target, "dict")  # (its keys per call: ir/unroll.py)
        if isinstance(node, cst.DictComp):
            raise self.n.unsupported(
                node, "a dict comprehension is supported over what is known when s2s "
                "transforms the function (constants, literals) or over a dict's keys, "
                "`.items()` or `.values()`", 'write a dict literal {"a": ...}')
        return self.loop(node, target, "list")

    def as_python_expression(self, node: Any, target: str | None,
                             base: str = "items") -> Atom | None:
        """Over shapes and constants only, a comprehension stays one ``pyexpr``
        statement (what rules build indexes with); else None, nothing emitted."""
        if _bound_anywhere(node) & (self.user_locals | set(self.n.env)):
            return None  # (`[x * 2 for x in x]`: as written it would hide the outer x)
        out, size = self.n.out, len(self.n.out)
        try:
            return self.n.calls.python_expression(node, target, base)
        except TransformError:
            del out[size:]
            return None

    def sum(self, node: Any, start: Any, call: cst.Call, target: str | None) -> Atom:
        """``sum(f(v) for v in it)``: the sum of the unrolled items, or a loop adding
        them up (after ``start``)."""
        items = self.unrolled(node)
        if items is not None:
            args = [cst.Arg(self.literal(node, items, "list"))]
            if start is not None:
                args.append(cst.Arg(start))
            new = call.with_changes(args=args)
            self.n.desugar.alias(new, call)
            return self.n.calls.builtin_sum(new, target)
        return self.loop(node, target, "sum", start)

    def items_of(self, node: Any) -> list[Atom] | None:
        """The atoms of a list or tuple of known length that ``node`` denotes (a
        literal, a comprehension it unrolls, a constant), or None."""
        if isinstance(node, COMPREHENSIONS[:2]):
            items = self.unrolled(node)
            return None if items is None else [self.n.exprs.expr(e) for e in items]
        if isinstance(node, (cst.List, cst.Tuple)) and not any(
                isinstance(e, cst.StarredElement) for e in node.elements):
            return [self.n.exprs.expr(e.value) for e in node.elements]
        static = self.static.static_items(node)
        if static is not None:
            return [self.n.exprs.expr(spelling) for spelling, _ in static]
        if not isinstance(node, cst.Name) and not _accumulates(self.n, node) and not (
                _dict_read(self.n, node)):
            return None
        atom = self.n.exprs.expr(node)
        let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
        if isinstance(node, cst.Subscript) and let is not None:  # (`d["k"]`: its item's)
            atom = dict_item(self.n, let)
            if isinstance(atom, Const) and isinstance(atom.value, (list, tuple)):
                return [Const(v, repr(v)) for v in atom.value if is_literal(v)] if all(
                    is_literal(v) for v in atom.value) else None
            let = self.n.lets.get(atom.name) if isinstance(atom, Var) else None
        if let is not None and let.prim in ("make_list", "make_tuple") and (
                atom.name not in self.n.buffer_root.values()) and not carried(self.n, atom):
            return list(let.args)
        return None

    # ---- unrolling ---------------------------------------------------------------

    def unrolled(self, node: Any) -> list[Any] | None:
        """The element expressions (``(key, value)`` pairs for a dict comprehension),
        one per item, when every ``for`` walks something static; else None."""
        fors: list[cst.CompFor] = []
        clause = node.for_in
        while clause is not None:
            if clause.asynchronous is not None:
                raise self.n.unsupported(clause, "`async for` is not supported",
                                         "use a plain `for`")
            fors.append(clause)
            clause = clause.inner_for_in
        out: list[Any] = []
        try:
            self._unroll(node, fors, {}, out)
        except _Dynamic:
            return None  # (a `for` over values known when it runs: a loop)
        return out

    def _unroll(self, node: Any, fors: list[cst.CompFor], table: dict, out: list) -> None:
        if not fors:
            if isinstance(node, cst.DictComp):
                out.append((substitute(node.key, table, self.n.desugar.alias),
                            substitute(node.value, table, self.n.desugar.alias)))
            else:
                try:
                    out.append(node.elt.visit(Rename(table, self.n.desugar.alias, late=True))
                               if table else node.elt)
                except LateBound as late:
                    raise self.n.unsupported(
                        late.node, f"this lambda reads the comprehension's `{late.name}`, "
                        "which Python reads when the lambda is called (every lambda then "
                        f"sees the last `{late.name}`), not where it is made",
                        f"bind it as a default: `lambda ..., {late.name}={late.name}: ...`"
                    ) from None
            return
        clause = fors[0]
        walked = substitute(clause.iter, table, self.n.desugar.alias)
        if iterated_object(self.n, walked) is not None:
            raise _Dynamic()  # (an object's `__iter__`: a loop, `loops.py`)
        items = self.static.static_items(walked)
        if items is None:
            raise _Dynamic()
        for spelling, value in items:
            inner = dict(table)
            self.bind(clause.target, spelling, value, inner)
            if all(self.decide(cond.test, inner) for cond in clause.ifs):
                self._unroll(node, fors[1:], inner, out)

    def bind(self, target: Any, spelling: Any, value: Any, table: dict) -> None:
        """Bind a ``for`` target (names, nested tuples) to an item's spelling."""
        if isinstance(target, cst.Name):
            table[target.value] = paren(spelling)
            return
        if not isinstance(target, (cst.Tuple, cst.List)) or any(
                isinstance(e, cst.StarredElement) for e in target.elements):
            raise self.n.unsupported(target, "a comprehension's variables must be names "
                                     "or tuples of names", "write `for a, b in ...`")
        for k, element in enumerate(target.elements):
            if isinstance(spelling, (cst.Tuple, cst.List)) and len(spelling.elements) == len(
                    target.elements):
                part = spelling.elements[k].value
            else:
                part = cst.Subscript(paren(spelling), [cst.SubscriptElement(
                    cst.Index(cst.Integer(str(k))))])
                self.n.desugar.alias(part, spelling)
            sub = NOVALUE
            if value is not NOVALUE:
                try:
                    sub = value[k]
                except (TypeError, IndexError, KeyError):
                    raise self.n.unsupported(target, "this item cannot be unpacked into "
                                             f"{len(target.elements)} names",
                                             "unpack as many names as the item has") from None
            self.bind(element.value, part, sub, table)

    def decide(self, test: Any, table: dict) -> bool:
        """An ``if`` of a comprehension, decided when the function is transformed."""
        value = self.static.static_value(substitute(test, table, self.n.desugar.alias))
        if value is NOVALUE:
            raise self.n.unsupported(
                test, "a comprehension's `if` here reads values known only when the "
                "function runs, so the list's length would depend on them (jax.jit and "
                "jax.vmap refuse this too)", "keep every item and select with np.where, "
                "or filter on constants, the counters of a `range` (`if i % 2 == 0`) "
                "and the comprehension's variables (over a dict's keys, `==`, `!=`, "
                "`in`, `not in` of the key: `if k != \"b\"`)",
            )
        return bool(value)

    def literal(self, node: Any, items: list[Any], kind: str) -> Any:
        """The unrolled items as a list, tuple or dict literal."""
        if isinstance(node, cst.DictComp):
            elements = []
            for key, value in items:
                k = self.static.static_value(key)
                if not isinstance(k, str):
                    raise self.n.unsupported(node.key, "a dict comprehension's keys must "
                                             "be strings known when s2s transforms the "
                                             "function", "key the dict by strings")
                elements.append(cst.DictElement(cst.SimpleString(repr(k)), value))
            new: Any = cst.Dict(elements)
        elif kind == "tuple":
            new = cst.Tuple([cst.Element(e) for e in items])
        else:
            new = cst.List([cst.Element(e) for e in items])
        self.n.desugar.alias(new, node)
        return new

    # ---- static values -------------------------------------------------------------

    # ---- loops ---------------------------------------------------------------------

    def loop(self, node: Any, target: str | None, kind: str, start: Any = None) -> Atom:
        """``items = []; for v in it: items.append(f(v))`` (and for ``sum``,
        ``np.sum(np.stack(items), axis=0)``), lowered where the comprehension is."""
        fors: list[tuple[cst.CompFor, dict]] = []  # each with the names its iter sees
        clause = node.for_in
        table: dict[str, cst.BaseExpression] = {}
        keep = True
        per_call: dict[int, list] = {}  # a clause's `if`s on a dict's keys, per call
        while clause is not None:
            fors.append((clause, dict(table)))  # (`for x in x`: the iter is the outer x)
            for name in target_names(clause.target):
                fresh = self.loop_name(name)
                if fresh != name:
                    table[name] = cst.Name(fresh)
            for cond in clause.ifs:  # (an `if` over constants only: the others are refused)
                if _on_keys(clause, cond.test) or _on_counters(
                        self.n, [c for c, _ in fors], cond.test):  # (`if k != "b"` over
                    per_call.setdefault(id(clause), []).append(cond.test)  # `p.items()`,
                    continue  # `if i % 2 == 0` over `range(len(x))`)
                keep = self.decide(cond.test, table) and keep
            clause = clause.inner_for_in
        alias = self.n.desugar.alias
        if not keep:  # no item passes: Python's [] (sum: its start, or 0)
            empty = cst.List([]) if kind != "sum" else start or cst.Integer("0")
            alias(empty, node)
            return self.n.exprs.expr(empty, target)
        acc = self.loop_name("items", None if kind in ("sum", "dict") else target)
        if kind == "dict":  # the keys and the values, each appended to a list
            keys = self.loop_name("keys")
            elts = [(keys, node.key), (acc, node.value)]
        else:
            elts = [(acc, node.elt)]
        body: Any = cst.SimpleStatementLine([cst.Expr(cst.Call(
            cst.Attribute(cst.Name(a), cst.Name("append")),
            [cst.Arg(substitute(e, table, alias))])) for a, e in elts])
        first = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(a))],
                                                    cst.List([])) for a, _ in elts])
        for clause, outside in reversed(fors):
            for test in reversed(per_call.get(id(clause), [])):  # (decided per call:
                body = cst.If(substitute(test, table, alias),  # ir/unroll.py)
                              cst.IndentedBlock([body]))
            body = cst.For(target=substitute(clause.target, table, alias),
                           iter=substitute(clause.iter, outside, alias),
                           body=cst.IndentedBlock([body]))
        for new in (first, *first.body, body):
            alias(new, node)
        _alias_all(body, node, self.n.desugar.positions, alias)
        lower_in_place(self.n, [first, body])
        if kind == "dict":  # keyed per call, when the loop is unrolled (ir/unroll.py)
            return self.n.emit(self.n.exprs.target(target, "items"), "make_dict",
                               (Var(self.n.env[keys]), Var(self.n.env[acc])),
                               {"from_items": True}, node)
        if kind != "sum":
            return Var(self.n.env[acc])
        # the items are one shape (rows, or what one expression makes of them): their
        # sum is np.sum of their stack, which vmap batches (a `total = 0` carried
        # through the loop would start unbatched)
        # (over no items on a call, Python's 0: NumPy stacks none with a ValueError)
        total: Any = cst.parse_expression(
            f"(np.sum(np.stack({acc}), axis=0) if len({acc}) else 0)")
        if start is not None:
            total = cst.BinaryOperation(start, cst.Add(), total)
        _alias_all(total, node, self.n.desugar.positions, alias)
        self.n.resolver.bind_namespace("np", node)
        before = len(self.n.out)
        out = self.n.exprs.expr(total, target)
        self.n.sum_stacks = getattr(self.n, "sum_stacks", set()) | {
            s.target for s in self.n.out[before:] if isinstance(s, Let) and s.prim == "stack"
            and s.args == (Var(self.n.env[acc]),)}  # (over no items: 0, ir/unroll.py)
        return out

    def loop_name(self, name: str, target: str | None = None) -> str:
        """A name for a comprehension's variable (or its result, named after the
        assignment's target where that is its first binding) that shadows nothing."""
        if target is not None and target in self.user_locals and target not in self.n.env:
            self.n.local_names.add(target)
            return target
        if name in self.user_locals or name in self.n.env or name in self.n.names.taken:
            name = self.n.names.fresh(name)
        else:
            self.n.names.taken.add(name)
        self.n.local_names.add(name)
        return name


STR_TESTS = ("startswith", "endswith")  # (a key's, with strings: decided per call)


def _on_keys(clause: cst.CompFor, test: Any) -> bool:
    """Is ``test`` an ``if`` of a comprehension over a dict (``p.items()``, ``p``,
    ``sorted(p)``) that reads only the dict's key (``k != "b"``, ``k in SKIP``,
    ``k == "w" or k == "v"``): a constant for each key, decided per call when the loop
    over the dict's keys is unrolled?"""
    it = clause.iter
    if not _over_a_dict(it) or isinstance(it, cst.Call) and isinstance(
            it.func, cst.Attribute) and it.func.attr.value == "values":
        return False
    names = target_names(clause.target)
    if not names:
        return False
    key = names[0]  # (`for k in p`, `for k, v in p.items()`: the key comes first)

    class Reads(cst.CSTVisitor):
        ok = True

        def visit_Name(self, n: cst.Name) -> None:
            if n.value in names and n.value != key:
                self.ok = False

        def visit_Call(self, n: cst.Call) -> None:
            if not (isinstance(n.func, cst.Attribute) and n.func.attr.value in STR_TESTS
                    and isinstance(n.func.value, cst.Name) and n.func.value.value == key
                    and all(isinstance(a.value, cst.SimpleString) for a in n.args)):
                self.ok = False  # (a call: array work, not a test of the key)

        def visit_Subscript(self, n: cst.Subscript) -> None:
            self.ok = False

    reads = Reads()
    test.visit(reads)
    return reads.ok and any(isinstance(n, cst.Name) and n.value == key
                            for n in _all_names(test))


def _on_counters(n: Any, clauses: list[cst.CompFor], test: Any) -> bool:
    """Does ``test`` read only the counters of the ``range`` clauses so far (``for i in
    range(len(x)) if i % 2 == 0``), integer literals and ``len`` of a name: an ``if``
    kept in the loop, which an int decides at each iteration (the list's length is the
    counters', known per call, as JAX's trace decides it)?"""
    counters = {name for c in clauses if _is_range(n, c.iter) for name in target_names(c.target)}

    class Reads(cst.CSTVisitor):
        ok = True

        def visit_Name(self, node: cst.Name) -> None:
            if node.value not in counters:
                self.ok = False

        def visit_Call(self, node: cst.Call) -> bool:
            if not (_is_builtin(n, node.func, "len") and len(node.args) == 1 and
                    isinstance(node.args[0].value, cst.Name) and not node.args[0].keyword):
                self.ok = False
            return False  # (`len(x)`: an int known per call)

        def on_visit(self, node: Any) -> bool:
            if not isinstance(node, (cst.Name, cst.Call, cst.Integer, cst.BinaryOperation,
                                     cst.UnaryOperation, cst.Comparison, cst.BooleanOperation,
                                     cst.ComparisonTarget, cst.BaseBinaryOp, cst.BaseUnaryOp,
                                     cst.BaseCompOp, cst.BaseBooleanOp, cst.LeftParen,
                                     cst.RightParen, cst.BaseParenthesizableWhitespace)):
                self.ok = False
                return False
            return super().on_visit(node)

    reads = Reads()
    test.visit(reads)
    return bool(counters) and reads.ok and bool(_names_in(test) & counters)


def _is_builtin(n: Any, func: Any, name: str) -> bool:
    return isinstance(func, cst.Name) and func.value == name and name not in n.local_names \
        and name not in n.env


def _is_range(n: Any, it: Any) -> bool:
    return isinstance(it, cst.Call) and _is_builtin(n, it.func, "range")


def _all_names(node: Any) -> list[Any]:
    out: list[Any] = []

    class Visit(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            out.append(n)

    node.visit(Visit())
    return out


def _over_a_dict(it: Any) -> bool:
    """``d``, ``d.items()``/``.keys()``/``.values()``, ``sorted(...)`` of those."""
    if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and \
            it.func.value == "sorted" and len(it.args) == 1:
        it = it.args[0].value
    return isinstance(it, cst.Name) or isinstance(it, cst.Call) and not it.args and \
        isinstance(it.func, cst.Attribute) and it.func.attr.value in ("items", "keys", "values")


def _bound_anywhere(node: Any) -> set[str]:
    """The names the ``for`` clauses of ``node`` (and of comprehensions in it) bind."""
    out: set[str] = set()

    class Visit(cst.CSTVisitor):
        def visit_CompFor(self, n: cst.CompFor) -> None:
            out.update(target_names(n.target))

    node.visit(Visit())
    return out


def _assign(name: str, value: Any) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def _alias_all(tree: Any, old: Any, positions: dict, alias: Any) -> None:
    """Give the synthesized nodes (those without a position) the comprehension's."""

    class Visit(cst.CSTVisitor):
        def on_visit(self, n: Any) -> bool:
            if n not in positions:
                alias(n, old)
            return True

    tree.visit(Visit())




def _accumulates(n: Any, node: Any) -> bool:
    """Is ``node`` a call of ``itertools.accumulate`` (a list of known length once
    lowered: frontend/reduces.py)?"""
    func = node.func if isinstance(node, cst.Call) else None
    root = func
    while isinstance(root, cst.Attribute):
        root = root.value
    return isinstance(root, cst.Name) and root.value not in n.local_names and \
        n.resolver.resolve_dotted(func)[0] is itertools.accumulate


def _dict_read(n: Any, node: Any) -> bool:
    """Is ``node`` ``d["k"]`` of a dict the function built (``self.scales`` of a
    record: ``self["scales"]``)?"""
    if not (isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name)) or len(
            node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    let = n.lets.get(n.env.get(node.value.value, ""))
    return let is not None and let.prim == "make_dict"


def dict_item(n: Any, let: Any) -> Any:
    """The item a ``getitem`` of a constant key reads from a dict literal's
    ``make_dict`` (``d["k"]``, a record's ``self["scales"]``), else None."""
    index = let.params.get("index") if let.prim == "getitem" else None
    items = getattr(index, "items", ())
    src = n.lets.get(let.args[0].name) if isinstance(let.args[0], Var) else None
    if len(items) != 1 or not isinstance(items[0], Const) or src is None or (
            src.prim != "make_dict" or items[0].value not in src.params.get("keys", ())):
        return None
    return src.args[list(src.params["keys"]).index(items[0].value)]
