"""Inline a rule's body into emitted code.

A rule is a small Python function (see ``s2s.primitives``).  Inlining substitutes its
parameters with the names and constants at the call site, gives its locals fresh
names, decides ``if`` tests that only involve values known now (``axis is None``), and
folds constant arithmetic.  What is left is the rule's own code, renamed.
"""

from __future__ import annotations

import ast
import inspect
from typing import Any, Callable

import numpy as np

from ..ir.nodes import Const, Index, Slice, Var
from ..ir.spelling import atom_text, index_text
from ..primitives import registry

_DYNAMIC = object()  # the value of a name known only when the emitted code runs
_ARRAY = object()  # ... and known to be an array (a value being differentiated)


class Array:
    """A binding known to hold an array when the code runs: ``x is None`` is False."""

    def __init__(self, var: Var) -> None:
        self.var = var
_PREDICATES = {
    "is_integer_constant": registry.is_integer_constant,
    "is_number_constant": registry.is_number_constant,
    "is_basic_index": registry.is_basic_index,
    "names_each_once": registry.names_each_once,
}
_RULE_AST: dict[Callable, ast.FunctionDef] = {}


def _parse(text: str, mode: str = "exec") -> Any:
    """``parse_ast`` of the frontend, loaded with it by the first transform."""
    from ..frontend.source import parse_ast

    return parse_ast(text, mode)


def rule_ast(rule: Callable) -> ast.FunctionDef:
    """The rule's ``def``, read from its file and checked to be the code that runs (a
    rule file edited after import would otherwise inline text that never ran)."""
    if rule not in _RULE_AST:
        from ..frontend.source import verified_source

        tree = _parse(verified_source(rule))
        node = tree.body[0]
        assert isinstance(node, ast.FunctionDef)
        node.decorator_list = []
        _RULE_AST[rule] = node
    return _RULE_AST[rule]


def _static_value(binding: Any) -> Any:
    if isinstance(binding, Array):
        return _ARRAY
    if isinstance(binding, Var):
        return _DYNAMIC
    if isinstance(binding, Const):
        return binding.value
    if isinstance(binding, tuple):
        values = tuple(_static_value(b) for b in binding)
        return _DYNAMIC if any(v is _DYNAMIC for v in values) else values
    return binding  # Index, or a Python default


def _expr_of(binding: Any) -> ast.expr:
    if isinstance(binding, Array):
        binding = binding.var
    if isinstance(binding, Index):
        if any(isinstance(i, Slice) or (
                isinstance(i, Const) and (i.value is None or i.value is Ellipsis))
               for i in binding.items):
            return _parse(f"np.s_[{index_text(binding)}]", "eval").body
        return _parse(f"({index_text(binding)})", "eval").body
    if isinstance(binding, ast.expr):
        return binding
    return _parse(atom_text(binding), "eval").body


