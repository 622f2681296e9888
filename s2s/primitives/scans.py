"""Running maxima and minima: ``np.maximum.accumulate(a, axis=0)`` and
``np.minimum.accumulate`` (the ufunc methods, rewritten where s2s reads the call into
the primitives ``cummax`` / ``cummin``; ``dtype=``/``out=`` are refused).

Their derivatives are JAX's for the same spelling (``jnp.maximum.accumulate``: a scan
of ``max(ans[i - 1], a[i])``, each a max whose tie gives each side half): the tangent
of ``a[j]`` reaches ``ans[i]`` (``i >= j``) where ``a[j]`` took the running max and no
later element took it alone before ``i``, halved at each tie on the way.  The rules
spell that as a weight matrix along the axis (``w[..., i, j]``, the axis moved last:
O(n^2) in the axis's length, as cumprod's exact rules): built from comparisons of
``a`` with ``ans``, so it carries no derivative, and the tangent (cotangent) is
linear in ``a_dot`` (``g``) through it, which gives second derivatives (zero).  NaN:
from the first NaN on the running max is NaN and no tangent reaches it (as JAX's).
"""

import numpy as np

from ..ir.nodes import Const
from .forms import _bind, _constant
from .registry import Refused, call_spelling, defform, defjvp, defprim, defvjp


def _scan_weights_jvp(a_dot, ans, a, axis=0):
    # w[..., i, j]: the share of a[j]'s tangent in ans[i] (the scan axis moved last)
    x = np.moveaxis(a, axis, -1)
    y = np.moveaxis(ans, axis, -1)
    i = np.arange(np.shape(y)[-1])
    prev = np.concatenate([y[..., :1], y[..., :-1]], axis=-1)
    held = (prev == y) & (i > 0)  # the max so far stays the max
    took = (x == y) | (i == 0)  # a[i] is the max (a[0] always)
    keep = np.where(held, np.where(took, 0.5, 1.0), 0.0)  # (a tie: half each)
    take = np.astype(np.where(took, np.where(held, 0.5, 1.0), 0.0), y.dtype)
    run = np.cumsum(keep == 0.0, axis=-1)  # which stretch: a new max alone starts one
    halvings = np.cumsum(keep == 0.5, axis=-1)
    gap = halvings[..., :, None] - halvings[..., None, :]
    reach = (run[..., :, None] == run[..., None, :]) & (i[:, None] >= i)
    w = np.where(reach, np.ldexp(take[..., None, :], -np.maximum(gap, 0)), 0)
    return np.moveaxis(np.sum(w * np.moveaxis(a_dot, axis, -1)[..., None, :], axis=-1),
                       -1, axis)


def _scan_weights_vjp(g, ans, a, axis=0):
    # the transpose of the JVP's weights: a[j] gathers g[i] for each i it reaches
    x = np.moveaxis(a, axis, -1)
    y = np.moveaxis(ans, axis, -1)
    i = np.arange(np.shape(y)[-1])
    prev = np.concatenate([y[..., :1], y[..., :-1]], axis=-1)
    held = (prev == y) & (i > 0)
    took = (x == y) | (i == 0)
    keep = np.where(held, np.where(took, 0.5, 1.0), 0.0)
    take = np.astype(np.where(took, np.where(held, 0.5, 1.0), 0.0), y.dtype)
    run = np.cumsum(keep == 0.0, axis=-1)
    halvings = np.cumsum(keep == 0.5, axis=-1)
    gap = halvings[..., :, None] - halvings[..., None, :]
    reach = (run[..., :, None] == run[..., None, :]) & (i[:, None] >= i)
    w = np.where(reach, np.ldexp(take[..., None, :], -np.maximum(gap, 0)), 0)
    return np.moveaxis(np.sum(w * np.moveaxis(g, axis, -1)[..., :, None], axis=-2),
                       -1, axis)


for _prim, _ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
    defprim(
        _prim, _ufunc.accumulate, "(a, axis=0)", family="reduction", batch="cumulative",
        spelling=call_spelling(f"np.{_ufunc.__name__}.accumulate"),
        note=f"np.{_ufunc.__name__}.accumulate: the derivative follows the running "
        f"{_prim[3:]} (a tie on the way gives each side half, as JAX's "
        f"jnp.{_ufunc.__name__}.accumulate); O(n^2) along the axis",
    )
    defjvp(_prim, "a")(_scan_weights_jvp)
    defvjp(_prim)(_scan_weights_vjp)


def _accumulate(prim: str, spelled: str):
    def rewrite(args, kwargs, items):
        p = _bind("(array, axis=0, dtype=None, out=None)", spelled, args, kwargs)
        for name in ("dtype", "out"):
            _constant(p[name], name, (None,))
        axis = p["axis"]
        if not (isinstance(axis, Const) and type(axis.value) is int):
            raise Refused("`axis=` must be an int written in the call",
                          f"{spelled}(x, axis=0)")
        return [(prim, [p["array"]], {"axis": axis})]

    return rewrite


for _prim, _ufunc in (("cummax", np.maximum), ("cummin", np.minimum)):
    _spelled = f"np.{_ufunc.__name__}.accumulate"
    defform(_ufunc.accumulate, f"{_ufunc.__name__}.accumulate", _accumulate(_prim, _spelled),
            f"the primitive {_prim} along axis=0 unless given (no dtype or out)")
