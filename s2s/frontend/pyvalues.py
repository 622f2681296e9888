"""Python's built-ins and module constants, as the lowerers read them.

Over values known when the function is transformed (literals, module constants,
what the function computes from them), ``max``, ``min``, ``round``, ``any``,
``all``, ``isinstance``, ``type``, ``sorted``, ``x in (...)``, ``CONFIG["wd"]``,
``CONFIG.get("wd", 0.1)`` and ``TABLE[..., None]`` are constants: their value is
computed now (to decide structure: a loop's length, an ``if``), and they are spelled
as written, so the emitted code reads the module's value again at each call.

Over run-time values: ``max(a, b)`` and ``min(a, b)`` are the ``if`` Python runs
(``b if b > a else a``: the first maximal argument wins a tie, and gets the
gradient), ``x in (a, b)`` is ``x == a or x == b``, ``tuple``/``list``/``dict`` of
known items are literals, ``dict(a=a)`` a dict literal, and ``x.item()`` is
``float(x)``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any

import libcst as cst

from ..errors import UnsupportedCallError
from ..ir.names import simple_text
from ..ir.nodes import Atom, Const, If, Slice, Var
from . import kwdicts, literals
from .bound_params import type_test
from .generators import yields
from .object_protocols import length
from .sorted_keys import inlined_keys, sorted_by_key
from .source import literal_value
from .static import NOVALUE
from .windows import as_islice

# built-ins decided when the function is transformed, over constants
STATIC = {math.prod, builtins.max, builtins.min, builtins.round, builtins.any, builtins.all,
          builtins.isinstance, builtins.type, builtins.sorted, builtins.dict,
          builtins.tuple, builtins.list}
# methods of constant dicts read when the function is transformed (and at each call)
CONSTANT_METHODS = ("get", "keys", "values", "items")


def _spelled(fn: str, texts: list[str], value: Any) -> str:
    """How emitted code spells a constant computed now: its literal, where every
    operand was one; else the call, so each run reads the module's values again."""
    if all(simple_text(t) for t in texts) and _is_literal(value):
        return repr(value)
    return f"{fn}({', '.join(texts)})"


def _is_literal(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_literal(v) for v in value)
    return value is None or type(value) in (bool, int, float, str)


def _root(text: str) -> str:
    for i, ch in enumerate(text):
        if not (ch.isalnum() or ch == "_"):
            return text[:i]
    return text


