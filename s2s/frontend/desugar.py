"""libcst -> libcst rewrites of a function's body before it is lowered to IR.

Each one gives the body structured control flow that reverse mode can follow:
``return`` inside a loop becomes a flag and a ``break``, the statements after an
``if`` that leaves move into its other branch, and a ``continue`` that ends its path
is dropped.  Synthesized nodes report the position of the node they replace, so
errors and emitted comments quote the user's line.
"""

from __future__ import annotations

from typing import Any, Callable

import libcst as cst

from ..errors import TransformError
from .loop_else import LoopElse
from .match_case import MatchToIf
from .raise_branches import RaiseBranches
from .strict_zip import StrictZip
from .try_finally import TryFinally

# A `return` inside a nested loop leaves each loop by `break`
NESTED_RETURNS = True

Unsupported = Callable[[cst.CSTNode, str, str], TransformError]


class Desugar:
    """The pre-passes of one function: ``positions`` is its parse's position table
    (synthesized nodes are added to it), ``fresh`` hands out unused names."""

    def __init__(self, positions: dict, unsupported: Unsupported,
                 fresh: Callable[[str], str]) -> None:
        self.positions = positions
        self.unsupported = unsupported
        self.fresh = fresh
        self.loop_returns: list[tuple[str, str]] = []  # (flag, value) per loop
        self.flags: list[str] = []  # a `for ... else`'s flags (frontend/loop_else.py)
        self.cases: dict = {}  # a `match`'s case tests (frontend/match_patterns.py)

    def alias(self, new: cst.CSTNode, old: cst.CSTNode) -> None:
        """Make a synthesized node report the position of the node it replaces."""
        if old in self.positions:
            self.positions[new] = self.positions[old]

    def alias_tree(self, tree: cst.CSTNode, old: cst.CSTNode) -> None:
        """Every node of a synthesized ``tree`` that has no position of its own (the
        user's nodes it holds keep theirs) reports ``old``'s."""
        alias, positions = self.alias, self.positions

        class Walk(cst.CSTVisitor):
            def on_visit(self, n: Any) -> bool:
                if n not in positions:
                    alias(n, old)
                return True

        tree.visit(Walk())

    def function_body(self, nodes: list[Any]) -> list[Any]:
        """A ``def``'s statements with one way out of each loop and returns hoisted
        (``for``/``while ... else`` first becomes a flag and an ``if``)."""
        nodes = MatchToIf(self.alias, self.cases).rewrite(nodes)
        nodes = RaiseBranches(self.alias).rewrite(nodes)
        nodes = TryFinally(self.alias).rewrite(nodes)
        nodes = StrictZip(self.alias).rewrite(nodes)
        loop_else = LoopElse(self.alias, self.fresh)
        nodes = loop_else.rewrite(nodes)
        self.flags = loop_else.flags
        nodes = hoist_returns(self.returns_out_of_loops(nodes), self.alias)
        # (`if a: return ...` then a last `raise`: hoisted, the raise is the `else` of
        # the chain `if a: return ... else: raise ...`, which RaiseBranches rewrites)
        return RaiseBranches(self.alias).rewrite(nodes)

    def bound_names(self) -> list[str]:
        """The names these passes bind."""
        return [n for pair in self.loop_returns for n in pair] + self.flags

    def loop_body(self, node: cst.For | cst.While) -> list[Any]:
        """The body's statements, ``continue`` and ``break`` rewritten so that the
        statements after them move into the other branch of their ``if``."""
        stmts = list(node.body.body)
        stmts = strip_continues(hoist_returns(stmts, self.alias, cst.Continue), self.alias)
        return hoist_returns(stmts, self.alias, cst.Break)

    def returns_out_of_loops(self, nodes: list[Any]) -> list[Any]:
        """``return v`` inside a loop becomes: remember ``v``, leave the loop, and
        return it right after the loop; so loops keep one way out at their end."""
        out: list[Any] = []
        for node in nodes:
            if isinstance(node, (cst.For, cst.While)) and leaves_somewhere(node):
                k = len(self.loop_returns)
                flag, value = f"returned_{k}" if k else "returned", f"result_{k}" if k else "result"
                flag, value = self.fresh(flag), self.fresh(value)
                self.loop_returns.append((flag, value))
                new = ReturnToBreak(flag, value, self).transform(node)
                self.alias(new, node)
                out += [cst.parse_statement(f"{flag} = False"),
                        cst.parse_statement(f"{value} = 0.0"), new,
                        cst.parse_statement(f"if {flag}:\n    return {value}\n")]
            elif isinstance(node, cst.If):
                body = self.returns_out_of_loops(list(node.body.body))
                orelse = node.orelse
                if isinstance(orelse, cst.Else):
                    els = self.returns_out_of_loops(list(orelse.body.body))
                    orelse = orelse.with_changes(body=orelse.body.with_changes(body=els))
                elif isinstance(orelse, cst.If):
                    orelse = self.returns_out_of_loops([orelse])[0]
                new_if = node.with_changes(body=node.body.with_changes(body=body),
                                           orelse=orelse)
                self.alias(new_if, node)
                out.append(new_if)
            else:
                out.append(node)
        return out


