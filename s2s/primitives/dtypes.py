"""Casts between dtypes, and everyday NumPy calls whose outputs are constants.

A cast (``x.astype(np.float32)``, ``np.astype(x, "float32")``, ``np.float64(x)``) is
JAX's ``convert_element_type``: its tangent is the input's tangent cast forward, its
cotangent the output's cotangent cast back to the input's dtype.  A cast to an
integer or boolean dtype passes no derivative (JAX's float0 tangent; ``jax.grad`` of
``x.astype(jnp.int32).astype(float) * x`` is ``x.astype(jnp.int32)``): the rules
multiply by ``np.isdtype(ans.dtype, INEXACT)``, a Python bool known when the code
runs, since the target dtype may itself be a value (``x.astype(y.dtype)``).
"""

import numpy as np

from ..ir.nodes import Let
from ..ir.spelling import atom_text
from ..runtime import unbroadcast
from .batching import (
    Batch,
    align,
    args_text,
    batch_rule,
    shifted,
    static,
)
from .registry import defjvp, deflinear, defprim, defvjp

# ---- facts about dtypes: no derivative ------------------------------------------

defprim(
    "isdtype", np.isdtype, "(dtype, kind)", family="array facts", nondiff=True,
    note="a fact about a dtype (the cast rules' test: is the output inexact?)",
)


# ---- casts -----------------------------------------------------------------------


def _astype_spelling(args, params):
    # np.astype takes dtype by position only.  copy=False is not accepted: the result
    # could then be x itself, and s2s treats it as a new array (writes into it)
    rest = [params["dtype"]] if "dtype" in params else []
    return f"np.astype({', '.join([*args, *rest])})"


defprim(
    "astype", np.astype, "(x, dtype=None)", diff=("x",),
    family="elementwise", methods=("astype",), spelling=_astype_spelling,
    note="JAX's convert_element_type: tangent cast forward, cotangent cast back to "
    "x's dtype; a cast to an integer or bool dtype passes zero derivative, as in JAX",
)


@defvjp("astype")
def astype_vjp(g, ans, x, dtype=None):
    return np.astype(g, x.dtype) * np.isdtype(
        ans.dtype, ("real floating", "complex floating")
    )


@defjvp("astype", "x")
def astype_jvp(x_dot, ans, x, dtype=None):
    return np.astype(x_dot, ans.dtype) * np.isdtype(
        ans.dtype, ("real floating", "complex floating")
    )


# np.float64(x) called on an array or a scalar: a cast to float64, so a derivative
# always flows.  (np.float32(x) and np.float16(x) are not registered yet: the rule
# table's direct rows draw float64 cotangents, which JAX's vjp refuses for a float32
# output; x.astype("float32") works.)
# Family "shape", not "elementwise": np.float64(x) of a float64 array is x itself, so
# s2s must not take it for a new array that the function may write into (a shape
# family's result is not one).
defprim(
    "float64", np.float64, "(x)", family="shape",
    note="a cast to float64 (np.astype(x, np.float64)): the cotangent is cast back "
    "to x's dtype; of a float64 array it is the array itself (no writes into it)",
)


@defvjp("float64")
def float64_vjp(g, ans, x):
    return np.astype(g, np.asarray(x).dtype)  # x may be a Python float


deflinear("float64", "x")


@batch_rule("float64")
def float64_rule(b: Batch, s: Let) -> str:
    """Elementwise: the batched operand as it is."""
    return args_text(s, [atom_text(a) for a in s.args])


# ---- facts of a dtype known when the code runs: np.finfo(x.dtype).eps ---------------
# ``np.finfo(d).eps`` (``.tiny``, ``.max``...) and ``np.iinfo(d).max``, ``d`` a dtype
# (``x.dtype``: the call's own) or a type written in the function: emitted as written,
# so each call reads its own dtype's (float32's eps on a float32 call).  Constants:
# no derivative flows.  The attribute is a parameter (the frontend checks it exists).


def _info_spelling(fn: str):
    return lambda args, params: f"np.{fn}({args[0]}).{params['attr'].strip(chr(39))}"


def _info(fn):
    def info(dtype, attr="max"):  # (not np.finfo itself: a call of it alone is refused)
        return getattr(fn(dtype), attr)
    return info


for _fn in ("finfo", "iinfo"):
    defprim(
        _fn, _info(getattr(np, _fn)), "(dtype, attr='max')", family="array facts", nondiff=True,
        spelling=_info_spelling(_fn),
        note=f"np.{_fn}(d).attr, read when the code runs (the call's own dtype): a "
        "constant, no derivative flows",
    )


