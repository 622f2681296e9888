"""The last spelling of the ``products`` pass: a matrix product ``a @ b`` of plain
float arrays of one or two axes each is ``a.dot(b)``.

For such operands the two compute the same product (NumPy's ``dot`` and ``matmul``
agree on matrices and vectors; they part only at three axes or more), through the
same BLAS routines where the operands are contiguous or transposed: the same values
bit for bit there, and equal to rounding where a strided view makes ``matmul`` take
its own loop and ``dot`` a contiguous copy.  ``@`` goes through the ufunc machinery
of ``np.matmul`` (a gufunc: its iterator, its type resolution, its output wrapping);
``ndarray.dot`` calls the BLAS routine straight away: 8.3k instructions to 4.2k for
a 4 x 3 matrix times a column, about 4k less per product at every small size (an MLP's
gradient makes seven of them), and no slower at large sizes.

Only where the facts of the signature say both operands are float32 or float64
arrays of one or two axes, and where both are plain ``np.ndarray`` objects: the
function's array arguments (the signature admits no subclass), the specialized
code's module constants, free names bound to plain arrays (their objects guarded),
and what NumPy computes from those alone (an operator, a ``np.`` function, the
runtime's helpers, a method or ``.T`` of a plain array).  A subclass's ``@`` may
dispatch to its own ``__matmul__`` (or the right operand's ``__rmatmul__``) where
``.dot`` would not.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

import numpy as np

from .products import _facts_of

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_VIEWS = ("T", "mT", "real")
# operands of at most this many elements: where the call's overhead is the cost (a
# 64 x 32 times 32 x 64 MLP gradient's products counted 76k instructions more as dots
# than as @: BLAS's kernels for dot's layouts; not measured between the two sizes)
LARGEST = 1024
# a product with a vector (BLAS's gemv either way): its matrix of at most this many
# (256 x 8 times a vector 1.8 -> 1.1 us, 1000 x 10 8.4 -> 6.6 us, bit for bit, float32
# and float64; 500 x 500 and 10000 x 8 within noise: left as they are beyond)
LARGEST_WITH_VECTOR = 4096
# NumPy names that make (or are) an ndarray subclass, or call what they are given
_NOT_PLAIN = {"ma", "matrix", "asmatrix", "bmat", "memmap", "recarray", "rec", "char",
              "chararray", "vectorize", "frompyfunc", "piecewise", "apply_along_axis",
              "apply_over_axes", "ndarray", "lib", "ctypeslib", "polynomial"}


def _helpers(module: ast.Module) -> set[str]:
    """The names the module imports from s2s's runtime (helpers whose results are
    plain arrays of plain operands)."""
    out: set[str] = set()
    for node in module.body:
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("s2s.runtime"):
            out |= {a.asname or a.name for a in node.names}
    return out


class _Plain:
    """Which expressions of ``fn`` are plain ``np.ndarray`` objects (or Python numbers:
    operands that make no subclass), by a fixpoint over the names' bindings: a name
    bound in ``fn`` is plain where every binding of it is."""

    def __init__(self, fn: ast.FunctionDef, free: set[str], helpers: set[str]) -> None:
        self.params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args,
                                       *fn.args.kwonlyargs)}
        self.free, self.helpers = free, helpers
        self.bindings: dict[str, list[ast.expr | None]] = {}
        for node in (n for stmt in fn.body for n in ast.walk(stmt)):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    self._bind(t, node.value)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                # (x += y writes into x's array: its type stays; x: T = v binds v)
                value = node.value if isinstance(node, ast.AnnAssign) else None
                if not isinstance(node, ast.AugAssign):
                    self._bind(node.target, value)
            elif isinstance(node, (ast.For, ast.comprehension)):
                self._bind(node.target, None)
            elif isinstance(node, (ast.With, ast.NamedExpr, ast.Import, ast.ImportFrom,
                                   ast.FunctionDef, ast.Lambda, ast.ExceptHandler,
                                   ast.Global, ast.Nonlocal, ast.Delete)):
                for n in ast.walk(node):
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
                        self.bindings.setdefault(n.id, []).append(None)
                if isinstance(node, ast.NamedExpr):
                    self.bindings[node.target.id][-1] = node.value
        for p in self.params:  # (a parameter rebound: its bindings decide too)
            self.bindings.setdefault(p, [])
        self.names = {n for n, values in self.bindings.items() if None not in values}
        changed = True
        while changed:  # (the greatest fixpoint: each value made from plain ones)
            changed = False
            for n in list(self.names):
                if not all(self.of(v) for v in self.bindings[n] if v is not None):
                    self.names.discard(n)
                    changed = True

    def _bind(self, target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(value)
            return
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for n in ast.walk(target):
                if isinstance(n, ast.Name):
                    self.bindings.setdefault(n.id, []).append(None)

    def of(self, node: ast.AST) -> bool:
        """Is ``node``'s value a plain array, a Python number or a literal (or an
        argument's container, whose leaves the signature makes plain arrays)?"""
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            if node.id in self.bindings:
                return node.id in self.names
            return node.id in self.free
        if isinstance(node, ast.Attribute):
            if _numpy_attribute(node):  # (np.float64, np.inf, np.newaxis)
                return True
            return node.attr in _VIEWS and self.of(node.value)
        if isinstance(node, ast.Subscript):  # (any index of a plain array: a plain one)
            return self.of(node.value)
        if isinstance(node, ast.BinOp):
            return self.of(node.left) and self.of(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.of(node.operand)
        if isinstance(node, ast.Compare):
            return self.of(node.left) and all(self.of(c) for c in node.comparators)
        if isinstance(node, ast.Call):
            f = node.func
            made = _numpy_attribute(f) and f.attr not in _NOT_PLAIN  # type: ignore[union-attr]
            helper = isinstance(f, ast.Name) and f.id in self.helpers
            method = isinstance(f, ast.Attribute) and not _numpy_attribute(f) and \
                self.of(f.value)
            return (made or helper or method) and all(
                self._operand(a) for a in node.args) and all(
                self._operand(k.value) for k in node.keywords)
        return False

    def _operand(self, node: ast.AST) -> bool:
        if isinstance(node, (ast.Tuple, ast.List)):  # (np.concatenate((a, b)), shapes)
            return all(self._operand(e) for e in node.elts)
        return self.of(node)


def _numpy_attribute(node: ast.AST) -> bool:
    """``np.name``, ``np.name.name`` (``np.maximum.reduce``, ``np.linalg.solve``), not
    of ``np.ma`` (masked arrays are a subclass) or another of ``_NOT_PLAIN``."""
    if not isinstance(node, ast.Attribute):
        return False
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return isinstance(node, ast.Name) and node.id == "np" and len(parts) <= 2 and \
        not set(parts) & _NOT_PLAIN


def products_as_dots(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any],
                     module: ast.Module, namespace: dict[str, Any],
                     constants: list[ast.stmt]) -> None:
    """Rewrite ``fn`` in place: ``a @ b`` is ``a.dot(b)`` where the module docstring's
    guard holds.  ``fact``: a value's (shape, dtype) fact; ``namespace``: the free
    names' objects (guarded); ``constants``: the specialized code's module constants
    (their own shapes and dtypes)."""
    known_of = _facts_of(fn, fact, {})
    consts: dict[str, Any] = {}
    for stmt in constants:
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            try:  # (np.ones((3, 1)), np.array(-0.25): the specializer's own calls)
                value = eval(ast.unparse(stmt.value), {"np": np})
            except Exception:
                continue
            if type(value) is np.ndarray:
                consts[stmt.targets[0].id] = (value.shape, value.dtype)
    free = set(consts) | {k for k, v in namespace.items() if type(v) is np.ndarray}
    plain = _Plain(fn, free, _helpers(module))

    def layout(node: ast.AST) -> Any:
        if isinstance(node, ast.Name) and node.id in consts and node.id not in plain.bindings:
            return consts[node.id]
        got = known_of(node)
        if got is None and isinstance(node, ast.Attribute) and node.attr == "T":
            inner = layout(node.value)  # (a pass's x.T: the reversed axes)
            if inner is not None and isinstance(inner[0], tuple):
                return tuple(reversed(inner[0])), inner[1]
        return got

    def fits(node: ast.AST, largest: int) -> bool:
        got = layout(node)
        return got is not None and isinstance(got[0], tuple) and len(got[0]) in (1, 2) \
            and isinstance(got[1], np.dtype) and got[1] in _FLOATS and \
            int(np.prod(got[0])) <= largest and plain.of(node)

    def small(node: ast.AST) -> bool:  # (the product too: 64 x 4 times 4 x 64 was slower)
        got = layout(node)
        return got is not None and isinstance(got[0], tuple) and \
            int(np.prod(got[0])) <= LARGEST

    def vector(node: ast.AST) -> bool:
        got = layout(node)
        return got is not None and isinstance(got[0], tuple) and len(got[0]) == 1

    class Dots(ast.NodeTransformer):
        def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
            self.generic_visit(node)
            if not isinstance(node.op, ast.MatMult):
                return node
            largest = LARGEST_WITH_VECTOR if vector(node.left) or vector(node.right) \
                else LARGEST
            if not (fits(node.left, largest) and fits(node.right, largest) and
                    (small(node) or largest == LARGEST_WITH_VECTOR)):
                return node
            new = ast.Call(ast.Attribute(node.left, "dot", ast.Load()), [node.right], [])
            if hasattr(node, "_k"):
                new._k = node._k  # type: ignore[attr-defined]  # (the same value)
            return ast.copy_location(new, node)

    Dots().visit(fn)
