"""The ``products`` pass: a sum or mean over one axis of a floating matrix, spelled as a
matrix-vector product with a vector of ones; a matrix product of a column and a
row, ``(m, 1) @ (1, n)``, spelled as the elementwise product it is; and a stack of
matrix-vector products with one matrix, ``(a @ v[..., None])[..., 0]``, as the one
matrix product ``v @ a.T``.

NumPy reduces a matrix along an axis one short inner loop at a time: summing each row
of a 64 x 10 array costs about as much as an elementwise operation on 4,000 numbers
(22,000 instructions, against 10,700 for ``x @ ones`` through BLAS's matrix-vector
product; 154,000 against 17,000 for 1000 x 3), and a mean adds the Python of
``_methods._mean``.  Softmax, log-sum-exp and layer-norm gradients take two to five
such sums a call.  Multiplying by one is exact, so the product adds the same numbers;
only the order of the additions may differ (equal to rounding).  NumPy sums up to 128
contiguous numbers with eight running sums (pairwise beyond), and a column one row
after another: a row of the matrix is rewritten only up to 128 long, where a dot
product's few running sums have NumPy's error bound, a column at any length.

The vectors of ones are module constants of the specialized code (``ones_10x1 =
np.ones((10, 1))``), made once when it is compiled and read only by these products.
Only where the matrix's shape and dtype are facts of the signature: 2-D, float32 or
float64 (the ones of its dtype, so the product's dtype is the sum's); the axis a
literal and ``keepdims`` a literal (or absent), no other keyword; a mean's count
not zero (an empty mean's warning is NumPy's own).
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import numpy as np

from .. import syntax

LONGEST_ROW = 128  # (NumPy's pairwise block: up to it, eight running sums)
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _literal_axis(node: ast.AST) -> int | None:
    if isinstance(node, ast.Tuple) and len(node.elts) == 1:
        node = node.elts[0]
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node, sign = node.operand, -1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return sign * node.value
    return None


def _reduction(node: ast.Call) -> tuple[str, ast.expr, list[ast.keyword]] | None:
    """``(sum or mean, the matrix, the keywords)`` of ``x.sum(...)``, ``np.sum(x, ...)``
    and the means alike, else None."""
    f = node.func
    if not isinstance(f, ast.Attribute) or f.attr not in ("sum", "mean"):
        return None
    if isinstance(f.value, ast.Name) and f.value.id == "np":
        if len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            return None
        return f.attr, node.args[0], node.keywords
    if node.args:
        return None
    return f.attr, f.value, node.keywords


def _axis_keepdims(keywords: list[ast.keyword]) -> tuple[int, bool] | None:
    axis, keepdims = None, False
    for k in keywords:
        if k.arg == "axis":
            axis = _literal_axis(k.value)
            if axis is None:
                return None
        elif k.arg == "keepdims" and isinstance(k.value, ast.Constant) and \
                type(k.value.value) is bool:
            keepdims = k.value.value
        else:
            return None
    return None if axis is None else (axis, keepdims)


def narrow_floats(args: Any) -> bool:
    """Does any argument (in dicts, lists and tuples too) hold float32 or float16?"""
    if isinstance(args, dict):
        return any(narrow_floats(v) for v in args.values())
    if isinstance(args, (list, tuple)):
        return any(narrow_floats(v) for v in args)
    dtype = getattr(args, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind == "f" and dtype.itemsize < 8


def sums_as_products(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any],
                     taken: set[str], narrow: bool = False) -> list[ast.stmt]:
    """Rewrite ``fn`` in place: each sum (or mean) over one axis of a 2-D float32 or
    float64 matrix, where the guard of the module docstring holds, is ``x @ ones`` (a
    row's) or ``ones @ x`` (a column's), over the count for a mean.  Returns the
    module statements that bind the vectors of ones, named apart from ``taken``.

    ``narrow``: the signature has float32 (or float16) arrays.  A fact then saying
    float64 may be the generic code's where a pass made the value float32 (``ties``
    computes a float32 relu's share in float32, the generic code in float64), so such
    a matrix is given float32 ones: exact, and NumPy's promotion makes the product
    the matrix's dtype, float32 or float64, whichever it is."""
    derived: dict[int, Any] = {}
    known_of = _facts_of(fn, fact, derived)
    made: dict[tuple, str] = {}  # (shape, dtype) -> the constant's name
    statements: list[ast.stmt] = []

    def ones(shape: tuple[int, ...], dtype: np.dtype) -> str:
        key = (shape, dtype)
        if key not in made:
            base = "ones" + ("32" if dtype == np.float32 else "") + "_" + "x".join(
                str(d) for d in shape)
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            taken.add(name)
            made[key] = name
            text = f"{name} = np.ones({shape!r}" + (
                ", dtype=np.float32)" if dtype == np.float32 else ")")
            statements.append(syntax.parse(text).body[0])
        return made[key]

    class Products(ast.NodeTransformer):
        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            """A column times a row (``(m, 1) @ (1, n)``): each element is one product,
            so the matrix product is the elementwise one, without BLAS's call."""
            self.generic_visit(node)
            if not isinstance(node.op, ast.MatMult):
                return node
            left, right = known_of(node.left), known_of(node.right)
            if left is None or right is None or len(left[0]) != 2 or len(right[0]) != 2 \
                    or left[0][1] != 1 or right[0][0] != 1 or \
                    np.dtype(left[1]) != np.dtype(right[1]) or \
                    np.dtype(left[1]) not in _FLOATS:
                return node
            new = ast.copy_location(ast.BinOp(node.left, ast.Mult(), node.right), node)
            if hasattr(node, "_k"):
                new._k = node._k  # type: ignore[attr-defined]  # (the same value)
            derived[id(new)] = ((left[0][0], right[0][1]), np.dtype(left[1]))
            return new

        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            self.generic_visit(node)
            return _one_product(node, known_of, derived) or node

        def visit_Call(self, node: ast.Call) -> ast.AST:
            self.generic_visit(node)
            found = _reduction(node)
            if found is None:
                return node
            kind, x, keywords = found
            spec = _axis_keepdims(keywords)
            known = known_of(x)
            if spec is None or known is None or len(known[0]) != 2 or \
                    np.dtype(known[1]) not in _FLOATS:
                return node
            axis, keepdims = spec
            if axis not in (-2, -1, 0, 1):
                return node
            m, n = known[0]
            dtype = np.dtype(np.float32) if narrow else np.dtype(known[1])
            row = axis % 2 == 1
            count = n if row else m
            if (row and n > LONGEST_ROW) or (kind == "mean" and count == 0):
                return node
            if row:
                new: ast.expr = ast.BinOp(x, ast.MatMult(), ast.Name(
                    ones((n, 1) if keepdims else (n,), dtype), ast.Load()))
            else:
                new = ast.BinOp(ast.Name(ones((1, m) if keepdims else (m,), dtype),
                                         ast.Load()), ast.MatMult(), x)
            if kind == "mean":
                new = ast.BinOp(new, ast.Div(), ast.Constant(count))
            if hasattr(node, "_k"):
                new._k = node._k  # type: ignore[attr-defined]  # (the same value)
            shape = ((m, 1) if row else (1, n)) if keepdims else ((m,) if row else (n,))
            derived[id(new)] = (shape, np.dtype(known[1]))
            return ast.copy_location(new, node)

    Products().visit(fn)
    return statements


