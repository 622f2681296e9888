"""Shape specialization of emitted gradients: the NumPy backend's optimizer.

The emitted gradient is valid for every shape, so it carries broadcasting fix-ups
(``unbroadcast``, ``np.broadcast_to``), the output check and seed (``grad_seed``) and
general helpers (``matmul_rhs_bar``) whose work is nothing, or a plain expression, once
the shapes are known.  The first call with a new signature (the shapes and dtypes of the
arguments, the values of integer scalars) runs an instrumented copy of the emitted
function that records the shape and dtype of every subexpression, and returns that
call's result.  From those facts the code is rewritten:

- fix-ups whose input already has the output's shape disappear;
- the seed becomes a constant, and cotangents known to be filled with one number
  (the seed broadcast over an array, scaled by constants) are propagated: ``ones * e``
  becomes ``e``, ``(ones * 100.0) * e`` becomes ``100.0 * e``;
- ``np.size``/``np.shape``/``np.ndim`` of known values fold to literals, matrix
  cotangent helpers of 2-D operands become ``x.T @ g`` / ``g @ w.T``, and
  ``np.add.at`` at a scalar integer index becomes ``buf[i] += v``;
- repeated pure expressions are computed once (common subexpressions);
- arithmetic is simplified on an e-graph (egglog): constants folded, signs moved;
- statements whose values nothing reads are dropped.

Only straight-line code (and loops over ranges) is specialized: a branch, or a call
whose result's shape is a function of values alone (``np.nonzero``, ``int(...)``, ...)
means the code runs as emitted.  Of the facts one call records, only those every call
with the same signature would record are used (s2s/optimize/signature_facts.py): the shape of
``x[mask]``, ``x[:np.argmax(y)]``, ``x[:n]`` for a 0-d integer array ``n`` or of
anything computed from them is not known from the signature, so the code that reads
them stays as emitted.  The guard is the signature (shapes, dtypes, integer values)
and the objects the free names hold (an array's shape and dtype too): a call with
another one runs (and specializes) again; results are the same as the generic code's
up to rounding of folded constants.  The passes take time about linear in the code;
past a size limit (``MAX_STATEMENTS``) the code runs as emitted.
"""

from __future__ import annotations

import ast
import copy
import math
import os
import warnings
from collections import defaultdict
from typing import Any

import numpy as np

from .. import syntax
from ..emit.code import format_module
from .buffers import reuse_intermediates
from .calls import MUTATORS, PYTHON_NUMBERS, PythonScalar, as_kind, call_name, same_kinds
from .dots import products_as_dots
from .egraph_pass import egraph_simplify, inline_single_uses
from .fresh import returns_fresh  # noqa: F401  (s2s/api imports it from here)
from .literals import last_spellings, spell_literals
from .passes import (
    accumulate,
    cancel_negations,
    dead_code,
    methods,
    row_sums,
    scalar_of,
    static_range,
    straight,
    trim_tapes,
    whole_views,
)
from .products import names_in, narrow_floats, sums_as_products
from .realpart import real_conjugates, real_parts
from .scales import complements, divisors_out_of_sums, lift_scales
from .signature_facts import signature_facts
from .softmax import softmax_of_logsumexp
from .solves import shared_factorizations, symmetric_transposes
from .spelled import (
    _matmul_bar,
    _sum_to,
    literal_item,
    literal_value,
    python_arithmetic,
    spell_numpy,
    spell_shaped,
    spread_value,
)
from .subexpr import read_held_values, share_subexpressions
from .terms import summed as _summed
from .ties import split_shares, tie_shares
from .zero import drop_zero_cotangents, zero_cotangents

# calls whose result's shape depends on values, not on the arguments' shapes
PROBE = "__s2s_probe__"

# Every pass takes time about linear in the emitted module's statements; past
# MAX_STATEMENTS the code runs as emitted (a second call never stalls for seconds).
# The e-graph passes cost a few milliseconds a statement (egglog's terms are built in
# Python): past MAX_EGRAPH_STATEMENTS the others still run.
MAX_STATEMENTS = 4000
MAX_EGRAPH_STATEMENTS = 300

