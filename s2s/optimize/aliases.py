"""Which items of what emitted code returns may be the caller's arrays?

A ``value_and_grad``'s value, a ``grad``'s aux output and a ``jvp``'s primal output
are what the user's function returned; where it returned an argument (``return
loss, x``), a module array, or a view of one, the caller writing into the result
would change their own input.  s2s copies such an item (s2s/api/outputs.py), and
this module says, once per emitted or specialized function, which items never need
the look: :func:`foreign_items` reads the code's text.

The reading is flow-insensitive and errs towards "may": a name may hold a foreign
array if any statement binding it may bind one.  Foreign to start with are the
parameters and the names the code reads without binding (its module's and
closure's).  An expression may be foreign where a part it can return is: a name, a
subscript or attribute of a foreign value (a view or an item), a tuple, list or dict
holding one, ``a or b``, ``a if c else b``, a call that may return its argument
(``np.reshape``, a method of a foreign object, a runtime helper, a builtin such as
``max`` or ``tuple``) given one, and any call of a function s2s does not know (a
user's function may return a module array).  NumPy's other functions and arithmetic
make new arrays (the frontend lowers arithmetic on lists and tuples to literals).
"""

from __future__ import annotations

import ast
import builtins
from typing import Callable

from .. import runtime, syntax
from .calls import MAY_ALIAS, call_name

__all__ = ["foreign_items", "makes_new"]

# NumPy functions whose result may be (a view of) an argument, beyond MAY_ALIAS
_VIEWS = MAY_ALIAS | {"einsum", "trim_zeros", "real_if_close", "as_strided",
                      "sliding_window_view", "frombuffer", "asmatrix", "asarray_chkfinite",
                      "ndarray", "nditer"}
# builtins that return what they are given (or its items), never a module array
_PASSING = set(dir(builtins)) - {"globals", "locals", "vars", "eval", "exec",
                                 "__import__", "compile", "open", "input"}
# s2s's runtime helpers: each returns an argument (or a view or item of one) or new
# arrays, never anything else
_HELPERS = frozenset(runtime.__all__)
# array methods that make a new array (or a Python value) whatever they are given
_NEW_BY_METHOD = {"sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod",
                  "copy", "dot", "round", "clip", "conj", "conjugate", "all", "any",
                  "argmax", "argmin", "trace", "flatten", "repeat", "take", "tolist",
                  "item", "nonzero", "argsort", "searchsorted", "ptp", "__array__"}


def makes_new(node: ast.Call, may_alias: Callable[[ast.AST], bool]) -> bool:
    """Does the call ``node`` make a new value (or one of the values it is given, where
    ``may_alias`` says none of them may alias)?  NumPy's functions but those that may
    return a view or their argument (``np.reshape``, ``out=``, ``copy=False``); the
    array methods of ``_NEW_BY_METHOD``; runtime helpers and builtins of such values.
    (``np`` is NumPy: emitted code never binds it.)"""
    f, name = node.func, call_name(node)
    given = [*node.args, *(k.value for k in node.keywords)]
    if _numpy(f):  # (np.astype copies unless told copy=False: NumPy's array API)
        return not (name in _VIEWS - {"astype"} or any(k.arg in ("out", "copy") or k.arg is None
                                          for k in node.keywords)
                    or any(isinstance(a, ast.Attribute) and a.attr == "lib"
                           for a in ast.walk(f))) or not any(map(may_alias, given))
    if isinstance(f, ast.Attribute):
        if name == "astype":  # (a copy unless told copy=False, as np.astype)
            return not any(k.arg in ("copy", None) for k in node.keywords)
        return name in _NEW_BY_METHOD
    if isinstance(f, ast.Name) and (f.id in _HELPERS or f.id in _PASSING):
        return not any(map(may_alias, given))
    return False


def _numpy(f: ast.AST) -> bool:
    while isinstance(f, ast.Attribute):
        f = f.value
    return isinstance(f, ast.Name) and f.id == "np"


def foreign_items(text: str, name: str) -> tuple[bool, ...] | None:
    """For each item of the tuple function ``name`` of ``text`` returns, may it hold
    one of the function's arguments, an array it reads from its module or closure,
    or a view of one?  None where the code does not always return a tuple of one
    length (every item may)."""
    fn = syntax.defined_in(text, name)
    if fn is None:
        return None
    reading = _Reading(fn, _HELPERS)
    if not reading.settle():
        return None
    returns = reading.returns
    if not returns or any(not isinstance(r, ast.Tuple) for r in returns):
        return None
    if len({len(r.elts) for r in returns}) != 1:
        return None
    return tuple(any(reading.foreign(r.elts[k]) for r in returns)
                 for k in range(len(returns[0].elts)))