_ELEMENTWISE = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _one_product(node: ast.Subscript, known_of: Callable[[ast.AST], Any],
                 derived: dict[int, Any]) -> ast.expr | None:
    """``(a @ v[..., None])[..., 0]`` of a 2-D ``a`` (a vmapped gradient's
    matrix-vector products, one per example) is ``v @ a.T``: one matrix product, the
    same sums of the same products; None where it is not that."""
    inner = node.value
    if not (_ends(node, 0) and isinstance(inner, ast.BinOp) and isinstance(
            inner.op, ast.MatMult) and isinstance(inner.right, ast.Subscript)
            and _ends(inner.right, None)):
        return None
    a, v = known_of(inner.left), known_of(inner.right.value)
    if a is None or v is None or len(a[0]) != 2 or len(v[0]) < 1 or \
            v[0][-1] != a[0][1] or np.dtype(a[1]) != np.dtype(v[1]) or \
            np.dtype(a[1]) not in _FLOATS:
        return None
    new = ast.copy_location(ast.BinOp(inner.right.value, ast.MatMult(), ast.Attribute(
        inner.left, "T", ast.Load())), node)
    if hasattr(node, "_k"):
        new._k = node._k  # type: ignore[attr-defined]  # (the same value)
    derived[id(new)] = (tuple(v[0][:-1]) + (a[0][0],), np.dtype(a[1]))
    return new