# ``d.type(v)`` of a dtype ``d`` (``x.dtype.type(0.5)``): NumPy's scalar of ``v`` in
# ``d``, a cast as ``np.astype``'s (no derivative to an integer or bool dtype).
# Spelled ``np.asarray(v, dtype=d)[()]`` (the same scalar; a traced ``v`` on JAX too).
# Family "shape": of an array already in ``d`` it is the array itself (as np.float64's).
def _scalar_of(dtype, x):
    return np.asarray(x, dtype=dtype)[()]


defprim(
    "dtype.type", _scalar_of, "(dtype, x)", diff=("x",), family="shape",
    spelling=lambda args, params: f"np.asarray({args[1]}, dtype={args[0]})[()]",
    note="d.type(v) of a dtype d (x.dtype.type(0.5)): a cast of v to d, as np.astype",
)


@defvjp("dtype.type")
def dtype_type_vjp(g, ans, dtype, x):
    return np.astype(g, np.asarray(x).dtype) * np.isdtype(
        ans.dtype, ("real floating", "complex floating")
    )


@defjvp("dtype.type", "x")
def dtype_type_jvp(x_dot, ans, dtype, x):
    return np.astype(x_dot, ans.dtype) * np.isdtype(
        ans.dtype, ("real floating", "complex floating")
    )


@batch_rule("dtype.type")
def dtype_type_rule(b: Batch, s: Let) -> str:
    """Elementwise: the batched operand as it is (the dtype is never batched)."""
    return args_text(s, [atom_text(a) for a in s.args])


# ---- comparisons within a tolerance: boolean outputs, no derivative ---------------

defprim(
    "isclose", np.isclose, "(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)",
    family="comparison", nondiff=True, note="boolean output: no derivative flows",
)
defprim(
    "allclose", np.allclose, "(a, b, rtol=1e-05, atol=1e-08, equal_nan=False)",
    family="reduction", nondiff=True, note="one Python bool: no derivative flows",
)


@batch_rule("allclose")
def allclose_rule(b: Batch, s: Let) -> str:
    """One bool per example: np.isclose over the example's axes, then np.all."""
    rank = max(b.rank(a) for a in s.args)
    params = ", ".join(f"{k}={atom_text(v)}"
                       for k, v in s.params.items())
    texts = [align(b, a, rank) for a in s.args]
    close = f"np.isclose({', '.join(texts + ([params] if params else []))})"
    if rank == 0:
        return close
    axes = tuple(range(1, rank + 1))
    return f"np.all({close}, axis={axes[0] if rank == 1 else axes})"


# ---- index generators: integer outputs, several results ---------------------------

for _name in ("triu_indices", "tril_indices"):
    defprim(
        _name, getattr(np, _name), "(n, k=0, m=None)",
        family="constructor / integer-valued", nondiff=True, results=2,
        note="two integer index arrays (rows, columns): no derivative flows",
    )
defprim(
    "diag_indices", np.diag_indices, "(n, ndim=2)",
    family="constructor / integer-valued", nondiff=True,
    results=lambda args: args.get("ndim", 2),
    note="ndim integer index arrays (ndim a constant): no derivative flows",
)


# ---- spaced numbers: functions of start and stop -----------------------------------
# logspace is base ** linspace(start, stop): with t the k-th fraction of the way (k /
# (num - 1), or k / num without the endpoint), out_k = base ** (start (1 - t) + stop t),
# so d out_k / d start = out_k log(base) (1 - t_k) and d out_k / d stop = out_k
# log(base) t_k.  geomspace is start ** (1 - t) * stop ** t: the same with log(base)
# replaced by 1 / start and 1 / stop.  The fractions run along axis 0 (start and stop
# may be arrays: their axes follow it).  linspace is start (1 - t) + stop t itself,
# along ``axis``: linear in start and stop.

defprim(
    "linspace", np.linspace,
    "(start, stop, num=50, endpoint=True, dtype=None, axis=0)",
    diff=("start", "stop"), family="constructor",
    note="linear in start and stop: start (1 - t) + stop t, t the fractions along "
    "axis; an integer dtype passes no derivative",
)


