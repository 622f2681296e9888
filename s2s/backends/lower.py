"""Lowering passes over module text: NumPy's in-place writes as functional updates.

JAX arrays are immutable, so the JAX backend rewrites every write into an array as a
rebinding of its name, statement by statement, leaving the rest of the text (and its
comments) as it was::

    y[i] = v                    ->  y = y.at[i].set(v)
    y[i] += v                   ->  y = y.at[i].add(v)
    y[i][j] = v                 ->  y = y.at[i].set(y[i].at[j].set(v))
    np.add.at(buf, idx, v)      ->  buf = buf.at[idx].add(v)
    np.add.at(y, idx, v) or y   ->  y.at[idx].add(v)        (batched code's expression)
    np.add.at(y := e, idx, v) or y  ->  (y := e).at[idx].add(np.astype(v, y.dtype))
    np.einsum("ii->i", b)[...] = v
        ->  b = b.ravel().at[np.einsum("ii->i", np.arange(b.size).reshape(b.shape))]
                 .set(v).reshape(b.shape)

The rewrite is sound for the code s2s emits (and its runtime helpers): a write only
ever targets an array no other live name refers to, so rebinding the one name that
refers to it is the same program.  Writes into Python lists and dicts (``mats[0] =
...`` where ``mats`` was built by a list display or comprehension, ``hs_bar[k] =
hs_bar[k] + g`` into a cotangent list made by ``zeros_list``) are left alone, as
are ``tape.append``/``tape.pop``: lists are ordinary Python values while JAX traces.

One difference in meaning: NumPy's ``y[idx] += v`` through an integer array with a
repeated index adds once (the write is buffered), ``.at[idx].add`` adds every time
(as ``np.add.at`` does).  s2s's emitted code writes ``+=`` only through basic indexes
(ints, slices) and accumulates through integer arrays with ``np.add.at``, where the
two agree.
"""

from __future__ import annotations

import ast

from .. import syntax

__all__ = ["lower_inplace", "LoweringError"]

_AUG = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "divide",
    ast.Pow: "power",
}
_UFUNC_AT = {
    "add": "add",
    "subtract": "subtract",
    "multiply": "multiply",
    "divide": "divide",
    "true_divide": "divide",
    "maximum": "max",
    "minimum": "min",
    "power": "power",
}


class LoweringError(ValueError):
    """An in-place write the JAX backend cannot express as a functional update."""


def lower_inplace(text: str, np_name: str = "np", fuse_slices: bool = False) -> str:
    """``text`` with each in-place write into an array rewritten functionally.

    ``fuse_slices``: outside loops, ``y[s] += v`` through an index with a slice becomes
    ``y = y + np.zeros_like(y).at[s].set(v)`` (``-=`` likewise): XLA turns the write
    into zeros into a pad and fuses the sum with the arithmetic around it, where a
    scatter-add ends the fusion (a reverse pass's ``x_bar[1:] += g`` into a fresh
    buffer runs in one loop instead of one per write).  Inside loops, where the same
    element is written on every trip, ``.at[s].add(v)`` updates in place.
    """
    tree = syntax.parse(text)
    edits: list[tuple[ast.stmt, str]] = []
    for scope in _scopes(tree):
        containers = _python_containers(scope)
        looped = _in_loops(scope)
        for stmt in _statements(scope):
            fuse = fuse_slices and id(stmt) not in looped
            new = _lower_statement(stmt, containers, np_name, fuse)
            if isinstance(stmt, _SIMPLE):
                new = _array_indexes(new if new is not None else ast.unparse(stmt),
                                     np_name) or new
            if new is not None:
                edits.append((stmt, new))
    if not edits:
        return text
    lines = text.splitlines(keepends=True)
    # replace each statement's exact span, last first, so earlier offsets stay valid
    for stmt, new in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset),
                            reverse=True):
        first, last = stmt.lineno - 1, stmt.end_lineno - 1  # type: ignore[operator]
        head = _bytes_prefix(lines[first], stmt.col_offset)
        tail = _bytes_suffix(lines[last], stmt.end_col_offset)  # type: ignore[arg-type]
        lines[first:last + 1] = [head + new + tail]
    return "".join(lines)


def _bytes_prefix(line: str, col: int) -> str:
    return line.encode()[:col].decode()


def _bytes_suffix(line: str, col: int) -> str:
    return line.encode()[col:].decode()


def _scopes(tree: ast.Module) -> list[ast.AST]:
    """The module and every function in it: each has its own local names."""
    out: list[ast.AST] = [tree]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            out.append(node)
    return out


def _statements(scope: ast.AST):
    """Statements directly in ``scope`` (nested blocks included, nested functions not)."""
    body = scope.body if not isinstance(scope, ast.Lambda) else []
    stack = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            stack.extend(getattr(stmt, field, []) or [])
        for handler in getattr(stmt, "handlers", []) or []:
            stack.extend(handler.body)