class PythonValues:
    """Lowers built-in calls and constant reads for one function's Normalizer."""

    def __init__(self, n: Any) -> None:
        self.n = n

    def error(self, node: Any, what: str, hint: str) -> UnsupportedCallError:
        return UnsupportedCallError(what, self.n.loc(node), hint, self.n.display)

    # ---- constants ---------------------------------------------------------------

    def subscript(self, node: cst.Subscript, base: Const, items: list, target: str | None,
                  multi: bool) -> Atom | None:
        """``CONFIG["wd"]``, ``B[..., None]``, ``np.r_[0:3, 5]``: a constant spelled as
        written (None where an index is a run-time value)."""
        parts: list[Any] = []
        texts: list[str] = []
        for item in items:
            if isinstance(item, Slice):
                bounds = (item.lower, item.upper, item.step)
                if any(b is not None and not isinstance(b, Const) for b in bounds):
                    return None
                parts.append(slice(*(None if b is None else b.value for b in bounds)))
                text = ":".join("" if b is None else b.text for b in bounds[:2])
                texts.append(text + (f":{item.step.text}" if item.step is not None else ""))
            elif isinstance(item, Const):
                parts.append(item.value)
                texts.append(item.text)
            else:
                return None
        key = tuple(parts) if multi else parts[0]
        try:
            value = base.value[key]
        except Exception as exc:  # (what Python would raise when the function runs)
            raise self.error(node, f"`{base.text}[{', '.join(texts)}]` raises "
                             f"{type(exc).__name__}: {exc}",
                             "index the constant with a key or position it has") from None
        self.n.comps.static.watch(_root(base.text), static=False)
        text = f"{base.text}[{', '.join(texts)}]"
        const = Const(value, text)
        return const if target is None else self.n.emit(target, "identity", (const,), {},
                                                         node)

    def constant_method(self, node: cst.Call, base: Const, method: str,
                        target: str | None) -> Atom | None:
        """``CONFIG.get("wd", 0.1)``, ``TABLE.keys()`` of a module dict."""
        if method not in CONSTANT_METHODS or not isinstance(base.value, dict):
            return None
        args, kwargs = self.n.calls.call_args(node)
        if kwargs or not all(isinstance(a, Const) for a in args):
            return None
        value = getattr(base.value, method)(*(a.value for a in args))
        if method != "get":
            value = list(value)
        self.n.comps.static.watch(_root(base.text), static=method != "get")
        return Const(value, f"{base.text}.{method}({', '.join(a.text for a in args)})")

    # ---- built-ins ----------------------------------------------------------------

    def call(self, fn: Any, text: str, node: cst.Call, target: str | None) -> Atom | None:
        """One of ``STATIC``: a constant over constants, the ``if`` of ``max``/``min``
        over run-time values, a literal for ``tuple``/``list``/``dict``; None where the
        call is not one of these forms (the caller goes on as before)."""
        if fn is builtins.dict and any(a.star == "**" for a in node.args):
            return dict_of_spreads(self.n, node, target)
        if any(a.star for a in node.args):
            return None
        if fn is builtins.isinstance and (typed := type_test(self.n, node)) is not NOVALUE:
            return self.constant(typed, repr(typed), [], target, node)  # (a parameter's)
        if fn is builtins.isinstance:
            undecided_type_test(self.n, node)  # (else "`list` is a type, used as a value")
        keywords = [a for a in node.args if a.keyword is not None]
        positional = [a.value for a in node.args if a.keyword is None]
        if fn is builtins.dict:
            return self.dict_call(node, positional, keywords, target)
        if fn is builtins.len:  # `len(kw)`: its keys' (`len(obj)`: its `__len__()`)
            called = length(self.n, node, [self.n.exprs.expr(positional[0])], target)
            if called is not None:
                return called
            keys = kwdicts.keys_of(self.n, positional[0])
            return self.constant(len(keys), repr(len(keys)), [], target, node)
        if keywords:
            if fn in (builtins.max, builtins.min):
                return self.extremum_by_key(fn, text, positional, keywords, node, target)
            if fn is builtins.sorted:
                return sorted_by_key(self, text, positional, keywords, node, target)
            return None
        if fn in (builtins.max, builtins.min, builtins.any, builtins.all,
                  builtins.sorted, builtins.tuple, builtins.list) and len(positional) == 1:
            items = self.n.comps.items_of(positional[0])
            if items is None and fn in (builtins.any, builtins.all):
                return self.truth_of_rows(fn, positional[0], node, target)
            if items is None and fn in (builtins.max, builtins.min) and isinstance(
                    positional[0], cst.Call) and (yields(self.n, positional[0].func) or (
                    as_islice(self.n, positional[0]) is not None)):
                # `max(gen(x))` of a generator function: `max(v for v in gen(x))`
                item = cst.Name(self.n.comps.loop_name("value"))
                loop = cst.GeneratorExp(item, cst.CompFor(item, positional[0]))
                self.n.desugar.alias_tree(loop, positional[0])
                return self.extremum_of_loop(fn, loop, node, target)
            if items is None and fn in (builtins.max, builtins.min) and isinstance(
                    positional[0], (cst.GeneratorExp, cst.ListComp)):
                return self.extremum_of_loop(fn, positional[0], node, target)
            if items is None and fn in (builtins.tuple, builtins.list) and isinstance(
                    positional[0], (cst.GeneratorExp, cst.ListComp)):
                return grown_sequence(self.n, fn, positional[0], node, target)
            if items is None:
                return None
            if fn in (builtins.tuple, builtins.list):
                return self.sequence(fn, items, node, target)
            if all(isinstance(a, Const) for a in items):
                value = fn(a.value for a in items)
                seq = "[" + ", ".join(a.text for a in items) + "]"
                return self.constant(value, f"{text}({seq})", [a.text for a in items],
                                     target, node)
            if fn in (builtins.max, builtins.min) and items:
                return self.extremum(fn, items, node, target)
            if fn in (builtins.any, builtins.all) and items:
                return self.either(fn, items, node, target)
            return None
        atoms = [self.n.exprs.expr(a) for a in positional]
        if atoms and all(isinstance(a, Const) for a in atoms):
            try:
                value = fn(*(a.value for a in atoms))
            except Exception as exc:
                raise self.error(node, f"`{text}(...)` raises {type(exc).__name__}: {exc}",
                                 "call it with the values it takes") from None
            if fn is math.prod:  # (spelled as written: the emitted code reads `math`)
                self.n.resolver.bind_namespace(_root(text), node)
            return self.constant(value, _spelled(text, [a.text for a in atoms], value),
                                 [a.text for a in atoms], target, node)
        if fn in (builtins.max, builtins.min) and len(atoms) >= 2:
            return self.extremum(fn, atoms, node, target)
        shape = self.n.lets.get(atoms[0].name) if len(atoms) == 1 and isinstance(
            atoms[0], Var) else None
        if fn is math.prod and getattr(shape, "prim", None) == "shape":
            # `math.prod(x.shape)`: the number of elements, `x.size` (a Python int)
            return self.n.calls.apply("size", list(shape.args), {}, node, target, "size")
        if fn is builtins.round and len(atoms) in (1, 2):
            # Python's round of a NumPy number is NumPy's (half to even); no derivative
            # flows, as through JAX's `round` of an array
            decimals = {"decimals": atoms[1]} if len(atoms) == 2 else {}
            return self.n.calls.apply("round", atoms[:1], decimals, node, target, text)
        return None

    def constant(self, value: Any, text: str, texts: list[str], target: str | None,
                 node: Any) -> Atom:
        if all(simple_text(t) for t in texts) and _is_literal(value):
            text = repr(value)
        const = Const(value, text)
        return const if target is None else self.n.emit(target, "identity", (const,), {},
                                                         node)

    def extremum(self, fn: Any, items: list[Atom], node: Any, target: str | None,
                 keys: list[Atom] | None = None) -> Atom:
        """Python's ``max(a, b, ...)``: ``m = a``, then for each next ``b``, ``b if
        b > m else m`` (``<`` for ``min``), so a tie keeps the first; with ``keys``
        (``key=f``), the test compares the items' keys, and the best key goes along."""
        word, prim = ("max", "greater") if fn is builtins.max else ("min", "less")
        best, best_key = items[0], None if keys is None else keys[0]
        for k, item in enumerate(items[1:], 1):
            last = k == len(items) - 1
            key = item if keys is None else keys[k]
            test = self.n.emit(self.n.names.fresh(f"{word}_changes"), prim,
                               (key, best if keys is None else best_key), {}, node)
            name = target if last and target is not None else self.n.names.fresh(
                {"max": "larger", "min": "smaller"}[word])
            chosen = [(name, item, best)]
            if keys is not None and not last:
                chosen.append((self.n.names.fresh(f"{word}_key"), key, best_key))
            outer = self.n.out
            branches = []
            for side in (1, 2):
                self.n.out = []
                for bound, *values in chosen:
                    self.n.emit(bound, "identity", (values[side - 1],), {}, node)
                branches.append(self.n.out)
            self.n.out = outer
            outer.append(If(test, branches[0], branches[1], self.n.loc(node),
                            joins=[bound for bound, *_ in chosen]))
            best = Var(name)
            if len(chosen) > 1:
                best_key = Var(chosen[1][0])
        return best

    def extremum_by_key(self, fn: Any, text: str, positional: list, keywords: list,
                        node: Any, target: str | None) -> Atom:
        """``max(items, key=f)`` over items known when the function is transformed (a
        literal, a module constant, a dict's keys): each item's key is ``f(item)``, and
        the first item of the largest key wins, as in Python."""
        names = [k.keyword.value for k in keywords]
        items = None
        if names == ["key"]:
            items = self.n.comps.items_of(positional[0]) if len(positional) == 1 else [
                self.n.exprs.expr(a) for a in positional]
        if not items:
            raise self.error(node, f"`{text}` with `{', '.join(names)}=` is supported "
                             "only as `key=` over items known when the function is "
                             "transformed", f"write `{text}` over the values")
        inlined = inlined_keys(self.n, keywords[0].value, items)
        if inlined is not None:  # (`key=lambda k: d[k]` over d's keys: `d["a"]`, ...)
            return self.extremum(fn, items, node, target, inlined)
        fv = self.n.funcs.value_of(keywords[0].value)
        if fv is None:
            raise self.error(keywords[0].value, "this `key=` is not a function s2s knows",
                             "pass a function defined in a file, or a lambda")
        keys = [self.n.funcs.call(fv, node, None, ([item], {})) for item in items]
        return self.extremum(fn, items, node, target, keys)

    def truth_of_rows(self, fn: Any, operand: Any, node: Any,
                      target: str | None) -> Atom:
        """``any(x > 0)``, ``all(v > 0 for v in x)`` over a run-time array: Python's
        test of each row, which is NumPy's ``np.any``/``np.all`` of a vector (of a
        matrix, Python would test each row's truth and raise)."""
        if isinstance(operand, cst.GeneratorExp):  # (its items, as a list)
            listed = cst.ListComp(operand.elt, operand.for_in)
            _alias_tree(listed, operand, self.n.desugar)
            operand = listed
        atom = self.n.exprs.expr(operand)
        name = "any" if fn is builtins.any else "all"
        return self.n.calls.apply(name, [atom], {}, node, target, name)

    def extremum_of_loop(self, fn: Any, comp: Any, node: Any, target: str | None) -> Atom:
        """``max(f(v) for v in xs)`` over a list whose length only the call knows: the
        item at the ``np.argmax`` of the items' stack, the first maximal one, as
        Python's ``max`` keeps the first of a tie (and gives it the gradient).  Python
        compares the items: one of more than one number raises, at the line, as
        Python's ValueError; no items, NumPy's error for a stack of none."""
        word = "max" if fn is builtins.max else "min"
        listed = self._spelled(self.n.comps.loop(comp, None, "list"), node)  # (its items)
        self.n.resolver.bind_namespace("np", node)
        stacked = self._spelled(self._expression(f"np.stack({listed})", node), node)
        at = self.n.loc(node)
        message = (f"{word}() compares the items, which are arrays of more than one "
                   "number here (Python: the truth value of an array with more than one "
                   f"element is ambiguous)\n  File \"{at.file}\", line {at.line}\n    "
                   f"{at.text.strip()}\n  Instead: np.{word}(np.stack([...]), axis=0) for "
                   "the elementwise one")
        check = cst.parse_statement(f"if np.size({stacked}) != np.shape({stacked})[0]:\n"
                                    f"    raise ValueError({message!r})\n")
        _alias_tree(check, node, self.n.desugar)
        self.n.out += self.n.stmts.block([check])
        # Python's max keeps an item only where a later one compares greater: a NaN
        # first item stays, a later NaN never wins (np.argmax would pick the NaN)
        rows = f"np.reshape({stacked}, np.shape({stacked})[:1])"
        far = "-np.inf" if word == "max" else "np.inf"
        at = (f"np.where(np.isnan({rows}[0]), 0, np.arg{word}(np.where(np.isnan({rows}), "
              f"{far}, {rows})))")
        return self.n.exprs.expr(self._tree(f"{stacked}[{at}]", node), target)

    def _spelled(self, atom: Atom, node: Any) -> str:
        return cst.Module([]).code_for_node(self.n.comps.static.atom_node(atom, node))

    def _expression(self, text: str, node: Any) -> Atom:
        return self.n.exprs.expr(self._tree(text, node))

    def _tree(self, text: str, node: Any) -> Any:
        tree = cst.parse_expression(text)
        _alias_tree(tree, node, self.n.desugar)
        return tree

    def either(self, fn: Any, items: list[Atom], node: Any,
               target: str | None) -> Atom | None:
        """``all([a, b])`` is ``a and b``, ``any`` is ``or``, over known items."""
        prim = "and_" if fn is builtins.all else "or_"
        out = items[0]
        if len(items) == 1:
            return None  # (`bool(a)`: not an IR operation; `all([a, b])` is `a and b`)
        for k, item in enumerate(items[1:], 1):
            last = k == len(items) - 1
            out = self.n.emit(self.n.exprs.target(target if last else None, "cond"), prim,
                              (out, item), {}, node)
        return out

    def sequence(self, fn: Any, items: list[Atom], node: Any, target: str | None) -> Atom:
        """``tuple([a, b])``, ``list(x for x in (a, b))``: the literal of its items."""
        if all(isinstance(a, Const) for a in items) and target is None:
            value = fn(a.value for a in items)
            texts = [a.text for a in items]
            inner = ", ".join(texts) + ("," if fn is builtins.tuple and len(texts) == 1
                                        else "")
            return Const(value, f"({inner})" if fn is builtins.tuple else f"[{inner}]")
        prim = "make_tuple" if fn is builtins.tuple else "make_list"
        out = self.n.emit(self.n.exprs.target(target, "items"), prim, tuple(items), {}, node)
        if prim == "make_list":
            self.n.lists.add(out.name)
        return out

    def dict_call(self, node: cst.Call, positional: list, keywords: list,
                  target: str | None) -> Atom | None:
        """``dict(a=a, b=b)`` and ``dict({...})``: a dict literal; ``dict(d)``, a copy of
        a dict: the literal of its items where the function built it, else a
        comprehension over ``d.items()`` (an argument's keys are known per call)."""
        if len(positional) == 1 and isinstance(positional[0], cst.Name) and \
                positional[0].value in self.n.local_names:
            keys = self.n.dicts.settled(self.n.env.get(positional[0].value))
            base = positional[0]
            if keys is not None:
                items = [cst.DictElement(cst.SimpleString(repr(k)), cst.Subscript(
                    base, [cst.SubscriptElement(cst.Index(cst.SimpleString(repr(k))))]))
                    for k in keys]
                positional = [cst.Dict(items)]
            elif not keywords:
                positional = [cst.parse_expression(
                    f"{{k: v for k, v in {base.value}.items()}}")]
            else:  # dict(p, w=w) of an argument: {**p, "w": w}
                positional = [cst.Dict([cst.StarredDictElement(base)])]
            for new in positional:
                _alias_tree(new, node, self.n.desugar)
        elif len(positional) == 1 and _pairs(positional[0], self.n.local_names):
            # dict(zip(keys, values)), dict([("a", x), ...]): the dict comprehension
            taken = set(self.n.env) | set(self.n.local_names)
            k, v = (next(f"{stem}{'_' * i}" for i in range(len(taken) + 1)
                         if f"{stem}{'_' * i}" not in taken) for stem in ("key", "value"))
            made = cst.DictComp(cst.Name(k), cst.Name(v), cst.CompFor(
                cst.Tuple([cst.Element(cst.Name(k)), cst.Element(cst.Name(v))]),
                positional[0]))
            _alias_tree(made, node, self.n.desugar)
            positional = [made]
        if len(positional) > 1 or (positional and not isinstance(positional[0], (
                cst.Dict, cst.DictComp))):
            return None
        elements = list(positional[0].elements) if positional and isinstance(
            positional[0], cst.Dict) else []
        if positional and isinstance(positional[0], cst.DictComp):
            if keywords:
                return None
            return self.n.exprs.expr(positional[0], target)
        elements += [cst.DictElement(cst.SimpleString(repr(a.keyword.value)), a.value)
                     for a in keywords]
        new = cst.Dict(elements)
        self.n.desugar.alias(new, node)
        return self.n.exprs.expr(new, target)

    def membership(self, node: cst.Comparison, target: str | None) -> Atom | None:
        """``x in (a, b)`` (``not in``) over a sequence of known length: a constant
        over constants, else ``x == a or x == b`` (``x != a and x != b``)."""
        if len(node.comparisons) != 1:
            return None
        comp = node.comparisons[0]
        negated = isinstance(comp.operator, cst.NotIn)
        if not negated and not isinstance(comp.operator, cst.In):
            return None
        if (decided := kwdicts.decide(self.n, node)) is not None:  # (`k in kw`)
            return self.constant(decided, repr(decided), [], target, node)
        left = self.n.exprs.expr(node.left)
        items = self.n.comps.items_of(comp.comparator)
        if items is None:
            right = self.n.exprs.expr(comp.comparator)
            items = literals.set_items(self.n, right)  # (a set of constants)
        if items is None:
            if isinstance(left, Const) and isinstance(right, Const):
                value = (left.value not in right.value) if negated else (
                    left.value in right.value)
                word = "not in" if negated else "in"
                return self.constant(value, f"{left.text} {word} {right.text}",
                                     [left.text, right.text], target, node)
            # (an array, an argument: decided per call, frontend/kwdicts.py)
            return kwdicts.contains(self.n, left, right, negated, node, target)
        if isinstance(left, Const) and all(isinstance(a, Const) for a in items):
            value = any(left.value == a.value for a in items)
            value = not value if negated else value
            seq = "(" + ", ".join(a.text for a in items) + ("," if len(items) == 1 else "") \
                + ")"
            word = "not in" if negated else "in"
            return self.constant(bool(value), f"{left.text} {word} {seq}",
                                 [left.text] + [a.text for a in items], target, node)
        if not items:
            return Const(negated, repr(negated))
        prim, join = ("not_equal", "and_") if negated else ("equal", "or_")
        result: Atom | None = None
        for k, item in enumerate(items):
            last = k == len(items) - 1
            this = self.n.emit(self.n.exprs.target(
                target if last and result is None else None, "cond"), prim,
                (left, item), {}, node)
            result = this if result is None else self.n.emit(
                self.n.exprs.target(target if last else None, "cond"), join,
                (result, this), {}, node)
        return result


