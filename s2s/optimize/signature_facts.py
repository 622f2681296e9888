"""Which facts one observed call establishes for every call with the same signature.

The specializer (s2s/optimize/specialize.py) runs the emitted code once, instrumented, and
records the shape and dtype of each subexpression.  A recorded fact may be used to
rewrite the code only when every later call with the same signature (the arguments'
structure, shapes and dtypes, the values of integer scalars, the free names' objects
and their arrays' shapes) would record the same fact.  That holds for a value whose
shape follows from the signature alone; it fails for ``x[mask]``, ``x[:np.argmax(y)]``,
``x[:n]`` with ``n`` a 0-d integer array, ``x[:settings.WINDOW]`` and every value
computed from those.

This module decides it by abstract interpretation of the emitted function, with three
levels per value:

- ``VALUE``: the value itself follows from the signature (literals, integer scalar
  arguments, ``np.shape(x)``, ``len(x)``, arithmetic on such values);
- ``SHAPE``: its shape and dtype follow from the signature, its value may not (array
  arguments and everything NumPy computes from them without reading a value as a
  shape, a bound, a count or a mask);
- ``DYNAMIC``: not even its shape does.

A value's shape depends on another value's contents in only a few ways: a slice bound,
a boolean index, a count or shape argument (``reshape``, ``zeros``, ``arange``,
``repeat``...), an attribute of an object, an unknown function's result.  So the rule
per call is: every argument must be ``VALUE``, or ``SHAPE`` and floating (floating
values are never shapes, except to ``arange``), or ``SHAPE`` in an operand position of
a function whose result's shape is fixed by its operands' shapes (ufuncs, ``where``,
reductions, ``*_like``, the runtime's cotangent helpers).  Anything else is
``DYNAMIC``: its facts are dropped and the specializer leaves it as emitted.
"""

from __future__ import annotations

import ast
import builtins
import types
from typing import Any

import numpy as np

from .signature_syntax import (
    bind_parameters,
    closure,
    defaults_of,
    only_read,
    shared_names,
    tapes,
    user_function,
    written_or_aliased,
)

VALUE, SHAPE, DYNAMIC = 2, 1, 0

# calls whose result's shape is fixed by the shapes of the arguments at these positions
# (the receiver of a method is position 0), whatever their values: integer and boolean
# arrays may stand there.  ``None``: every positional argument.
_OPERANDS: dict[str, tuple[int, ...] | None] = {
    **{name: None for name in ("where", "select", "clip", "real", "imag", "conj",
                               "conjugate", "angle", "nan_to_num", "round", "around",
                               "matmul", "dot", "vdot", "inner", "outer", "kron",
                               "einsum", "multi_dot")},
    **{name: (0,) for name in (
        "sum", "prod", "mean", "max", "min", "amax", "amin", "any", "all", "argmax",
        "argmin", "count_nonzero", "cumsum", "cumprod", "nansum", "nanprod", "nanmean",
        "nanmax", "nanmin", "std", "var", "nanstd", "nanvar", "median", "ptp",
        "zeros_like", "ones_like", "empty_like", "astype", "copy", "asarray", "array",
        "ascontiguousarray", "broadcast_to", "expand_dims", "squeeze", "transpose",
        "swapaxes", "moveaxis", "flip", "triu", "tril", "diff", "sort", "argsort",
        "ravel", "flatten", "atleast_1d", "atleast_2d", "atleast_3d", "tensordot",
        "isnan", "isinf", "isfinite", "sign", "logical_not",
    )},
    "full_like": (0, 1),
    "take_along_axis": (0, 1),
    "average": (0, 1),
    # s2s.runtime's helpers
    "unbroadcast": (0, 1),
    "grad_seed": (0,),
    "matmul_lhs_bar": None, "matmul_rhs_bar": None, "dot_lhs_bar": None,
    "dot_rhs_bar": None, "kron_lhs_bar": None, "kron_rhs_bar": None,
    "tensordot_lhs_bar": (0, 1, 2), "tensordot_rhs_bar": (0, 1, 2),
    "take_along_axis_bar": (0, 1, 2),
    "prod_of_others": (0,), "cumprod_bar": (0, 1), "cumprod_tangent": (0, 1),
    "inner_lhs_bar": None, "inner_rhs_bar": None,
    "special_polygamma": None, "sinc_taylor": None,
    **{f"special_{name}": None for name in (
        "erf", "erfc", "erfinv", "gammaln", "digamma", "expit", "logit", "xlogy",
        "xlog1py")},
}
# the modules of s2s's runtime helpers (a helper's result has a shape its floating
# operands' shapes fix: each is a cotangent, tangent or value of a primitive)
RUNTIME_MODULES = ("s2s.runtime", "s2s.runtime_scipy", "s2s.runtime_ode",
                   "s2s.runtime_linalg")
