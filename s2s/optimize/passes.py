"""The specializer's passes after the rewrite (s2s/optimize/specialize.py runs them in
order): tapes trimmed to what the backward reads, one-hot cotangents accumulated in
place, reductions spelled as methods, dead statements dropped."""

from __future__ import annotations

import ast
import copy
from typing import Any, Callable

import numpy as np

from .calls import MUTATORS, call_name
from .calls import written as _written
from .terms import summed as _summed

_VALUE_SHAPED = {
    "nonzero", "flatnonzero", "argwhere", "unique", "extract", "compress", "trim_zeros",
    "item", "tolist", "int", "round", "float", "bool", "range", "histogram",
    "unique_values", "unique_counts", "unique_inverse", "unique_all",
    "searchsorted", "digitize", "bincount", "resize", "repeat", "split", "array_split",
}
# calls that write into an argument (the buffer) or change a container in place
_NO_SPLIT = (ast.For, ast.AsyncFor, ast.While, ast.If, ast.Try, ast.With, ast.AsyncWith,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ListComp, ast.SetComp,
             ast.DictComp, ast.GeneratorExp, ast.IfExp, ast.Global, ast.Nonlocal,
             ast.Yield, ast.YieldFrom, ast.Await, ast.Match, ast.Delete, ast.NamedExpr,
             ast.BoolOp)


def static_range(node: ast.For) -> bool:
    """``for i in range(...)`` or ``reversed(range(...))`` over ints the signature
    settles (literals and names: a name computed from values would have gone through
    ``int(...)``, which is refused), with a straight-line body."""
    it = node.iter
    if isinstance(it, ast.Call) and call_name(it) == "reversed" and len(it.args) == 1:
        it = it.args[0]
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name)
            and it.func.id == "range" and not it.keywords
            and all(isinstance(a, (ast.Constant, ast.Name)) for a in it.args)):
        return False
    if node.orelse or not isinstance(node.target, ast.Name):
        return False
    return all(straight(stmt, in_loop=True) for stmt in node.body)


def straight(stmt: ast.stmt, in_loop: bool = False) -> bool:
    for node in ast.walk(stmt):
        if isinstance(node, _NO_SPLIT) or (in_loop and isinstance(
                node, (ast.Break, ast.Continue, ast.Return))):
            return False
        if isinstance(node, ast.Call) and (
                call_name(node) in _VALUE_SHAPED
                or (call_name(node) == "where" and len(node.args) == 1)):
            return False
    return True


