"""The few helpers emitted code calls, beside NumPy itself.

Each is small, pure NumPy, and readable on its own: a standalone emitted module copies
the ones it uses.  They exist only where a rule needs to know an argument's rank or
shape, which the emitted code does not know until it runs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["unbroadcast", "grad_seed", "real_only", "matmul_lhs_bar", "matmul_rhs_bar", "dot_lhs_bar",
           "dot_rhs_bar", "prod_of_others", "batch_axes", "zeros_list", "stop_gradient"]


def unbroadcast(g, x):
    """Sum ``g`` over the axes NumPy broadcasting added or stretched to match ``x``;
    a real ``x``'s cotangent is real (JAX's convention): ``g``'s real part."""
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = np.real(g)
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


def stop_gradient(x):
    """``x`` itself, read as a constant: no derivative flows through it."""
    return x


def real_only(x, what):
    """``x``, where a derivative written for real values reads it: complex values
    raise (that rule's derivative is not JAX's there yet) rather than a wrong number."""
    if np.iscomplexobj(x):  # (what's later lines: the user's line, where s2s knows it)
        what, _, where = what.partition("\n")
        raise TypeError(f"s2s differentiates {what} of real values only, not complex"
                        + (f"\n{where}" if where else ""))
    return x


def grad_seed(out, holomorphic=False):
    """The cotangent 1 for a scalar output; the errors JAX's ``grad`` raises otherwise
    (a real output, or a complex one under ``holomorphic=True``)."""
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
    if holomorphic:
        if not np.issubdtype(dtype, np.complexfloating):
            raise TypeError(
                "grad with holomorphic=True requires outputs with complex dtype, but "
                f"got {dtype.name}."
            )
    elif not np.issubdtype(dtype, np.floating):
        extra = (
            "For holomorphic differentiation, pass holomorphic=True. For "
            "differentiation of non-holomorphic functions involving complex outputs, "
            "use jax.vjp directly." if np.issubdtype(dtype, np.complexfloating)
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


def inner_lhs_bar(g, a, b):
    """Cotangent of ``a`` in ``np.inner(a, b)``: ``g``'s trailing axes (``b``'s, less
    its last) summed against ``b``; with a scalar operand, the product with the
    other (np.inner is then ``a * b``)."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * b, a)
    lead = np.ndim(a) - 1
    return np.tensordot(g, b, axes=(list(range(lead, np.ndim(g))),
                                    list(range(np.ndim(b) - 1))))


def inner_rhs_bar(g, a, b):
    """Cotangent of ``b`` in ``np.inner(a, b)``: ``g``'s leading axes (``a``'s, less
    its last) summed against ``a``; with a scalar operand, the product."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return unbroadcast(g * a, b)
    lead = np.ndim(a) - 1
    return np.tensordot(g, a, axes=(list(range(lead)), list(range(lead))))


__all__ += ["inner_lhs_bar", "inner_rhs_bar"]


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
    reduced = int(np.prod(moved.shape[len(rest):]))  # (not -1: undecided if empty)
    flat = moved.reshape(moved.shape[: len(rest)] + (reduced,))
    ones = np.ones_like(flat[..., :1])
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(
        np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1
    )[..., ::-1]
    others = (before * after).reshape(moved.shape)
    return np.transpose(others, np.argsort(rest + axes))


# ---- SciPy's helpers (runtime_scipy), eval_shape's (runtime_shapes: absolute, JAX runs this)
from s2s.runtime_shapes import *  # noqa: E402,F401,F403
from s2s.runtime_shapes import __all__ as _shapes_all  # noqa: E402
from s2s.runtime_shapes import scan_tree  # noqa: E402  (not a helper emitted code calls)

from .runtime_linalg import *  # noqa: E402,F401,F403  (det's: runtime_linalg)
from .runtime_linalg import __all__ as _linalg_all  # noqa: E402
from .runtime_scipy import *  # noqa: E402,F401,F403
from .runtime_scipy import __all__ as _scipy_all  # noqa: E402