# keywords that are operands wherever they appear (a reduction's mask)
_OPERAND_KEYWORDS = {"where", "out", "initial", "weights"}
# the value of these (for an argument of known shape) is known
_SHAPE_QUERIES = {"shape", "size", "ndim", "len"}
_SHAPE_ATTRIBUTES = {"shape", "size", "ndim", "dtype", "itemsize", "nbytes"}
_VIEW_ATTRIBUTES = {"T", "mT", "real", "imag"}
# builtins that compute a value from their arguments' values and nothing else
_PURE_BUILTINS = {"len", "range", "tuple", "list", "int", "float", "bool", "complex",
                  "abs", "min", "max", "sum", "round", "divmod", "pow", "slice", "zip",
                  "enumerate", "reversed", "isinstance", "str"}
# methods of lists and dicts (those of a name's container make it unknown)
_CONTAINER_METHODS = {"append", "pop", "extend", "insert", "remove", "clear", "update",
                      "setdefault", "popitem", "get", "items", "keys", "values", "index",
                      "count", "reverse"}
# calls whose result's shape depends on every argument's value
_ALL_VALUES = {"arange", "mgrid", "ogrid", "r_", "c_"}


def argument_level(value: Any) -> Any:
    """The level of an argument given the signature: integers (whose values are part
    of it) are ``VALUE``; arrays and floats ``SHAPE``; containers one level per item."""
    if isinstance(value, (bool, int, np.integer, np.bool_)) and not isinstance(
            value, np.ndarray):
        return VALUE
    if type(value) in (tuple, list):
        return tuple(argument_level(v) for v in value)
    if type(value) is dict:
        return {k: argument_level(v) for k, v in value.items()}
    return SHAPE


_IMMUTABLE = (bool, int, float, complex, str, bytes, type(None), np.generic)


def _immutable(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return isinstance(value, _IMMUTABLE) or value is Ellipsis


def free_level(value: Any, guarded: bool) -> Any:
    """The level of a free name's object.  ``guarded``: later calls check that the name
    still holds this object and, for an array, that its shape and dtype are the same."""
    if isinstance(value, types.ModuleType) and value.__name__ == "numpy":
        return "numpy"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) and \
            getattr(value, "__module__", "") in RUNTIME_MODULES:
        return "runtime"
    if _immutable(value):  # (a free name that changes object makes a new signature)
        return VALUE
    if type(value) is np.ndarray and guarded:
        return SHAPE  # its contents may change in place between calls
    return DYNAMIC  # objects: their attributes may change between calls


def _min(levels: Any) -> int:
    out = VALUE
    for level in levels:
        if isinstance(level, (tuple, dict)):
            level = _min(level.values() if isinstance(level, dict) else level)
        elif isinstance(level, _Stack):
            level = min(_flat(level.item), level.length)
        elif not isinstance(level, int):
            level = VALUE  # a module or a helper function
        out = min(out, level)
    return out


def _flat(level: Any) -> int:
    return _min((level,))


class _Stack:
    """A list the code appends to and pops from (a tape): the level of any item it
    holds, and of its length (a known value only when every append runs a number of
    times the signature settles)."""

    def __init__(self, item: Any, length: int) -> None:
        self.item = item
        self.length = length

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Stack) and (self.item, self.length) == (
            other.item, other.length)

    def __hash__(self) -> int:
        return hash((_frozen(self.item), self.length))


_MAX_DEPTH = 8  # calls analysed inside one another