class Inliner:
    """Inline one rule call.  ``fresh`` hands out unique names in the target function."""

    def __init__(self, fresh: Callable[[str], str]) -> None:
        self.fresh = fresh

    def inline(
        self,
        rule: Callable,
        bindings: dict[str, Any],
        local_names: dict[str, Any],
        result_names: list[Any] | None = None,
    ) -> tuple[list[ast.stmt], list[ast.expr]]:
        """Return the rule's statements and its returned expressions, substituted.

        ``bindings`` maps each rule parameter to an atom, an Index, a tuple or a
        Python value (an ast expression is used as is).  ``local_names`` suggests
        names for the rule's locals (``a_bar`` -> ``x_bar``); ``result_names`` for
        what it returns, when an ``if`` decided at run time makes it name them.
        """
        fn = rule_ast(rule)
        env: dict[str, ast.expr] = {}
        static: dict[str, Any] = {}
        sig = inspect.signature(rule)
        for name, p in sig.parameters.items():
            if name in bindings:
                b = bindings[name]
            elif p.default is not inspect.Parameter.empty:
                b = Const(p.default, repr(p.default))
            else:
                raise TypeError(f"rule {rule.__name__}: no binding for {name}")
            env[name] = _expr_of(b)
            static[name] = _static_value(b) if not isinstance(b, ast.expr) else _DYNAMIC
        self.local_names = dict(local_names)
        self.result_names = list(result_names or [])
        out: list[ast.stmt] = []
        result = self._block(fn.body, env, static, out)
        if result is None:
            raise TypeError(f"rule {rule.__name__} does not return on every path")
        return out, result

    def _block(self, body, env, static, out, pinned=None) -> list[ast.expr] | None:
        """Inline statements; return the substituted return values, if it returned.

        ``pinned`` maps locals (and ``return`` slots) to the single name both branches
        of an ``if`` decided only at run time assign, so the code after it reads one.
        """
        pinned = pinned or {}
        for i, stmt in enumerate(body):
            if isinstance(stmt, ast.Return):
                value = stmt.value
                elts = value.elts if isinstance(value, ast.Tuple) else [value]
                results = [self._sub(e, env, static) for e in elts]
                if "return" not in pinned:
                    return results
                for name, expr in zip(pinned["return"], results):
                    out.append(_assign(name, expr))
                return [ast.Name(n, ast.Load()) for n in pinned["return"]]
            if isinstance(stmt, ast.If):
                decided = self._decide(stmt.test, static)
                if decided is None:
                    result = self._dynamic_if(stmt, body[i + 1 :], env, static, out, pinned)
                    if result is not None:
                        return result
                    continue
                chosen = stmt.body if decided else stmt.orelse
                result = self._block(chosen, env, static, out, pinned)
                if result is not None:
                    return result
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name
            ):
                value = self._sub(stmt.value, env, static)
                local = stmt.targets[0].id
                if local in pinned:
                    name = pinned[local]
                else:
                    name = self._name_for(local, env)
                out.append(_assign(name, value))
                env[local] = ast.Name(name, ast.Load())
                static[local] = _DYNAMIC
                continue
            if isinstance(stmt, (ast.AugAssign, ast.Expr, ast.Assign)):
                out.append(self._sub(stmt, env, static))
                continue
            raise TypeError(f"unsupported statement in rule: {ast.dump(stmt)}")
        return None

    def _name_for(self, local: str, env: dict[str, ast.expr]) -> str:
        exact = self.local_names.pop(local, None)
        if exact is not None:
            # the cotangent's own name, reserved by the caller (or made now)
            return exact() if callable(exact) else exact
        suggestion = local
        if local in env and isinstance(env[local], ast.Name):
            suggestion = env[local].id  # a parameter rebound: g -> g_2
        return self.fresh(suggestion)

    def _dynamic_if(self, stmt, rest, env, static, out, pinned) -> list[ast.expr] | None:
        """An ``if`` whose test is known only at run time stays in the emitted code.

        If a branch returns, the statements after the ``if`` continue the other
        branch, and every return assigns the same result names.
        """
        returns = _returns(stmt.body) or _returns(stmt.orelse)
        then_body = stmt.body if (not returns or _returns(stmt.body)) else stmt.body + rest
        else_body = stmt.orelse if (not returns or _returns(stmt.orelse)) else (
            stmt.orelse + rest
        )
        inner = dict(pinned)
        for local in sorted(_assigned(then_body) | _assigned(else_body)):
            if local not in inner:
                inner[local] = self._name_for(local, env)
        if returns and "return" not in inner:
            width = _return_width(stmt.body + stmt.orelse + rest)
            hints = self.result_names + [None] * width
            inner["return"] = [
                (h() if callable(h) else h) if h is not None else self.fresh("result")
                for h in hints[:width]
            ]
        body_out: list[ast.stmt] = []
        else_out: list[ast.stmt] = []
        for branch, branch_out in ((then_body, body_out), (else_body, else_out)):
            branch_env = dict(env)
            self._block(branch, branch_env, dict(static), branch_out, inner)
            if returns:
                continue
            for local, name in inner.items():
                # a path that did not assign the local hands on the value it had
                seen = branch_env.get(local)
                if local != "return" and seen is not None and not (
                    isinstance(seen, ast.Name) and seen.id == name
                ):
                    branch_out.append(_assign(name, clone(seen)))
        out.append(ast.fix_missing_locations(ast.If(
            test=self._sub(stmt.test, env, static), body=body_out or [ast.Pass()],
            orelse=else_out,
        )))
        for local, name in inner.items():
            if local != "return":  # (an outer if's pinned name, too: it was written)
                env[local] = ast.Name(name, ast.Load())
                static[local] = _DYNAMIC
        if returns:
            return [ast.Name(n, ast.Load()) for n in inner["return"]]
        return None

    def _decide(self, test: ast.expr, static: dict[str, Any]) -> bool | None:
        """Evaluate ``test`` now if it only involves values known now."""
        try:
            value = _evaluate(test, static)
        except _Undecidable:
            return None
        if _dynamic(value):  # `if x:` on a value known only when the code runs
            return None
        return bool(value)

    def _sub(self, node: Any, env: dict[str, ast.expr], static: dict[str, Any]) -> Any:
        node = clone(node)
        new = _Substitute(env, static).visit(node)
        return ast.fix_missing_locations(_Fold().visit(new))