def _ends(node: ast.Subscript, last: int | None) -> bool:
    """Is ``node`` a load of ``x[..., last]`` (``last`` 0 or None)?"""
    index = node.slice
    return isinstance(node.ctx, ast.Load) and isinstance(index, ast.Tuple) and \
        len(index.elts) == 2 and isinstance(index.elts[0], ast.Constant) and \
        index.elts[0].value is Ellipsis and isinstance(index.elts[1], ast.Constant) and \
        index.elts[1].value is last and type(index.elts[1].value) is type(last)


def _facts_of(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any], derived: dict[int, Any]
              ) -> Callable[[ast.AST], Any]:
    """``fact``, and where a node made by an earlier pass has none: a name's, read off
    another read of it or its one binding (names bound once in ``fn``, never written
    into), and an elementwise ``+ - * /``'s, broadcast from its operands' (a Python
    number beside a floating array takes the array's dtype: NumPy's weak scalars);
    ``derived``: the products this pass wrote, by id."""
    stores: dict[str, int] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, ast.arg):
            stores[n.arg] = stores.get(n.arg, 0) + 1
        elif isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load):
            base = n.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):  # (written into: its reads may differ)
                stores[base.id] = stores.get(base.id, 0) + 2
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            stores[n.target.id] = stores.get(n.target.id, 0) + 2
    by_name: dict[str, Any] = {}
    bound: dict[str, ast.expr] = {}  # a name bound once -> its value
    for n in ast.walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(
                n.targets[0], ast.Name) and stores.get(n.targets[0].id) == 1:
            bound[n.targets[0].id] = n.value
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and \
                stores.get(n.id, 0) <= 1:
            got = fact(n)
            if got is not None:
                by_name.setdefault(n.id, got)
    busy: set[str] = set()

    def known(node: ast.AST) -> Any:
        got = fact(node) or derived.get(id(node))
        if got is not None:
            return got
        if isinstance(node, ast.Name):
            if node.id not in by_name and node.id in bound and node.id not in busy:
                busy.add(node.id)
                by_name[node.id] = known(bound[node.id])
            return by_name.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return known(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ELEMENTWISE):
            sides = []
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and type(side.value) in (int, float):
                    sides.append(None)
                    continue
                got = known(side)
                if got is None:
                    return None
                sides.append(got)
            arrays = [s for s in sides if s is not None]
            if not arrays or any(np.dtype(s[1]) not in _FLOATS for s in arrays):
                return None
            try:
                shape = np.broadcast_shapes(*(tuple(s[0]) for s in arrays))
            except ValueError:
                return None
            return shape, np.result_type(*(s[1] for s in arrays))
        return None

    return known


def names_in(module: ast.Module) -> set[str]:
    """Every name the module binds or reads (a constant added must be none of them)."""
    names = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)}
    names |= {a.arg for a in ast.walk(module) if isinstance(a, ast.arg)}
    names |= {n.name for n in ast.walk(module) if isinstance(n, (
        ast.FunctionDef, ast.ClassDef))}
    for n in ast.walk(module):
        if isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in n.names}
    return names