class _Shared:
    """What the analyses of one emitted module share: the probe's facts, the level found
    for each probed node (the lowest over every context it was analysed in), the
    emitted functions by name and the summaries of calls already analysed."""

    def __init__(self, module: ast.Module, facts: dict[int, Any], guarded: set[str]) -> None:
        self.facts = facts
        self.guarded = guarded
        self.node_level: dict[int, int] = {}
        self.emitted = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef)}
        self.summaries: dict[Any, Any] = {}
        self.stack: list[Any] = []

    def summary(self, kind: tuple, args: list[Any], kwargs: dict[str, Any],
                floats: list[bool] | None, namespace: dict[str, Any]) -> Any:
        """The level of what a call of a function of the user's (or of one emitted
        beside the caller, whose free names are ``namespace``) returns, given its
        arguments' levels: its body analysed."""
        shared = self  # (as the defaults below read it)
        what, ref = kind
        key = (what, ref if what == "emitted" else id(ref), _frozen(args), _frozen(kwargs),
               tuple(floats or ()))
        if key in shared.summaries:
            return shared.summaries[key]
        if len(shared.stack) >= _MAX_DEPTH or key in shared.stack:
            return DYNAMIC
        if what == "emitted":
            fn, user = shared.emitted[ref], False

            def default(name: str, expr: ast.expr) -> Any:  # written in the emitted text
                return _Levels(shared, fn, {}, namespace).level(expr)
        else:
            found = user_function(ref)
            if found is None:
                return DYNAMIC
            fn, namespace, user = found[0], found[1], True
            objects = defaults_of(ref)

            def default(name: str, expr: ast.expr) -> Any:  # the object the call gets
                return free_level(objects[name], False) if name in objects else DYNAMIC
        env = bind_parameters(fn, args, kwargs, default)
        if env is None:
            return DYNAMIC
        shared.stack.append(key)
        try:
            inner = _Levels(shared, fn, env, namespace, user)
            names = [p.arg for p in fn.args.args][:len(args)] + list(kwargs)
            inner.floats.update(zip(names, floats or ()))
            _Body(inner).statements(fn.body)
            out = _join_all(inner.returns) if inner.returns else DYNAMIC
        finally:
            shared.stack.pop()
        shared.summaries[key] = out
        return out



