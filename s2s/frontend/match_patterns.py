"""``match`` with capture, sequence, mapping and builtin-class patterns, decided when
the code is generated: the subject is a Python value then (a dict, tuple, list, str
or number argument or constant, a callee's dict), so which case runs is part of what
the code is made for, as an ``if`` on ``"k" in kw`` is::

    match spec:                                  if __s2s_case_0:
        case {"kind": "l2", "weight": lam}:          lam = spec["weight"]
            y = lam * np.sum(w ** 2)                 y = lam * np.sum(w ** 2)
        case ("sgd", _) | ["sgd"]:               elif __s2s_case_1:
            y = 0.0                                  y = 0.0
        case _:                                  else:
            y = np.sum(w)                            y = np.sum(w)

Each ``__s2s_case_k`` names its subject and pattern in ``Desugar.cases``; the
lowerer decides it (``verdict``) from the subject's value at this call: a literal is
compared with ``==``, ``None``/``True``/``False`` with ``is``, a sequence pattern needs
a tuple or list of its length, a mapping pattern a dict with its keys, ``int()``,
``str(s)``, ... the built-in type.  Captures become assignments at the top of their
case's body (``**rest`` a dict comprehension of the other keys, ``*rest`` a slice);
a guard reads its captures written in.  A subject known only when the function runs
(an array) is refused at the ``match``."""

from __future__ import annotations

from typing import Any

import libcst as cst
import numpy as np

from ..ir.nodes import Const, Var
from .static import NOVALUE

_BUILTIN_CLASSES = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str,
                    tuple)


def pattern_chain(match: cst.Match, cases: dict, alias: Any) -> Any:
    """The ``if``/``elif`` chain of ``match`` with each case's test a name of
    ``cases`` (its subject and pattern, decided by ``verdict``), or None where the
    subject is not a name, a dotted name or a constant subscript of one (read again
    in each case, it must read the same value), or a case cannot be written so."""
    subject = match.subject
    if not _pure(subject):
        return None
    tests, bodies = [], []
    for k, case in enumerate(match.cases):
        binds = _binds(subject, case.pattern)
        if binds is None:
            return None
        if _irrefutable(case.pattern) and case.guard is None:
            if k != len(match.cases) - 1:
                return None  # (Python refuses this too)
            tests.append(None)
        else:
            name = f"__s2s_case_{len(cases)}"
            cases[name] = (subject, case.pattern, match)
            test: Any = cst.Name(name)
            alias(test, case)
            if case.guard is not None:
                guard = _written_in(case.guard, dict(binds), alias)
                test = cst.BooleanOperation(test, cst.And(), _parens(guard))
            tests.append(test)
        assigns = [cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Name(name))], value)]) for name, value in binds]
        for line in assigns:
            _alias_all(line, case, alias, keep=subject)
        bodies.append(case.body.with_changes(body=[*assigns, *case.body.body]))
    chain: Any = _no_case(match, alias) if tests[-1] is not None and isinstance(
        subject, cst.Attribute) and subject.attr.value == "shape" else None
    for test, body, case in reversed(list(zip(tests, bodies, match.cases))):
        chain = cst.Else(body) if test is None else cst.If(test, body, chain)
        alias(chain, case)
    if isinstance(chain, cst.Else):
        chain = cst.If(cst.Name("True"), chain.body)
    alias(chain, match)
    return chain


def _no_case(match: cst.Match, alias: Any) -> cst.Else:
    """A ``match`` on an array's shape with no case for every rank: an array of
    another rank raises (``ValueError``) where the code runs, never goes on with
    values no case wrote (Python goes on past the ``match``; a name its cases bind
    is then unbound; the line quoted is the ``match``'s)."""
    raising = cst.parse_statement('raise ValueError("no `match` case for this shape")')
    _alias_all(raising, match, alias, keep=None)
    return cst.Else(cst.IndentedBlock([raising]))