__all__ += _scipy_all + _shapes_all + _linalg_all


# ---- reductions, shape and indexing (family: reductions/shape/indexing) -----------


def _cumprod_tree(a, v, axis):
    """The nodes of JAX's tree of products (runtime_shapes.scan_tree), its outputs and
    each node's value; ``v`` (``a``'s shape) with the axis last as ``a``."""
    moved, v = [np.ravel(t) if axis is None else np.moveaxis(t, axis, -1) for t in (a, v)]
    nodes, outs = scan_tree(moved.shape[-1])
    vals = list(np.moveaxis(moved, -1, 0))
    for x, y in nodes[moved.shape[-1]:]:
        vals.append(vals[x] * vals[y])
    return nodes, outs, vals, v


def cumprod_bar(g, a, axis=None):
    """Cotangent of ``a`` in ``np.cumprod(a, axis)``: JAX's, its tree's products
    transposed (``reverse_cumsum(g * ans) / a`` would divide by zeros)."""
    nodes, outs, vals, g = _cumprod_tree(a, g, axis)
    ct = {k: g[..., i] for i, k in enumerate(outs)}
    for k in range(len(nodes) - 1, len(outs) - 1, -1):
        ct[nodes[k][0]] = ct[k] * vals[nodes[k][1]] + ct.get(nodes[k][0], 0)
        ct[nodes[k][1]] = vals[nodes[k][0]] * ct[k] + ct.get(nodes[k][1], 0)
    a_bar = np.stack([ct[i] for i in range(len(outs))], axis=-1) if outs else g
    return np.reshape(a_bar, np.shape(a)) if axis is None else np.moveaxis(a_bar, -1, axis)


def cumprod_tangent(a_dot, a, axis=None):
    """Tangent of ``np.cumprod(a, axis)`` along ``a_dot``: JAX's, its tree's."""
    nodes, outs, vals, moved = _cumprod_tree(a, a_dot, axis)
    dots = [moved[..., i] for i in range(len(outs))]
    for x, y in nodes[len(outs):]:
        dots.append(dots[x] * vals[y] + vals[x] * dots[y])
    out = np.stack([dots[k] for k in outs], axis=-1) if outs else moved
    return out if axis is None else np.moveaxis(out, -1, axis)


def cumprod_tangent2(v, w, a, axis=None):
    """The coefficient of t1 t2 in ``np.cumprod(a + t1 v + t2 w, axis)``: JAX's second
    derivative, its tree's; the elements' own (0) left out as JAX's symbolic zeros
    are, not multiplied by the other products (0 * inf: NaN at [inf, 0])."""
    nodes, outs, vals, v = _cumprod_tree(a, v, axis)
    n, w = len(outs), _cumprod_tree(a, w, axis)[3]
    d1, d2, d12 = [v[..., i] for i in range(n)], [w[..., i] for i in range(n)], [None] * n
    for x, y in nodes[n:]:
        both = d1[x] * d2[y] + d2[x] * d1[y]
        both = both if d12[x] is None else d12[x] * vals[y] + both
        d12.append(both if d12[y] is None else both + vals[x] * d12[y])
        d1.append(d1[x] * vals[y] + vals[x] * d1[y])
        d2.append(d2[x] * vals[y] + vals[x] * d2[y])
    out = [np.zeros_like(v[..., 0]) if d12[k] is None else d12[k] for k in outs]
    out = np.stack(out, axis=-1) if outs else v
    return out if axis is None else np.moveaxis(out, -1, axis)


__all__ += ["cumprod_bar", "cumprod_tangent", "cumprod_tangent2"]


# ---- linear algebra (s2s/primitives/linalg.py) ----------------------------------


def rhs_columns(v, b):
    """``v`` as columns: a trailing axis of length 1 where ``b`` is a vector.

    ``np.linalg.solve(a, b)`` reads a 1-D ``b`` as one column and anything else as a
    stack of matrices; its rules work on columns either way.
    """
    return np.expand_dims(v, -1) if np.ndim(b) == 1 else v


