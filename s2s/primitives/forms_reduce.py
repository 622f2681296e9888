"""Keywords of reductions and of ``np.diff`` that are other primitives in other words
(``registry.FORMS``, as in ``forms.py``): a call without them passes on unchanged.

* ``np.sum`` / ``np.prod`` / ``np.max`` / ``np.min`` / ``np.mean`` with ``dtype=``,
  ``where=``, ``initial=``, as JAX computes them: the array cast to ``dtype`` first,
  the elements ``where`` leaves out replaced by the operation's identity (0, 1, -inf,
  inf: constants, so no derivative reaches them), the reduction, then ``initial``
  combined with the result (``initial + r``, ``initial * r``, ``np.maximum(initial,
  r)``: a tie shares evenly, as JAX's max).  ``np.mean(a, where=m)`` divides the masked
  sum by the number of elements ``m`` keeps.  ``np.max``/``np.min`` with ``where=`` need
  ``initial=`` (NumPy and JAX refuse it without);
* ``np.diff(a, n, axis, prepend=p, append=q)`` is ``np.diff`` of ``np.concatenate([p,
  a, q], axis)``, a scalar ``p`` (``q``) first broadcast to ``a``'s shape with length 1
  along ``axis`` (as NumPy does: ``np.zeros_like(np.sum(a, axis, keepdims=True)) +
  np.array(p)``, so the result's dtype is NumPy's);
* ``np.float32(x)`` / ``np.float16(x)`` are ``np.asarray(x, dtype=...)``: a cast (its
  rules pass the derivative, cast back), a 0-d array of a scalar;
* ``np.cumsum`` / ``np.cumprod`` with ``dtype=``: the array cast to ``dtype``, then
  the cumulative operation (as JAX);
* ``np.cov(m, fweights=f, aweights=a)`` as NumPy computes it: ``w = f * a`` (each cast
  to float64), the weighted row means, ``xc @ (xc * w).T.conj() / fact`` with
  ``fact = sum(w) - ddof * sum(w * a) / sum(w)`` (``sum(w) - ddof`` without ``a``,
  ``sum(w)`` for ``ddof=0``), 0 where that is not positive (NumPy's warning left out);
  the weights checked first as NumPy checks them (``cov_weights``: a negative one
  raises ValueError).
  A call without weights is the ``cov`` primitive's.
"""

import math

import numpy as np

from ..ir.nodes import Const
from .forms import _bind, _constant
from .registry import Refused, Result, defform


def _given(p: dict, name: str, default=None) -> bool:
    atom = p.get(name)
    return atom is not None and not (isinstance(atom, Const) and atom.value is default
                                     and type(atom.value) is type(default))


def _axis_keep(p: dict) -> dict:
    """The reduction's own keywords, as written (left out where default)."""
    out = {}
    if _given(p, "axis"):
        out["axis"] = p["axis"]
    if _given(p, "keepdims", False):
        out["keepdims"] = p["keepdims"]
    return out


# ---- reductions ----------------------------------------------------------------------

# name: (NumPy's signature, where's identity, initial's combining primitive)
_REDUCTIONS = {
    "sum": ("(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True)",
            Const(0, "0"), "add"),
    "prod": ("(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True)",
             Const(1, "1"), "multiply"),
    "max": ("(a, axis=None, out=None, keepdims=False, initial=None, where=True)",
            Const(-math.inf, "-np.inf"), "maximum"),
    "min": ("(a, axis=None, out=None, keepdims=False, initial=None, where=True)",
            Const(math.inf, "np.inf"), "minimum"),
    "mean": ("(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True)",
             Const(0, "0"), None),
}
_PLAIN = {"a", "axis", "keepdims"}  # the keywords the primitive itself reads


