"""One scope of a function outside the subset, read for the in-place array writes
another name may see (:mod:`s2s.api.unchecked_writes`, which says why): its locals'
bindings, each written name's reads, and the writes, in the function's own syntax."""

from __future__ import annotations

import ast
import math
import operator
import sys
from typing import Any

import numpy as np

_LIBRARIES = {"numpy", "jax", "jaxlib", "scipy", "s2s", "libcst", "black", "pytest",
              "_pytest", "builtins", "math", "functools", "typing", "dataclasses"}
# NumPy functions whose result is a new array that keeps no reference to an argument
_NP_FRESH = set("""
zeros ones empty full zeros_like ones_like empty_like full_like eye identity tri tril
triu arange linspace logspace geomspace array copy concatenate stack vstack hstack
dstack column_stack block sum prod mean std var max min amax amin nansum nanprod
nanmean nanstd nanvar nanmax nanmin argmax argmin any all dot vdot inner outer matmul
tensordot kron cross trace cumsum cumprod diff sort argsort where clip round around
tile repeat median average percentile quantile cov corrcoef interp polyval convolve
correlate trapz trapezoid searchsorted unique bincount allclose isclose array_equal
count_nonzero nonzero pad roll meshgrid histogram norm inv solve det slogdet eig eigh
eigvals eigvalsh svd qr cholesky pinv lstsq fft ifft rfft irfft fft2 ifft2 fftn ifftn
ptp sign
""".split())
# NumPy functions that write into their first argument
_NP_WRITES = {"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis",
              "shuffle", "at"}
_BUILTINS_FRESH = {"len", "float", "int", "complex", "bool", "abs", "round", "sum", "str",
                   "repr", "print", "isinstance", "range", "hash", "pow", "format"}
# array methods returning a new array or a Python value (``copy``: a list's is shallow)
_FRESH_METHODS = {"sum", "prod", "mean", "std", "var", "max", "min", "argmax", "argmin",
                  "any", "all", "cumsum", "cumprod", "dot", "round", "clip", "tolist",
                  "item", "trace", "nonzero", "argsort", "flatten", "conj", "conjugate",
                  "astype", "copy", "keys", "ptp"}
_STORING_METHODS = {"append", "extend", "insert", "update", "setdefault", "add"}
# methods that write into the array they are called on (JAX's `.sort()` returns a copy)
_WRITE_METHODS = {"sort", "fill", "put", "itemset", "resize", "setfield", "byteswap",
                  "setflags", "partition"}
_NOT_ARRAYS = {"shape", "dtype", "ndim", "size", "itemsize", "nbytes"}
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_MISSING = object()

_OPERATOR_WRITES = {"iadd", "isub", "imul", "itruediv", "ifloordiv", "ipow", "imatmul",
                    "imod", "iand", "ior", "ixor", "ilshift", "irshift", "iconcat"}
_CONTAINER_CALLS = {"list", "dict", "tuple", "sorted", "set"}