def located_refusals(stmts: list[ast.stmt], loc: Any) -> list[ast.stmt]:
    """Each ``real_only(x, "what")`` a rule inlined (a derivative written for real
    values, which refuses complex ones when the code runs) told the user's line it
    differentiates: its message then names that line, not a line of emitted code."""
    if loc is None or str(loc.file).startswith("<"):
        return stmts
    where = f'\n  File "{loc.file}", line {loc.line}, column {loc.col}\n    {loc.text.strip()}'
    for st in stmts:
        for n in ast.walk(st):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                    and n.func.id == "real_only" and len(n.args) == 2
                    and isinstance(n.args[1], ast.Constant)
                    and isinstance(n.args[1].value, str) and "\n" not in n.args[1].value):
                n.args[1] = ast.Constant(n.args[1].value + where)
    return stmts


def clone(node: Any) -> Any:
    """A deep copy of an ast tree (nodes and lists copied, leaves shared): what
    ``copy.deepcopy`` gives, several times faster, as inlining rules copies a lot."""
    if isinstance(node, ast.AST):
        new = node.__class__.__new__(node.__class__)
        new.__dict__.update({k: clone(v) if isinstance(v, (ast.AST, list)) else v
                             for k, v in node.__dict__.items()})
        return new
    if isinstance(node, list):
        return [clone(x) for x in node]
    return node


def _assign(name: str, value: ast.expr) -> ast.stmt:
    return ast.fix_missing_locations(
        ast.Assign(targets=[ast.Name(name, ast.Store())], value=value)
    )


def _returns(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Return) for s in body for n in ast.walk(s))


def _assigned(body: list[ast.stmt]) -> set[str]:
    return {
        t.id
        for s in body
        for n in ast.walk(s)
        if isinstance(n, ast.Assign)
        for t in n.targets
        if isinstance(t, ast.Name)
    }


def _return_width(body: list[ast.stmt]) -> int:
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Return):
                return len(n.value.elts) if isinstance(n.value, ast.Tuple) else 1
    raise TypeError("no return")


class _Undecidable(Exception):
    """The test depends on a value known only when the emitted code runs."""


def _evaluate(node: ast.expr, static: dict[str, Any]) -> Any:
    """Evaluate a rule's ``if`` test over static values, with Python's short circuit.

    A dynamic value may only reach the predicates (``is_integer_constant(x)`` is
    False for a value known only at run time); anything else that touches one makes
    the test undecidable, and the ``if`` stays in the emitted code.
    """
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(
        node.operand, ast.Constant
    ):
        return -node.operand.value  # a negative literal: ord == -1
    if isinstance(node, ast.Name):
        if node.id not in static:
            raise _Undecidable
        return static[node.id]
    if isinstance(node, ast.BoolOp):
        is_and = isinstance(node.op, ast.And)
        value: Any = None
        for operand in node.values:
            value = _evaluate(operand, static)
            if _dynamic(value):
                raise _Undecidable
            if bool(value) != is_and:
                return value
        return value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        value = _evaluate(node.operand, static)
        if _dynamic(value):
            raise _Undecidable
        return not value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id in _PREDICATES
    ):
        args = [_evaluate(a, static) for a in node.args]
        return _PREDICATES[node.func.id](*(None if _dynamic(a) else a for a in args)) \
            if not any(_dynamic(a) for a in args) else False
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left = _evaluate(node.left, static)
        right = _evaluate(node.comparators[0], static)
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot)) and (left is _ARRAY or right is _ARRAY) and (
            left is None or right is None
        ):
            return isinstance(op, ast.IsNot)  # an array is not None
        if _dynamic(left) or _dynamic(right):
            raise _Undecidable
        table = {
            ast.Is: lambda a, b: a is b, ast.IsNot: lambda a, b: a is not b,
            ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
            ast.Lt: lambda a, b: a < b, ast.Gt: lambda a, b: a > b,
            ast.LtE: lambda a, b: a <= b, ast.GtE: lambda a, b: a >= b,
        }
        if type(op) not in table:
            raise _Undecidable
        return table[type(op)](left, right)
    raise _Undecidable