# The passes, by name (docs/architecture.md says what each does).  S2S_PASSES_OFF
# (comma-separated names, or "all"), read when a signature specializes, switches
# passes off: the benchmark's ablation (tools/bench.py --ablate) measures what each
# buys; with any set off the code computes the same values (tests/test_passes_off.py).
PASSES = ("fixups", "fill", "shapes", "matmul", "addat", "cse", "egraph", "zero", "tapes",
          "dce", "accumulate", "methods", "signs", "copies", "subexpr", "ties", "literals",
          "solves", "products", "buffers")
DISABLED: set[str] = set()  # (switched off in this process too, as the variable does)


def passes_off() -> frozenset[str]:
    """The passes S2S_PASSES_OFF (and ``DISABLED``) switch off; an unknown name is
    warned about and ignored."""
    words = {w.strip() for w in os.environ.get("S2S_PASSES_OFF", "").split(",")} - {""}
    if "all" in words:
        return frozenset(PASSES)
    unknown = words - set(PASSES)
    if unknown:
        warnings.warn(f"S2S_PASSES_OFF: no pass named {', '.join(sorted(unknown))} "
                      f"(the passes: {', '.join(PASSES)}, or all)", stacklevel=2)
    return frozenset((words - unknown) | DISABLED)


def eligible(module: ast.Module) -> bool:
    """Straight-line functions, and loops over static ranges with straight-line
    bodies (not nested), with no value-dependent shapes."""
    defs = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if not defs:
        return False
    for fn in defs:
        for stmt in fn.body:
            if isinstance(stmt, ast.For) and static_range(stmt):
                continue
            if not straight(stmt):
                return False
    return True


# ---- the probe ----------------------------------------------------------------------

_FACT_TYPES = (np.ndarray, np.generic, float, int, bool)


def _fact(value: Any) -> Any:
    if isinstance(value, _FACT_TYPES) and not isinstance(value, (str, bytes)):
        return (np.shape(value), np.result_type(value))
    return ("other", type(value))


def _probed(node: ast.AST) -> bool:
    if isinstance(node, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript)):
        return isinstance(getattr(node, "ctx", ast.Load()), ast.Load)
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load) and node.id != "np"
    if isinstance(node, ast.Attribute):
        return isinstance(node.ctx, ast.Load) and node.attr in ("T", "mT", "real")
    return False


class _Instrument(ast.NodeTransformer):
    """Wrap every probed expression ``e`` (numbered ``_k``) as ``probe(k, e)``."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Call):  # never wrap the callee
            node.args = [self.visit(a) for a in node.args]
            for kw in node.keywords:
                kw.value = self.visit(kw.value)
            if isinstance(node.func, ast.Attribute):
                node.func.value = self.visit(node.func.value)
        else:
            super().generic_visit(node)
        k = getattr(node, "_k", None)
        if k is None:
            return node
        return ast.Call(ast.Name(PROBE, ast.Load()), [ast.Constant(k), node], [])


def probe_run(module: ast.Module, namespace: dict[str, Any], name: str,
              args: tuple) -> tuple[Any, dict[int, Any]]:
    """Run an instrumented copy of ``module``'s function ``name`` on ``args``: its
    result and the fact (shape, dtype) of each numbered node (None where it varied)."""
    k = 0
    for node in ast.walk(module):
        if _probed(node):
            node._k = k  # type: ignore[attr-defined]
            k += 1
    inst = _Instrument().visit(copy.deepcopy(module))
    ast.fix_missing_locations(inst)
    seen: dict[int, set] = defaultdict(set)
    python: set[int] = set()  # the nodes a Python number reached (calls.PythonScalar)

    def probe(k: int, value: Any) -> Any:
        seen[k].add(_fact(value))
        if type(value) in PYTHON_NUMBERS:
            python.add(k)
        return value

    ns = dict(namespace)
    ns[PROBE] = probe
    exec(compile(inst, f"<s2s-probe:{name}>", "exec"), ns)
    result = ns[name](*args)
    facts = {k: next(iter(v)) if len(v) == 1 else None for k, v in seen.items()}
    return result, {k: PythonScalar(f) if f and k in python else f for k, f in facts.items()}


# ---- the rewrite ----------------------------------------------------------------------


# calls spelled as the NumPy steps they take (np.var, scipy.special.softmax)
_STEPS = ("var", "special_softmax")
# NumPy functions that give a scalar more axes (its one element, its dtype)
_SPREADS = {"expand_dims", "reshape", "atleast_1d", "atleast_2d", "atleast_3d"}
_FILLED = {"ones": 1.0, "ones_like": 1.0, "zeros": 0.0, "zeros_like": 0.0}


class _Fill:
    """A value every element of which is ``c`` (shape and dtype from its facts)."""

    def __init__(self, c: float) -> None:
        self.c = c


def _literal(value: float) -> ast.expr:
    if value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def _known(facts: dict[int, Any], node: ast.AST) -> Any:
    """The (shape, dtype) fact of ``node``'s value, or None."""
    k = getattr(node, "_k", None)
    f = facts.get(k) if k is not None else None
    return None if f is None or f[0] == "other" else f