class ReturnToBreak:
    """Rewrite ``return v`` in one loop into ``flag = True; value = v; break``."""

    def __init__(self, flag: str, value: str, d: Desugar) -> None:
        self.flag, self.value, self.d = flag, value, d

    def transform(self, loop: Any) -> Any:
        body = self._block(list(loop.body.body))
        return loop.with_changes(body=loop.body.with_changes(body=body))

    def _block(self, nodes: list[Any]) -> list[Any]:
        out: list[Any] = []
        for node in nodes:
            if isinstance(node, cst.SimpleStatementLine) and any(
                isinstance(s, cst.Return) for s in node.body
            ):
                ret = next(s for s in node.body if isinstance(s, cst.Return))
                if ret.value is None:
                    raise self.d.unsupported(ret, "`return` without a value returns "
                                             "None", "return the value to differentiate")
                value = cst.SimpleStatementLine(body=[cst.Assign(
                    targets=[cst.AssignTarget(cst.Name(self.value))], value=ret.value)])
                self.d.alias(value.body[0], ret)
                out += [cst.parse_statement(f"{self.flag} = True"), value,
                        cst.parse_statement("break")]
                break  # what follows a return never runs
            if isinstance(node, cst.If):
                body = self._block(list(node.body.body))
                orelse = node.orelse
                if isinstance(orelse, cst.Else):
                    orelse = orelse.with_changes(body=orelse.body.with_changes(
                        body=self._block(list(orelse.body.body))))
                elif isinstance(orelse, cst.If):
                    orelse = self._block([orelse])[0]
                new = node.with_changes(body=node.body.with_changes(body=body),
                                        orelse=orelse)
                self.d.alias(new, node)
                out.append(new)
            elif NESTED_RETURNS and isinstance(node, (cst.For, cst.While)) and (
                    leaves_somewhere(node)):
                # a return in a nested loop leaves it by break, then this loop too
                inner = self.transform(node)
                self.d.alias(inner, node)
                leave = cst.parse_statement(f"if {self.flag}:\n    break\n")
                self.d.alias(leave, node)
                self.d.alias(leave.body, node)
                out += [inner, leave]
            else:
                out.append(node)
        return out


def reject_inside_loop(body: Any, unsupported: Unsupported) -> None:
    """What loops do not support yet, found before the body is normalized."""

    class Finder(cst.CSTVisitor):
        def visit_Return(self, node: cst.Return) -> None:
            raise unsupported(node, "`return` inside a nested loop is not supported yet",
                                "assign the result to a name and return after the loops")

        def visit_For(self, node: cst.For) -> bool:
            return False  # a nested loop is checked when it is normalized

        def visit_While(self, node: cst.While) -> bool:
            return False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    body.visit(Finder())


def hoist_returns(nodes: list[Any], alias: Any, kind: type = cst.Return) -> list[Any]:
    """Move the statements after an ``if`` that leaves into its other branch.

    ``if c: return a`` followed by ``rest`` becomes ``if c: return a else: rest``, so
    every return ends a path and reverse mode sees structured control flow.  With
    ``kind=cst.Continue`` the same rewrite applies to ``continue`` in a loop body.
    """
    for i, node in enumerate(nodes):
        if isinstance(node, cst.If) and leaves_somewhere(node, kind):
            rest = nodes[i + 1 :]
            return nodes[:i] + [_hoist_into_if(node, rest, alias, kind)]
        if isinstance(node, cst.SimpleStatementLine) and any(
            isinstance(s, kind) for s in node.body
        ):
            return nodes[: i + 1]  # statements after a return never run
    return nodes