def trim_tapes(fn: ast.FunctionDef) -> None:
    """A tape entry the backward loop no longer reads (its only use was a fix-up's
    shape) is not pushed at all."""
    for stmt in fn.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.List) and not stmt.value.elts):
            continue
        tape = stmt.targets[0].id
        pushes, pops, other = [], [], 0
        for node in ast.walk(fn):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, ast.Attribute) and \
                    isinstance(node.value.func.value, ast.Name) and \
                    node.value.func.value.id == tape:
                if node.value.func.attr == "append" and len(node.value.args) == 1:
                    pushes.append(node.value)
                    continue
                other += 1
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                    isinstance(node.value.func, ast.Attribute) and \
                    isinstance(node.value.func.value, ast.Name) and \
                    node.value.func.value.id == tape and node.value.func.attr == "pop" \
                    and not node.value.args and isinstance(node.targets[0], ast.Tuple):
                pops.append(node)
            elif isinstance(node, ast.Name) and node.id == tape:
                other += 1
        other -= len(pushes) + len(pops) + 1  # their own mentions, and the binding
        if other or len(pushes) != 1 or len(pops) != 1:
            continue
        push, pop = pushes[0], pops[0]
        if not isinstance(push.args[0], ast.Tuple):
            continue
        names = pop.targets[0].elts
        if len(names) != len(push.args[0].elts) or \
                not all(isinstance(n, ast.Name) for n in names):
            continue
        loop = next((s for s in fn.body if isinstance(s, ast.For)
                     and any(n is pop for n in ast.walk(s))), None)
        if loop is None:
            continue
        after = loop.body[loop.body.index(pop) + 1:] if pop in loop.body else None
        if after is None:
            continue
        later = after + fn.body[fn.body.index(loop) + 1:]
        read = {n.id for s in later for n in ast.walk(s)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        keep = [k for k, n in enumerate(names) if n.id in read]  # type: ignore[attr-defined]
        if len(keep) == len(names) or not keep:
            continue
        if len(keep) == 1:  # push and pop the value itself
            pop.targets[0] = names[keep[0]]
            push.args[0] = push.args[0].elts[keep[0]]
        else:
            pop.targets[0].elts = [names[k] for k in keep]
            push.args[0].elts = [push.args[0].elts[k] for k in keep]


def scalar_of(node: ast.AST, fact: Callable[[ast.AST], Any]) -> Any:
    """The dtype of a scalar expression, where it is known (a fact, or a NumPy scalar
    constructor like ``np.float64(1.0)``, possibly negated)."""
    f = fact(node)
    if f is not None:
        return f[1] if f[0] == () else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return scalar_of(node.operand, fact)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
            len(node.args) == 1 and isinstance(node.args[0], ast.Constant):
        try:
            return np.dtype(node.func.attr)
        except TypeError:
            return None
    return None


def accumulate(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """A cotangent that is zeros plus one value at a scalar index (the adjoint of
    ``x[i]``) is not materialized: its sum is that value, and adding it to a fresh
    array of the full shape is ``+=`` into that array at the index (as a careful
    person writes ``g[label] -= 1``)."""
    body = fn.body
    for i, stmt in enumerate(list(body)):
        if stmt not in body:
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and call_name(stmt.value) == "zeros"):
            continue
        z = stmt.targets[0].id
        out = fact(stmt.value)
        if out is None:
            continue
        k = body.index(stmt)
        write = body[k + 1] if k + 1 < len(body) else None
        if not (isinstance(write, ast.AugAssign) and isinstance(write.op, ast.Add)
                and isinstance(write.target, ast.Subscript)
                and isinstance(write.target.value, ast.Name) and write.target.value.id == z):
            continue
        idx, v = write.target.slice, write.value
        fi = fact(idx)
        if fi is None or fi[0] != () or not np.issubdtype(fi[1], np.integer) or \
                scalar_of(v, fact) != out[1]:
            continue
        rest = body[k + 2:]
        mentions = [n for s in rest for n in ast.walk(s) if isinstance(n, ast.Name)
                    and n.id == z]
        if any(not isinstance(n.ctx, ast.Load) for n in mentions) or \
                any(z in _written(s) for s in rest):
            continue
        reads = {n.id for n in ast.walk(idx) if isinstance(n, ast.Name)} | \
            {n.id for n in ast.walk(v) if isinstance(n, ast.Name)}
        if any(isinstance(n, ast.Name) and n.id in reads and isinstance(n.ctx, ast.Store)
               for s in rest for n in ast.walk(s)):
            continue
        # every read must be a sum of it, or one side of a sum with a fresh array
        sums, adds = [], []
        for s_ in rest:
            for node in ast.walk(s_):
                if _summed(node) is not None and isinstance(_summed(node), ast.Name) and \
                        _summed(node).id == z and not node.keywords:  # type: ignore
                    sums.append(node)
        for j, s_ in enumerate(rest):
            value = getattr(s_, "value", None)
            if isinstance(s_, (ast.Assign, ast.Return)) and isinstance(value, ast.BinOp) \
                    and isinstance(value.op, ast.Add):
                for mine, other in ((value.left, value.right), (value.right, value.left)):
                    if isinstance(mine, ast.Name) and mine.id == z and \
                            isinstance(other, (ast.BinOp, ast.UnaryOp)) and \
                            fact(value) == out and (fact(other) == out or
                                                    fact(other) is None):
                        adds.append((s_, other))
        summed_names = sum(1 for n in sums)
        if summed_names + len(adds) != len(mentions) or len(adds) > 1:
            continue
        # the sum of zeros plus v at one place is v
        _replace_nodes(fn, {id(n): v for n in sums})
        if adds:
            s_, other = adds[0]
            if fact(other) is None and fact(s_.value) != out:
                continue
            pos = body.index(s_)
            acc = ast.Name(z, ast.Load())
            new = [ast.copy_location(ast.Assign([ast.Name(z, ast.Store())], other), s_),
                   ast.copy_location(ast.AugAssign(
                       ast.Subscript(ast.Name(z, ast.Load()), idx, ast.Store()), ast.Add(),
                       v), s_)]
            if isinstance(s_, ast.Return):
                new.append(ast.copy_location(ast.Return(acc), s_))
            else:
                new.append(ast.copy_location(ast.Assign(s_.targets, acc), s_))
            body[pos:pos + 1] = new
        body.remove(stmt)
        body.remove(write)


def _replace_nodes(fn: ast.FunctionDef, by_id: dict[int, ast.AST]) -> None:
    class Put(ast.NodeTransformer):
        def visit(self, node: ast.AST) -> Any:
            if id(node) in by_id:
                return copy.deepcopy(by_id[id(node)])
            return super().visit(node)

    Put().visit(fn)


_METHODS = {"sum", "max", "min", "mean", "prod", "any", "all"}


def methods(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``np.sum(x, ...)`` of a value known to be an array (it has an axis) is
    ``x.sum(...)``: the same reduction without ``np.sum``'s dispatch, which costs
    microseconds a small gradient notices."""

    class Methods(ast.NodeTransformer):
        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            f = n.func
            if isinstance(f, ast.Attribute) and f.attr in _METHODS and \
                    isinstance(f.value, ast.Name) and f.value.id == "np" and \
                    len(n.args) == 1 and all(k.arg in ("axis", "keepdims")
                                             for k in n.keywords):
                arg = fact(n.args[0])
                if arg is not None and arg[0] != () and isinstance(
                        n.args[0], (ast.Name, ast.Subscript, ast.Attribute, ast.Call)):
                    new = ast.copy_location(ast.Call(
                        ast.Attribute(n.args[0], f.attr, ast.Load()), [], n.keywords), n)
                    if hasattr(n, "_k"):
                        new._k = n._k  # type: ignore[attr-defined]  # the same value
                    return new
            if isinstance(f, ast.Attribute) and f.attr == "astype" and \
                    isinstance(f.value, ast.Name) and f.value.id == "np" and \
                    len(n.args) == 2 and not n.keywords and _array(n.args[0]):
                # np.astype(x, d) of an array is x.astype(d), a new array either way
                # (NumPy 2's np.astype checks its arguments in Python: microseconds)
                new = ast.copy_location(ast.Call(
                    ast.Attribute(n.args[0], "astype", ast.Load()), [n.args[1]], []), n)
                if hasattr(n, "_k"):
                    new._k = n._k  # type: ignore[attr-defined]  # the same value
                return new
            return n

        def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
            # np.asarray(x).dtype of an array x is x.dtype (a grad inlined in the body
            # casts its gradient to np.asarray(x).dtype: inner_transforms.py)
            self.generic_visit(n)
            v = n.value
            if n.attr == "dtype" and isinstance(n.ctx, ast.Load) and isinstance(v, ast.Call) \
                    and call_name(v) == "asarray" and isinstance(v.func, ast.Attribute) and \
                    isinstance(v.func.value, ast.Name) and v.func.value.id == "np" and \
                    len(v.args) == 1 and not v.keywords and isinstance(v.args[0], ast.Name) \
                    and _array(v.args[0]):
                return ast.copy_location(ast.Attribute(v.args[0], "dtype", ast.Load()), n)
            return n

    def _array(node: ast.AST) -> bool:
        """Is ``node``'s value an array at every call of the signature (its fact has
        axes: a NumPy scalar or a Python number has none; a list has no fact)?"""
        arg = fact(node)
        return arg is not None and arg[0] != () and isinstance(
            node, (ast.Name, ast.Subscript, ast.Attribute, ast.Call))

    Methods().visit(fn)


def dead_code(fn: ast.FunctionDef) -> None:
    live: set[str] = set()
    kept: list[ast.stmt] = []
    for stmt in reversed(fn.body):
        if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
            names = {t.id for t in stmt.targets}  # type: ignore[attr-defined]
            impure = any(isinstance(n, ast.Call) and call_name(n) in MUTATORS
                         for n in ast.walk(stmt.value))
            if not (names & live) and not impure:
                continue
            live -= names
        live |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load)}
        kept.append(stmt)
    fn.body = kept[::-1]


def cancel_negations(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``-((-a) * b / c)`` is ``a * b / c``: the two negations cancel, and
    ``((-a) * b).sum(axis)`` and ``(-a).sum(axis)`` are ``-(a * b).sum(axis)`` and
    ``-a.sum(axis)`` (numbers negated, not every element): exact, negation commutes with rounding, where ``a`` is floating (a
    fact: ``-True`` raises).  Also ``(a, b)[1]`` is ``b``.  Run after single uses are
    inlined, where a cotangent's sign meets its use's, and a tuple of cotangents its
    reader."""

    def unsigned(node: ast.AST) -> ast.expr | None:
        """``node``, a product/quotient chain whose leftmost factor is negated, without
        that negation (rewritten in place); None (and unchanged) otherwise."""
        chain, inner = [], node
        while isinstance(inner, ast.BinOp) and isinstance(inner.op, (ast.Mult, ast.Div)):
            chain.append(inner)
            inner = inner.left
        f = fact(inner.operand) if isinstance(inner, ast.UnaryOp) and isinstance(
            inner.op, ast.USub) else None
        if f is None or not isinstance(f[1], np.dtype) or f[1].kind not in "fc":
            return None
        if not chain:
            return inner.operand
        chain[-1].left = inner.operand
        return node  # type: ignore[return-value]

    class Cancel(ast.NodeTransformer):
        def visit_Subscript(self, n: ast.Subscript) -> ast.AST:
            # (a, b)[1] is b (inlining makes them): the other items are pure (dead code)
            self.generic_visit(n)
            items, at = n.value, n.slice
            if not (isinstance(n.ctx, ast.Load) and isinstance(items, ast.Tuple) and
                    isinstance(at, ast.Constant) and type(at.value) is int and
                    -len(items.elts) <= at.value < len(items.elts)) or any(
                    isinstance(e, ast.Starred) or isinstance(m, ast.Call) and
                    call_name(m) in MUTATORS for e in items.elts for m in ast.walk(e)):
                return n
            return items.elts[at.value]

        def visit_UnaryOp(self, n: ast.UnaryOp) -> ast.AST:
            self.generic_visit(n)
            if isinstance(n.op, ast.USub) and isinstance(n.operand, ast.BinOp):
                return unsigned(n.operand) or n
            return n

        def visit_Call(self, n: ast.Call) -> ast.AST:
            self.generic_visit(n)
            x = _summed(n)
            if x is None or any(k.arg not in ("axis", "keepdims") for k in n.keywords):
                return n
            inner = unsigned(x) if isinstance(x, ast.BinOp) else None
            if isinstance(x, ast.UnaryOp) and isinstance(x.op, ast.USub):
                f = fact(x.operand)  # (np.sum(-x) without keywords: the fold did it)
                if f is not None and isinstance(f[1], np.dtype) and f[1].kind in "fc":
                    inner = x.operand
            if inner is None:
                return n
            if n.args:
                n.args = [inner]
            else:
                n.func.value = inner  # type: ignore[attr-defined]
            return ast.UnaryOp(ast.USub(), n)

    Cancel().visit(fn)


_ROW_AXES = (1, -1, (1,), (-1,))


def _arange_rows(fn: ast.FunctionDef, node: ast.AST) -> bool:
    """Is ``node`` ``np.arange(n)`` (values 0..n-1: distinct, none negative), or a name
    bound once in the function to it and never written into?"""
    if isinstance(node, ast.Name):
        binds = [s for s in ast.walk(fn) if isinstance(s, (ast.Assign, ast.AugAssign,
                                                           ast.For, ast.AnnAssign))
                 and any(isinstance(t, ast.Name) and t.id == node.id
                         for t in ast.walk(s.target if not isinstance(s, ast.Assign)
                                           else ast.Tuple(s.targets, ast.Store())))]
        if len(binds) != 1 or not isinstance(binds[0], ast.Assign) or \
                len(binds[0].targets) != 1 or any(node.id in _written(s) for s in fn.body):
            return False
        node = binds[0].value
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        isinstance(node.func.value, ast.Name) and node.func.value.id == "np" and \
        node.func.attr == "arange" and len(node.args) == 1 and not node.keywords and \
        not isinstance(node.args[0], ast.Starred)


def row_sums(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``z = np.zeros((n, m)); np.add.at(z, (np.arange(n), y), s)`` (the cotangent of
    ``x[np.arange(n), y]``, ``s`` 0-d of z's dtype) holds ``s`` once in every row, so
    a sum of ``z`` over its second axis is ``s`` in every row: the sum is not done
    where ``s`` in its place leaves the shape of what reads it unchanged (an operand
    of an operator whose other operand has the result's shape).  Exact: ``s`` plus
    zeros (but for the sign of a zero ``s``)."""
    body = fn.body
    for k, stmt in enumerate(body[:-1]):
        write = body[k + 1]
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                and call_name(stmt.value) == "zeros" and isinstance(write, ast.Expr) and
                isinstance(write.value, ast.Call) and call_name(write.value) == "at" and
                len(write.value.args) == 3 and not write.value.keywords):
            continue
        z, out = stmt.targets[0].id, fact(stmt.value)
        buf, idx, s = write.value.args
        if out is None or len(out[0]) != 2 or not (isinstance(buf, ast.Name) and buf.id == z)\
                or not isinstance(idx, ast.Tuple) or len(idx.elts) != 2 or \
                scalar_of(s, fact) != out[1] or not _arange_rows(fn, idx.elts[0]):
            continue
        fy = fact(idx.elts[1])
        fr = fact(idx.elts[0])
        if fy is None or fr is None or fy[0] != (out[0][0],) or fr[0] != (out[0][0],) or \
                not isinstance(fy[1], np.dtype) or fy[1].kind not in "iu":
            continue
        rest = body[k + 2:]
        reads = {n.id for n in ast.walk(s) if isinstance(n, ast.Name)}
        if any(z in _written(r) for r in rest) or any(
                isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and
                (n.id == z or n.id in reads) for r in rest for n in ast.walk(r)):
            continue
        for r in rest:
            parent = {id(c): p for p in ast.walk(r) for c in ast.iter_child_nodes(p)}
            for node in list(ast.walk(r)):
                x = _summed(node)
                if not (isinstance(x, ast.Name) and x.id == z and node.keywords and all(
                        kw.arg in ("axis", "keepdims") for kw in node.keywords)):
                    continue
                try:
                    kws = {kw.arg: ast.literal_eval(kw.value) for kw in node.keywords}
                except ValueError:
                    continue
                if kws.get("axis") in _ROW_AXES and _shape_kept(node, parent, fact):
                    _replace_nodes(fn, {id(node): copy.deepcopy(s)})


def _shape_kept(node: ast.AST, parent: dict[int, ast.AST],
                fact: Callable[[ast.AST], Any]) -> bool:
    """Does the value ``node`` is an operand in keep its shape and dtype whatever the
    (broadcastable, same dtype) shape of ``node``: is there, up through negations and
    arithmetic, an operator whose other operand has that operator's result's shape?"""
    child, up = node, parent.get(id(node))
    while isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.USub):
        child, up = up, parent.get(id(up))
    while isinstance(up, ast.BinOp) and isinstance(up.op, (ast.Add, ast.Sub, ast.Mult,
                                                           ast.Div)):
        other = up.right if up.left is child else up.left
        fo, fu = fact(other), fact(up)
        if fo is not None and fu is not None and fo[0] == fu[0]:
            return True
        child, up = up, parent.get(id(up))
        while isinstance(up, ast.UnaryOp) and isinstance(up.op, ast.USub):
            child, up = up, parent.get(id(up))
    return False


def subtracted_negations(fn: ast.FunctionDef, known_of: Callable[[ast.AST], Any]) -> None:
    """``x + (-a) * b`` (or ``/ b``, or ``x + (-a)``) is ``x - a * b``: exact, adding a
    negation is subtracting and negation commutes with rounding, where ``a`` and ``x``
    are floating arrays (facts: ``-True`` raises).  For the products passes after the
    signs pass write (a solve's cotangent ``k_bar + -b_bar @ a.T``, whose column times
    row became ``k_bar + -b_bar * a.T``): one negation of an array less."""

    def floating(node: ast.AST) -> bool:
        f = known_of(node)
        return f is not None and isinstance(f[1], np.dtype) and f[1].kind == "f"

    class Subtract(ast.NodeTransformer):
        def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
            self.generic_visit(n)
            if not isinstance(n.op, ast.Add) or not floating(n.left):
                return n
            right, chain = n.right, None
            while isinstance(right, ast.BinOp) and isinstance(right.op, (ast.Mult, ast.Div)):
                chain, right = right, right.left
            if not (isinstance(right, ast.UnaryOp) and isinstance(right.op, ast.USub)
                    and floating(right.operand)):
                return n
            if chain is None:
                n.right = right.operand
            else:
                chain.left = right.operand
            n.op = ast.Sub()
            return n

    Subtract().visit(fn)


def whole_views(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any]) -> None:
    """``b = np.zeros(s)`` and then ``b[None, :] += v`` (the adjoint of ``x[None, :]``:
    an index of new axes and whole slices, a view of every element of ``b``), ``v`` an
    operator's new array of that view's shape and of ``b``'s dtype (facts), is ``b =
    v[0]``: the same numbers without the zeros and the buffered add (equal to
    rounding: zero plus ``-0.0`` is ``0.0``, where the view keeps ``-0.0``, as JAX's
    transpose of the index does).  ``v`` is a temporary no name holds, so its view is
    ``b``'s alone, and writeable."""
    body = fn.body
    k = 0
    while k + 1 < len(body):
        stmt, write = body[k], body[k + 1]
        k += 1
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and
                isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call)
                and call_name(stmt.value) == "zeros" and isinstance(write, ast.AugAssign)
                and isinstance(write.op, ast.Add) and isinstance(write.target, ast.Subscript)
                and isinstance(write.target.value, ast.Name)
                and write.target.value.id == stmt.targets[0].id
                and isinstance(write.value, (ast.BinOp, ast.UnaryOp))):
            continue
        out, got = fact(stmt.value), fact(write.value)
        if got is None and isinstance(write.value, ast.UnaryOp):  # (-v: the signs pass's)
            got = fact(write.value.operand)
        at = write.target.slice
        items = at.elts if isinstance(at, ast.Tuple) else [at]
        picks: list[ast.expr] = []
        shape: list[int] = []
        for item in items:
            if isinstance(item, ast.Constant) and item.value is None:
                picks.append(ast.Constant(0))
                shape.append(1)
            elif isinstance(item, ast.Slice) and item.lower is item.upper is item.step is None:
                picks.append(ast.Slice())
                shape.append(-1)
            else:
                break
        else:
            if out is None or got is None or shape.count(-1) != len(out[0]) or \
                    not isinstance(out[1], np.dtype) or got[1] != out[1] or any(
                    isinstance(n, ast.Name) and n.id == stmt.targets[0].id
                    for n in ast.walk(write.value)):
                continue
            dims = iter(out[0])
            if tuple(got[0]) != tuple(next(dims) if d == -1 else 1 for d in shape):
                continue
            while len(picks) > 1 and isinstance(picks[-1], ast.Slice):
                picks.pop()  # (v[0, :] is v[0]: the same view, a cheaper index)
            view = ast.Subscript(write.value, ast.Tuple(picks, ast.Load()) if len(picks) > 1
                                 else picks[0], ast.Load())
            if hasattr(stmt.value, "_k"):
                view._k = stmt.value._k  # type: ignore[attr-defined]  # (b's shape, dtype)
            stmt.value = ast.copy_location(view, stmt.value)
            del body[k]
    ast.fix_missing_locations(fn)