def _reduction(prim: str):
    sig, identity, combine = _REDUCTIONS[prim]
    spelled = f"np.{prim}"

    def rewrite(args, kwargs, items):
        p = _bind(sig, spelled, args, kwargs)
        _constant(p["out"], "out", (None,))
        masked = _given(p, "where", True)
        if len(args) <= 2 and not masked and not any(
                _given(p, k) for k in ("dtype", "initial")):
            plain = {k: v for k, v in kwargs.items() if k in _PLAIN}
            return [(prim, list(args), plain)]  # (as written: no keyword of these)
        if masked and prim in ("max", "min") and not _given(p, "initial"):
            raise Refused(f"`where=` needs `initial=` here: {prim}imum has no identity "
                          "(NumPy and JAX refuse it too)",
                          f"give the value of an output no element reaches: {spelled}"
                          f"(x, where=mask, initial={'-' if prim == 'max' else ''}np.inf)")
        steps: list = []
        src = p["a"]
        if _given(p, "dtype"):
            steps.append(("astype", [src], {"dtype": p["dtype"]}))
            src = Result(len(steps) - 1)
        if masked:
            steps.append(("where", [p["where"], src, identity], {}))
            kept = Result(len(steps) - 1)
        else:
            kept = src
        inner = _axis_keep(p)
        if prim in ("max", "min") and isinstance(p["initial"], Const) and isinstance(
                p["initial"].value, float):
            # JAX's reduction starts from the identity (-inf for max), so a size-0 axis
            # gives it, then `initial`; NumPy's own reduction of none raises.  (A float
            # `initial` only: an int array takes no inf, and NumPy's int `initial=0`
            # says nothing of the array's dtype.)
            inner["initial"] = identity
        steps.append(("sum" if prim == "mean" else prim, [kept], inner))
        if prim == "mean":
            total = Result(len(steps) - 1)
            if masked:  # the count of the elements the mask keeps, in the array's dtype
                steps.append(("ones_like", [src], {}))
                steps.append(("where", [p["where"], Result(len(steps) - 1), Const(0, "0")],
                              {}))
                steps.append(("sum", [Result(len(steps) - 1)], _axis_keep(p)))
                steps.append(("divide", [total, Result(len(steps) - 1)], {}))
            else:
                steps[-1] = ("mean", [kept], _axis_keep(p))
        if _given(p, "initial"):
            steps.append((combine, [p["initial"], Result(len(steps) - 1)], {}))
        return steps

    return rewrite


for _prim in _REDUCTIONS:
    _fn = getattr(np, _prim)
    _note = ("dtype=, where= and initial= as JAX: cast, identity where masked, "
             "reduce, then combined with initial" if _prim != "mean" else
             "dtype= and where= as JAX: the masked sum over the count of kept elements")
    defform(_fn, _prim, _reduction(_prim), _note)
    for _alias in ({"max": (np.amax,), "min": (np.amin,)}.get(_prim, ())):
        defform(_alias, _alias.__name__, _reduction(_prim), _note)


# ---- cumulative operations' dtype= ---------------------------------------------------


def _cumulative(prim: str):
    spelled = f"np.{prim}"

    def rewrite(args, kwargs, items):
        p = _bind("(a, axis=None, dtype=None, out=None)", spelled, args, kwargs)
        _constant(p["out"], "out", (None,))
        if not _given(p, "dtype"):
            return [(prim, list(args), {k: v for k, v in kwargs.items() if k != "out"})]
        inner = {"axis": p["axis"]} if _given(p, "axis") else {}
        return [("astype", [p["a"]], {"dtype": p["dtype"]}),
                (prim, [Result(0)], inner)]

    return rewrite


for _prim in ("cumsum", "cumprod"):
    defform(getattr(np, _prim), _prim, _cumulative(_prim),
            "dtype= as JAX: the array cast to dtype, then the cumulative operation")


# ---- np.diff's prepend and append ------------------------------------------------------


def _diff(args, kwargs, items):
    p = _bind("(a, n=1, axis=-1, prepend=None, append=None)", "np.diff", args, kwargs)
    if not (_given(p, "prepend") or _given(p, "append")):
        return [("diff", list(args), dict(kwargs))]
    axis = p["axis"]
    steps: list = [("sum", [p["a"]], {"axis": axis, "keepdims": Const(True, "True")}),
                   ("zeros_like", [Result(0)], {})]
    parts = []
    for name in ("prepend", "append"):
        if not _given(p, name):
            parts.append(None)
            continue
        edge = p[name]
        if isinstance(edge, Const):
            if not (isinstance(edge.value, (int, float, np.number)) or isinstance(
                    edge.value, (list, tuple)) and all(isinstance(v, (int, float))
                                                       for v in edge.value)):
                raise Refused(f"`{name}=` must be a number, a list of numbers or an "
                              "array", f"pass {name}=0.0, or an array the function computes")
            steps.append(("array", [edge], {}))
            edge = Result(len(steps) - 1)
        steps.append(("add", [Result(1), edge], {}))  # (a scalar broadcast as NumPy's)
        parts.append(Result(len(steps) - 1))
    joined = [x for x in (parts[0], p["a"], parts[1]) if x is not None]
    steps.append(("make_list", joined, {}))
    steps.append(("concatenate", [Result(len(steps) - 1)], {"axis": axis}))
    steps.append(("diff", [Result(len(steps) - 1)], {"n": p["n"], "axis": axis}))
    return steps


