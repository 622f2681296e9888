"""The ``buffers`` pass: arithmetic whose intermediate arrays nothing else sees computes
into them in place.

In ``(a + a) * s - t * (a * t)`` NumPy makes five arrays, one per operator, and four of
them live only until the next operator reads them.  Written in steps that write into
those intermediates, ``out = a + a; out *= s; tmp = a * t; tmp *= t; out -= tmp``, it
makes two: the same operations on the same operands in the same order (``t * tmp`` as
``tmp *= t``: a product or sum of two numbers is the same number either way round), so
the same values bit for bit, NaN and inf included.  Past NumPy's cache of small blocks
(1 KiB) each array costs an allocation, a first write to fresh memory and a free:
about 0.15 µs of a 0.6 µs operation at a thousand float64 elements.

Only intermediates no name holds are written into (each is read once, by the operator
that consumes it), and only where the operator's result has the intermediate's shape
and dtype (facts of the signature: an operand may broadcast into it, never the
intermediate into a larger result; and NumPy's in-place operator would cast a wider
result down into it), its dtype real floating, at least 1 KiB.  Straight-line
statements of the function's body only (an assignment to a name, a returned value or
tuple item); the steps go before the statement, the statement reads the last."""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any, Callable

import numpy as np

_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_SWAPS = (ast.Add, ast.Mult)  # (a + b is b + a, a * b is b * a, bit for bit)
SMALLEST = 1024  # bytes: NumPy caches data blocks below this, so making one is cheap


def reuse_intermediates(fn: ast.FunctionDef, fact: Callable[[ast.AST], Any],
                        taken: set[str]) -> None:
    """Rewrite ``fn``'s straight-line statements in place (see the module's text);
    ``taken``: the names in use (the temporaries' names are added to it)."""
    stores = Counter(n.id for n in ast.walk(fn)
                     if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
    stores.update(a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg))
    bound: dict[str, Any] = {}  # a name bound once (not a parameter) -> its value's fact

    def known(node: ast.AST) -> Any:
        """The (shape, dtype) fact of a value; of arithmetic a pass wrote (no fact
        of its own), its operands' combined."""
        found = fact(node)
        if found is not None:
            return found
        if isinstance(node, ast.Name):
            return bound.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, _OPS):
            return _combined(_operand(node.left, known), _operand(node.right, known))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and \
                isinstance(node.right, ast.Constant) and type(node.right.value) is int:
            return _combined(known(node.left), "weak")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return known(node.operand)
        return None

    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and stores[stmt.targets[0].id] == 1:
            found = known(stmt.value)
            if found is not None:
                bound[stmt.targets[0].id] = found

    if any(isinstance(n, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.Global,
                          ast.Nonlocal)) for stmt in fn.body for n in ast.walk(stmt)):
        return
    owned = _owned(fn, stores, known)
    last_read: dict[str, int] = {}  # a name -> the last top-level statement reading it
    for i, stmt in enumerate(fn.body):
        for n in ast.walk(stmt):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                last_read[n.id] = i

    body: list[ast.stmt] = []
    for i, stmt in enumerate(fn.body):
        # the owned arrays this statement reads last: it may write into them
        dead = {name for name in owned if last_read.get(name) == i}
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            steps = _Steps(known, taken, target, dead, stmt.value)
            value = steps.root(stmt.value)
            reads = {n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)}
            if steps.lines and isinstance(value, ast.Name) and value.id in steps.made \
                    and target not in reads:
                steps.rename(value.id, target)  # (the last step's array is the target's)
                body += steps.lines
                continue
            body += steps.lines
            stmt.value = value
        elif isinstance(stmt, ast.Return) and stmt.value is not None:
            items = stmt.value.elts if isinstance(stmt.value, ast.Tuple) else None
            if items is None:
                steps = _Steps(known, taken, "out", dead, stmt.value)
                stmt.value = steps.root(stmt.value)
                body += steps.lines
            else:
                for k, item in enumerate(items):
                    steps = _Steps(known, taken, f"out_{k}", dead, stmt.value)
                    items[k] = steps.root(item)
                    body += steps.lines
        body.append(stmt)
    fn.body[:] = body
    ast.fix_missing_locations(fn)


