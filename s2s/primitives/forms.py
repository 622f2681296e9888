"""Calls that are other primitives' in other words (``registry.FORMS``): rewritten
where s2s reads the call, so their derivatives, batching and emitted code are those of
the primitives they become.

* ``np.linalg.svd(a, compute_uv=False)`` is ``np.linalg.svdvals(a)``;
* ``np.row_stack`` is ``np.vstack`` (NumPy 2 deprecates the alias: s2s warns as NumPy
  does, where it reads the call; registered only while NumPy has it);
* the ufunc methods ``np.add.reduce``, ``np.multiply.reduce``, ``np.maximum.reduce``,
  ``np.minimum.reduce`` are ``np.sum``, ``np.prod``, ``np.max``, ``np.min`` with
  ``axis=0`` unless given, and ``np.add.accumulate`` / ``np.multiply.accumulate`` are
  ``np.cumsum`` / ``np.cumprod`` along ``axis=0``; ``np.multiply.outer(a, b)`` is
  ``np.tensordot(a, b, axes=0)`` (``np.add.outer``, ``np.subtract.outer``: with ones);
* ``np.select(condlist, choicelist, default)`` is a chain of ``np.where``, the last
  condition innermost (so the first that holds wins, as NumPy's);
* ``np.block`` of nested lists is ``np.concatenate`` along the last axes (innermost
  lists along -1), each block made at least as deep as the nesting first (axes of
  length 1 in front, ``atleast_nd``, from three levels on);
* ``np.polyfit(x, y, deg)`` is NumPy's least squares in other words: the columns of
  ``np.vander(x, deg + 1)`` scaled to unit norm, ``np.linalg.pinv`` of them (the
  least-squares solution of a full-rank system, as ``lstsq``'s), the scale divided
  back out (``deg`` written as an int; no ``w=``, ``full=``, ``cov=``).
"""

import inspect
import warnings

import numpy as np

from ..ir.nodes import Const
from .registry import Refused, Result, _parse_signature, defform


def _bind(sig: str, what: str, args: list, kwargs: dict) -> dict:
    """The call's arguments by parameter name (defaults filled in as constants)."""
    signature = _parse_signature(sig)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise Refused(f"called with arguments s2s does not support: {exc}",
                      f"call it as {what}{sig}") from None
    out = {}
    for name, p in signature.parameters.items():
        if name in bound.arguments:
            out[name] = bound.arguments[name]
        elif p.default is not inspect.Parameter.empty:
            out[name] = Const(p.default, repr(p.default))
    return out


def _constant(atom, name: str, allowed: tuple) -> object:
    """A parameter's value known now, one of ``allowed``."""
    value = atom.value if isinstance(atom, Const) else None
    if not isinstance(atom, Const) or type(value) not in {type(v) for v in allowed} or \
            value not in allowed:
        raise Refused(f"`{name}=` must be written as one of {', '.join(map(repr, allowed))}",
                      f"pass {name}={allowed[0]!r} (the derivative rules read it when s2s "
                      "transforms the function)")
    return atom.value


# ---- np.linalg.svd's singular values -----------------------------------------------------


def _svd(args, kwargs, items):
    p = _bind("(a, full_matrices=True, compute_uv=True, hermitian=False)",
              "np.linalg.svd", args, kwargs)
    _constant(p["hermitian"], "hermitian", (False,))
    if not _constant(p["compute_uv"], "compute_uv", (True, False)):
        return [("linalg.svdvals", [p["a"]], {})]
    # np.linalg.svd's own primitive, spelled as the call spelled it (less these two)
    kept = {k: v for k, v in kwargs.items() if k not in ("compute_uv", "hermitian")}
    return [("linalg.svd", list(args[:2]), kept)]


defform(np.linalg.svd, "linalg.svd", _svd,
        "compute_uv=False is np.linalg.svdvals (the singular values alone); "
        "hermitian=False only")

