"""The few helpers emitted code calls, beside NumPy itself.

Each is small, pure NumPy, and readable on its own: a standalone emitted module copies
the ones it uses.  They exist only where a rule needs to know an argument's rank or
shape, which the emitted code does not know until it runs.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "unbroadcast",
    "grad_seed",
    "matmul_lhs_bar",
    "matmul_rhs_bar",
    "dot_lhs_bar",
    "dot_rhs_bar",
    "prod_of_others",
]


def unbroadcast(g, x):
    """Sum ``g`` over the axes NumPy broadcasting added or stretched to match ``x``."""
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if stretched:
        g = g.sum(axis=stretched, keepdims=True)
    return g


def grad_seed(out):
    """The cotangent 1 for a scalar output; the errors JAX's ``grad`` raises otherwise."""
    shape = np.shape(out)
    dtype = np.result_type(out)
    if isinstance(out, (tuple, list, dict)) or out is None or shape != ():
        if isinstance(out, (tuple, list, dict)) or out is None:
            raise TypeError(
                "Gradient only defined for scalar-output functions. "
                f"Output was {out!r}."
            )
        raise TypeError(
            "Gradient only defined for scalar-output functions. "
            f"Output had shape: {shape}."
        )
    if not np.issubdtype(dtype, np.floating):
        extra = (
            "For holomorphic differentiation, pass holomorphic=True."
            if np.issubdtype(dtype, np.complexfloating)
            else "For differentiation of functions with integer outputs, use "
            "jax.vjp directly."
        )
        raise TypeError(
            "grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dtype.name}. {extra}"
        )
    return np.ones_like(out)


def _as_matrix_pair(g, x1, x2):
    """View a matmul's operands and cotangent with 1-D operands promoted to 2-D."""
    a = np.asarray(x1)
    b = np.asarray(x2)
    g = np.asarray(g)
    if a.ndim == 1 and b.ndim == 1:  # inner product: g is a scalar
        return g.reshape(1, 1), a[None, :], b[:, None]
    if a.ndim == 1:
        a = a[None, :]
        g = np.expand_dims(g, -2)
    if b.ndim == 1:
        b = b[:, None]
        g = np.expand_dims(g, -1)
    return g, a, b


def matmul_lhs_bar(g, x1, x2):
    """Cotangent of ``x1`` in ``x1 @ x2``: ``g @ x2.T`` for matrices, any rank."""
    g2, _, b = _as_matrix_pair(g, x1, x2)
    a_bar = g2 @ np.swapaxes(b, -1, -2)
    if np.ndim(x1) == 1:
        a_bar = a_bar[..., 0, :]
    return unbroadcast(a_bar, x1)


def matmul_rhs_bar(g, x1, x2):
    """Cotangent of ``x2`` in ``x1 @ x2``: ``x1.T @ g`` for matrices, any rank."""
    g2, a, _ = _as_matrix_pair(g, x1, x2)
    b_bar = np.swapaxes(a, -1, -2) @ g2
    if np.ndim(x2) == 1:
        b_bar = b_bar[..., 0]
    return unbroadcast(b_bar, x2)


def dot_lhs_bar(g, x1, x2):
    """Cotangent of ``x1`` in ``np.dot(x1, x2)``."""
    if np.ndim(x1) == 0 or np.ndim(x2) == 0:
        return unbroadcast(g * x2, x1)
    if np.ndim(x2) <= 2:
        return matmul_lhs_bar(g, x1, x2)
    # dot sums the last axis of x1 against the second-to-last axis of x2
    b = np.moveaxis(x2, -2, -1)  # (..., m, k)
    lead = np.ndim(x1) - 1
    g_axes = tuple(range(lead, np.ndim(g)))
    return np.tensordot(g, b, axes=(g_axes, tuple(range(b.ndim - 1))))


def dot_rhs_bar(g, x1, x2):
    """Cotangent of ``x2`` in ``np.dot(x1, x2)``."""
    if np.ndim(x1) == 0 or np.ndim(x2) == 0:
        return unbroadcast(g * x1, x2)
    if np.ndim(x2) <= 2:
        return matmul_rhs_bar(g, x1, x2)
    lead = np.ndim(x1) - 1
    a_axes = tuple(range(lead))
    b_bar = np.tensordot(x1, g, axes=(a_axes, tuple(range(lead))))  # (k, ..., m)
    return np.moveaxis(b_bar, 0, -2)


def prod_of_others(a, axis=None):
    """For each element, the product of the other elements reduced with it.

    Computed from exclusive cumulative products from both ends, so zeros in ``a``
    give the right answer instead of the ``0 / 0`` of ``prod(a) / a``.
    """
    a = np.asarray(a)
    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = tuple(ax % a.ndim for ax in np.atleast_1d(axis))
    if a.ndim == 0:
        return np.ones_like(a)
    rest = tuple(i for i in range(a.ndim) if i not in axes)
    moved = np.transpose(a, rest + axes)
    flat = moved.reshape(moved.shape[: len(rest)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(
        np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1
    )[..., ::-1]
    others = (before * after).reshape(moved.shape)
    return np.transpose(others, np.argsort(rest + axes))