def _tensordot_axes(a, b, axes):
    """``np.tensordot``'s ``axes`` as two lists of non-negative axes, paired."""
    if isinstance(axes, (int, np.integer)):
        return list(range(np.ndim(a) - axes, np.ndim(a))), list(range(axes))
    a_axes, b_axes = axes
    a_axes = [int(i) % np.ndim(a) for i in np.atleast_1d(a_axes)]
    b_axes = [int(i) % np.ndim(b) for i in np.atleast_1d(b_axes)]
    return a_axes, b_axes


def tensordot_lhs_bar(g, a, b, axes):
    """Cotangent of ``a`` in ``np.tensordot(a, b, axes)``: ``g`` against ``b``."""
    a_axes, b_axes = _tensordot_axes(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    g_b = list(range(len(a_free), np.ndim(g)))
    bar = np.tensordot(g, b, axes=(g_b, b_free))  # a's free axes, then b's contracted
    order = a_free + [a_axes[i] for i in np.argsort(b_axes)]
    return np.transpose(bar, np.argsort(order))


def tensordot_rhs_bar(g, a, b, axes):
    """Cotangent of ``b`` in ``np.tensordot(a, b, axes)``: ``a`` against ``g``."""
    a_axes, b_axes = _tensordot_axes(a, b, axes)
    a_free = [i for i in range(np.ndim(a)) if i not in a_axes]
    b_free = [i for i in range(np.ndim(b)) if i not in b_axes]
    bar = np.tensordot(a, g, axes=(a_free, list(range(len(a_free)))))
    order = [b_axes[i] for i in np.argsort(a_axes)] + b_free
    return np.transpose(bar, np.argsort(order))


def _einsum_terms(subscripts, operands):
    """The input terms and output term of an einsum, ``...`` spelled out in letters."""
    if not isinstance(subscripts, str):
        raise TypeError("s2s differentiates np.einsum with a subscripts string only")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    used = set(spec)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
             if c not in used]
    width = max([np.ndim(x) - len(t) + 3 for t, x in zip(terms, operands)
                 if "..." in t], default=0)
    dots = "".join(spare[:width])
    terms = [t.replace("...", dots[width - (np.ndim(x) - len(t) + 3):])
             for t, x in zip(terms, operands)]
    if arrow:
        output = output.replace("...", dots)
    else:  # implicit output: broadcast axes, then the letters used once, sorted
        letters = "".join(terms)
        output = dots + "".join(sorted(c for c in set(letters) - set(dots)
                                       if letters.count(c) == 1))
    return terms, output


def einsum_bar(g, subscripts, operands, k):
    """Cotangent of ``operands[k]`` in ``np.einsum(subscripts, *operands)``.

    The einsum of ``g`` with the other operands, written to operand ``k``'s
    subscripts: ``"ij,jk->ik"`` gives ``"ik,jk->ij"`` for the first operand.  A
    letter only operand ``k`` has is broadcast back; a repeated letter (a diagonal,
    ``"ii"``) puts the result on that diagonal; a stretched length-1 axis is summed.
    """
    terms, output = _einsum_terms(subscripts, operands)
    term = terms[k]
    x = np.asarray(operands[k])
    others = [t for i, t in enumerate(terms) if i != k]
    known = set(output).union(*others)
    letters = "".join(dict.fromkeys(term))  # each letter once, in order
    reached = "".join(c for c in letters if c in known)
    spec = ",".join([output, *others]) + "->" + reached
    part = np.einsum(spec, g, *[o for i, o in enumerate(operands) if i != k])
    sizes = dict(zip(term, x.shape))
    stretched = tuple(i for i, c in enumerate(reached)
                      if sizes[c] == 1 and part.shape[i] != 1)
    if stretched:  # broadcast inside the einsum: sum back to length 1
        part = np.sum(part, axis=stretched, keepdims=True)
    if reached != letters:  # summed inside operand k only: broadcast back
        missing = [i for i, c in enumerate(letters) if c not in known]
        part = np.expand_dims(part, missing)
        part = np.broadcast_to(part, [sizes[c] for c in letters])
    if letters == term:
        return part
    bar = np.zeros(x.shape, dtype=np.result_type(part, x))
    np.einsum(term + "->" + letters, bar)[...] = part  # a writeable view: the diagonal
    return bar