# ---- np.row_stack -------------------------------------------------------------------------


def _row_stack(args, kwargs, items):
    p = _bind("(tup)", "np.row_stack", args, kwargs)
    # NumPy's own warning, where s2s reads the call (the emitted code calls np.vstack)
    warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                  DeprecationWarning, stacklevel=2)
    return [("vstack", [p["tup"]], {})]


if hasattr(np, "row_stack"):  # NumPy 2 deprecates it: gone in a later NumPy
    defform(np.row_stack, "row_stack", _row_stack,
            "np.vstack (NumPy 2 deprecates the alias: a DeprecationWarning, as NumPy's)")

# ---- ufunc methods ------------------------------------------------------------------------

_NOT_SUPPORTED = {"dtype": None, "out": None, "where": True}


def _ufunc_method(spelled: str, prim: str, reduce: bool):
    sig = ("(array, axis=0, dtype=None, out=None, keepdims=False, where=True)" if reduce
           else "(array, axis=0, dtype=None, out=None)")

    def rewrite(args, kwargs, items):
        p = _bind(sig, spelled, args, kwargs)
        for name, default in _NOT_SUPPORTED.items():
            if name in p:
                _constant(p[name], name, (default,))
        params = {"axis": p["axis"]}
        keep = p.get("keepdims")
        if keep is not None and not (isinstance(keep, Const) and keep.value is False):
            params["keepdims"] = keep  # (as written; left out where False)
        return [(prim, [p["array"]], params)]

    return rewrite


for _ufunc, _method, _prim in (
    (np.add, "reduce", "sum"), (np.multiply, "reduce", "prod"),
    (np.maximum, "reduce", "max"), (np.minimum, "reduce", "min"),
    (np.add, "accumulate", "cumsum"), (np.multiply, "accumulate", "cumprod"),
):
    _spelled = f"np.{_ufunc.__name__}.{_method}"
    defform(getattr(_ufunc, _method), f"{_ufunc.__name__}.{_method}",
            _ufunc_method(_spelled, _prim, _method == "reduce"),
            f"np.{_prim} along axis=0 unless given (no dtype, out, initial or where)")



def _outer(ufunc: str):
    """``np.multiply.outer(a, b)``: ``np.tensordot(a, b, axes=0)``, every element of
    ``a`` times every one of ``b`` (shape ``a.shape + b.shape``, any ranks);
    ``np.add.outer`` and ``np.subtract.outer``: the tensordots of each with the other's
    ones added or subtracted (times 1 is exact: NumPy's numbers, inf and NaN too)."""
    spelled = f"np.{ufunc}.outer"

    def rewrite(args, kwargs, items):
        p = _bind("(a, b)", spelled, args, kwargs)
        a, b = p["a"], p["b"]
        zero = {"axes": Const(0, "0")}
        if ufunc == "multiply":
            return [("tensordot", [a, b], zero)]
        return [("ones_like", [b], {}), ("ones_like", [a], {}),
                ("tensordot", [a, Result(0)], zero), ("tensordot", [Result(1), b], zero),
                (ufunc, [Result(2), Result(3)], {})]

    return rewrite


for _ufunc in ("add", "subtract", "multiply"):
    defform(getattr(np, _ufunc).outer, f"{_ufunc}.outer", _outer(_ufunc),
            "np.tensordot(a, b, axes=0) (add, subtract: of each with the other's ones)")

# ---- np.select ----------------------------------------------------------------------------


def _listed(atom, items, name: str, what: str) -> list:
    found = items(atom)
    if found is None:
        raise Refused(f"`{name}` must be a list or tuple written in the function "
                      f"({what})", f"build it in the call: {name}=[...]")
    return found