def _alias_tree(tree: Any, node: Any, desugar: Any) -> None:
    """Nodes s2s wrote for ``node`` report its position (the user's keep theirs)."""

    class Walk(cst.CSTVisitor):
        def on_visit(self, new: Any) -> bool:
            if new not in desugar.positions:
                desugar.alias(new, node)
            return True

    tree.visit(Walk())


def _pairs(node: Any, local_names: Any) -> bool:
    """Is ``node`` an iterable of pairs written out: ``zip(a, b)``, a list or tuple
    literal of pairs?"""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
            node.func.value == "zip" and "zip" not in local_names and len(node.args) == 2:
        return True
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
            node.func.value == "sorted" and "sorted" not in local_names and len(
            node.args) == 1:  # dict(sorted(p.items())): the items in key order
        node = node.args[0].value
    if isinstance(node, cst.Call) and not node.args and isinstance(
            node.func, cst.Attribute) and node.func.attr.value == "items":
        return True  # dict(p.items())
    return isinstance(node, (cst.List, cst.Tuple)) and all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Tuple)
        and len(e.value.elements) == 2 for e in node.elements)


def undecided_type_test(n: Any, node: cst.Call) -> None:
    """``isinstance(v, T)`` that ``type_test`` could not decide: refused at the call,
    naming what s2s decides (a parameter's type, from the call), where ``v`` is not a
    constant either (those the static reader decides)."""
    if len(node.args) != 2 or any(a.keyword for a in node.args) or (
            n.comps.static.static_value(node) is not NOVALUE):
        return
    text = cst.Module([]).code_for_node(node)
    if "__s2s_" in text:  # (an unrolled comprehension's item: the line shows the test)
        text = "isinstance(...)"
    raise n.unsupported(
        node, f"`{text}` tests a Python type, which s2s decides when it transforms the "
        "function only for a parameter, from the value the call passes (a list, tuple "
        "or dict literal, a constant); here the value is computed in the function, an "
        "item of a loop, or an array passed on",
        "decide it outside and pass the choice as an argument (a keyword with a "
        "default), or branch on `x.ndim` / `x.shape`; over a nested list, walk it "
        "outside the function or pass its leaves as one flat list")