def _kron_shapes(a, b):
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    return nd, sa, sb


def kron_lhs_bar(g, a, b):
    """Cotangent of ``a`` in ``np.kron(a, b)``: each block of ``g`` against ``b``."""
    nd, sa, sb = _kron_shapes(a, b)
    blocks = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    b_spread = np.reshape(b, [n for s in sb for n in (1, s)])
    bar = np.sum(blocks * b_spread, axis=tuple(range(1, 2 * nd, 2)))
    return np.reshape(bar, np.shape(a))


def kron_rhs_bar(g, a, b):
    """Cotangent of ``b`` in ``np.kron(a, b)``: ``g``'s blocks weighted by ``a``."""
    nd, sa, sb = _kron_shapes(a, b)
    blocks = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    a_spread = np.reshape(a, [n for s in sa for n in (s, 1)])
    bar = np.sum(blocks * a_spread, axis=tuple(range(0, 2 * nd, 2)))
    return np.reshape(bar, np.shape(b))


def multi_dot_bars(g, arrays, *tangents):
    """Cotangents of the arrays in ``np.linalg.multi_dot(arrays)``.

    For the k-th: ``left.T @ g @ right.T``, ``left`` and ``right`` the products of the
    arrays before and after it; a 1-D first or last array is a row or a column.

    With ``tangents`` (lists like ``arrays``), the cotangents of
    ``multi_dot_tangent(arrays, *tangents)`` instead: the derivative, one array
    per array, of ``<g, multi_dot_tangent(arrays, *tangents)>``.

    ``arrays`` may be one array of matrices (NumPy multiplies its rows): its
    cotangent is then one array, the rows' stacked back into its shape.
    """
    if not tangents:
        bars = _multi_dot_bars(g, arrays)
    else:
        bars = [np.zeros(np.shape(x)) for x in arrays]
        for slots in _slot_choices(len(arrays), len(tangents)):
            parts = _multi_dot_bars(g, _replaced(arrays, slots, tangents), skip=slots)
            bars = [bar + part for bar, part in zip(bars, parts)]
    if isinstance(arrays, np.ndarray):
        return np.stack(bars)
    return bars


def _multi_dot_bars(g, arrays, skip=()):
    """``multi_dot_bars(g, arrays)``, zeros for the arrays at the positions ``skip``."""
    mats = [np.asarray(x) for x in arrays]
    shapes = [m.shape for m in mats]
    if mats[0].ndim == 1:
        mats[0] = mats[0][None, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, None]
    g = np.reshape(g, (mats[0].shape[0], mats[-1].shape[1]))
    lefts = [np.eye(mats[0].shape[0])]
    for m in mats[:-1]:
        lefts.append(lefts[-1] @ m)
    rights = [np.eye(mats[-1].shape[1])]
    for m in mats[:0:-1]:
        rights.append(m @ rights[-1])
    rights = rights[::-1]
    return [np.zeros(shape) if k in skip else np.reshape(left.T @ g @ right.T, shape)
            for k, (left, right, shape) in enumerate(zip(lefts, rights, shapes))]


def _slot_choices(n, r):
    """Each way of giving r tangents distinct places among n operands, in order."""
    import itertools

    return list(itertools.permutations(range(n), r))


def _replaced(operands, slots, tangents):
    """``operands`` with the one at ``slots[i]`` replaced by ``tangents[i]``'s item
    there."""
    out = list(operands)
    for slot, t in zip(slots, tangents):
        out[slot] = t[slot]
    return out