def _in_loops(scope: ast.AST) -> set[int]:
    """Ids of the statements of ``scope`` inside a ``for`` or ``while``."""
    out: set[int] = set()
    for stmt in _statements(scope):
        if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)):
            for inner in ast.walk(stmt):
                if inner is not stmt and isinstance(inner, ast.stmt):
                    out.add(id(inner))
    return out


def _python_containers(scope: ast.AST) -> set[str]:
    """Names bound to Python lists or dicts in this scope: their items are not arrays."""
    names: set[str] = set()
    for stmt in _statements(scope):
        if isinstance(stmt, ast.Assign) and _is_container(stmt.value):
            names |= {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and \
                isinstance(stmt.target, ast.Name) and _is_container(stmt.value):
            names.add(stmt.target.id)
    return names


def _is_container(value: ast.expr) -> bool:
    if isinstance(value, (ast.List, ast.ListComp, ast.Dict, ast.DictComp)):
        return True
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
            and value.func.id in ("list", "dict", "zeros_list"))  # (a list cotangent)


def _root(target: ast.expr) -> ast.expr:
    while isinstance(target, ast.Subscript):
        target = target.value
    return target


def _lower_statement(stmt: ast.stmt, containers: set[str], np_name: str,
                     fuse: bool = False) -> str | None:
    lowered = _lower_simple(stmt, containers, np_name, fuse)
    if lowered is not None or not isinstance(stmt, (ast.Assign, ast.Expr, ast.Return)):
        return lowered
    copy = syntax.parse(ast.unparse(stmt)).body[0]
    rewriter = _UfuncAtExpression(np_name)
    copy = rewriter.visit(copy)
    return ast.unparse(copy) if rewriter.changed else None


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


class _ListIndexes(ast.NodeTransformer):
    """``y[[0, 0, 2]]`` as ``y[np.asarray([0, 0, 2])]``: NumPy reads a list index as
    an integer array; jax.numpy refuses a list (``.at[...]`` too)."""

    def __init__(self, np_name: str) -> None:
        self.np_name = np_name
        self.changed = False

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        self.generic_visit(node)
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        converted = [self._array(e) if isinstance(e, ast.List) else e for e in items]
        if any(a is not b for a, b in zip(converted, items)):
            self.changed = True
            node.slice = ast.Tuple(converted, ast.Load()) if isinstance(
                node.slice, ast.Tuple) else converted[0]
        return node

    def _array(self, items: ast.List) -> ast.expr:
        return ast.Call(ast.Attribute(ast.Name(self.np_name, ast.Load()), "asarray",
                                      ast.Load()), [items], [])


def _array_indexes(text: str, np_name: str) -> str | None:
    """The statement ``text`` with its list indexes read as arrays, or None."""
    if "[[" not in text and "[(" not in text and ", [" not in text:
        return None
    tree = syntax.parse(text)
    rewriter = _ListIndexes(np_name)
    tree = rewriter.visit(tree)
    return ast.unparse(tree) if rewriter.changed else None


class _UfuncAtExpression(ast.NodeTransformer):
    """``np.add.at(y, idx, v) or y`` (``y := ...`` inside allowed): the updated array,
    as an expression, ``y.at[idx].add(v)``."""

    def __init__(self, np_name: str) -> None:
        self.np_name = np_name
        self.changed = False

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        if not (isinstance(node.op, ast.Or) and len(node.values) == 2):
            return node
        call, result = node.values
        method = _ufunc_at(call, self.np_name)
        if method is None or not isinstance(result, ast.Name):
            return node
        buf, idx, value = call.args  # type: ignore[attr-defined]
        if isinstance(buf, ast.NamedExpr) and buf.target.id == result.id:
            # (kept: `(y := np.stack(...)).at[idx].add(np.astype(v, y.dtype))` binds
            # the name its dtype is read from before the value is cast)
            array, like = buf, buf.target.id
        elif isinstance(buf, ast.Name) and buf.id == result.id:
            array, like = buf, buf.id
        else:
            return node
        self.changed = True
        return _update(array, idx, value, method, like, self.np_name)


def _ufunc_at(call: ast.expr, np_name: str) -> str | None:
    """The ``.at`` method for ``np.<ufunc>.at(buf, idx, v)``, else None."""
    if not isinstance(call, ast.Call) or call.keywords or len(call.args) != 3:
        return None
    func = call.func
    if (isinstance(func, ast.Attribute) and func.attr == "at"
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.value.value.id == np_name):
        return _UFUNC_AT.get(func.value.attr)
    return None