def _hoist_into_if(node: cst.If, rest: list[Any], alias: Any, kind: type) -> cst.If:
    def branch(stmts: list[Any]) -> list[Any]:
        return hoist_returns(
            stmts if always_leaves(stmts, kind) else stmts + rest, alias, kind
        )

    body = branch(list(node.body.body))
    if node.orelse is None:
        orelse_body = hoist_returns(list(rest), alias, kind)
        orelse = cst.Else(body=cst.IndentedBlock(body=orelse_body)) if orelse_body else None
    elif isinstance(node.orelse, cst.If):
        orelse = _hoist_into_if(node.orelse, rest, alias, kind)
    else:
        els = branch(list(node.orelse.body.body))
        orelse = node.orelse.with_changes(body=node.orelse.body.with_changes(body=els))
    new = node.with_changes(body=node.body.with_changes(body=body), orelse=orelse)
    alias(new, node)
    return new


def strip_continues(nodes: list[Any], alias: Any = None) -> list[Any]:
    """After hoisting, a ``continue`` ends its path: reaching the end of the body is
    the same thing, so it is dropped (an emptied branch becomes ``pass``).  A node
    rebuilt keeps the position of the one it replaces (``alias``): errors located at
    an ``if`` in a loop, or a statement there, named the ``def`` line before."""
    keep = alias if alias is not None else (lambda new, old: None)
    out: list[Any] = []
    for node in nodes:
        if isinstance(node, cst.SimpleStatementLine):
            small = [s for s in node.body if not isinstance(s, cst.Continue)]
            if len(small) == len(node.body):
                out.append(node)
            elif small:
                new = node.with_changes(body=small)
                keep(new, node)
                out.append(new)
            continue
        if isinstance(node, cst.If):
            body = strip_continues(list(node.body.body), alias) or [
                cst.SimpleStatementLine(body=[cst.Pass()])
            ]
            orelse = node.orelse
            if isinstance(orelse, cst.If):
                orelse = strip_continues([orelse], alias)[0]
            elif orelse is not None:
                els = strip_continues(list(orelse.body.body), alias)
                if els:
                    new_else = orelse.with_changes(body=orelse.body.with_changes(body=els))
                    keep(new_else, orelse)
                    orelse = new_else
                else:
                    orelse = None
            new = node.with_changes(body=node.body.with_changes(body=body), orelse=orelse)
            keep(new, node)
            out.append(new)
            continue
        out.append(node)
    return out


def leaves_somewhere(node: Any, kind: type = cst.Return) -> bool:
    found = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if isinstance(n, kind):
                found.append(n)
            if isinstance(n, cst.FunctionDef):
                return False
            if kind in (cst.Continue, cst.Break) and isinstance(n, (cst.For, cst.While)):
                return False  # a nested loop's continue is its own
            return True

    node.visit(Finder())
    return bool(found)


def always_leaves(nodes: list[Any], kind: type = cst.Return) -> bool:
    if not nodes:
        return False
    last = nodes[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, kind) for s in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        other = (
            [last.orelse] if isinstance(last.orelse, cst.If) else list(last.orelse.body.body)
        )
        return always_leaves(list(last.body.body), kind) and always_leaves(
            other, kind
        )
    return False


def lower_in_place(n: Any, statements: list[Any], node: Any = None) -> None:
    """Lower ``statements`` a desugaring wrote in place of ``node`` (each new node
    located at it; with no ``node``, located already) into the Normalizer ``n``'s
    output where it stands."""
    for statement in statements if node is not None else ():
        n.desugar.alias_tree(statement, node)
    outer = n.out
    lowered = n.stmts.block(statements)
    n.out = outer
    outer += lowered


def module_object(n: Any, func: Any) -> Any:
    """The object a module-level (dotted) name denotes (``zip``, ``collections.deque``,
    ``itertools.islice``), or None: a local name, or one s2s does not resolve."""
    root = func
    while isinstance(root, cst.Attribute):
        root = root.value
    if not isinstance(root, cst.Name) or root.value in n.local_names:
        return None
    try:
        return n.resolver.resolve_dotted(func)[0]
    except TransformError:
        return None
