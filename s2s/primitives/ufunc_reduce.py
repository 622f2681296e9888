"""``np.logaddexp.reduce(a, axis=0)`` and ``np.logaddexp2.reduce``: the stable
log-sum-exp (base e, base 2) of a NumPy ufunc's reduce method, a primitive of its own
(the other differentiable ufuncs' reduce and accumulate are ``np.sum``, ``np.prod``,
``np.max``, ``np.cumsum``... in other words: ``forms.py``).  The call as written is
rewritten where s2s reads it (``axis=0`` unless given, ``None``, an int, a negative
int or a tuple, ``keepdims`` as NumPy's; ``initial=v`` is ``np.logaddexp(v, r)``;
``dtype=``/``out=``/``where=`` are refused), and emitted as NumPy's own call.

The derivative is JAX's for ``jnp.logaddexp.reduce`` (its ``logsumexp``): the softmax
weights ``exp(a - ans)`` (``2 ** (a - ans)``), which never overflow since ``ans >= a``
along the axis; an element at ``-inf`` weighs 0; a row all ``-inf`` (``ans = -inf``), a
``+inf`` element or a NaN gives NaN, as JAX's.
"""

import numpy as np

from ..ir.nodes import Const
from .forms import _bind, _constant
from .registry import Result, call_spelling, defform, defjvp, defprim, defvjp

_SIG = "(a, axis=None, keepdims=False)"

defprim(
    "logaddexp.reduce", np.logaddexp.reduce, _SIG, family="reduction", batch="reducer",
    spelling=call_spelling("np.logaddexp.reduce"),
    note="the stable log-sum-exp: the gradient is the softmax exp(a - ans), NaN where "
    "ans is -inf (a row all -inf) or +inf, as JAX's jnp.logaddexp.reduce",
)


@defvjp("logaddexp.reduce")
def logaddexp_reduce_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    return g * np.exp(a - ans)


@defjvp("logaddexp.reduce", "a")
def logaddexp_reduce_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    return np.sum(a_dot * np.exp(a - ans), axis=axis, keepdims=keepdims)


defprim(
    "logaddexp2.reduce", np.logaddexp2.reduce, _SIG, family="reduction", batch="reducer",
    spelling=call_spelling("np.logaddexp2.reduce"),
    note="log2 of the sum of 2 ** a: the gradient is 2 ** (a - ans), NaN where ans is "
    "-inf or +inf, as JAX's jnp.logaddexp2.reduce",
)


@defvjp("logaddexp2.reduce")
def logaddexp2_reduce_vjp(g, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        g = np.expand_dims(g, axis)
        ans = np.expand_dims(ans, axis)
    return g * np.exp2(a - ans)


@defjvp("logaddexp2.reduce", "a")
def logaddexp2_reduce_jvp(a_dot, ans, a, axis=None, keepdims=False):
    if axis is not None and not keepdims:
        ans = np.expand_dims(ans, axis)
    return np.sum(a_dot * np.exp2(a - ans), axis=axis, keepdims=keepdims)


def _reduce(ufunc: str):
    spelled = f"np.{ufunc}.reduce"

    def rewrite(args, kwargs, items):
        p = _bind("(array, axis=0, dtype=None, out=None, keepdims=False, initial=None, "
                  "where=True)", spelled, args, kwargs)
        for name, default in (("dtype", None), ("out", None), ("where", True)):
            _constant(p[name], name, (default,))
        params = {"axis": p["axis"]}
        keep = p["keepdims"]
        if not (isinstance(keep, Const) and keep.value is False):
            params["keepdims"] = keep  # (as written; left out where False)
        steps = [(f"{ufunc}.reduce", [p["array"]], params)]
        initial = p["initial"]
        if isinstance(initial, Const) and initial.value is None:
            return steps
        return [*steps, (ufunc, [initial, Result(0)], {})]

    return rewrite


for _ufunc in ("logaddexp", "logaddexp2"):
    defform(getattr(np, _ufunc).reduce, f"{_ufunc}.reduce", _reduce(_ufunc),
            f"the primitive {_ufunc}.reduce along axis=0 unless given; initial=v is "
            f"np.{_ufunc}(v, r) (no dtype, out or where)")