def _mutated_names(fn: ast.FunctionDef) -> set[str]:
    """Names whose array something writes into (a name bound to such a value
    is never replaced by another name: that would share the buffer)."""
    out: set[str] = set()

    def base(t: ast.AST) -> None:
        if isinstance(t, (ast.Subscript, ast.Attribute)):
            while isinstance(t, (ast.Subscript, ast.Attribute)):
                t = t.value
            if isinstance(t, ast.Name):
                out.add(t.id)

    for node in ast.walk(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                base(t)
        elif isinstance(node, ast.AugAssign):
            base(node.target)
            if isinstance(node.target, ast.Name):
                out.add(node.target.id)
        elif isinstance(node, ast.Call) and call_name(node) in MUTATORS:
            for a in node.args[:1]:
                if isinstance(a, ast.Name):
                    out.add(a.id)
            if isinstance(node.func, ast.Attribute) and isinstance(
                    node.func.value, ast.Name):
                out.add(node.func.value.id)
    return out


def _last_binding(fn: ast.FunctionDef) -> dict[str, int]:
    last: dict[str, int] = {}
    for i, stmt in enumerate(fn.body):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                last[node.id] = i
    return last


class _Rewriter:
    def __init__(self, fn: ast.FunctionDef, facts: dict[int, Any],
                 off: frozenset[str] = frozenset()) -> None:
        self.fn = fn
        self.off = off
        self.facts = facts
        self.fill: dict[str, _Fill] = {}
        self.alias: dict[str, ast.expr] = {}
        self.mutated = _mutated_names(fn)
        self.last_bind = _last_binding(fn)
        self.cse: dict[str, str] = {}  # ast.dump of a pure value -> the name holding it
        self.cse_held: dict[str, list[str]] = defaultdict(list)  # name -> its cse keys
        # a name bound to np.broadcast_to(inner, shape) -> (inner, where it was bound)
        self.bcast: dict[str, tuple[ast.expr, int]] = {}
        self.in_loop = False
        self.binds: dict[str, list[int]] = defaultdict(list)
        for i, stmt in enumerate(fn.body):
            for node in ast.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    self.binds[node.id].append(i)

    def on(self, name: str) -> bool:
        return name not in self.off

    def fact(self, node: ast.AST) -> Any:
        return _known(self.facts, node)

    def note(self, node: ast.AST, shape: tuple, dtype: Any) -> None:
        """Record a new node's shape and dtype (a fact of the signature, derived)."""
        k = min((k for k in self.facts if isinstance(k, int)), default=0)
        node._k = min(k, 0) - 1  # type: ignore[attr-defined]
        self.facts[node._k] = (shape, dtype)  # type: ignore[attr-defined]

    # ---- substitution of aliases ----

    def substitute(self, node: ast.AST) -> ast.AST:
        alias = self.alias

        class Sub(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                if isinstance(n.ctx, ast.Load) and n.id in alias:
                    new = copy.deepcopy(alias[n.id])
                    if hasattr(n, "_k"):
                        new._k = n._k  # type: ignore[attr-defined]
                    return new
                return n

        return Sub().visit(node)

    # ---- per expression ----

    def fill_of(self, node: ast.AST) -> _Fill | None:
        """Is every element of this expression's value one known number?"""
        if not self.on("fill"):
            return None
        if isinstance(node, ast.Name):
            return self.fill.get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            f = self.fill_of(node.operand)
            return None if f is None else _Fill(-f.c)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            a = self.fill_of(node.left)
            b = self.fill_of(node.right)
            na, nb = self.number(node.left), self.number(node.right)
            x = a.c if a is not None else na
            y = b.c if b is not None else nb
            if x is None or y is None or (a is None and b is None):
                return None
            if isinstance(node.op, ast.Mult):
                return _Fill(x * y)
            return None if y == 0.0 else _Fill(x / y)
        if isinstance(node, ast.Call) and call_name(node) == "broadcast_to" and \
                node.args:
            return self.fill_of(node.args[0])
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            return self.fill_of(node.value)  # any part of a filled array is filled
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                call_name(node) in _FILLED and not any(
                    k.arg == "fill_value" for k in node.keywords):
            return _Fill(_FILLED[call_name(node)])
        return None

    def fold(self, node: ast.expr, at: int) -> ast.expr:
        """Bottom-up rewrites of subexpressions whose facts settle them."""
        rw = self

        class Fold(ast.NodeTransformer):
            def visit_Call(self, n: ast.Call) -> ast.AST:
                new = self._visit_call(n)
                if not hasattr(new, "_k") and hasattr(n, "_k"):
                    new._k = n._k  # type: ignore[attr-defined]  # the same value
                return new

            def _visit_call(self, n: ast.Call) -> ast.AST:
                self.generic_visit(n)
                name = call_name(n)
                out = rw.fact(n)
                if name in ("size", "ndim", "shape") and len(n.args) == 1 and \
                        isinstance(n.func, ast.Attribute) and not n.keywords and \
                        rw.on("shapes"):
                    f = rw.fact(n.args[0])
                    if f is not None:
                        shape = f[0]
                        lit = {"size": math.prod(shape), "ndim": len(shape),
                               "shape": shape}[name]
                        return syntax.parse(repr(lit), mode="eval").body
                if name in ("rhs_columns", "matrix_transpose") and rw.on("shapes") and \
                        not n.keywords and out is not None:
                    spelled = spell_shaped(name, n.args, rw.fact)
                    if spelled is not None:
                        return spelled
                if name in _STEPS and rw.on("shapes") and (v := spell_numpy(n, rw.fact, rw.note)):
                    return v  # (the steps NumPy or SciPy take: a centred x is shared)
                if rw.on("shapes") and (v := literal_value(n, name, out, rw.fact)) is not None:
                    return v  # np.sqrt(16); a mean's count max(12, 1); a cast's isdtype
                if name in ("zeros_like", "ones_like") and len(n.args) == 1 and \
                        not n.keywords and out and out[0] and rw.on("shapes") and \
                        isinstance(n.func, ast.Attribute):
                    # the shape and dtype are known: the argument need not be computed
                    return syntax.parse(f"np.{name[:-5]}({out[0]!r}, dtype=np.{out[1].name})",
                                     mode="eval").body
                summed = _summed(n)
                if summed is not None and not n.keywords and rw.on("signs") and \
                        isinstance(summed, ast.UnaryOp) and isinstance(summed.op, ast.USub):
                    # -(sum of x) negates one number, not every element
                    if n.args:
                        n.args = [summed.operand]
                    else:
                        n.func.value = summed.operand  # type: ignore[attr-defined]
                    return ast.UnaryOp(ast.USub(), n)
                if name in ("matmul_rhs_bar", "matmul_lhs_bar") and len(n.args) == 3 and \
                        out and not n.keywords and rw.on("matmul"):
                    # (a node's own facts settle it: in a loop's body too)
                    g, x1, x2 = (rw.fact(a) for a in n.args)
                    if g and x1 and x2 and \
                            out[0] == (x2 if name == "matmul_rhs_bar" else x1)[0]:
                        # (a 0-d cotangent times a vector: where the dtypes differ, the
                        # helper's, as NumPy's promotion of a Python float may not be)
                        one = g[0] != () or g[1] == x1[1] == x2[1] == out[1]
                        found = _matmul_bar(name, len(g[0]), len(x1[0]), len(x2[0]), n.args,
                                            None if one else out[1])
                        if found is not None:
                            return found
                if name in ("unbroadcast", "broadcast_to") and len(n.args) == 2 and out \
                        and rw.on("fixups"):
                    inner = rw.fact(n.args[0])
                    if inner is not None and inner[0] == out[0] and inner[1] == out[1]:
                        return n.args[0]
                    if name == "unbroadcast" and inner is not None and same_kinds(inner, out):
                        summed = _sum_to(n.args[0], inner[0], out[0])
                        summed._k = n._k  # type: ignore[attr-defined]  # the same value
                        return self.visit_Call(summed) if isinstance(summed, ast.Call) \
                            else summed
                return n

            def visit_Subscript(self, n: ast.Subscript) -> ast.AST:
                # q_shape[1] of q_shape = (32, 16), bound once and never written into
                self.generic_visit(n)
                if isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name) and \
                        isinstance(n.slice, ast.Constant) and rw.on("shapes"):
                    return literal_item(rw.fn, rw.binds, rw.mutated, n.value.id,
                                        n.slice.value, at) or n
                return n

            def visit_BinOp(self, n: ast.BinOp) -> ast.AST:
                self.generic_visit(n)
                if rw.on("shapes") and (folded := python_arithmetic(n, rw.fact)) is not None:
                    return folded
                out = rw.fact(n)
                if out is None or not isinstance(n.op, (ast.Add, ast.Sub, ast.Mult,
                                                        ast.Div)):
                    return n
                # an operand broadcast to the result's shape: the operator broadcasts
                for side, other in (("left", n.right), ("right", n.left)):
                    if rw.in_loop or not rw.on("fixups"):
                        break
                    inner = rw.spread_of(getattr(n, side), at)
                    if inner is not None and rw.fact(other) == out:
                        setattr(n, side, copy.deepcopy(inner))
                return n

        return Fold().visit(node)

    def spread_of(self, node: ast.AST, at: int) -> ast.expr | None:
        """What ``node`` spreads over more elements: ``x`` of ``np.broadcast_to(x, s)``,
        and a scalar of ``np.expand_dims``/``np.reshape``/``np.atleast_*d`` (or of a
        name bound to one, while what it reads is not rebound). In an operation whose
        other operand has the result's shape and dtype, ``x`` itself gives the same
        elements and dtype: it has the spread's dtype (a Python number is weak)."""
        if isinstance(node, ast.Name):
            if node.id not in self.bcast:
                return None
            inner, defined = self.bcast[node.id]
            reads = {m.id for m in ast.walk(inner) if isinstance(m, ast.Name)}
            if any(defined < j < at for r in reads for j in self.binds.get(r, ())):
                return None
            return inner
        if not (isinstance(node, ast.Call) and node.args and isinstance(
                node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "np"):
            return None
        name, x = node.func.attr, node.args[0]
        if name == "broadcast_to" and len(node.args) == 2 and not node.keywords:
            deeper = self.spread_of(x, at)
            return x if deeper is None else deeper
        if name not in _SPREADS:
            return None
        deeper = self.spread_of(x, at)
        for candidate in (deeper, x):
            if candidate is not None and (self.number(candidate) is not None or (
                    scalar_of(candidate, self.fact) is not None)):
                return candidate
        return None

    def number(self, node: ast.AST) -> float | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
                not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.number(node.operand)
            return None if inner is None else -inner
        return None

    def rewrite_value(self, value: ast.expr) -> tuple[ast.expr, _Fill | None, bool]:
        """(new value, its fill if known, whether it is the operand itself)."""
        out = self.fact(value)
        whole = self.fill_of(value)
        if whole is not None and not isinstance(value, ast.Name):
            return value, whole, False
        if isinstance(value, ast.Call):
            name = call_name(value)
            args = value.args
            if name == "grad_seed" and out is not None and out[0] == () and self.on("fill"):
                dtype = out[1].name
                return (ast.Call(ast.Attribute(ast.Name("np", ast.Load()), dtype,
                                               ast.Load()), [ast.Constant(1.0)], []),
                        _Fill(1.0), False)
            if name in ("unbroadcast", "broadcast_to") and len(args) == 2 and out and \
                    self.on("fixups"):
                inner = as_kind(self.fact(args[0]), out)
                if inner is not None and inner[0] == out[0] and (inner[1] == out[1] or (
                        name == "unbroadcast" and same_kinds(inner, out))):  # shapes agree
                    return args[0], self.fill_of(args[0]), name == "unbroadcast"
                f = self.fill_of(args[0])
                if f is not None:
                    return value, _Fill(f.c), False
            if name in ("size", "ndim", "shape") and len(args) == 1 and \
                    isinstance(value.func, ast.Attribute) and self.on("shapes"):
                f = self.fact(args[0])
                if f is not None:
                    shape = f[0]
                    lit = {"size": math.prod(shape), "ndim": len(shape),
                           "shape": shape}[name]
                    return syntax.parse(repr(lit), mode="eval").body, None, False
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
            f = self.fill_of(value.operand)
            if f is not None:
                return value, _Fill(-f.c), False
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)) \
                and out is not None:
            left, right = value.left, value.right
            fl, fr = self.fill_of(left), self.fill_of(right)
            nl, nr = self.number(left), self.number(right)
            if isinstance(value.op, ast.Div):
                if fl is not None and nr not in (None, 0.0):
                    return value, _Fill(fl.c / nr), False
                if fl is not None and fr is not None and fr.c != 0.0:
                    return value, _Fill(fl.c / fr.c), False
                if fl is not None and as_kind(self.fact(right), out) == out:  # 1.0 / e
                    return ast.BinOp(_literal(fl.c), ast.Div(), right), None, False
                return value, None, False
            if fl is not None and fr is not None:
                return value, _Fill(fl.c * fr.c), False
            if fl is not None and nr is not None:
                return value, _Fill(fl.c * nr), False
            if fr is not None and nl is not None:
                return value, _Fill(fr.c * nl), False
            for f, other in ((fl, right), (fr, left)):
                if f is None:
                    continue
                of = as_kind(self.fact(other), out)  # (a Python number: not NumPy's)
                if of is not None and of == out:  # same shape and dtype as the product
                    if f.c == 1.0:
                        return other, self.fill_of(other), False
                    return ast.BinOp(_literal(f.c), ast.Mult(), other), None, False
        return value, None, False

    # ---- per statement ----

    def forget(self, names: set[str]) -> None:
        """What was known of names a loop rebinds no longer holds after (or in) it."""
        for table in (self.fill, self.alias, self.bcast):
            for n in names & set(table):
                del table[n]
        for key, holder in list(self.cse.items()):
            if holder in names or any(f"id='{n}'" in key for n in names):
                del self.cse[key]
        for n, (inner, _) in list(self.bcast.items()):
            if any(isinstance(m, ast.Name) and m.id in names for m in ast.walk(inner)):
                del self.bcast[n]

    def fold_loop(self, loop: ast.For, at: int) -> None:
        """In a loop body only the rewrites a node's own facts settle (each node had
        one shape and dtype in every iteration, or it has no fact)."""
        self.in_loop = True
        try:
            for stmt in ast.walk(loop):
                if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)):
                    stmt.value = self.fold(stmt.value, at)
        finally:
            self.in_loop = False

    def run(self) -> None:
        body: list[ast.stmt] = []
        for i, stmt in enumerate(self.fn.body):
            stmt = self.substitute(stmt)  # type: ignore[assignment]
            if isinstance(stmt, ast.For):
                inside = {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                          and isinstance(n.ctx, ast.Store)}
                self.forget(inside)
                self.fold_loop(stmt, i)
                body.append(stmt)
                continue
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name):
                target = stmt.targets[0].id
                self.alias.pop(target, None)
                self.fill.pop(target, None)
                self.bcast.pop(target, None)
                stmt.value = self.fold(stmt.value, i)
                for k in self.cse_held.pop(target, ()):
                    if self.cse.get(k) == target:
                        del self.cse[k]
                value, fill, identity = self.rewrite_value(stmt.value)
                if not hasattr(value, "_k") and hasattr(stmt.value, "_k"):
                    value._k = stmt.value._k  # type: ignore[attr-defined]  # same value
                base = value
                while isinstance(base, (ast.Subscript, ast.Attribute)):
                    base = base.value
                if not identity and value is not base or isinstance(value, ast.Name):
                    # the value is now another name's array (or a view of it) where the
                    # code made a new one: only while neither is ever written into
                    if not identity and isinstance(base, ast.Name) and (
                            target in self.mutated or base.id in self.mutated):
                        value, fill = stmt.value, None
                if fill is not None and target not in self.mutated:
                    self.fill[target] = fill
                spread = self.spread_of(value, i) if not isinstance(value, ast.Name) \
                    else None
                if spread is not None and target not in self.mutated:
                    self.bcast[target] = (spread, i)
                once = self.binds[target] == [i]  # (its statement is dropped)
                if once and isinstance(value, ast.Name) and self.on("copies") and \
                        self.last_bind.get(value.id, -1) < i and (
                        identity or (target not in self.mutated
                                     and value.id not in self.mutated)):
                    self.alias[target] = value  # later reads use the operand directly
                    continue
                if once and isinstance(value, ast.Constant) and type(value.value) is int \
                        and target not in self.mutated and self.on("shapes"):
                    self.alias[target] = value  # (a shape's item: q_shape_1 = 16)
                    continue
                if value is not stmt.value:
                    stmt = ast.copy_location(
                        ast.Assign([ast.Name(target, ast.Store())], value), stmt)
                pure = not any(isinstance(n, ast.Call) and call_name(n) in MUTATORS
                               for n in ast.walk(value))
                key = ast.dump(value)
                earlier = self.cse.get(key)
                if once and pure and earlier is not None and self.on("cse") and \
                        target not in self.mutated and \
                        earlier not in self.mutated and \
                        self.last_bind.get(earlier, -1) < i:
                    self.alias[target] = ast.Name(earlier, ast.Load())
                    continue
                if pure and target not in self.mutated and \
                        not isinstance(value, (ast.Name, ast.Constant)):
                    reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
                    # (not one reading a buffer written in place: `parts_bar.pop()`
                    # between two `parts_bar[-1]` makes them two values)
                    if all(self.last_bind.get(r, -1) < i for r in reads) and not (
                            reads & self.mutated):
                        self.cse[key] = target
                        self.cse_held[target].append(key)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
                    call_name(stmt.value) == "at" and len(stmt.value.args) == 3:
                buf, idx, v = stmt.value.args
                scalar = spread_value(buf, idx, v, self.spread_of(v, i), self.fact) \
                    if self.on("fixups") else None
                if scalar is not None:  # add.at spreads a scalar itself
                    stmt.value.args[2] = v = scalar
                f = self.fact(idx)
                if f is not None and f[0] == () and np.issubdtype(f[1], np.integer) and \
                        self.on("addat"):
                    stmt = ast.copy_location(ast.AugAssign(
                        ast.Subscript(buf, idx, ast.Store()), ast.Add(), v), stmt)
            body.append(stmt)
        self.fn.body = body