defform(np.diff, "diff", _diff,
        "prepend=/append= are np.diff of np.concatenate([prepend, a, append], axis), a "
        "scalar broadcast to a's shape with length 1 along axis (as NumPy's)")


# ---- np.float32(x), np.float16(x): casts ------------------------------------------------


def _scalar_cast(dtype):
    spelled = f"np.{dtype.__name__}"

    def rewrite(args, kwargs, items):
        p = _bind("(x)", spelled, args, kwargs)
        return [("asarray", [p["x"]], {"dtype": Const(dtype, spelled)})]

    return rewrite


for _dtype in (np.float32, np.float16):
    defform(_dtype, _dtype.__name__, _scalar_cast(_dtype),
            f"np.asarray(x, dtype=np.{_dtype.__name__}): a cast (a 0-d array of a scalar)")


# ---- np.cov with fweights= / aweights= ---------------------------------------------------

_COV = "(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, " \
    "dtype=None)"


def _cov(args, kwargs, items):
    p = _bind(_COV, "np.cov", args, kwargs)
    fw, aw = _given(p, "fweights"), _given(p, "aweights")
    if not (fw or aw):
        return [("cov", list(args), kwargs)]  # (the primitive refuses y= and dtype=)
    for name in ("y", "dtype"):
        if _given(p, name):
            raise Refused(f"`{name}=` together with weights is not supported",
                          f"leave `{name}=` out (stack y's rows into m first)")
    rowvar = _constant(p["rowvar"], "rowvar", (True, False))
    bias = _constant(p["bias"], "bias", (False, True))
    ddof = p["ddof"].value if isinstance(p["ddof"], Const) else "?"
    if ddof is not None and (type(ddof) is not int or ddof < 0):
        raise Refused("`ddof=` must be written as a non-negative int (or left out)",
                      "pass ddof=1 (the derivative rules read it when s2s transforms "
                      "the function)")
    ddof = (0 if bias else 1) if ddof is None else ddof
    steps: list = []

    def step(name, *a, **k) -> Result:
        steps.append((name, list(a), k))
        return Result(len(steps) - 1)

    def c(v):
        return Const(v, repr(v))

    f64 = Const(np.float64, "np.float64")
    # the variables as rows (NumPy transposes a 2-D m for rowvar=False, not a 1-D one)
    x = step("atleast_2d", p["m"] if rowvar else step("transpose", p["m"]))
    # (a list too; checked as NumPy checks them: a negative weight raises ValueError)
    a = step("cov_weights", step("asarray", p["aweights"], dtype=f64), c("aweights")) \
        if aw else None
    w = step("cov_weights", step("asarray", p["fweights"], dtype=f64), c("fweights")) \
        if fw else a
    if fw and aw:
        w = step("multiply", w, a)
    w_sum = step("sum", w)
    avg = step("divide", step("sum", step("multiply", x, w), axis=c(1)), w_sum)
    xc = step("subtract", x, step("expand_dims", avg, c(1)))
    x_t = step("conjugate", step("matrix_transpose", step("multiply", xc, w)))
    if ddof == 0:
        fact = w_sum
    elif not aw:
        fact = step("subtract", w_sum, c(ddof))
    else:
        spread = step("divide", step("sum", step("multiply", w, a)), w_sum)
        fact = step("subtract", w_sum, spread if ddof == 1 else step("multiply", c(ddof), spread))
    fact = step("maximum", fact, c(0.0))
    step("squeeze", step("divide", step("matmul", xc, x_t), fact))
    return steps


defform(np.cov, "cov", _cov,
        "with fweights=/aweights=: NumPy's weighted means and normalisation in terms of "
        "sum, multiply, matmul (rowvar, bias, ddof written as constants; no y=)")