@defvjp("linspace")
def linspace_vjp(g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
    t = np.linspace(0.0, 1.0, num, endpoint=endpoint)
    if axis != 0:  # the fractions' axis first, start's and stop's after it
        g = np.moveaxis(g, axis, 0)
    if dtype is not None:  # an integer dtype rounds: no derivative
        g = g * np.isdtype(ans.dtype, ("real floating", "complex floating"))
    start_bar = unbroadcast(np.tensordot(1 - t, g, 1), start)
    stop_bar = unbroadcast(np.tensordot(t, g, 1), stop)
    return start_bar, stop_bar


@defjvp("linspace", "start")
def linspace_jvp_start(start_dot, ans, start, stop, num=50, endpoint=True, dtype=None,
                       axis=0):
    # linear: the same spacing from start's tangent to 0 (0 * stop: stop's shape)
    if dtype is None:
        return np.linspace(start_dot, 0 * stop, num, endpoint=endpoint, axis=axis)
    return np.linspace(
        start_dot, 0 * stop, num, endpoint=endpoint, dtype=dtype, axis=axis
    ) * np.isdtype(ans.dtype, ("real floating", "complex floating"))


@defjvp("linspace", "stop")
def linspace_jvp_stop(stop_dot, ans, start, stop, num=50, endpoint=True, dtype=None,
                      axis=0):
    if dtype is None:
        return np.linspace(0 * start, stop_dot, num, endpoint=endpoint, axis=axis)
    return np.linspace(
        0 * start, stop_dot, num, endpoint=endpoint, dtype=dtype, axis=axis
    ) * np.isdtype(ans.dtype, ("real floating", "complex floating"))


@batch_rule("linspace")
def linspace_rule(b: Batch, s: Let) -> str:
    """start and stop broadcast per example; the fractions' axis moves past the batch
    axis (counted in the output, one axis more than start and stop)."""
    rank = max(b.rank(a) for a in s.args)
    axis = static(s, "axis", 0)
    return args_text(s, [align(b, a, rank) for a in s.args],
                     {"axis": shifted(axis % (rank + 1), rank + 1)})


defprim(
    "logspace", np.logspace, "(start, stop, num=50, endpoint=True, base=10.0)",
    diff=("start", "stop"), family="constructor",
    note="differentiable in start and stop (base is a constant)",
)


@defvjp("logspace")
def logspace_vjp(g, ans, start, stop, num=50, endpoint=True, base=10.0):
    if endpoint:
        t = np.linspace(0.0, 1.0, num)
    else:
        t = np.arange(num) / num
    t = np.reshape(t, (-1,) + (1,) * (np.ndim(ans) - 1))
    scaled = g * ans * np.log(base)
    start_bar = unbroadcast(np.sum(scaled * (1 - t), axis=0), start)
    stop_bar = unbroadcast(np.sum(scaled * t, axis=0), stop)
    return start_bar, stop_bar


@defjvp("logspace", "start")
def logspace_jvp_start(start_dot, ans, start, stop, num=50, endpoint=True, base=10.0):
    if endpoint:
        t = np.linspace(0.0, 1.0, num)
    else:
        t = np.arange(num) / num
    t = np.reshape(t, (-1,) + (1,) * (np.ndim(ans) - 1))
    return start_dot * ans * np.log(base) * (1 - t)


@defjvp("logspace", "stop")
def logspace_jvp_stop(stop_dot, ans, start, stop, num=50, endpoint=True, base=10.0):
    if endpoint:
        t = np.linspace(0.0, 1.0, num)
    else:
        t = np.arange(num) / num
    t = np.reshape(t, (-1,) + (1,) * (np.ndim(ans) - 1))
    return stop_dot * ans * np.log(base) * t


defprim(
    "geomspace", np.geomspace, "(start, stop, num=50, endpoint=True)",
    diff=("start", "stop"), family="constructor",
    note="differentiable in start and stop",
)


@defvjp("geomspace")
def geomspace_vjp(g, ans, start, stop, num=50, endpoint=True):
    if endpoint:
        t = np.linspace(0.0, 1.0, num)
    else:
        t = np.arange(num) / num
    t = np.reshape(t, (-1,) + (1,) * (np.ndim(ans) - 1))
    start_bar = unbroadcast(np.sum(g * ans * (1 - t), axis=0) / start, start)
    stop_bar = unbroadcast(np.sum(g * ans * t, axis=0) / stop, stop)
    return start_bar, stop_bar


@defjvp("geomspace", "start")
def geomspace_jvp_start(start_dot, ans, start, stop, num=50, endpoint=True):
    if endpoint:
        t = np.linspace(0.0, 1.0, num)
    else:
        t = np.arange(num) / num
    t = np.reshape(t, (-1,) + (1,) * (np.ndim(ans) - 1))
    return start_dot / start * ans * (1 - t)


@defjvp("geomspace", "stop")
def geomspace_jvp_stop(stop_dot, ans, start, stop, num=50, endpoint=True):
    if endpoint:
        t = np.linspace(0.0, 1.0, num)
    else:
        t = np.arange(num) / num
    t = np.reshape(t, (-1,) + (1,) * (np.ndim(ans) - 1))
    return stop_dot / stop * ans * t


@batch_rule("logspace", "geomspace")
def spaced_rule(b: Batch, s: Let) -> str:
    """start and stop broadcast per example; the fractions run along axis 1, after
    the batch axis (NumPy's ``axis=`` puts them there)."""
    rank = max(b.rank(a) for a in s.args)
    return args_text(s, [align(b, a, rank) for a in s.args], {"axis": "1"})