def _select(args, kwargs, items):
    p = _bind("(condlist, choicelist, default=0)", "np.select", args, kwargs)
    conds = _listed(p["condlist"], items, "condlist", "of boolean arrays")
    choices = _listed(p["choicelist"], items, "choicelist", "of arrays")
    if len(conds) != len(choices) or not conds:
        raise Refused("condlist and choicelist must have the same (nonzero) length",
                      "give one choice per condition")
    steps = [("where", [conds[-1], choices[-1], p["default"]], {})]
    for c, x in zip(conds[-2::-1], choices[-2::-1]):
        steps.append(("where", [c, x, Result(len(steps) - 1)], {}))
    return steps


defform(np.select, "select", _select,
        "a chain of np.where, the first condition that holds choosing (condlist and "
        "choicelist lists written in the function)")

# ---- np.block ------------------------------------------------------------------------------


def _block(args, kwargs, items):
    p = _bind("(arrays)", "np.block", args, kwargs)

    def depth(atom) -> int:
        inner = items(atom)
        if inner is None:
            return 0
        if not inner:
            raise Refused("an empty list of blocks", "leave the empty list out")
        depths = {depth(a) for a in inner}
        if len(depths) != 1:
            raise Refused("its lists nest to different depths (NumPy refuses them too)",
                          "nest every block equally deep")
        return 1 + depths.pop()

    levels = depth(p["arrays"])
    if levels == 0:
        raise Refused("its argument must be a list of blocks written in the function",
                      "np.block([[a, b], [c, d]])")
    steps: list = []

    def joined(atom, level: int) -> Result:
        inner = items(atom)
        if level == levels and levels > 2:  # (axes in front: not np.atleast_3d's places)
            steps.append(("atleast_nd", [atom, Const(levels, str(levels))], {}))
            return Result(len(steps) - 1)
        if level == levels:
            steps.append((f"atleast_{levels}d", [atom], {}))
            return Result(len(steps) - 1)
        parts = [joined(a, level + 1) for a in inner]
        steps.append(("make_list", parts, {}))
        axis = level - levels
        steps.append(("concatenate", [Result(len(steps) - 1)], {"axis": Const(axis, str(axis))}))
        return Result(len(steps) - 1)

    joined(p["arrays"], 0)
    return steps


defform(np.block, "block", _block,
        "np.concatenate along the last axes (innermost lists along -1) of the blocks "
        "made at least 1-D (2-D for two levels, n-D with axes in front for n levels)")

# ---- np.polyfit ------------------------------------------------------------------------------


def _polyfit(args, kwargs, items):
    p = _bind("(x, y, deg, rcond=None, full=False, w=None, cov=False)", "np.polyfit",
              args, kwargs)
    deg = p["deg"].value if isinstance(p["deg"], Const) else None
    if type(deg) is not int or deg < 0:
        raise Refused("`deg` must be written as a non-negative int",
                      "np.polyfit(x, y, 1) (the degree fixes the shapes s2s works with)")
    for name, default in (("rcond", None), ("full", False), ("w", None), ("cov", False)):
        if not (isinstance(p[name], Const) and p[name].value is default):
            raise Refused(f"`{name}=` is not supported", f"leave `{name}=` out")
    steps: list = []

    def step(name, *a) -> Result:
        steps.append((name, list(a), {}))
        return Result(len(steps) - 1)

    # NumPy: lhs = vander(x, deg + 1) with unit-norm columns, lstsq, then c / scale
    lhs = step("vander", p["x"], Const(deg + 1, str(deg + 1)))
    scale = step("sqrt", step("sum", step("multiply", lhs, lhs), Const(0, "0")))
    solve = step("linalg.pinv", step("divide", lhs, scale))
    solve = step("divide", solve, step("expand_dims", scale, Const(1, "1")))
    step("matmul", solve, p["y"])
    return steps


defform(np.polyfit, "polyfit", _polyfit,
        "least squares as NumPy's: np.linalg.pinv of np.vander(x, deg + 1) with unit-norm "
        "columns, the scale divided back out (x's points distinct: full rank; deg an "
        "int; no w=, full=, cov=)")
