"""``mean``, ``var``, ``std`` and ``entropy`` of the ``scipy.stats`` distributions that
have pdf rules (``norm.entropy(loc, scale)``, ``d.var()`` of ``d = gamma(a)``): forms,
each the closed formula in the distribution's parameters written as the primitives
it calls (``add``, ``log``, ``scipy.special.digamma``, ...), so every derivative is
the formula's own, exact.

The formulas are below as text (a small arithmetic over the parameters, ``log``,
``sqrt``, ``gammaln``, ``digamma``, ``betaln``, ``where`` and comparisons, with
``pi`` and ``e``); each is NaN outside the parameters' domain (``scale > 0``, a
shape ``> 0``, ``mu >= 0``), as SciPy's.  poisson's entropy has no closed form
(SciPy sums the pmf): it is refused.
"""

from __future__ import annotations

import ast
import inspect
import math

import numpy as np

from .. import syntax
from ..ir.nodes import Const
from .registry import FROZEN_FORMS, Refused, Result, defform

_LOC_SCALE = {
    "norm": ("loc", "scale ** 2", "scale", "0.5 * log(2 * pi * e) + log(scale)"),
    "laplace": ("loc", "2 * scale ** 2", "sqrt(2) * scale", "1 + log(2 * scale)"),
    "logistic": ("loc", "pi ** 2 / 3 * scale ** 2", "pi / sqrt(3) * scale",
                 "2 + log(scale)"),
    "cauchy": ("nan + 0 * loc", "nan + 0 * scale", "nan + 0 * scale",
               "log(4 * pi * scale)"),
    "expon": ("loc + scale", "scale ** 2", "scale", "1 + log(scale)"),
    "t": ("where(df > 1, loc, inf)",
          "where(df > 2, scale ** 2 * df / (df - 2), where(df > 1, inf, nan))",
          "where(df > 2, scale * sqrt(df / (df - 2)), where(df > 1, inf, nan))",
          "(df + 1) / 2 * (digamma((df + 1) / 2) - digamma(df / 2))"
          " + log(sqrt(df)) + betaln(df / 2, 0.5) + log(scale)"),
    "gamma": ("loc + a * scale", "a * scale ** 2", "sqrt(a) * scale",
              "a + gammaln(a) + (1 - a) * digamma(a) + log(scale)"),
    "chi2": ("loc + df * scale", "2 * df * scale ** 2", "sqrt(2 * df) * scale",
             "df / 2 + log(2) + gammaln(df / 2) + (1 - df / 2) * digamma(df / 2)"
             " + log(scale)"),
    "beta": ("loc + scale * a / (a + b)",
             "scale ** 2 * a * b / ((a + b) ** 2 * (a + b + 1))",
             "scale * sqrt(a * b / (a + b + 1)) / (a + b)",
             "betaln(a, b) - (a - 1) * digamma(a) - (b - 1) * digamma(b)"
             " + (a + b - 2) * digamma(a + b) + log(scale)"),
    "poisson": ("mu + loc", "mu + 0 * loc", "sqrt(mu) + 0 * loc", None),
}
# where the parameters are valid (NaN elsewhere, as SciPy's)
_VALID = {"scale": "scale > 0", "a": "a > 0", "b": "b > 0", "df": "df > 0",
          "mu": "mu >= 0"}
_CALLS = {"log": "log", "sqrt": "sqrt", "gammaln": "scipy.special.gammaln",
          "digamma": "scipy.special.digamma", "betaln": "scipy.special.betaln",
          "where": "where"}
_OPS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
        ast.Pow: "power", ast.Gt: "greater", ast.GtE: "greater_equal"}
_ARITHMETIC = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
               ast.Div: np.divide, ast.Pow: np.power}
_NUMBERS = {"pi": math.pi, "e": math.e, "nan": math.nan, "inf": math.inf}


def _steps(formula: str, atoms: dict) -> list:
    """The primitives' steps computing ``formula`` from ``atoms`` (a parameter's atom
    by its name); constant parts folded."""
    steps: list = []

    def const(v: float) -> Const:
        return Const(v, repr(v))

    def step(prim: str, args: list) -> Result:
        steps.append((prim, args, {}))
        return Result(len(steps) - 1)

    def fold(node: ast.AST):
        if isinstance(node, ast.Constant):
            return const(float(node.value))
        if isinstance(node, ast.Name):
            return const(_NUMBERS[node.id]) if node.id in _NUMBERS else atoms[node.id]
        if isinstance(node, ast.UnaryOp):
            inner = fold(node.operand)
            return const(-inner.value) if isinstance(inner, Const) else step(
                "negative", [inner])
        if isinstance(node, (ast.BinOp, ast.Compare)):
            left = fold(node.left)
            right = fold(node.right if isinstance(node, ast.BinOp) else node.comparators[0])
            op = type(node.op if isinstance(node, ast.BinOp) else node.ops[0])
            if isinstance(left, Const) and isinstance(right, Const) and op in (
                    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow):
                with np.errstate(all="ignore"):  # (NumPy's arithmetic: 1 / 0 is inf)
                    return const(float(_ARITHMETIC[op](np.float64(left.value),
                                                       np.float64(right.value))))
            return step(_OPS[op], [left, right])
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        args = [fold(a) for a in node.args]
        if node.func.id in ("log", "sqrt") and isinstance(args[0], Const):
            with np.errstate(all="ignore"):
                return const(float(getattr(np, node.func.id)(np.float64(args[0].value))))
        return step(_CALLS[node.func.id], args)

    value = fold(syntax.parse(formula, mode="eval").body)
    valid = [fold(syntax.parse(_VALID[p], mode="eval").body) for p in atoms if p in _VALID]
    for cond in valid:  # (each broadcasts the value to the parameters' shape, too)
        value = step("where", [cond, value, const(math.nan)])
    if not steps:  # (a parameter itself: a copy, as SciPy returns one)
        step("add", [value, const(0.0)])
    return steps


def _form(dist: str, method: str, formula: str | None, params: list):
    def rewrite(args, kwargs, items):
        if formula is None:
            raise Refused(f"{dist}'s {method} has no closed form (SciPy sums it)",
                          "compute it from the pmf in the function")
        try:
            bound = inspect.Signature(params).bind(*args, **kwargs)
        except TypeError as exc:
            raise Refused(f"called with arguments s2s does not read: {exc}",
                          f"call {dist}.{method}({', '.join(p.name for p in params)})"
                          ) from None
        atoms = {p.name: bound.arguments[p.name] if p.name in bound.arguments else
                 Const(p.default, repr(p.default)) for p in params}
        return _steps(formula, atoms)
    return rewrite


MOMENTS = ("mean", "var", "std", "entropy")


def register(st, frozen_params) -> None:
    """Register the forms (``frozen_params(dist)``: the parameters a method of the
    distribution takes after its first)."""
    for dist, formulas in _LOC_SCALE.items():
        params = frozen_params(dist)
        obj = getattr(st, dist)
        for method, formula in zip(MOMENTS, formulas):
            defform(getattr(obj, method), f"scipy.stats.{dist}.{method}",
                    _form(dist, method, formula, params),
                    f"{dist}'s {method}, its closed formula as primitives")
        assert FROZEN_FORMS[dist] == id(obj)