def _dynamic(value: Any) -> bool:
    return value is _DYNAMIC or value is _ARRAY


class _Substitute(ast.NodeTransformer):
    def __init__(self, env: dict[str, ast.expr], static: dict[str, Any]) -> None:
        self.env = env
        self.static = static

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        node.value = self.visit(node.value)
        if isinstance(node.slice, ast.Name) and isinstance(
            self.static.get(node.slice.id), Index
        ):
            index = self.static[node.slice.id]
            node.slice = _parse(f"_[{index_text(index)}]", "eval").body.slice
        else:
            node.slice = self.visit(node.slice)
        return node

    def visit_Name(self, node: ast.Name) -> Any:
        if node.id in self.env:
            replacement = clone(self.env[node.id])
            if isinstance(node.ctx, ast.Store) and isinstance(replacement, ast.Name):
                replacement.ctx = ast.Store()
            return replacement
        return node


def _literal_number(node: ast.expr) -> bool:
    """A number literal, negative ones (``-2``, a unary minus on a constant) too."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _literal_seq(node: Any) -> bool:
    """A tuple or list display without starred items: its length is known now."""
    return isinstance(node, (ast.Tuple, ast.List)) and not any(
        isinstance(e, ast.Starred) for e in node.elts
    )


def _int_constant(node: Any) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_constant(node.operand)
        return None if value is None else -value
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _spliced(elts: list[ast.expr]) -> list[ast.expr]:
    """``*(a, b)`` among items or arguments spelled as ``a, b``."""
    out: list[ast.expr] = []
    for e in elts:
        if isinstance(e, ast.Starred) and _literal_seq(e.value):
            out += e.value.elts
        else:
            out.append(e)
    return out


class _Rename(ast.NodeTransformer):
    """Replace loads of a comprehension's variables with their values."""

    def __init__(self, values: dict[str, ast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Load) and node.id in self.values:
            return clone(self.values[node.id])
        return node


def _bind_target(target: ast.expr, value: ast.expr, values: dict[str, ast.expr]) -> bool:
    if isinstance(target, ast.Name):
        values[target.id] = value
        return True
    if isinstance(target, ast.Tuple) and _literal_seq(value) and len(
        target.elts
    ) == len(value.elts):
        return all(_bind_target(t, v, values) for t, v in zip(target.elts, value.elts))
    return False


def _static_items(node: ast.expr) -> list[ast.expr] | None:
    """The items a comprehension's iterable yields, if known now: a literal tuple or
    list, ``range`` of int literals, ``enumerate`` or ``zip`` of literal ones."""
    if _literal_seq(node):
        return list(node.elts)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and not node.keywords):
        return None
    name, args = node.func.id, node.args
    if name == "range" and 1 <= len(args) <= 3:
        bounds = [_int_constant(a) for a in args]
        if any(b is None for b in bounds):
            return None
        return [ast.Constant(i) for i in range(*bounds)]
    if name == "enumerate" and len(args) == 1 and _literal_seq(args[0]):
        return [ast.Tuple([ast.Constant(i), e], ast.Load())
                for i, e in enumerate(args[0].elts)]
    if name == "zip" and args and all(_literal_seq(a) for a in args):
        return [ast.Tuple(list(items), ast.Load())
                for items in zip(*(a.elts for a in args))]
    return None


def _unrolled(node: ast.expr) -> list[ast.expr] | None:
    """The items of a comprehension over iterables known now, each folded with the
    comprehension's variables replaced; None if any iterable or ``if`` is not."""
    items: list[dict[str, ast.expr]] = [{}]
    for gen in node.generators:
        if gen.is_async:
            return None
        grown = []
        for values in items:
            source = _Fold().visit(_Rename(values).visit(clone(gen.iter)))
            yielded = _static_items(source)
            if yielded is None:
                return None
            for item in yielded:
                inner = dict(values)
                if not _bind_target(gen.target, item, inner):
                    return None
                keep = True
                for test in gen.ifs:
                    decided = _Fold().visit(_Rename(inner).visit(clone(test)))
                    if not isinstance(decided, ast.Constant):
                        return None
                    keep = keep and bool(decided.value)
                if keep:
                    grown.append(inner)
        items = grown
    return [_Fold().visit(_Rename(values).visit(clone(node.elt))) for values in items]