class _Reading:
    """The names of one function that may hold a foreign array (``tainted``)."""

    def __init__(self, fn: ast.FunctionDef, helpers: frozenset[str]) -> None:
        a = fn.args
        params = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
        params |= {p.arg for p in (a.vararg, a.kwarg) if p is not None}
        self.helpers = helpers
        self.bindings: list[tuple[ast.AST, ast.AST]] = []  # (target, value) pairs
        self.calls: list[ast.Call] = []
        self.returns: list[ast.AST | None] = []
        self.bound: set[str] = set()
        self.unsure = False  # (a nested function writing into this one's names)
        for stmt in fn.body:
            self._collect(stmt)
        self.tainted = set(params)
        self.local = self.bound | params

    def _collect(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            self.unsure = True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.unsure |= any(isinstance(n, ast.Nonlocal) for n in ast.walk(node))
            self.bound.add(node.name)  # (their bodies: another scope; calling one is
            return                     # a call of an unknown function)
        if isinstance(node, ast.Return):
            self.returns.append(node.value)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if node.value is not None:
                self.bindings += [(t, node.value) for t in targets]
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            self.bindings.append((node.target, node.iter))
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self.bindings.append((node.optional_vars, node.context_expr))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.bound |= {(al.asname or al.name).split(".")[0] for al in node.names}
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.bound.add(node.name)
        if isinstance(node, ast.Call):
            self.calls.append(node)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            self.bound.add(node.id)
        if isinstance(node, ast.Lambda):
            return  # (a function value: calling it is a call of an unknown function)
        for child in ast.iter_child_nodes(node):
            self._collect(child)

    def settle(self) -> bool:
        """Taint names until nothing changes (False: it did not settle; unsure)."""
        if self.unsure:
            return False
        for _ in range(len(self.local) + 2):  # (each pass but the last taints a name)
            before = len(self.tainted)
            for target, value in self.bindings:
                if self.foreign(value):
                    self._taint(target)
            for call in self.calls:  # (`ys.append(x)`, `helper(ys)`: ys may hold x)
                stores = isinstance(call.func, ast.Attribute) or call_name(call) == "setattr"
                if not self._numpy(call) and (self._unknown(call) or stores and self._given(call)):
                    for part in (call.func, *call.args, *(k.value for k in call.keywords)):
                        self._taint(part)
            if len(self.tainted) == before:
                return True
        return False

    def _taint(self, target: ast.AST) -> None:
        # (a write into an item or attribute may put the value in its container)
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.tainted.add(node.id)

    def foreign(self, node: ast.AST | None) -> bool:
        """May ``node``'s value be, hold or view a foreign array?"""
        if node is None or isinstance(node, (ast.Constant, ast.JoinedStr, ast.Lambda,
                                             ast.Slice, ast.Compare, ast.UnaryOp)):
            return False
        if isinstance(node, ast.Name):
            if node.id in self.local:
                return node.id in self.tainted
            return node.id not in _PASSING and node.id not in self.helpers and node.id != "np"
        if isinstance(node, ast.BinOp):
            # (arrays' arithmetic makes a new array; a list's or tuple's keeps items)
            return any(isinstance(s, (ast.Tuple, ast.List, ast.ListComp))
                       and self.foreign(s) for s in (node.left, node.right))
        if isinstance(node, (ast.Subscript, ast.Attribute, ast.Starred)):
            return self.foreign(node.value)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return any(self.foreign(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return any(self.foreign(e) for e in (*node.keys, *node.values))
        if isinstance(node, ast.BoolOp):
            return any(self.foreign(v) for v in node.values)
        if isinstance(node, ast.IfExp):
            return self.foreign(node.body) or self.foreign(node.orelse)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.foreign(node.elt)
        if isinstance(node, ast.DictComp):
            return self.foreign(node.key) or self.foreign(node.value)
        if isinstance(node, ast.Call):
            return self._call(node)
        return True

    def _given(self, node: ast.Call) -> bool:
        return any(self.foreign(a) for a in node.args) or any(
            self.foreign(k.value) for k in node.keywords)

    def _numpy(self, node: ast.Call) -> bool:
        """Is ``node`` a call of a NumPy function (``np.f``, ``np.linalg.f``)?"""
        root = node.func
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id == "np" and "np" not in self.local

    def _unknown(self, node: ast.Call) -> bool:
        """A call of a function that may return (or store) anything: not NumPy's, not
        a method, not a helper or builtin."""
        f = node.func
        return not self._numpy(node) and not isinstance(f, ast.Attribute) and not (
            isinstance(f, ast.Name) and f.id not in self.local and (
                f.id in self.helpers or f.id in _PASSING))

    def _call(self, node: ast.Call) -> bool:
        if self._numpy(node):
            if call_name(node) in _VIEWS or any(
                    k.arg in ("out", "copy") or k.arg is None for k in node.keywords) or \
                    any(isinstance(a, ast.Attribute) and a.attr == "lib"
                        for a in ast.walk(node.func)):
                return self._given(node)
            return False  # (NumPy's other functions make new arrays)
        if self._unknown(node):
            return True
        if isinstance(node.func, ast.Attribute) and self.foreign(node.func.value):
            return True  # (a method of a foreign object)
        return self._given(node)