def verdict(n: Any, name: str) -> Any:
    """Does the case ``name`` of ``Desugar.cases`` match its subject at this call?  A
    bool, or the test the code makes where it runs (``cfg["kind"] == "l2"`` of a dict
    argument's value); refused at the ``match`` where the structure is not known."""
    subject, pattern, match = n.desugar.cases[name]
    found = _matches(n, _view(n, subject), pattern, subject)
    if found is None:
        text = cst.Module([]).code_for_node(subject)
        err = n.unsupported(
            match, f"this `match` tests `{text}`, a value known only when the function "
            "runs (an array, its shape, or a number computed from one) against a "
            "capture, sequence, mapping or class pattern; s2s decides such a `match` "
            "when it transforms the function, from a subject that is a dict, tuple, "
            "list, string or number the call passes or a constant",
            "branch on the array with `np.where`, or match on a Python value (a "
            "keyword argument, a config dict) that chooses the computation")
        err.per_call = True  # (a parameter: made per call's string, keys or length)
        raise err
    return found if isinstance(found, bool) else _all(found)


def written_cases(n: Any, node: cst.If) -> cst.If:
    """The ``if`` with each case name of its test replaced by its ``verdict``:
    ``True``/``False``, decided now, or the test the code makes where it runs."""
    table = {name: (cst.Name(repr(found)) if isinstance(found, bool) else _parens(found))
             for name in _case_names(node.test, n.desugar.cases)
             if (found := verdict(n, name)) is not None}
    if not table:
        return node
    for name, new in table.items():
        n.desugar.alias(new, node)
    return node.with_changes(test=_written_in(node.test, table, n.desugar.alias))