def multi_dot_tangent(arrays, *tangents):
    """``np.linalg.multi_dot(arrays)`` differentiated along each of ``tangents``
    (lists like ``arrays``), once: the sum over each way of putting the tangents in
    distinct places of the product of ``multi_dot`` with those arrays replaced by the
    tangents' arrays there (no tangents: ``multi_dot(arrays)``)."""
    if not tangents:
        return np.linalg.multi_dot(list(arrays))
    terms = [np.linalg.multi_dot(_replaced(arrays, slots, tangents))
             for slots in _slot_choices(len(arrays), len(tangents))]
    return sum(terms) if terms else np.zeros_like(np.linalg.multi_dot(list(arrays)))


def _sign(x):
    """The derivative of ``|x|``, JAX's convention: 1 at 0 (of a complex x, the
    cotangent factor conj(x) / |x|)."""
    if np.iscomplexobj(x):
        magnitude = np.abs(x)
        return np.where(magnitude == 0, 1.0, np.conj(x) / np.where(magnitude == 0, 1.0,
                                                                 magnitude))
    return np.where(x >= 0, 1.0, -1.0)


def vector_norm_grad(x, norm, ord, axis=None):
    """The derivative of the vector ``ord``-norm of ``x`` over ``axis`` (None: all).

    ``norm`` has the reduced axes kept (or is a scalar).  JAX's conventions: ties of
    the inf/-inf norms share the derivative equally (at an all-zero x the inf-norm's
    starting value 0 takes half), |x|' = 1 at 0, and ord=0 (a count) has none.
    """
    if ord is None or ord == 2:
        return np.conj(x) / norm
    if ord == 1:
        return _sign(x)
    if ord == 0:
        return np.zeros(np.shape(x))
    if np.isinf(ord):
        return _sign(x) * _extreme_share(np.abs(x), ord > 0, axis)
    return _sign(x) * (np.abs(x) / norm) ** (ord - 1)


def _extreme_share(values, largest, axis):
    """Each value's share of the derivative of their max (or min) over ``axis``.

    Ties share equally; a max of values >= 0 that is 0 ties with JAX's starting
    value 0 (``initial=0``), which takes half.
    """
    top = (np.max if largest else np.min)(values, axis=axis, keepdims=True)
    winners = values == top
    share = winners / np.sum(winners, axis=axis, keepdims=True)
    return share * np.where(top == 0, 0.5, 1.0) if largest else share


def matrix_norm_grad(x, norm, ord, axes=(-2, -1)):
    """The derivative of the matrix ``ord``-norm of ``x`` over the axis pair ``axes``.

    ``norm`` has the reduced axes kept (or is a scalar).  Ties (of column or row
    sums, or of the extreme singular value) share the derivative equally, as in JAX.
    """
    if ord is None or ord == "fro":
        return np.conj(x) / norm
    x = np.moveaxis(x, axes, (-2, -1))
    if ord == "nuc":
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        grad = np.conj(u @ vt)
    elif ord in (2, -2):
        u, s, vt = np.linalg.svd(x, full_matrices=False)
        share = _extreme_share(s, ord > 0, -1)
        grad = np.conj((u * share[..., None, :]) @ vt)
    elif ord in (1, -1, np.inf, -np.inf):
        # 1-norms: the largest column sum of |x|; inf-norms: the largest row sum
        summed, across = (-2, -1) if ord in (1, -1) else (-1, -2)
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        grad = _sign(x) * _extreme_share(sums, ord > 0, across)
    else:
        raise ValueError(f"Invalid norm order {ord!r} for matrices.")
    return np.moveaxis(grad, (-2, -1), axes)


def norm_grad(x, norm, ord, axis):
    """The derivative of ``np.linalg.norm(x, ord, axis)``; ``norm`` has axes kept.

    As NumPy reads ``norm``: a vector norm over one axis (or a 1-D ``x``), a matrix
    norm over two (or a 2-D ``x``).
    """
    if axis is None:
        axis = tuple(range(np.ndim(x)))
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axis) == 1:
        return vector_norm_grad(x, norm, ord, axis)
    return matrix_norm_grad(x, norm, ord, axis)


__all__ += [
    "rhs_columns", "tensordot_lhs_bar", "tensordot_rhs_bar", "einsum_bar",
    "kron_lhs_bar", "kron_rhs_bar", "multi_dot_bars", "vector_norm_grad",
    "matrix_norm_grad", "norm_grad",
]


