"""What the optimizer's passes know of calls in emitted code, by the called name."""

from __future__ import annotations

import ast

# Calls that write into an argument (or a method's object), and calls whose result may
# be a view of their argument: shared with the specializer's rewrites.
MUTATORS = {"at", "copyto", "put", "place", "putmask", "fill_diagonal", "fill", "sort",
             "append", "pop", "extend", "insert", "remove", "update", "setdefault",
             "clear", "resize", "partition", "itemset", "setflags"}
MAY_ALIAS = {"reshape", "transpose", "swapaxes", "moveaxis", "ravel", "squeeze",
              "expand_dims", "broadcast_to", "asarray", "asanyarray", "atleast_1d",
              "atleast_2d", "atleast_3d", "real", "view", "unbroadcast", "flip",
              "rollaxis", "diagonal", "astype", "copy_if_needed", "array_view",
              "imag", "diag", "rot90", "fliplr", "flipud", "ascontiguousarray",
              "asfortranarray", "require", "split", "array_split", "hsplit", "vsplit",
              "dsplit", "broadcast_arrays", "matrix_transpose", "permute_dims", "unstack"}


def call_name(node: ast.Call) -> str:
    """The called function's own name: `f` of `f(x)` and of `np.f(x)`; "" otherwise."""
    f = node.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return ""


def same_kinds(inner: tuple, out: tuple) -> bool:
    """Do two (shape, dtype) facts agree on being complex?  ``unbroadcast`` of a complex
    cotangent to a real operand takes its real part: not a no-op, whatever the shapes."""
    return ("complex" in str(inner[1])) == ("complex" in str(out[1]))


def written(stmt: ast.stmt) -> set[str]:
    """Names whose arrays a statement writes into."""
    out: set[str] = set()
    for node in ast.walk(stmt):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, (ast.Subscript, ast.Attribute)):
                while isinstance(t, (ast.Subscript, ast.Attribute)):
                    t = t.value
                if isinstance(t, ast.Name):
                    out.add(t.id)
        if isinstance(node, ast.Call) and call_name(node) in MUTATORS:
            for a in node.args[:1]:
                if isinstance(a, ast.Name):
                    out.add(a.id)
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                out.add(node.func.value.id)
    return out


def bound_once(fn: ast.FunctionDef) -> tuple[dict[str, ast.expr], set[str]]:
    """Names bound once in ``fn`` by a plain assignment of its body (-> the value), and
    the names whose arrays something writes into or that are bound more than once (a
    parameter, of ``fn`` or of a lambda in it, rebound: two reads of it may be two
    values)."""
    stores: dict[str, int] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, ast.arg):
            stores[node.arg] = stores.get(node.arg, 0) + 1
    once = {}
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name) and stores[stmt.targets[0].id] == 1:
            once[stmt.targets[0].id] = stmt.value
    found = {name for name, count in stores.items() if count > 1}
    for stmt in ast.walk(fn):
        if isinstance(stmt, ast.stmt):
            found |= written(stmt)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            found.add(stmt.target.id)
    return once, found


# the types of values a fact marks as a Python number's (specialize.probe_run)
PYTHON_NUMBERS = (float, int, bool, complex)


class PythonScalar(tuple):
    """The (shape, dtype) fact of a node whose value was a Python number (the dtype
    ``np.result_type`` gives it).  It equals the same fact of a NumPy scalar, but the
    two do not compute alike: a Python float divided by zero raises ZeroDivisionError
    where ``np.float64`` gives inf or nan (with a RuntimeWarning)."""


def as_kind(fact: tuple | None, out: tuple | None) -> tuple | None:
    """``fact``, of a value a rewrite would put where the generic code had a value of
    fact ``out``; None where that value is a Python number and ``out``'s is not
    (``np.float64(1.0) * g`` is not ``g`` for a Python float ``g``)."""
    if isinstance(fact, PythonScalar) and not isinstance(out, PythonScalar):
        return None
    return fact