def grown_sequence(n: Any, fn: Any, loop: Any, node: Any, target: str | None) -> Atom:
    """``tuple(a + h * b for a, b in zip(s, k))`` over what is known only per call
    (a callee's tuple parameters): the list comprehension, a list grown in a loop,
    bound to a fresh name, then ``tuple(name)`` (``list(...)``: the list itself)."""
    comp = cst.ListComp(loop.elt, loop.for_in) if isinstance(loop, cst.GeneratorExp) \
        else loop
    n.desugar.alias_tree(comp, loop)
    grown = cst.Name(n.names.fresh("items"))
    n.local_names.add(grown.value)
    n.desugar.alias(grown, loop)
    n.stmts.assign(grown, comp)
    if fn is builtins.list:
        return n.exprs.expr(grown, target)
    call = cst.Call(cst.Name("tuple"), [cst.Arg(grown)])
    n.desugar.alias(call, node)
    return n.exprs.expr(call, target)


def dict_of_spreads(n: Any, node: cst.Call, target: str | None) -> Atom | None:
    """``dict(lr=0.1, **{"wd": 0.01})``: the literal ``{"lr": 0.1, **{"wd": 0.01}}``
    where each ``**`` spreads a dict literal of string keys none of which is given
    twice (Python's TypeError then: left to the refusal); None otherwise."""
    seen: set[str] = set()
    elements: list[Any] = []
    for a in node.args:
        if a.keyword is not None:
            keys = [a.keyword.value]
            elements.append(cst.DictElement(cst.SimpleString(repr(keys[0])), a.value))
        elif a.star == "**" and isinstance(a.value, cst.Dict) and all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                for e in a.value.elements):
            keys = [literal_value(e.key.value) for e in a.value.elements]
            elements.append(cst.StarredDictElement(a.value))
        else:
            return None
        if seen & set(keys) or len(set(keys)) != len(keys):
            return None
        seen |= set(keys)
    new = cst.Dict(elements)
    _alias_tree(new, node, n.desugar)
    return n.exprs.expr(new, target)