# ---- jets: derivatives of products, of every order, exact at zeros ---------------
# A jet ``x`` of shape ``(2**m, *shape)`` is a polynomial in m variables t_1..t_m with
# t_r**2 = 0: ``x[s]`` is the coefficient of the product of the t_r whose bit r is set
# in ``s`` (``x[0]`` the value, ``x[1]`` its tangent along t_1, ``x[3]`` the second
# derivative along t_1 and t_2, ...).  A product evaluated on jets gives the
# derivatives of that product, by multiplying only.  The derivative rules of
# prod_of_others and cumprod (and of these helpers) read coefficients of jets.


def _jet_mul(x, y):
    """The product of two jets (leading axes 2**m long); None is the jet of 1: no product."""
    if x is None or y is None:  # (its zero tangents times an inf would be NaN: JAX's is not)
        return y if x is None else x
    out = np.zeros(np.broadcast_shapes(np.shape(x), np.shape(y)), np.result_type(x, y))
    for s in range(len(out)):
        t = s
        while True:  # each subset t of s: x's monomial t times y's monomial s - t
            out[s] += x[t] * y[s ^ t]
            if t == 0:
                break
            t = (t - 1) & s
    return out


def _jet_one(like):
    """The jet of the constant 1, shaped like the jet ``like``."""
    return np.concatenate([np.ones_like(like[:1]), np.zeros_like(like[1:])])


def prod_of_others_jet(x, axis=None):
    """``prod_of_others(a, axis)`` evaluated on the jet ``x`` of ``a`` (axes of ``a``
    are the axes of ``x`` after the first)."""
    x = np.asarray(x)
    nd = x.ndim - 1
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(ax % nd for ax in np.atleast_1d(axis))
    rest = tuple(i for i in range(nd) if i not in axes)
    order = (0,) + tuple(i + 1 for i in rest + axes)
    moved = np.transpose(x, order)
    reduced = int(np.prod(moved.shape[1 + len(rest):]))  # (not -1: undecided if empty)
    flat = moved.reshape(moved.shape[: 1 + len(rest)] + (reduced,))
    n = flat.shape[-1]
    if n < 2:  # an empty axis reduced: no element, no product; one: the empty product
        return np.ones_like(x) if n == 0 else _jet_one(x)
    before = [None]  # products of the elements before each one (None: the jet of 1)
    after = [None]  # ... and after it
    for i in range(n - 1):
        before.append(_jet_mul(before[-1], flat[..., i]))
        after.append(_jet_mul(after[-1], flat[..., n - 1 - i]))
    others = np.stack([_jet_mul(b, c) for b, c in zip(before, after[::-1])], axis=-1)
    return np.transpose(others.reshape(moved.shape), np.argsort(order))


def _along_last(x, axis):
    """A jet with the axis a running product runs along (None: the flattened array)
    moved last."""
    x = np.asarray(x)
    if axis is None:
        return x.reshape(len(x), -1)
    return np.moveaxis(x, axis % (x.ndim - 1) + 1, -1)


def cumprod_jet(x, axis=None):
    """``np.cumprod(a, axis)`` evaluated on the jet ``x`` of ``a``."""
    moved = _along_last(x, axis)
    running = [moved[..., 0]]
    for i in range(1, moved.shape[-1]):
        running.append(_jet_mul(running[-1], moved[..., i]))
    out = np.stack(running, axis=-1)
    if axis is None:
        return out
    return np.moveaxis(out, -1, axis % (np.ndim(x) - 1) + 1)