# ---- entry ------------------------------------------------------------------------------


def specialize(text: str, namespace: dict[str, Any], name: str,
               args: tuple, guarded: set[str] | frozenset = frozenset()
               ) -> tuple[Any, str | None]:
    """Run ``name`` of the emitted module ``text`` on ``args`` once, instrumented, and
    return (its result, the specialized module text, formatted, or None where the code
    is not eligible: then the result is None too, and the caller runs the code).

    Only facts every call with the same signature would record are used
    (s2s/optimize/signature_facts.py); ``guarded``: the free names whose objects, and arrays'
    shapes and dtypes, the caller checks before it runs the specialized code."""
    module = syntax.parse(text)
    size = sum(isinstance(node, ast.stmt) for node in ast.walk(module))
    if size > MAX_STATEMENTS or not eligible(module):
        return None, None
    e_graphs = size <= MAX_EGRAPH_STATEMENTS
    off = passes_off()

    def on(name: str) -> bool:
        return name not in off

    result, observed = probe_run(module, namespace, name, args)
    facts = signature_facts(module, observed, name, args, namespace, set(guarded))
    taken = names_in(module) | set(namespace)
    constants: list[ast.stmt] = []
    for fn in module.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        if on("fixups"):
            real_parts(fn, lambda node: _known(facts, node), facts)
            real_conjugates(fn, lambda node: _known(facts, node))
        rewriter = _Rewriter(fn, facts, off)
        rewriter.run()
        if on("ties"):
            tie_shares(fn, rewriter.fact)
        if on("solves"):
            symmetric_transposes(fn, rewriter.fact)
        zero = zero_cotangents(fn, rewriter.fact, rewriter.mutated) \
            if on("zero") and e_graphs else set()
        if zero:
            drop_zero_cotangents(fn, zero, rewriter.fact, rewriter.mutated)
        if on("tapes"):
            trim_tapes(fn)
        if on("dce"):
            dead_code(fn)
        if on("egraph"):
            inline_single_uses(fn, lambda node: True)
        if on("signs"):
            cancel_negations(fn, rewriter.fact)
        if on("accumulate"):
            row_sums(fn, rewriter.fact)
            accumulate(fn, rewriter.fact)
            whole_views(fn, rewriter.fact)
        if on("methods"):
            methods(fn, rewriter.fact)
        if on("egraph"):  # (scales.py; complements.py: a value less its share e / (1 + e))
            for step in (lift_scales, divisors_out_of_sums, complements):
                step(fn, rewriter.fact)
        if on("subexpr"):  # (before the e-graph, which would fold 2 * t's constant out)
            read_held_values(fn, fact=rewriter.fact)
        if on("egraph") and e_graphs:
            egraph_simplify(fn, rewriter.fact)
        if on("fixups") and softmax_of_logsumexp(fn, rewriter.fact) and on("dce"):
            dead_code(fn)  # (the log-sum-exp the softmax replaced)
        if on("subexpr"):
            share_subexpressions(fn, fact=rewriter.fact)
        if on("solves"):
            shared_factorizations(fn, rewriter.fact, rewriter.note)
            if on("subexpr"):  # (an inverse's identity beside the code's own np.eye)
                share_subexpressions(fn, fact=rewriter.fact)
        if on("literals"):
            spell_literals(fn, rewriter.fact)
        if on("ties"):  # (last: no pass reads the product before its masked write)
            split_shares(fn, rewriter.fact)
        if on("products"):  # (after every pass that reads a sum's spelling)
            constants += sums_as_products(fn, rewriter.fact, taken, narrow_floats(args))
        constants += last_spellings(fn, rewriter.fact, taken, narrow_floats(args), on)
        if on("buffers"):  # (last: the other passes read whole expressions)
            reuse_intermediates(fn, rewriter.fact, taken)
        if on("products"):  # (last: a @ b, which the passes above read, as a.dot(b))
            products_as_dots(fn, rewriter.fact, module, namespace, constants)
    if constants:  # (the vectors of ones, bound once above the functions)
        at = next(i for i, node in enumerate(module.body)
                  if isinstance(node, ast.FunctionDef))
        module.body[at:at] = constants
    return result, format_module(_with_comments(text, module))