class _Steps:
    """One statement's value in steps: ``lines`` the statements, ``made`` the
    intermediates' names (each bound once, here)."""

    def __init__(self, known: Callable[[ast.AST], Any], taken: set[str], base: str,
                 dead: set[str], whole: ast.AST) -> None:
        self.known = known
        self.taken = taken
        self.base = base
        # owned arrays no later statement reads, and how often the statement does
        self.dead = dead
        self.reads = Counter(n.id for n in ast.walk(whole)
                             if isinstance(n, ast.Name) and n.id in dead)
        self.lines: list[ast.stmt] = []
        self.made: list[str] = []
        # id(node) -> (the node, its (shape, dtype)): nodes this statement's steps made
        # (the node kept, so that its id is no other node's)
        self.layouts: dict[int, tuple[ast.AST, Any]] = {}

    def root(self, node: ast.expr) -> ast.expr:
        return self.walk(node)

    def layout(self, node: ast.AST) -> Any:
        """``(shape, dtype)`` of an array operand, ``"weak"`` for a Python number,
        None where not known."""
        if id(node) in self.layouts:
            return self.layouts[id(node)][1]
        if isinstance(node, ast.Constant):
            return "weak" if type(node.value) in (int, float) else None
        found = self.known(node)
        if found is None or not isinstance(found[0], tuple) or \
                not isinstance(found[1], np.dtype):
            return None
        return found

    def walk(self, node: ast.expr) -> ast.expr:
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, _OPS)):
            return node
        left, right = self.walk(node.left), self.walk(node.right)
        a, b = self.layout(left), self.layout(right)
        result = _combined(a, b)
        out = ast.BinOp(left, node.op, right)
        if result is None:
            return out
        self.layouts[id(out)] = (out, result)
        if not _worth_it(result):
            return out
        for into, other, layout in ((left, right, a), (right, left, b)):
            if into is right and not isinstance(node.op, _SWAPS):
                break
            if layout != result or not (self.fresh(into) or self.last_read(into, other)):
                continue
            if isinstance(into, ast.BinOp):  # (a new array no name holds: name it)
                name = self.name()
                self.lines.append(ast.Assign([ast.Name(name, ast.Store())], into))
                into = ast.Name(name, ast.Load())
            self.lines.append(ast.AugAssign(ast.Name(into.id, ast.Store()), node.op, other))
            done = ast.Name(into.id, ast.Load())
            self.layouts[id(done)] = (done, result)
            return done
        return out

    def fresh(self, node: ast.expr) -> bool:
        """An array this statement made that nothing else reads: an intermediate's
        name, or an operator's result not yet named (both operands' layouts known:
        an array, not a number)."""
        if isinstance(node, ast.Name):
            return node.id in self.made
        return isinstance(node, ast.BinOp) and id(node) in self.layouts

    def last_read(self, into: ast.expr, other: ast.expr) -> bool:
        """Is ``into`` a dead array that the operator's in-place step would read for
        the statement's last time?  Every read of it is then in the steps made so far
        (run before), the other operand (evaluated before the write) or ``into``."""
        if not (isinstance(into, ast.Name) and into.id in self.dead):
            return False
        done = sum(isinstance(n, ast.Name) and n.id == into.id and
                   isinstance(n.ctx, ast.Load) for line in self.lines
                   for n in ast.walk(line))
        done += sum(isinstance(n, ast.Name) and n.id == into.id for n in ast.walk(other))
        return done + 1 == self.reads[into.id]

    def name(self) -> str:
        name, k = self.base, 0
        while name in self.taken:
            name, k = f"{self.base}_{k}", k + 1
        self.taken.add(name)
        self.made.append(name)
        return name

    def rename(self, old: str, new: str) -> None:
        for line in self.lines:
            for n in ast.walk(line):
                if isinstance(n, ast.Name) and n.id == old:
                    n.id = new


def _owned(fn: ast.FunctionDef, stores: Counter, known: Callable[[ast.AST], Any]
           ) -> set[str]:
    """Names bound once, in the body's straight-line statements, to a new array of at
    least one axis (an operator's result, or a NumPy ufunc's called without ``out``),
    and read only as operands (of operators and NumPy ufuncs): no other name, view,
    container or function ever holds their array."""
    candidates = set()
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(
                stmt.targets[0], ast.Name) and stores[stmt.targets[0].id] == 1 and (
                isinstance(stmt.value, ast.BinOp) or _ufunc_call(stmt.value)):
            found = known(stmt.value)
            if found is not None and isinstance(found[0], tuple) and len(found[0]) >= 1:
                candidates.add(stmt.targets[0].id)
    operands: set[int] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.BinOp):
            operands.update((id(n.left), id(n.right)))
        elif isinstance(n, ast.UnaryOp):
            operands.add(id(n.operand))
        elif isinstance(n, ast.Compare):
            operands.update(id(x) for x in (n.left, *n.comparators))
        elif _ufunc_call(n):
            operands.update(id(a) for a in n.args)  # type: ignore[attr-defined]
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id in candidates and \
                isinstance(n.ctx, ast.Load) and id(n) not in operands:
            candidates.discard(n.id)
    return candidates


def _ufunc_call(node: ast.AST) -> bool:
    """``np.<ufunc>(a, ...)``: positional operands, no keywords (no ``out``)."""
    return isinstance(node, ast.Call) and not node.keywords and \
        isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
        and node.func.value.id == "np" and isinstance(getattr(np, node.func.attr, None),
                                                        np.ufunc) \
        and not any(isinstance(a, ast.Starred) for a in node.args)


def _operand(node: ast.AST, known: Callable[[ast.AST], Any]) -> Any:
    if isinstance(node, ast.Constant):
        return "weak" if type(node.value) in (int, float) else None
    return known(node)


def _combined(a: Any, b: Any) -> Any:
    """The layout of ``a OP b`` for real floating arrays and Python numbers, None
    otherwise (or where both are numbers)."""
    if a is None or b is None or (a == "weak" and b == "weak"):
        return None
    arrays = [x for x in (a, b) if x != "weak"]
    if any(not isinstance(x[0], tuple) or not isinstance(x[1], np.dtype)
           or x[1].kind != "f" for x in arrays):
        return None
    try:
        shape = np.broadcast_shapes(*(x[0] for x in arrays))
    except ValueError:
        return None
    return shape, np.result_type(*(x[1] for x in arrays))


def _worth_it(layout: Any) -> bool:
    shape, dtype = layout
    return len(shape) >= 1 and int(np.prod(shape)) * dtype.itemsize >= SMALLEST