def cumprod_bar_jet(h, x, axis=None):
    """``cumprod_bar(g, a, axis)`` evaluated on the jets ``h`` of ``g`` and ``x`` of
    ``a``: element j is the sum over i >= j of ``h[i]`` times the product of
    ``x[k]`` for k <= i, k != j."""
    moved = _along_last(x, axis)
    h = _along_last(h, axis)
    n = moved.shape[-1]
    before = [None]  # products of the elements before j (None: the jet of 1)
    for j in range(n - 1):
        before.append(_jet_mul(before[-1], moved[..., j]))
    # later[j] = h[j] + x[j + 1] * later[j + 1]: the sum over i >= j of h[i] times
    # the product of x[k] for j < k <= i (+ zeros_like(x), not + 0 * x: NaN at an inf)
    later = [h[..., n - 1] + np.zeros_like(moved[..., 0])]
    for j in range(n - 2, -1, -1):
        later.append(h[..., j] + _jet_mul(moved[..., j + 1], later[-1]))
    bar = np.stack([_jet_mul(b, c) for b, c in zip(before, later[::-1])], axis=-1)
    if axis is None:
        return bar.reshape(np.shape(x))
    return np.moveaxis(bar, -1, axis % (np.ndim(x) - 1) + 1)


__all__ += ["prod_of_others_jet", "cumprod_jet", "cumprod_bar_jet"]


def batch_axes(axis, rank):
    """The axis argument ``axis`` of a function applied to one example of ``rank``
    axes, for the batched array whose batch axis comes first: each axis moves up one;
    ``None`` (every axis) names every per-example axis.  Emitted by vmap where the
    axis is a value known only when the code runs."""
    if axis is None:
        return tuple(range(1, rank + 1))
    if isinstance(axis, (tuple, list, np.ndarray)):  # np.argsort(axes): an array
        return tuple(int(a) % rank + 1 for a in axis)
    return int(axis) % rank + 1



def zeros_list(ys):
    """Zero cotangents for the items a list holds now (arrays, or tuples of arrays):
    the cotangent of a list that nothing after this point reads, which the backward
    sweep pops one item at a time as it undoes the appends that filled it."""
    def zero(v):
        if isinstance(v, tuple):
            return tuple(zero(w) for w in v)
        if isinstance(v, list):
            return [zero(w) for w in v]
        return np.zeros_like(v)

    return [zero(v) for v in ys]


def einsum_bars(g, subscripts, operands, *tangents):
    """The cotangents of all of ``np.einsum(subscripts, *operands)``'s operands, a
    tuple: ``einsum_bar`` of each.  One call whose count of results the subscripts
    give, so that code which transforms an einsum's gradient again knows them all.

    With ``tangents`` (lists like ``operands``), the cotangents of
    ``einsum_tangent(subscripts, operands, *tangents)`` instead: each operand's
    derivative of ``<g, einsum_tangent(subscripts, operands, *tangents)>``.
    """
    n, r = len(operands), len(tangents)
    bars = [[] for _ in range(n)]
    for slots in _slot_choices(n, r):
        replaced = _replaced(operands, slots, tangents)
        for k in range(n):
            if k not in slots:
                bars[k].append(einsum_bar(g, subscripts, replaced, k))
    return tuple(sum(parts) if parts else np.zeros(np.shape(x), np.result_type(g, x))
                 for parts, x in zip(bars, operands))


def einsum_tangent(subscripts, operands, *tangents):
    """``np.einsum(subscripts, *operands)`` differentiated along each of ``tangents``
    (lists like ``operands``), once: the sum over each way of putting the tangents
    in distinct places of the einsum with those operands replaced by the tangents'
    there (no tangents: the einsum itself)."""
    terms = [np.einsum(subscripts, *_replaced(operands, slots, tangents))
             for slots in _slot_choices(len(operands), len(tangents))]
    if terms:
        return sum(terms)
    return np.zeros_like(np.einsum(subscripts, *operands))


def only_at(items, k, value):
    """A tuple shaped like ``items``: ``value`` in place ``k``, zeros elsewhere (one
    operand's cotangent as a direction for all of them)."""
    return tuple(value if j == k else np.zeros(np.shape(x), np.result_type(value, x))
                 for j, x in enumerate(items))


def add_each(first, *rest):
    """The item-by-item sum of tuples of arrays."""
    return tuple(sum(parts) for parts in zip(first, *rest))