def _lower_simple(stmt: ast.stmt, containers: set[str], np_name: str,
                  fuse: bool) -> str | None:
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Subscript):
            return None
        target = stmt.targets[0]
        if _is_python_item(target, containers):
            return None
        return _store(target, stmt.value, "set", np_name)
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Subscript):
        if _is_python_item(stmt.target, containers):
            return None
        target = stmt.target
        if fuse and isinstance(stmt.op, (ast.Add, ast.Sub)) and isinstance(
                target.value, ast.Name) and _has_slice(target.slice):
            name, op = target.value.id, "+" if isinstance(stmt.op, ast.Add) else "-"
            placed = _update(syntax.parse(f"{np_name}.zeros_like({name})", mode="eval").body,
                             target.slice, stmt.value, "set", name, np_name)
            return f"{name} = {name} {op} {ast.unparse(placed)}"
        method = _AUG.get(type(stmt.op))
        if method is None:
            raise LoweringError(
                f"cannot lower the in-place update `{ast.unparse(stmt)}` "
                f"(line {stmt.lineno}) for the JAX backend"
            )
        return _store(stmt.target, stmt.value, method, np_name)
    if isinstance(stmt, ast.Expr):
        method = _ufunc_at(stmt.value, np_name)
        if method is not None:
            buf, idx, value = stmt.value.args  # type: ignore[attr-defined]
            return _store(ast.Subscript(buf, idx, ast.Store()), value, method, np_name)
    return None


def _has_slice(index: ast.expr) -> bool:
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(i, ast.Slice) for i in items)


def _is_python_item(target: ast.Subscript, containers: set[str]) -> bool:
    root = _root(target)
    if isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str):
        return True  # (a string key: a dict's item, `e = p.copy(); e["w"] = v`)
    return isinstance(root, ast.Name) and root.id in containers


def _store(target: ast.Subscript, value: ast.expr, method: str, np_name: str) -> str:
    """``target (method)= value`` as one rebinding of the root name."""
    base = target.value
    if _is_einsum_view(base, np_name) and isinstance(target.slice, ast.Constant) \
            and target.slice.value is Ellipsis:
        return _einsum_store(base, value, method, np_name)
    root = _root(target)
    if not isinstance(root, ast.Name):
        raise LoweringError(
            f"cannot lower the in-place write into `{ast.unparse(target)}` for the JAX "
            "backend: writes must go into a named array"
        )
    update = _update(base, target.slice, value, method, root.id, np_name)
    while isinstance(base, ast.Subscript):  # (the outer writes put back a piece of
        update = _update(base.value, base.slice, update, "set")  # root: its dtype)
        base = base.value
    return ast.unparse(ast.Assign([ast.Name(base.id, ast.Store())], update, lineno=0))


def _update(array: ast.expr, index: ast.expr, value: ast.expr, method: str,
            like: str | None = None, np_name: str = "np") -> ast.expr:
    """``array.at[index].method(value)``; with ``like`` (the name whose dtype the array
    has), the value cast to that dtype first, as NumPy's write into the array casts it
    (a float64 value into a float32 array: JAX warns, and will refuse); a number
    written as a literal is weak in JAX, and is left as it is."""
    if like is not None and not _literal(value) and not _read_of(value, like):
        value = syntax.parse(f"{np_name}.astype({ast.unparse(value)}, {like}.dtype)",
                             mode="eval").body
    ref = ast.Subscript(ast.Attribute(_load(array), "at", ast.Load()), index, ast.Load())
    return ast.Call(ast.Attribute(ref, method, ast.Load()), [value], [])


def _read_of(value: ast.expr, name: str) -> bool:
    """``h[i]``, ``-h[i]``: an item of the array ``name`` itself (its dtype)."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    root = _root(value)
    return isinstance(root, ast.Name) and root.id == name


def _literal(value: ast.expr) -> bool:
    """``2``, ``-1.5``, ``True``: a Python number written out."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) and isinstance(value.value, (int, float, bool))


def _load(expr: ast.expr) -> ast.expr:
    return syntax.parse(ast.unparse(expr), mode="eval").body


def _is_einsum_view(base: ast.expr, np_name: str) -> bool:
    """``np.einsum(spec, name)``: a writeable view in NumPy (a diagonal, a transpose)."""
    return (isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute)
            and base.func.attr == "einsum" and isinstance(base.func.value, ast.Name)
            and base.func.value.id == np_name and len(base.args) == 2
            and isinstance(base.args[1], ast.Name) and not base.keywords)


def _einsum_store(view: ast.Call, value: ast.expr, method: str, np_name: str) -> str:
    """A write through an einsum view, as a scatter at the flat positions it selects."""
    spec, name = ast.unparse(view.args[0]), view.args[1].id  # type: ignore[attr-defined]
    positions = (f"{np_name}.einsum({spec}, "
                 f"{np_name}.arange({name}.size).reshape({name}.shape))")
    return (f"{name} = {name}.ravel().at[{positions}].{method}({ast.unparse(value)})"
            f".reshape({name}.shape)")
