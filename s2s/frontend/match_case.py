"""``match`` on a value, rewritten as the ``if``/``elif`` chain it means.

Only the forms whose meaning is a comparison: a subject that is a name (or a dotted
name: reading it again reads the same value), and cases that are literals or dotted
constants (``case "relu":``, compared with ``==``), ``None``/``True``/``False``
(compared with ``is``), alternatives of those (``case "a" | "b":``), an optional
guard (``case "a" if deep:``), and a last ``case _:`` or ``case other:`` (a capture:
``other = kind`` first in its body; a body that only raises reads ``kind`` in place of
``other``, so it stays the check ``if not (...): raise``)::

    match kind:                      if kind == "relu":
        case "relu":                     y = np.maximum(x, 0.0)
            y = np.maximum(x, 0.0)   elif kind == "gelu" or kind == "tanh":
        case "gelu" | "tanh":            y = np.tanh(x)
            y = np.tanh(x)           else:
        case _:                          y = x
            y = x

Any other pattern (a capture before the last case, a sequence, a mapping, a built-in class) makes the chain
of ``match_patterns.py``, decided when the code is generated; what neither writes stays
a ``match``, which the lowerer refuses at its line.  Synthesized nodes report the position of the node they
replace, so errors quote the user's line.
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from .loop_else import StatementRewriter
from .match_patterns import pattern_chain


class MatchToIf(StatementRewriter):
    """Rewrites each ``match`` of the forms above in a function's body (not in nested
    ``def``s, lambdas or classes: each is its own function); one with other patterns
    becomes the chain of ``match_patterns.py``, its cases decided where it is lowered
    (``cases``: the table of its tests)."""

    def __init__(self, alias: Any, cases: dict | None = None) -> None:
        super().__init__(alias)
        self.cases = {} if cases is None else cases

    def leave_Match(self, original: cst.Match, updated: cst.Match) -> Any:
        chain = self._literal_chain(original, updated)
        if chain is None:
            self.alias(updated, original)  # (a refusal of its subject quotes its line)
            chain = pattern_chain(updated, self.cases, self.alias)
        return updated if chain is None else self._raise_first(chain, original)

    def _raise_first(self, chain: cst.If, original: cst.Match) -> Any:
        """A last ``case _:`` that only raises, as the check before the chain that
        the other cases' tests all failed (``if not (t0 or t1): raise ...``, kept as
        written: ``kept.py``), and the last other case as the chain's ``else``: a
        ``raise`` in an ``else`` has no derivative to give, and the transforms keep
        only an ``if`` whose whole body raises."""
        ifs = [chain]
        while isinstance(ifs[-1].orelse, cst.If):
            ifs.append(ifs[-1].orelse)
        last = ifs[-1].orelse
        if not isinstance(last, cst.Else) or _is_true(chain.test) or \
                not _only_raises(last.body):
            return chain
        tests = [_parens(i.test) for i in ifs]
        test = tests[0]
        for part in tests[1:]:
            test = cst.BooleanOperation(test, cst.Or(), part)
        guard = cst.If(cst.UnaryOperation(cst.Not(), _parens(test)), last.body)
        rest: Any = cst.Else(ifs[-1].body)
        for one in reversed(ifs[:-1]):
            rest = one.with_changes(orelse=rest)
        if isinstance(rest, cst.Else):
            rest = cst.If(cst.Name("True"), rest.body)
        for node in (guard, rest):
            self._alias_tree(node, original)
        return cst.FlattenSentinel([guard, rest])

    def _literal_chain(self, original: cst.Match, updated: cst.Match) -> Any:
        if not _dotted(updated.subject):
            return None
        tests = []
        bodies = [case.body for case in updated.cases]
        for k, case in enumerate(updated.cases):
            name = _capture(case.pattern)
            if (_wildcard(case.pattern) or name is not None) and case.guard is None:
                if k != len(updated.cases) - 1:
                    return None  # (Python refuses this too: it makes the rest unreachable)
                if name is not None:
                    bodies[k] = _captured(case.body, name, updated.subject)
                    if bodies[k] is None:
                        return None
                tests.append(None)
                continue
            test = _test(updated.subject, case.pattern)
            if test is None:
                return None
            if case.guard is not None:
                test = cst.BooleanOperation(_parens(test), cst.And(), _parens(case.guard))
            tests.append(test)
        chain: Any = None
        for body, test in reversed(list(zip(bodies, tests))):
            if test is None:
                chain = cst.Else(body)
            else:
                chain = cst.If(test, body, chain)
            self._alias_tree(chain, original)
        return chain if isinstance(chain, cst.If) else cst.If(
            cst.Name("True"), chain.body)

    def _alias_tree(self, tree: Any, old: Any) -> None:
        alias = self.alias

        class Walk(cst.CSTVisitor):
            def on_visit(self, n: Any) -> bool:
                alias(n, old)
                return not isinstance(n, cst.BaseSuite)  # (the user's statements keep theirs)

        tree.visit(Walk())


def _only_raises(body: Any) -> bool:
    """``body`` is one ``raise Error(...)`` (what ``kept.raise_only`` keeps)."""
    lines = body.body if isinstance(body, cst.IndentedBlock) else ()
    return len(lines) == 1 and isinstance(lines[0], cst.SimpleStatementLine) and len(
        lines[0].body) == 1 and isinstance(lines[0].body[0], cst.Raise) and \
        lines[0].body[0].exc is not None


def _is_true(test: Any) -> bool:
    return isinstance(test, cst.Name) and test.value == "True"


def _dotted(node: Any) -> bool:
    if isinstance(node, cst.Name):
        return True
    return isinstance(node, cst.Attribute) and _dotted(node.value)


def _wildcard(pattern: Any) -> bool:
    return isinstance(pattern, cst.MatchAs) and pattern.pattern is None and \
        pattern.name is None


def _capture(pattern: Any) -> str | None:
    """The name a bare capture binds (``case other:``, ``case _ as other:``), or None."""
    if isinstance(pattern, cst.MatchAs) and pattern.name is not None and (
            pattern.pattern is None or _wildcard(pattern.pattern)):
        return pattern.name.value
    return None


def _captured(body: Any, name: str, subject: Any) -> Any:
    """A last ``case name:``'s body as the chain's ``else``: ``name = subject`` first,
    or, where the body only raises, the raise with the subject read in place of
    ``name`` (so it stays a raise alone, the check ``_raise_first`` keeps); None
    where ``name`` might be bound again inside it (a lambda or a comprehension)."""
    if not _only_raises(body):
        bind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                                   subject)])
        return body.with_changes(body=[bind, *body.body])
    scoped = (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)

    class Scoped(cst.CSTVisitor):
        found = False

        def on_visit(self, n: Any) -> bool:
            Scoped.found = Scoped.found or isinstance(n, scoped)
            return True

    body.visit(Scoped())
    if Scoped.found:
        return None

    class ReadSubject(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> Any:
            return subject if updated.value == name else updated

        def visit_Attribute(self, node: cst.Attribute) -> bool:
            return False  # (`.name`: an attribute, not the capture)

        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> Any:
            return updated.with_changes(value=updated.value.visit(self))

        def visit_Arg(self, node: cst.Arg) -> bool:
            return False  # (`f(name=...)`: a keyword)

        def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> Any:
            return updated.with_changes(value=updated.value.visit(self))

    return body.visit(ReadSubject())


def _test(subject: Any, pattern: Any) -> Any:
    if isinstance(pattern, cst.MatchValue):
        return cst.Comparison(subject, [cst.ComparisonTarget(cst.Equal(), pattern.value)])
    if isinstance(pattern, cst.MatchSingleton):
        return cst.Comparison(subject, [cst.ComparisonTarget(cst.Is(), pattern.value)])
    if isinstance(pattern, cst.MatchOr):
        parts = [_test(subject, e.pattern) for e in pattern.patterns]
        if any(p is None for p in parts):
            return None
        test = parts[0]
        for part in parts[1:]:
            test = cst.BooleanOperation(test, cst.Or(), part)
        return test
    return None


def _parens(node: Any) -> Any:
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