class _Scope:
    """The writes of one ``def`` (or lambda) checked: ``refusal`` is the first that
    another name may see; ``nested`` the functions and classes it defines (checked
    each on its own), ``free`` and ``chains`` the names and dotted names it reads
    from outside (the user functions it may call)."""

    def __init__(self, node: Any, fresh_args: bool, owner: Any) -> None:
        self.owner, self.refusal = owner, None
        self.nested: list[ast.AST] = []
        self.parent: dict[ast.AST, ast.AST] = {}
        self.nodes: list[ast.AST] = []
        self.in_nested: set[str] = set()
        self.declared: set[str] = set()
        self.bindings: dict[str, list[Any]] = {}
        self.imports: dict[str, Any] = {}
        self.tainted: set[str] = set()
        self._walk(node)
        self._bind_arguments(node.args, fresh_args)
        for n in self.nodes:
            self._bind(n)
        loads = [n for n in self.nodes if isinstance(n, ast.Name) and isinstance(
            n.ctx, ast.Load)]
        self.free = {n.id for n in loads if n.id not in self.bindings} | {
            name for name in self.in_nested if name not in self.bindings}
        self.chains = [n for n in self.nodes if isinstance(n, ast.Attribute) and isinstance(
            n.value, ast.Name) and n.value.id not in self.bindings]
        self.uses: dict[str, list[ast.Name]] = {}
        for n in loads:
            self.uses.setdefault(n.id, []).append(n)
        for site in self._writes():
            self.refusal = self._check(*site)
            if self.refusal is not None:
                return

    # ---- reading the scope ----------------------------------------------------------

    def _walk(self, scope: Any) -> None:
        """Every node of the scope (comprehensions' too), each with its parent; a
        nested function or class is kept aside, the names it reads noted."""
        todo = list(ast.iter_child_nodes(scope)) if not isinstance(scope, ast.Lambda) \
            else [scope.args, scope.body]
        for child in todo:
            self.parent[child] = scope
        while todo:
            n = todo.pop()
            self.nodes.append(n)
            if isinstance(n, _NESTED):
                self.nested.append(n)
                self.in_nested |= {m.id for m in ast.walk(n) if isinstance(m, ast.Name)}
                if not isinstance(n, ast.Lambda):
                    self.bindings.setdefault(n.name, []).append(None)
                outer = list(getattr(n, "decorator_list", [])) + (
                    list(n.args.defaults) + [d for d in n.args.kw_defaults if d]
                    if not isinstance(n, ast.ClassDef) else list(n.bases))
                for child in outer:
                    self.parent[child] = n
                todo += outer
                continue
            if isinstance(n, (ast.Global, ast.Nonlocal)):
                self.declared |= set(n.names)
            for child in ast.iter_child_nodes(n):
                self.parent[child] = n
                todo.append(child)

    def _bind_arguments(self, args: ast.arguments, fresh: bool) -> None:
        positional = args.posonlyargs + args.args
        defaulted = {a.arg for a in positional[len(positional) - len(args.defaults):]}
        defaulted |= {a.arg for a, d in zip(args.kwonlyargs, args.kw_defaults) if d}
        for a in positional + args.kwonlyargs:
            self.bindings.setdefault(a.arg, []).append(
                "argument" if fresh and a.arg not in defaulted else None)
        for a in (args.vararg, args.kwarg):
            if a is not None:
                self.bindings.setdefault(a.arg, []).append(None)

    def _bind(self, n: ast.AST) -> None:
        """The values a statement or expression binds to names (None: not known)."""
        if isinstance(n, ast.Assign):  # (`a = b = v`: one value, two names)
            for target in n.targets:
                self._bind_target(target, n.value if len(n.targets) == 1 else None)
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            self._bind_target(n.target, n.value)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            self.bindings.setdefault(n.target.id, []).append("same")
        elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            self._bind_target(n.target, None)
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            self._bind_target(n.optional_vars, None)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            self.bindings.setdefault(n.name, []).append(None)
        elif isinstance(n, ast.NamedExpr):
            self._bind_target(n.target, None)
        elif isinstance(n, ast.Delete):
            for target in n.targets:
                if isinstance(target, ast.Name):
                    self.bindings.setdefault(target.id, []).append(None)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                name = alias.asname or alias.name.split(".")[0]
                self.bindings.setdefault(name, []).append(None)
                self.imports[name] = _imported(n, alias)

    def _bind_target(self, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bindings.setdefault(target.id, []).append(value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(
                value.elts) == len(target.elts) and not any(
                isinstance(e, ast.Starred) for e in value.elts + target.elts) else None
            for k, t in enumerate(target.elts):
                self._bind_target(t, items[k] if items else None)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None)

    # ---- what a value is ------------------------------------------------------------

    def fresh(self, e: ast.expr | None) -> bool:
        """Whether ``e`` makes a new object no other name holds, nor holds another
        name's array (displays of such values, arithmetic, NumPy's new arrays)."""
        if e is None:
            return False
        if isinstance(e, (ast.Constant, ast.JoinedStr, ast.Compare)):
            return True
        if isinstance(e, ast.BinOp):
            return all(self._operand(v) for v in (e.left, e.right))
        if isinstance(e, ast.UnaryOp):
            return self._operand(e.operand)
        if isinstance(e, ast.BoolOp):
            return all(self.fresh(v) for v in e.values)
        if isinstance(e, ast.IfExp):
            return self.fresh(e.body) and self.fresh(e.orelse)
        if isinstance(e, (ast.List, ast.Tuple, ast.Set)):
            return all(self.fresh(v) for v in e.elts)
        if isinstance(e, ast.Dict):
            return None not in e.keys and all(self.fresh(v) for v in e.values)
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.fresh(e.elt)
        if isinstance(e, ast.DictComp):
            return self.fresh(e.value)
        if isinstance(e, ast.Call):
            if self.fresh_call(e):
                return True
            func = e.func
            return isinstance(func, ast.Attribute) and func.attr in _FRESH_METHODS and (
                func.attr != "copy" or self.kind(func.value) == "array") and not _keyword(
                e, "copy", False)
        return False

    def _operand(self, e: ast.expr) -> bool:
        """An operand of arithmetic whose result holds none of its items (a list or
        tuple repeated or joined holds the same arrays)."""
        if isinstance(e, (ast.List, ast.Tuple, ast.ListComp, ast.Starred)):
            return False
        return self.kind(e) != "container"

    def kind(self, e: ast.expr, seen: frozenset = frozenset()) -> str:
        """``array`` (an array or a float), ``int``, ``container`` (a list, dict,
        tuple or set) or ``unknown`` (an argument, a call's result...)."""
        if isinstance(e, ast.Name):
            values = self.bindings.get(e.id)
            if not values or e.id in seen:
                return "unknown"
            kinds = {self.kind(v, seen | {e.id}) for v in values if isinstance(v, ast.expr)}
            if any(v != "same" and not isinstance(v, ast.expr) for v in values):
                kinds.add("unknown")
            if kinds == {"int", "array"}:
                return "array"
            return kinds.pop() if len(kinds) == 1 else "unknown"
        if isinstance(e, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp,
                          ast.DictComp, ast.SetComp)):
            return "container"
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and \
                e.func.id in _CONTAINER_CALLS and e.func.id not in self.bindings:
            return "container"
        if isinstance(e, ast.BinOp):
            kinds = {self.kind(v, seen) for v in (e.left, e.right)}
            if "array" in kinds and (isinstance(e.op, (ast.Add, ast.Mult)) or
                                     "container" not in kinds):
                return "array"  # (a list repeated by an int, or joined, holds its items)
            return "int" if kinds == {"int"} else "array" if "container" not in kinds \
                and not isinstance(e.op, (ast.Add, ast.Mult)) else "unknown"
        if isinstance(e, ast.UnaryOp):
            return self.kind(e.operand, seen)
        value = e.value if isinstance(e, ast.Constant) else self.resolve(e) if isinstance(e, ast.Attribute) else _MISSING
        if isinstance(value, (bool, int)):
            return "int"
        if isinstance(value, (float, complex)) or self.fresh_call(e):
            return "array"
        return "unknown"

    def items_fresh(self, value: Any) -> bool:
        """Whether a binding holds no object another name holds (an array, which
        holds none; a display of new values; an argument, which jit copies)."""
        return value in ("same", "argument") or isinstance(value, ast.expr) and (
            self.kind(value) in ("array", "int") or self.kind(value) == "container" and
            self.fresh(value) and not isinstance(value, ast.Call))

    def resolve(self, e: ast.expr) -> Any:
        """The object a (dotted) name means here: _MISSING for a local's."""
        root = e
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in self.bindings and \
                root.id not in self.imports:
            return _MISSING
        return self.owner._resolve(e, self.imports)

    def fresh_call(self, call: ast.expr) -> bool:
        """A call of a function that returns a new value holding no argument (a
        NumPy ufunc or function making a new array, ``math``, ``len``...)."""
        if not isinstance(call, ast.Call) or _keyword(call, "copy", False) or any(
                k.arg == "out" for k in call.keywords):
            return False
        fn = self.resolve(call.func)
        if fn is _MISSING:
            return False
        if isinstance(fn, np.ufunc):
            return True
        module = getattr(fn, "__module__", None) or ""
        name = getattr(fn, "__name__", "")
        if module.split(".")[0] == "numpy" or getattr(fn, "__self__", None) is np:
            if name == "diff" and (len(call.args) > 1 or call.keywords):
                return False  # (`np.diff(y, 0)` is `y` itself)
            return name in _NP_FRESH
        if fn is getattr(math, name, None) and callable(fn):
            return True
        return module == "builtins" and name in _BUILTINS_FRESH and fn is getattr(
            __import__("builtins"), name, None)

    # ---- the writes -----------------------------------------------------------------

    def _writes(self) -> list[tuple]:
        """``(node, root, item, what)`` for each in-place write: ``root`` the name
        written into (None: an expression), ``item`` whether through an item or an
        attribute of it, ``what`` how the message names it (``method`` for a call
        JAX runs as a copy or refuses)."""
        out: list[tuple] = []
        for n in sorted(self.nodes, key=lambda n: (getattr(n, "lineno", 0),
                                                   getattr(n, "col_offset", 0))):
            if isinstance(n, ast.AugAssign):
                out.append((n, _root(n.target), not isinstance(n.target, ast.Name), n))
            elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.Delete)):
                targets = n.targets if not isinstance(n, ast.AnnAssign) else [n.target]
                value = getattr(n, "value", None)
                for t in _target_items(targets):
                    depth = _depth(t)
                    root = _root(t)
                    if isinstance(t, ast.Subscript):
                        out.append((n, root, depth > 1, n))
                    if root is not None and (value is None or not self.fresh(value) or
                                             len(targets) > 1):
                        self.tainted.add(root)
            elif isinstance(n, ast.Call):
                out += self._call_writes(n)
        return out

    def _call_writes(self, call: ast.Call) -> list[tuple]:
        out: list[tuple] = []
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _WRITE_METHODS:
            out.append((call, _root(func.value), True, "method"))
        elif isinstance(func, ast.Attribute) and func.attr in _STORING_METHODS:
            root = _root(func.value)
            if root is not None and not all(self.fresh(a) for a in call.args):
                self.tainted.add(root)
        if self._np_write(call) and call.args:
            buf = call.args[0]
            out.append((call, _root(buf), not isinstance(buf, ast.Name), call))
        for k in call.keywords:
            if k.arg == "out" and not (isinstance(k.value, ast.Constant) and
                                       k.value.value is None):
                bufs = k.value.elts if isinstance(k.value, ast.Tuple) else [k.value]
                out += [(call, _root(b), not isinstance(b, ast.Name), "out") for b in bufs]
            if k.arg == "overwrite_input" and not (isinstance(k.value, ast.Constant) and
                                                   not k.value.value) and call.args:
                out.append((call, _root(call.args[0]), True, "out"))  # (np.median's
        return out  # partial sort of its argument in place: JAX's leaves it)

    def _np_write(self, call: ast.Call) -> bool:
        func = call.func
        fn = self.resolve(func)
        if fn is _MISSING:
            return isinstance(func, ast.Attribute) and func.attr in _NP_WRITES and not (
                isinstance(func.value, ast.Name) and func.value.id in self.bindings and
                func.value.id not in self.imports)
        name = getattr(fn, "__name__", "")
        if fn is getattr(operator, name, None) and name in _OPERATOR_WRITES:
            return True  # (`operator.iadd(z, v)`: NumPy's `z += v`, a new array on JAX)
        return name in _NP_WRITES and (isinstance(getattr(fn, "__self__", None), np.ufunc)
                                       or (getattr(fn, "__module__", "") or "").startswith(
                                           "numpy"))

    def _check(self, node: ast.AST, root: str | None, item: bool,
               what: Any) -> Any:
        """The refusal of one write, or None where no other name can see it."""
        refuse = self.owner._refuse
        text = f"`{ast.unparse(node).splitlines()[0]}`"
        if what == "method":
            if node.func.attr == "sort" and root is not None and self.kind(  # type: ignore
                    ast.Name(root)) == "container":
                return None  # (a list's own sort: the same on JAX)
            return refuse(node, text, "JAX's arrays do not run that method in place "
                          "(`.sort()` returns a sorted copy)", *_instead(node))
        if what == "out":
            return refuse(node, text, "JAX's functions take no `out=` and write into no "
                          "argument (`overwrite_input=`)", *_instead(node))
        why = self._owned(root, item) if root is not None else "it writes into an " \
            "expression's value"
        return None if why is None else refuse(node, text, why, *_instead(node))

    def _owned(self, root: str, item: bool) -> str | None:
        """None where ``root`` holds a value no other name sees (bound to new values
        alone, and read only where no second reference can be made), else why not."""
        if root in self.declared or root not in self.bindings:
            return f"`{root}` is not the function's own"
        if root in self.in_nested:
            return f"a function defined inside reads `{root}`"
        for value in self.bindings[root]:
            if value == "same" or value == "argument":
                continue
            if not self.fresh(value):
                return f"`{root}` may be bound to an array another name holds"
        deep = item and self.kind(ast.Name(root)) != "array"
        if deep and (root in self.tainted or not all(
                self.items_fresh(v) for v in self.bindings[root])):
            return f"`{root}` may hold an array another name holds"
        for use in self.uses.get(root, ()):
            how = self._use(use)
            if how == "escape" or deep and how == "shared":
                line = ast.unparse(self._statement(use)).split("\n")[0]
                return f"`{line}` may make another name for `{root}` or its items"
        return None

    def _statement(self, n: ast.AST) -> ast.AST:
        while not isinstance(n, ast.stmt) and n in self.parent:
            n = self.parent[n]
        return n

    def _use(self, node: ast.AST) -> str:
        """How a read of a written name uses it: ``safe`` (makes no reference to it),
        ``shared`` (arithmetic or a copy: a new array, but a list's items are the
        same objects), ``escape`` (a second name, container or view may hold it)."""
        child = node
        while True:
            p = self.parent.get(child)
            if isinstance(p, ast.Subscript):
                if p.slice is child or not isinstance(p.ctx, ast.Load):
                    return "safe"
                child = p  # (an item or a view of it)
            elif isinstance(p, ast.Attribute):
                if not isinstance(p.ctx, ast.Load) or p.attr in _NOT_ARRAYS:
                    return "safe"
                call = self.parent.get(p)
                if isinstance(call, ast.Call) and call.func is p:
                    if p.attr in _FRESH_METHODS and not _keyword(call, "copy", False):
                        return "shared" if p.attr == "copy" else "safe"
                    if p.attr in _STORING_METHODS | _WRITE_METHODS:
                        return "safe"
                    child = call  # (a method's result: a view, an item)
                else:
                    child = p  # (`y.T`, `b.w`)
            elif isinstance(p, (ast.BinOp, ast.UnaryOp)):
                return "shared" if child is node else "safe"  # (a list joined)
            elif isinstance(p, (ast.Compare, ast.Expr, ast.Return, ast.FormattedValue,
                                ast.Slice, ast.Assert)):
                return "safe"
            elif isinstance(p, (ast.If, ast.While, ast.IfExp)) and child is p.test:
                return "safe"
            elif isinstance(p, ast.AugAssign):  # (`z += y` of an array `z` reads y;
                return "safe" if child is node and isinstance(  # a list's holds it)
                    p.target, ast.Name) and self.kind(p.target) in ("array", "int") \
                    else "escape"
            elif isinstance(p, ast.keyword):
                child = p
            elif isinstance(p, ast.Call):
                if child is p.func or self.fresh_call(p) or (
                        isinstance(p.func, ast.Attribute) and p.func.attr in _FRESH_METHODS
                        and not _keyword(p, "copy", False)) or (
                        self._np_write(p) and p.args and child is not p.args[0]):
                    return "safe"
                if isinstance(p.func, ast.Attribute) and p.func.attr in _STORING_METHODS:
                    return "escape"
                return "safe" if self._np_write(p) or isinstance(
                    child, ast.keyword) and child.arg == "out" else "escape"
            elif isinstance(p, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.IfExp,
                                ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp,
                                ast.GeneratorExp)):
                child = p  # (a value holding it: where it goes decides)
            else:
                return "escape"