__all__ += ["einsum_bars", "einsum_tangent", "multi_dot_tangent", "only_at", "add_each"]


def split_like(cot, arrays, axis):
    """``cot`` cut along ``axis`` into one piece per array of ``arrays``, each shaped
    like its array: the cotangents of the arrays a join (np.concatenate, the stacks)
    put together, as a tuple.  A piece of ``cot``'s rank spans its array's width; one
    of a lower rank (vstack's row, column_stack's column, dstack's matrix) was given a
    unit axis there.  An ``axis`` past ``cot``'s last is its last (np.hstack's axis 1
    on vectors).  One call whose count of results is the arrays' count, so that code
    which transforms a join's gradient again knows them all.

    ``arrays`` may be one array, whose rows NumPy joins (``np.vstack(x)``): its
    cotangent is then one array, the rows' pieces stacked back into its shape.
    ``axis=None`` (np.concatenate's flattened join) cuts ``cot`` by the arrays' sizes."""
    cot = np.asarray(cot)
    if axis is None:
        widths = [np.size(a) for a in arrays]
        axis = 0
    else:
        axis = min(axis, cot.ndim - 1) if axis >= 0 else axis
        widths = [np.shape(a)[axis] if np.ndim(a) == cot.ndim else 1 for a in arrays]
    pieces = np.split(cot, np.cumsum(widths)[:-1], axis=axis)
    pieces = tuple(np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays))
    if isinstance(arrays, np.ndarray):
        return np.stack(pieces)
    return pieces


def join_like(pieces, cot, arrays, axis):
    """The pieces ``split_like(cot, arrays, axis)`` cuts, joined back: each piece
    (shaped like its array) reshaped to its part of ``cot`` and the parts
    concatenated along the axis they were cut from.  ``cot`` gives only a shape."""
    if axis is None:  # np.concatenate's flattened join
        return np.concatenate([np.ravel(piece) for piece in pieces])
    rank = np.ndim(cot)
    axis = min(axis, rank - 1) if axis >= 0 else axis
    widths = [np.shape(a)[axis] if np.ndim(a) == rank else 1 for a in arrays]
    shape = list(np.shape(cot))
    parts = []
    for piece, width in zip(pieces, widths):
        shape[axis] = width
        parts.append(np.reshape(piece, shape))
    return np.concatenate(parts, axis=axis)


__all__ += ["split_like", "join_like"]


def take_along_axis_bar(cot, indices, arr, axis=-1):
    """Cotangent of ``arr`` in ``np.take_along_axis(arr, indices, axis)``: zeros
    shaped like ``arr`` with each element of ``cot`` added at the place ``indices``
    took it from (``np.add.at``: a place taken twice gets both).  ``arr`` gives only
    a shape; ``axis=None`` indexes the flattened array."""
    if axis is None:
        flat = np.zeros(np.size(arr), np.result_type(cot, arr))
        np.add.at(flat, indices, cot)
        return np.reshape(flat, np.shape(arr))
    bar = np.zeros(np.shape(arr), np.result_type(cot, arr))
    along = axis % np.ndim(arr)
    grids = list(np.indices(np.shape(cot), sparse=True))  # places on the other axes
    grids[along] = indices
    np.add.at(bar, tuple(grids), cot)
    return bar


__all__ += ["take_along_axis_bar"]


def sinc_taylor(k, x):
    """The ``k``-th derivative of ``np.sinc`` at 0, shaped like ``x``: 0 for odd ``k``,
    ``(-1)**(k/2) * pi**k / (k + 1)`` for even ``k`` (the Maclaurin series of
    ``sin(pi x) / (pi x)``).  sinc's derivative rules take it where ``x == 0`` (their
    quotient divides by zero there), and its own derivative rule gives the next one:
    so every order of derivative is right at 0, as JAX's are."""
    value = 0.0 if k % 2 else (-1) ** (k // 2) * np.pi**k / (k + 1)
    return np.full(np.shape(x), value, dtype=np.result_type(x, 1.0))


__all__ += ["sinc_taylor"]