def _emit_body(body: list[ast.stmt], prev: int, lines: list[str], out: list[str],
               pad: str) -> None:
    """Statements with the original comments that stood between the last statement
    kept and each one (loop bodies recursively)."""
    for stmt in body:
        lineno = getattr(stmt, "lineno", None)
        if lineno is not None:
            # the user line quoted last above this statement (earlier quotes whose
            # statements were dropped or folded into others say nothing here)
            quoted = [ln.strip() for ln in lines[prev:lineno - 1]
                      if ln.strip().startswith("#")]
            out += [pad + q for q in quoted[-1:]]
            prev = lineno
        if isinstance(stmt, ast.For) and not stmt.orelse:
            out.append(pad + ast.unparse(stmt).splitlines()[0])
            _emit_body(stmt.body, prev, lines, out, pad + "    ")
            prev = getattr(stmt, "end_lineno", prev) or prev
            continue
        prev = getattr(stmt, "end_lineno", prev) or prev
        out += [pad + ln for ln in ast.unparse(stmt).splitlines()]


def _with_comments(original: str, module: ast.Module) -> str:
    """Unparse the module, keeping the original's comment lines above the statements
    that survived (a dropped statement's comments go to the next one kept)."""
    lines = original.splitlines()
    out: list[str] = []
    after_imports = False
    for node in module.body:
        if not isinstance(node, ast.FunctionDef):
            imports = isinstance(node, (ast.Import, ast.ImportFrom))
            if after_imports and not imports:
                out.append("")  # (black's blank line after the imports)
            after_imports = imports
            out.append(ast.unparse(node))
            continue
        out.append(f"\n\ndef {node.name}({ast.unparse(node.args)}):")
        _emit_body(node.body, node.lineno, lines, out, "    ")
    return "\n".join(out) + "\n"