class _Fold(ast.NodeTransformer):
    """Fold arithmetic on literal numbers and a few pure calls on literal tuples.

    Rules over a varying number of operands (``np.einsum``'s, the runtime's list
    helpers) receive them as a literal tuple; their comprehensions, ``len``,
    constant subscripts, ``*`` and ``sum`` over it are unrolled here, so the emitted
    code names each operand and never loops over them (it transforms again)."""

    def visit_Compare(self, node: ast.Compare) -> Any:
        self.generic_visit(node)
        values = [_int_constant(node.left)] + [_int_constant(c) for c in node.comparators]
        if len(node.ops) != 1 or any(v is None for v in values):
            return node
        table = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
                 ast.Lt: lambda a, b: a < b, ast.Gt: lambda a, b: a > b,
                 ast.LtE: lambda a, b: a <= b, ast.GtE: lambda a, b: a >= b}
        op = table.get(type(node.ops[0]))
        return node if op is None else ast.Constant(op(*values))

    def visit_IfExp(self, node: ast.IfExp) -> Any:
        self.generic_visit(node)
        if isinstance(node.test, ast.Constant):
            return node.body if node.test.value else node.orelse
        return node

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        self.generic_visit(node)
        if not (_literal_seq(node.value) and isinstance(node.ctx, ast.Load)):
            return node
        elts = node.value.elts
        index = _int_constant(node.slice)
        if index is not None and -len(elts) <= index < len(elts):
            return elts[index]
        if isinstance(node.slice, ast.Slice):
            bounds = [None if b is None or (isinstance(b, ast.Constant) and b.value is None)
                      else _int_constant(b)
                      for b in (node.slice.lower, node.slice.upper, node.slice.step)]
            given = [b for b in (node.slice.lower, node.slice.upper, node.slice.step)
                     if b is not None]
            if sum(b is not None for b in bounds) == len(given):
                return type(node.value)(elts[slice(*bounds)], ast.Load())
        return node

    def visit_Tuple(self, node: ast.Tuple) -> Any:
        self.generic_visit(node)
        node.elts = _spliced(node.elts)
        return node

    def visit_List(self, node: ast.List) -> Any:
        self.generic_visit(node)
        node.elts = _spliced(node.elts)
        return node

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        self.generic_visit(node)
        items = _unrolled(node)
        return node if items is None else ast.List(items, ast.Load())

    def visit_Starred(self, node: ast.Starred) -> Any:
        self.generic_visit(node)
        if isinstance(node.value, ast.GeneratorExp):  # f(*(h(x) for x in xs))
            items = _unrolled(node.value)
            if items is not None:
                node.value = ast.Tuple(items, ast.Load())
        return node

    def _fold_builtin(self, node: ast.Call) -> Any:
        name, args = node.func.id, node.args
        if node.keywords or not args:
            return node
        if name == "len" and len(args) == 1 and _literal_seq(args[0]):
            return ast.Constant(len(args[0].elts))
        items = None
        if isinstance(args[0], ast.GeneratorExp):
            items = _unrolled(args[0])
        elif _literal_seq(args[0]):
            items = list(args[0].elts)
        if items is None:
            return node
        if name == "tuple" and len(args) == 1:
            return ast.Tuple(items, ast.Load())
        if name == "list" and len(args) == 1:
            return ast.List(items, ast.Load())
        if name == "sum" and len(args) <= 2:
            terms = ([args[1]] if len(args) == 2 else []) + items
            if not terms:
                return ast.Constant(0)
            total = terms[0]
            for t in terms[1:]:
                total = ast.BinOp(total, ast.Add(), t)
            return total
        return node

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        self.generic_visit(node)
        if _literal_number(node.left) and _literal_number(node.right):
            try:
                value = eval(compile(ast.fix_missing_locations(ast.Expression(node)), "<fold>",
                                   "eval"), {}, {})
            except Exception:
                return node
            if isinstance(value, (int, float)):
                return ast.Constant(value) if value >= 0 else ast.UnaryOp(
                    ast.USub(), ast.Constant(-value)
                )
        return node

    def visit_Call(self, node: ast.Call) -> Any:
        self.generic_visit(node)
        node.args = _spliced(node.args)
        if isinstance(node.func, ast.Name) and node.func.id in ("len", "tuple", "list", "sum"):
            return self._fold_builtin(node)
        if (
            isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "np"
            and node.func.attr == "argsort"
            and len(node.args) == 1
            and not node.keywords
        ):
            try:
                value = ast.literal_eval(node.args[0])
            except ValueError:
                return node
            return _parse(repr(tuple(int(i) for i in np.argsort(value))), "eval").body
        return node