def _keyword(call: ast.Call, name: str, value: Any) -> bool:
    """Whether ``call`` passes ``name=value`` (``copy=False``: also any ``copy=`` but
    ``True``, as ``copy=None`` copies only when it must)."""
    if name == "copy" and value is False:
        return any(k.arg == "copy" and not (isinstance(k.value, ast.Constant) and
                                           k.value.value is True) for k in call.keywords)
    return any(k.arg == name and isinstance(k.value, ast.Constant) and
               k.value.value is value for k in call.keywords)


def _imported(node: ast.AST, alias: ast.alias) -> Any:
    """What an ``import`` inside the function binds, if the module is loaded."""
    if isinstance(node, ast.Import):
        name = alias.name if alias.asname else alias.name.split(".")[0]
        return sys.modules.get(name, _MISSING)
    module = sys.modules.get(node.module or "", _MISSING) if not node.level else _MISSING
    return getattr(module, alias.name, _MISSING) if module is not _MISSING else _MISSING


def _target_items(targets: list) -> list:
    out = []
    for t in targets:
        if isinstance(t, (ast.Tuple, ast.List)):
            out += _target_items(t.elts)
        elif isinstance(t, ast.Starred):
            out += _target_items([t.value])
        else:
            out.append(t)
    return out


def _depth(target: ast.expr) -> int:
    depth = 0
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Call)):
        target = target.func if isinstance(target, ast.Call) else target.value
        depth += not isinstance(target, ast.Call)
    return depth


def _root(target: ast.expr) -> str | None:
    while isinstance(target, (ast.Subscript, ast.Attribute, ast.Call, ast.Starred)):
        target = target.func if isinstance(target, ast.Call) else target.value
    return target.id if isinstance(target, ast.Name) else None


def _instead(node: ast.AST) -> tuple[str, str]:
    """``(name, value)`` of the rebinding to write instead of an in-place write."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        op = ast.unparse(ast.BinOp(ast.Name("a"), node.op, ast.Name("b")))[2:-2]
        return node.target.id, f"{node.target.id} {op} {ast.unparse(node.value)}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr == "sort" and not node.args:
        name = ast.unparse(node.func.value)
        return name, f"np.sort({name})"
    out = [k for k in getattr(node, "keywords", ()) if k.arg == "out"]
    if out and isinstance(out[0].value, ast.Name):
        call = ast.Call(node.func, node.args, [k for k in node.keywords if k.arg != "out"])
        return out[0].value.id, ast.unparse(call)
    return "", ""