class _Levels:
    """Abstract interpretation of one function body (the emitted function, a function
    emitted beside it, or a user function the emitted code calls): the levels of its
    names and expressions, and what an assignment binds (``_Body`` walks its
    statements; ``_Shared.summary`` analyses the functions it calls)."""

    def __init__(self, shared: _Shared, fn: ast.FunctionDef, env: dict[str, Any],
                 namespace: dict[str, Any], user: bool = False) -> None:
        self.shared = shared
        self.env = env
        self.namespace = namespace
        self.user = user  # a user's function: its free names are its module's
        self.capped = written_or_aliased(fn)
        self.tapes = tapes(fn)
        # lists and dicts changed in place by their methods (other than tapes), and
        # every name that may hold the same one: nothing is known of them
        changed = {n.func.value.id for n in ast.walk(fn) if isinstance(n, ast.Call)
                   and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                   and n.func.attr in _CONTAINER_METHODS} - self.tapes
        self.unknown = closure(changed, shared_names(fn)) if changed else set()
        self.floats: dict[str, bool] = {}  # names of containers: all items floating?
        self.returns: list[Any] = []
        self.path = VALUE  # the lowest level of the tests the current statement is under

    # ---- expressions ----

    def fact(self, node: ast.AST) -> Any:
        k = getattr(node, "_k", None)
        return self.shared.facts.get(k) if k is not None and not self.user else None

    def floating(self, node: ast.AST) -> bool:
        """Is this value a floating (or complex) number or array, by its fact?"""
        if isinstance(node, ast.Constant):
            return type(node.value) in (float, complex)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(self.floating(e) for e in node.elts)
        if isinstance(node, ast.UnaryOp):
            return self.floating(node.operand)
        if isinstance(node, ast.Name) and node.id in self.floats:
            return self.floats[node.id]
        f = self.fact(node)
        return f is not None and f[0] != "other" and np.dtype(f[1]).kind in "fc"

    def integral(self, node: ast.AST) -> bool:
        f = self.fact(node)
        return f is not None and f[0] != "other" and np.dtype(f[1]).kind in "iu"

    def name(self, node: ast.Name) -> Any:
        if node.id in self.unknown:
            return DYNAMIC
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.namespace:
            value = self.namespace[node.id]
            if not self.user and node.id in self.shared.emitted:
                return ("emitted", node.id)
            if isinstance(value, types.FunctionType) and \
                    value.__module__ not in RUNTIME_MODULES:
                return ("user", value)
            return free_level(value, node.id in self.shared.guarded)
        if hasattr(builtins, node.id):
            return "builtin"
        return DYNAMIC

    def level(self, node: ast.AST) -> Any:
        """The level of an expression: an int, a tuple or dict of levels for a
        container, or a callee ('numpy', 'runtime', 'builtin', ('emitted', name),
        ('user', function)); recorded per probed node."""
        out = self._level(node)
        k = getattr(node, "_k", None)
        if k is not None and not self.user:
            flat = _flat(out)
            table = self.shared.node_level
            table[k] = min(flat, table.get(k, flat))
        return out

    def _level(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return VALUE
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                # (n, *shape): one level for the whole display, its items' least (the
                # items' positions are not known from the display)
                return _min([self.level(e.value if isinstance(e, ast.Starred) else e)
                             for e in node.elts])
            return tuple(self.level(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            levels = [self.level(k) for k in node.keys if k is not None]
            levels += [self.level(v) for v in node.values]
            return DYNAMIC if None in node.keys else _min(levels)
        if isinstance(node, ast.UnaryOp):
            return _flat(self.level(node.operand))
        if isinstance(node, ast.BinOp):
            return min(_flat(self.level(node.left)), _flat(self.level(node.right)))
        if isinstance(node, ast.Compare):
            return _min([self.level(node.left)] + [self.level(c) for c in node.comparators])
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Slice):
            return _min(self.level(b) for b in (node.lower, node.upper, node.step)
                        if b is not None)
        for child in ast.iter_child_nodes(node):  # anything else: nothing is known
            self.level(child)
        return DYNAMIC

    def attribute(self, node: ast.Attribute) -> Any:
        base = self.level(node.value)
        if base == "numpy":
            return "numpy"  # np.float64, np.linalg, np.pi: NumPy's own objects
        if not isinstance(base, int):
            return DYNAMIC
        if node.attr in _SHAPE_ATTRIBUTES:
            return VALUE if base >= SHAPE else DYNAMIC
        if node.attr in _VIEW_ATTRIBUTES:
            return base
        return DYNAMIC

    def subscript(self, node: ast.Subscript) -> Any:
        base = self.level(node.value)
        index = node.slice
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        levels = [self.index_level(item) for item in items]
        if isinstance(base, _Stack):  # an item of a tape: one of those appended
            ok = isinstance(index, ast.Constant) and isinstance(index.value, int) and \
                base.item is not None
            return base.item if ok else DYNAMIC
        if isinstance(base, (tuple, dict)):  # an item of a container
            key = index.value if isinstance(index, ast.Constant) else None
            try:
                return base[key]  # type: ignore[index]
            except (KeyError, IndexError, TypeError):
                return DYNAMIC if min(levels) < VALUE else _flat(base)
        if not isinstance(base, int):
            return DYNAMIC
        return min([base] + levels)

    def index_level(self, item: ast.AST) -> int:
        """How an index item's value settles the result's shape: a slice's bounds and
        a boolean index must be known values; an integer index of known shape selects
        the same shape whatever its value."""
        if isinstance(item, ast.Slice):
            return VALUE if self.level(item) == VALUE else DYNAMIC
        level = _flat(self.level(item))
        if level == VALUE:
            return VALUE
        if level == SHAPE and self.integral(item):
            return SHAPE
        return DYNAMIC

    def callee(self, func: ast.AST) -> tuple[Any, str, Any]:
        """(kind, name, receiver): kind is 'numpy', 'numpy-random', 'runtime',
        'builtin', 'method', ('emitted', name), ('user', function) or 'unknown'."""
        if isinstance(func, ast.Name):
            level = self.level(func)
            if level in ("runtime", "builtin") or isinstance(level, tuple) and \
                    len(level) == 2 and level[0] in ("emitted", "user"):
                return level, func.id, None
            return "unknown", func.id, None
        if isinstance(func, ast.Attribute):
            base = self.level(func.value)
            if base == "numpy":
                path = ast.unparse(func)
                return ("numpy-random" if ".random." in path else "numpy"), func.attr, None
            if isinstance(base, int):
                return "method", func.attr, func.value
        return "unknown", "", None

    def call(self, node: ast.Call) -> Any:
        stack = self.stack_call(node)
        if stack is not None:
            return stack
        kind, name, receiver = self.callee(node.func)
        positional = ([receiver] if receiver is not None else []) + list(node.args)
        trees = [self.level(a) for a in positional]
        levels = [_flat(t) for t in trees]
        keywords = [(kw.arg, self.level(kw.value), kw.value) for kw in node.keywords]
        if kind == "unknown" or any(isinstance(a, ast.Starred) for a in node.args) or \
                any(arg is None for arg, _, _ in keywords):
            return DYNAMIC
        if isinstance(kind, tuple):  # a function of the user's or emitted beside
            floats = [self.floating(a) for a in positional] + [
                self.floating(value) for _, _, value in keywords]
            out = self.shared.summary(kind, trees, {k: v for k, v, _ in keywords}, floats,
                                      self.namespace)
            # a container it may change is unknown after (an array, a local's or a
            # guarded free name's, keeps its level: a write in place keeps its shape)
            fn = user_function(kind[1]) if kind[0] == "user" else (
                self.shared.emitted[kind[1]], None)
            if fn is not None or kind[0] == "user":
                for p, a in list(zip(fn[0].args.args if fn else [], positional)) + [
                        (None, value) for _, _, value in keywords]:
                    if isinstance(a, ast.Name) and not isinstance(self.name(a), int) \
                            and (p is None or fn is None or not only_read(fn[0], p.arg)):
                        self.env[a.id] = DYNAMIC
            return out
        keywords = [(arg, _flat(tree), value) for arg, tree, value in keywords]
        every = levels + [lv for _, lv, _ in keywords]
        if name in _SHAPE_QUERIES and kind in ("numpy", "builtin") and positional:
            return VALUE if min(every) >= SHAPE else DYNAMIC
        if kind == "builtin" and name not in _PURE_BUILTINS:
            return DYNAMIC
        if min(every, default=VALUE) == VALUE and kind != "numpy-random":
            return VALUE
        if min(every, default=VALUE) == DYNAMIC or name in _ALL_VALUES:
            return DYNAMIC
        operands = _OPERANDS.get(name, ())
        if kind == "numpy" and isinstance(getattr(np, name, None), np.ufunc):
            operands = None
        for i, (a, level) in enumerate(zip(positional, levels)):
            if level == SHAPE and not self.floating(a) and not (
                    operands is None or i in operands):
                return DYNAMIC
        for arg, level, value in keywords:
            if level == SHAPE and not self.floating(value) and \
                    arg not in _OPERAND_KEYWORDS:
                return DYNAMIC
        return SHAPE

    def stack_call(self, node: ast.Call) -> Any:
        """``tape.append(v)`` and ``tape.pop()`` of a list the function alone holds
        (its item level and length follow); a list's or dict's method on any other
        name makes what it holds unknown.  None for other calls."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.attr in _CONTAINER_METHODS):
            return None
        name = func.value.id
        held = self.env.get(name)
        if name not in self.tapes or not isinstance(held, _Stack):
            for a in node.args:
                self.level(a)
            if name in self.env:  # (np.linalg.norm is an attribute of no local)
                self.env[name] = DYNAMIC
                return DYNAMIC
            return None
        if func.attr == "append" and len(node.args) == 1:
            item = self.level(node.args[0])
            joined = item if held.item is None else _join(held.item, item)
            self.env[name] = _Stack(joined, min(held.length, self.path))
            self.floats[name] = self.floats.get(name, True) and self.floating(node.args[0])
            return VALUE
        if func.attr == "pop" and not node.args:
            self.env[name] = _Stack(held.item, min(held.length, self.path))
            return DYNAMIC if held.item is None else held.item
        return DYNAMIC

    def new_stack(self, value: ast.expr) -> _Stack:
        """The level of a list display or ``list(x)`` bound to a tape's name."""
        if isinstance(value, ast.List):
            items = [self.level(e) for e in value.elts]
            return _Stack(_join_all(items) if items else None, VALUE)
        if not value.args:  # type: ignore[attr-defined]
            return _Stack(None, VALUE)
        source = self.level(value.args[0])  # type: ignore[attr-defined]
        if isinstance(source, _Stack):
            return source
        if isinstance(source, tuple):
            return _Stack(_join_all(list(source)) if source else None, VALUE)
        flat = _flat(source)  # the rows of an array: its shape settles their number
        return _Stack(flat, VALUE if flat >= SHAPE else DYNAMIC)

    # ---- bindings ----

    def bind(self, target: ast.AST, level: Any) -> None:
        if isinstance(target, ast.Name) and target.id in self.unknown:
            self.env[target.id] = DYNAMIC
        elif isinstance(target, ast.Name):
            if target.id in self.capped and not isinstance(level, (tuple, dict)):
                level = min(_flat(level), SHAPE)
            self.env[target.id] = level
        elif isinstance(target, (ast.Tuple, ast.List)):
            parts = level if isinstance(level, tuple) and len(level) == len(target.elts) \
                else [_flat(level)] * len(target.elts)
            for t, part in zip(target.elts, parts):
                self.bind(t, part)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            # a write into an array keeps its shape; its value is the written one's
            base = target
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                if isinstance(base, ast.Subscript):
                    self.level(base.slice)
                base = base.value
            if isinstance(base, ast.Name) and base.id in self.env:
                old = self.env[base.id]
                if isinstance(old, int) and _flat(level) < VALUE:
                    self.env[base.id] = min(old, SHAPE)
                elif not isinstance(old, int):
                    self.env[base.id] = DYNAMIC  # a container changed in place
        else:
            self.forget(target)

    def forget(self, node: ast.AST) -> None:
        """Nothing is known of the names ``node`` binds."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                self.env[n.id] = DYNAMIC
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.env[n.name] = DYNAMIC
            elif isinstance(n, ast.alias):
                self.env[(n.asname or n.name).split(".")[0]] = DYNAMIC


class _Body:
    """The statements of one function body, walked over its ``_Levels``: each binds
    the levels of what it assigns, an ``if`` both paths, a loop until stable."""

    def __init__(self, levels: _Levels) -> None:
        self.levels = levels

    def statements(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.statement(stmt)

    def statement(self, stmt: ast.stmt) -> None:
        levels = self.levels
        if isinstance(stmt, ast.Assign):
            if len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and \
                    stmt.targets[0].id in levels.tapes:
                name, value = stmt.targets[0].id, stmt.value
                levels.env[name] = levels.new_stack(value)
                source = value if isinstance(value, ast.List) else (
                    value.args[0] if value.args else ast.List([]))  # type: ignore
                levels.floats[name] = levels.floating(source)
                return
            level = levels.level(stmt.value)
            for t in stmt.targets:
                levels.bind(t, level)
                if isinstance(t, ast.Name):
                    levels.floats.pop(t.id, None)
                    if isinstance(stmt.value, (ast.List, ast.Tuple)):
                        levels.floats[t.id] = levels.floating(stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            level = _flat(levels.level(stmt.value))
            if isinstance(stmt.target, ast.Name):
                old = levels.env.get(stmt.target.id, DYNAMIC)
                levels.bind(stmt.target, min(_flat(old), level))
            else:
                levels.bind(stmt.target, level)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            levels.bind(stmt.target, levels.level(stmt.value))
        elif isinstance(stmt, ast.Expr):
            level = levels.level(stmt.value)
            if isinstance(stmt.value, ast.Call):  # np.add.at(buf, ...) writes into buf
                for a in stmt.value.args[:1]:
                    if isinstance(a, ast.Name):
                        levels.bind(ast.Subscript(a, ast.Constant(0), ast.Store()), level)
        elif isinstance(stmt, ast.For) and not stmt.orelse:
            self.loop(stmt)
        elif isinstance(stmt, ast.If):
            self.branch(stmt)
        elif isinstance(stmt, ast.Return):
            level = levels.level(stmt.value) if stmt.value is not None else VALUE
            levels.returns.append(level if levels.path == VALUE else DYNAMIC)
        elif isinstance(stmt, (ast.Pass, ast.Assert, ast.Raise)):
            for child in ast.iter_child_nodes(stmt):
                levels.level(child)
        else:  # (while, try, with, nested definitions...) nothing is known of them
            levels.forget(stmt)
            if any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
                levels.returns.append(DYNAMIC)

    def branch(self, stmt: ast.If) -> None:
        """Both paths are analysed; after the ``if`` a name either binds is known only
        when the test's value is (else which path ran decides its shape)."""
        levels = self.levels
        test = _flat(levels.level(stmt.test))
        before, path = dict(levels.env), levels.path
        levels.path = min(path, test)
        self.statements(stmt.body)
        after_body = levels.env
        levels.env = dict(before)
        self.statements(stmt.orelse)
        levels.path = path
        for name in set(after_body) | set(levels.env):
            a, b = after_body.get(name, DYNAMIC), levels.env.get(name, DYNAMIC)
            if test < VALUE and (a is not before.get(name) or b is not before.get(name)):
                levels.env[name] = DYNAMIC
            else:
                levels.env[name] = a if a == b else _join(a, b)

    def loop(self, loop: ast.For) -> None:
        """A loop's body runs until what it knows is stable (levels only fall); a trip
        count the signature does not settle makes everything the loop binds unknown."""
        levels = self.levels
        count = _flat(levels.level(loop.iter))
        if any(isinstance(n, (ast.Break, ast.Continue, ast.Return))
               for s in loop.body for n in ast.walk(s)):
            count = DYNAMIC  # (where it stops depends on values)
        bound = {n.id for n in ast.walk(loop) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Store)}
        path = levels.path
        if count < VALUE:
            levels.path = DYNAMIC
            for name in bound:
                levels.env[name] = DYNAMIC
        for _ in range(8):
            before = dict(levels.env)
            levels.bind(loop.target, VALUE if count == VALUE else DYNAMIC)
            self.statements(loop.body)
            if count < VALUE:
                for name in bound:
                    levels.env[name] = DYNAMIC
            for name, level in before.items():  # a value from any iteration
                if name in levels.env:
                    levels.env[name] = _join(level, levels.env[name])
            if levels.env == before:
                break
        else:
            for name in bound:
                levels.env[name] = DYNAMIC
        levels.path = path


def _join(a: Any, b: Any) -> Any:
    """The level of a value that is ``a`` on one path and ``b`` on another."""
    if a == b:
        return a
    if isinstance(a, _Stack) and isinstance(b, _Stack):
        return _Stack(b.item if a.item is None else a.item if b.item is None
                      else _join(a.item, b.item), min(a.length, b.length))
    if isinstance(a, _Stack) and b == () or isinstance(b, _Stack) and a == ():
        return a if isinstance(a, _Stack) else b  # (the empty list it started as)
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(isinstance(x, (int, tuple)) for x in a + b):
        return tuple(_join(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, tuple, dict, _Stack)) and isinstance(b, (int, tuple, dict, _Stack)):
        return min(_flat(a), _flat(b))
    return DYNAMIC


def _join_all(levels: list[Any]) -> Any:
    out = levels[0]
    for level in levels[1:]:
        out = _join(out, level)
    return out


def _frozen(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, types.FunctionType):
        return id(value)
    return value


def _all_floating(value: Any) -> bool:
    """Is every leaf of an argument a floating (or complex) number or array?"""
    if type(value) in (tuple, list):
        return all(_all_floating(v) for v in value)
    if type(value) is dict:
        return all(_all_floating(v) for v in value.values())
    return isinstance(value, (float, complex, np.ndarray, np.generic)) and \
        np.result_type(value).kind in "fc"


def signature_facts(module: ast.Module, facts: dict[int, Any], name: str, args: tuple,
                    namespace: dict[str, Any], guarded: set[str]) -> dict[int, Any]:
    """The facts of the probed nodes (numbered ``_k``) of the emitted ``module`` that
    every call of its function ``name`` with the signature of ``args`` would record;
    the others are dropped.  ``guarded``: the free names whose objects (and arrays'
    shapes and dtypes) later calls check."""
    shared = _Shared(module, facts, guarded)
    shared.summary(("emitted", name), [argument_level(a) for a in args], {},
                   [_all_floating(a) for a in args], namespace)
    return {k: f for k, f in facts.items() if shared.node_level.get(k, DYNAMIC) >= SHAPE}