def _case_names(test: Any, cases: dict) -> list[str]:
    found: list[str] = []

    class Find(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            if name.value in cases:
                found.append(name.value)

    test.visit(Find())
    return found


class _Seq:
    """A tuple or list whose length is known now; its items read by ``item``."""

    def __init__(self, kind: type, length: int, item: Any) -> None:
        self.kind, self.length, self.item = kind, length, item


class _Dict:
    """A dict whose keys are known now; its values read by ``item``."""

    def __init__(self, keys: tuple, item: Any) -> None:
        self.keys, self.item = keys, item


_UNKNOWN = object()  # (an array, or a number computed where the code runs)
_SHAPE = object()  # (an array's shape: a tuple whose length is the array's rank)


def _view(n: Any, node: Any) -> Any:
    """What is known now of the value of ``node``: the value itself (a constant, a
    string parameter made per call), a ``_Seq`` or ``_Dict`` of its structure, or
    _UNKNOWN."""
    value = n.comps.static.static_value(node)
    if value is not NOVALUE:
        return value
    if isinstance(node, cst.Attribute) and node.attr.value == "shape":
        return _SHAPE  # (`match x.shape: case (n, m):`: its length tested where it runs)
    try:
        seen = _atom_view(n, n.exprs.expr(node))
    except Exception:  # (not readable so: not a structure known now)
        return _UNKNOWN
    if seen is _UNKNOWN and isinstance(node, cst.Name) and node.value in n.local_names and (
            keys := n.dicts.known(n.env.get(node.value))) is not None:
        return _Dict(tuple(keys), lambda key: _view(n, _index(node, _literal(key))))
    return seen


def _atom_view(n: Any, atom: Any) -> Any:
    if isinstance(atom, Const):
        return atom.value
    if not isinstance(atom, Var):
        return _UNKNOWN
    bound = getattr(n, "bound_strings", {})  # (a str or int parameter made per call)
    if atom.name in bound:
        return bound[atom.name]
    lengths = getattr(n, "spread_lengths", {})  # (a tuple parameter's length per call)
    known = [count for ssa, count in lengths.values() if ssa == atom.name]
    if known:
        return _Seq(tuple, known[0], lambda k: _UNKNOWN)
    let = n.lets.get(atom.name)
    if let is None or let.target != atom.name:
        return _UNKNOWN
    if let.prim == "identity" and isinstance(let.args[0], Const):
        return let.args[0].value
    if let.prim in ("make_tuple", "make_list") and not let.params and (
            atom.name not in n.loop_carried):
        return _Seq(tuple if let.prim == "make_tuple" else list, len(let.args),
                    lambda k: _atom_view(n, let.args[k]))
    if let.prim == "make_dict":
        keys = n.dicts.known(atom.name)
        if keys is not None and "keys" in let.params and len(keys) == len(let.args):
            values = dict(zip(keys, let.args))
            return _Dict(tuple(keys), lambda key: _atom_view(n, values[key]))
    return _UNKNOWN


def _item(n: Any, view: Any, key: Any) -> Any:
    if isinstance(view, (_Seq, _Dict)):
        return view.item(key)
    return view[key]


def _literal(key: Any) -> Any:
    return cst.parse_expression(repr(key))


def _matches(n: Any, view: Any, pattern: Any, node: Any) -> Any:
    """True, False, None where it is not known now, or the list of the run-time
    ``==`` tests it needs (a literal against a dict argument's value: its keys are
    known per call, its values where the code runs)."""
    if isinstance(pattern, cst.MatchAs):
        return True if pattern.pattern is None else _matches(n, view, pattern.pattern, node)
    if isinstance(pattern, cst.MatchOr):
        found: list = []
        for element in pattern.patterns:
            one = _matches(n, view, element.pattern, node)
            if one is None or one is True:
                return one
            if one is not False:
                found.append(_all(one))
        if not found:
            return False
        test = found[0]
        for part in found[1:]:
            test = cst.BooleanOperation(_parens(test), cst.Or(), _parens(part))
        return [test]
    if isinstance(pattern, cst.MatchValue) and view is _UNKNOWN and _is_key_read(node):
        return [cst.Comparison(node, [cst.ComparisonTarget(cst.Equal(), pattern.value)])]
    if view is _UNKNOWN:
        return None
    if isinstance(pattern, (cst.MatchValue, cst.MatchSingleton)):
        if isinstance(view, (_Seq, _Dict)):
            return False if isinstance(pattern, cst.MatchSingleton) else None
        if isinstance(view, np.ndarray):
            return None
        expected = n.comps.static.static_value(pattern.value)
        if expected is NOVALUE:
            return None
        same = view is expected if isinstance(pattern, cst.MatchSingleton) else (
            view == expected)
        return bool(same) if isinstance(same, (bool, np.bool_)) else None
    if isinstance(pattern, (cst.MatchList, cst.MatchTuple)):
        return _sequence(n, view, pattern, node)
    if isinstance(pattern, cst.MatchMapping):
        if isinstance(view, _Seq) or not isinstance(view, (_Dict, dict)):
            return False if not isinstance(view, np.ndarray) else None
        keys = view.keys if isinstance(view, _Dict) else view
        parts = []
        for element in pattern.elements:
            key = n.comps.static.static_value(element.key)
            if key is NOVALUE:
                return None
            if key not in keys:
                return False
            parts.append((_item(n, view, key), element.pattern, _index(node, element.key)))
        return _together(n, parts)
    if isinstance(pattern, cst.MatchClass):
        return _class(n, view, pattern, node)
    return None


def _together(n: Any, parts: list) -> Any:
    """All of ``(view, pattern, node)`` matching: the first False or None decides,
    else True, or the run-time tests they need."""
    tests: list = []
    for view, pattern, node in parts:
        found = _matches(n, view, pattern, node)
        if found is None or found is False:
            return found
        if found is not True:
            tests += found
    return tests or True


def _all(tests: list) -> Any:
    test = tests[0]
    for part in tests[1:]:
        test = cst.BooleanOperation(test, cst.And(), part)
    return test


def _is_key_read(node: Any) -> bool:
    """A value read by a constant key or position (what a mapping or sequence pattern
    reads of a dict or tuple argument)."""
    return isinstance(node, cst.Subscript) and isinstance(
        node.slice[0].slice.value, (cst.SimpleString, cst.Integer, cst.UnaryOperation))


def _sequence(n: Any, view: Any, pattern: Any, node: Any) -> Any:
    if isinstance(view, np.ndarray):
        return None
    if view is _SHAPE:
        return _shape(n, pattern, node)
    if isinstance(view, _Seq):
        length = view.length
    elif isinstance(view, (tuple, list)):
        length = len(view)
    else:
        return False  # (a str, dict or number is not a sequence to `match`)
    elements = list(pattern.patterns)
    star = [k for k, e in enumerate(elements) if isinstance(e, cst.MatchStar)]
    fixed = len(elements) - len(star)
    if (length != fixed) if not star else (length < fixed):
        return False
    parts = []
    for k, element in enumerate(elements):
        if isinstance(element, cst.MatchStar):
            continue
        index = k if not star or k < star[0] else length - (len(elements) - k)
        parts.append((_item(n, view, index), element.value,
                      _index(node, cst.Integer(str(index)))))
    return _together(n, parts)


def _shape(n: Any, pattern: Any, node: Any) -> Any:
    """A sequence pattern against an array's shape: the test of its length where the
    code runs (``len(x.shape) == 2``), and of each item's pattern (``case (3, n)``:
    ``x.shape[0] == 3``; a capture or ``_``: none)."""
    elements = list(pattern.patterns)
    star = [k for k, e in enumerate(elements) if isinstance(e, cst.MatchStar)]
    if star:
        return None
    length = cst.Comparison(cst.Call(cst.Name("len"), [cst.Arg(node)]), [
        cst.ComparisonTarget(cst.Equal(), cst.Integer(str(len(elements))))])
    parts = _together(n, [(_UNKNOWN, e.value, _index(node, cst.Integer(str(k))))
                          for k, e in enumerate(elements)])
    if parts is None or parts is False:
        return parts
    return [length] + ([] if parts is True else [_parens(t) for t in parts])


def _class(n: Any, view: Any, pattern: cst.MatchClass, node: Any) -> Any:
    cls = n.comps.static.static_value(pattern.cls)
    if cls not in _BUILTIN_CLASSES or pattern.kwds or len(pattern.patterns) > 1:
        return None  # (a user class: its __match_args__ and attributes are not read)
    if isinstance(view, np.ndarray):
        return None
    kind = view.kind if isinstance(view, _Seq) else dict if isinstance(
        view, _Dict) else type(view)
    if not issubclass(kind, cls):
        return False
    return True if not pattern.patterns else _matches(n, view, pattern.patterns[0].value,
                                                      node)


# ---- the captures, written as assignments -------------------------------------------


def _binds(subject: Any, pattern: Any) -> list[tuple[str, Any]] | None:
    """``(name, expression)`` per capture of ``pattern`` on ``subject``; None for a
    pattern this rewrite does not write (a user class's, alternatives that capture)."""
    if isinstance(pattern, cst.MatchAs):
        inner = [] if pattern.pattern is None else _binds(subject, pattern.pattern)
        if inner is None:
            return None
        return inner + ([(pattern.name.value, subject)] if pattern.name else [])
    if isinstance(pattern, (cst.MatchValue, cst.MatchSingleton)):
        return []
    if isinstance(pattern, cst.MatchOr):
        parts = [_binds(subject, e.pattern) for e in pattern.patterns]
        if any(p is None for p in parts):
            return None
        same = {tuple((name, _code(v)) for name, v in p) for p in parts}
        return parts[0] if len(same) == 1 else None  # (`int(k) | float(k)`)
    if isinstance(pattern, (cst.MatchList, cst.MatchTuple)):
        return _sequence_binds(subject, list(pattern.patterns))
    if isinstance(pattern, cst.MatchMapping):
        out: list = []
        for element in pattern.elements:
            inner = _binds(_index(subject, element.key), element.pattern)
            if inner is None:
                return None
            out += inner
        if pattern.rest is not None:
            out.append((pattern.rest.value, _rest_of(subject, [
                e.key for e in pattern.elements])))
        return out
    if isinstance(pattern, cst.MatchClass):
        if pattern.kwds or len(pattern.patterns) > 1 or not isinstance(
                pattern.cls, cst.Name) or pattern.cls.value not in {
                    c.__name__ for c in _BUILTIN_CLASSES}:
            return None
        return [] if not pattern.patterns else _binds(subject, pattern.patterns[0].value)
    return None


def _sequence_binds(subject: Any, elements: list) -> list | None:
    star = [k for k, e in enumerate(elements) if isinstance(e, cst.MatchStar)]
    out: list = []
    after = len(elements) - 1 - star[0] if star else 0
    for k, element in enumerate(elements):
        if isinstance(element, cst.MatchStar):
            if element.name is not None:
                upper = None if not after else cst.UnaryOperation(
                    cst.Minus(), cst.Integer(str(after)))
                part = cst.Subscript(subject, [cst.SubscriptElement(cst.Slice(
                    cst.Integer(str(k)), upper))])
                out.append((element.name.value, cst.Call(cst.Name("list"),
                                                         [cst.Arg(part)])))
            continue
        index: Any = cst.Integer(str(k)) if not star or k < star[0] else \
            cst.UnaryOperation(cst.Minus(), cst.Integer(str(len(elements) - k)))
        inner = _binds(cst.Subscript(subject, [cst.SubscriptElement(cst.Index(index))]),
                       element.value)
        if inner is None:
            return None
        out += inner
    return out


def _code(node: Any) -> str:
    return cst.Module([]).code_for_node(node)


def _index(subject: Any, key: Any) -> Any:
    return cst.Subscript(subject, [cst.SubscriptElement(cst.Index(key))])


def _rest_of(subject: Any, keys: list) -> Any:
    """``{k: v for k, v in subject.items() if k not in (keys)}``."""
    taken = cst.Tuple([cst.Element(k) for k in keys] or [], lpar=[cst.LeftParen()],
                      rpar=[cst.RightParen()]) if len(keys) != 1 else cst.Tuple(
                          [cst.Element(keys[0], comma=cst.Comma())])
    return cst.parse_expression("{k: v for k, v in s.items() if k not in t}").visit(
        _Put({"s": subject, "t": taken}))


class _Put(cst.CSTTransformer):
    def __init__(self, table: dict) -> None:
        self.table = table

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
        return self.table.get(updated.value, updated)


def _written_in(guard: Any, table: dict, alias: Any) -> Any:
    """The guard with each capture's name replaced by what it reads (not an
    attribute's name: ``p.lam`` keeps its ``lam``)."""
    if not table:
        return guard

    class Put(cst.CSTTransformer):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
            value = original.value.visit(self)
            return updated.with_changes(value=value)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
            new = table.get(updated.value)
            if new is None:
                return updated
            alias(new, original)
            return new

    return guard.visit(Put())


def _pure(node: Any) -> bool:
    """A subject read again in each case reads the same value: a name, a dotted name
    or a constant subscript of one."""
    if isinstance(node, cst.Name):
        return node.value not in ("True", "False", "None")
    if isinstance(node, cst.Attribute):
        return _pure(node.value)
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(
            node.slice[0].slice, cst.Index):
        key = node.slice[0].slice.value
        return _pure(node.value) and isinstance(key, (cst.SimpleString, cst.Integer))
    return False


def _irrefutable(pattern: Any) -> bool:
    return isinstance(pattern, cst.MatchAs) and pattern.pattern is None


def _parens(node: Any) -> Any:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _alias_all(tree: Any, old: Any, alias: Any, keep: Any) -> None:
    """Every node of ``tree`` reports ``old``'s position but the user's ``keep``."""
    class Walk(cst.CSTVisitor):
        def on_visit(self, node: Any) -> bool:
            if node is keep:
                return False
            alias(node, old)
            return True

    tree.visit(Walk())
