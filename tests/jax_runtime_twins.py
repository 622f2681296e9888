"""JAX oracles for s2s's runtime helpers (``s2s/runtime.py``), written from what each
helper means, not from its code.

The *_bar helpers are cotangents of products: here each is JAX's own pullback of the
product (``jax.vjp``).  The jets are the product evaluated on a polynomial in
nilpotent variables: here each coefficient is a mixed partial derivative, taken by
nested ``jax.jvp``, of the product applied to that polynomial.  The norms' helpers
are gradients of norms (``jax.grad``), with the given ``norm`` where the gradient
divides by it.  Same names and parameters as the helpers.
"""

from __future__ import annotations

import functools
import itertools
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss


def _pullback(fn, primal, cotangent):
    """The cotangent of ``primal`` for ``fn(primal)``'s cotangent (JAX's VJP)."""
    return jax.vjp(fn, primal)[1](cotangent)[0]


# ---- broadcasting, products of two arrays ------------------------------------------


def unbroadcast(cot, x):
    """``cot`` summed back to ``x``'s shape: the cotangent of broadcasting ``x``."""
    like_x = jnp.zeros(jnp.shape(x), jnp.result_type(cot))  # x gives only a shape
    return _pullback(lambda y: jnp.broadcast_to(y, jnp.shape(cot)), like_x, cot)


def real_only(x, what):
    """``x`` itself (s2s's refuses complex values; the rows draw real ones)."""
    return x


def python_float(x):
    """``x`` itself (a JAX value is no NumPy scalar: s2s's leaves it as it is)."""
    return x


def own_copy(x):
    """``x`` itself (a JAX value is immutable: s2s's copies NumPy arrays only)."""
    return x


def cov_weights(w, name):
    """``w`` itself (jnp.cov checks no weights; s2s's raises as NumPy does)."""
    return w


def list_item(x, items, index):
    """``x`` itself (a JAX value is no NumPy scalar: s2s's returns it as it is)."""
    return x


def in_place(value, target):
    """``value`` in ``target``'s dtype where ``target`` has axes (s2s's: NumPy's write
    into the array), else as it is."""
    dtype = jnp.result_type(target)
    if jnp.ndim(target) == 0 or jnp.result_type(value) == dtype or not jnp.can_cast(
            jnp.result_type(value), dtype, "same_kind"):
        return value
    return jnp.asarray(value).astype(dtype)


def matmul_lhs_bar(cot, x1, x2):
    return _pullback(lambda y: jnp.matmul(y, x2), x1, cot)


def matmul_rhs_bar(cot, x1, x2):
    return _pullback(lambda y: jnp.matmul(x1, y), x2, cot)


def dot_lhs_bar(cot, x1, x2):
    return _pullback(lambda y: jnp.dot(y, x2), x1, cot)


def dot_rhs_bar(cot, x1, x2):
    return _pullback(lambda y: jnp.dot(x1, y), x2, cot)


def tensordot_lhs_bar(cot, a, b, axes):
    return _pullback(lambda y: jnp.tensordot(y, b, axes), a, cot)


def tensordot_rhs_bar(cot, a, b, axes):
    return _pullback(lambda y: jnp.tensordot(a, y, axes), b, cot)


def kron_lhs_bar(cot, a, b):
    return _pullback(lambda y: jnp.kron(y, b), a, cot)


def kron_rhs_bar(cot, a, b):
    return _pullback(lambda y: jnp.kron(a, y), b, cot)


def einsum_bar(cot, subscripts, operands, k):
    """The cotangent of ``operands[k]`` in ``einsum(subscripts, *operands)``."""
    ops = list(operands)

    def with_k(y):
        return jnp.einsum(subscripts, *ops[:k], y, *ops[k + 1:])

    return _pullback(with_k, ops[k], cot)


def einsum_bars(cot, subscripts, operands):
    """Every operand's cotangent in ``einsum(subscripts, *operands)``, a tuple."""
    return tuple(einsum_bar(cot, subscripts, operands, k) for k in range(len(operands)))


def split_like(cot, arrays, axis):
    """``cot`` cut along ``axis`` (past its last: its last) into pieces shaped like
    ``arrays``: a same-rank array's width, a unit width for a lower-rank one."""
    cut = min(axis, jnp.ndim(cot) - 1) if axis >= 0 else axis
    widths = [jnp.shape(a)[cut] if jnp.ndim(a) == jnp.ndim(cot) else 1 for a in arrays]
    pieces = jnp.split(cot, list(itertools.accumulate(widths))[:-1], axis=cut)
    return tuple(jnp.reshape(p, jnp.shape(a)) for p, a in zip(pieces, arrays))


def multi_dot_bars(cot, arrays):
    """The cotangents of all the arrays of ``multi_dot(arrays)`` (stacked where
    their shapes agree, as the rule table's cotangents are)."""
    bars = jax.vjp(lambda *ys: jnp.linalg.multi_dot(ys), *list(arrays))[1](cot)
    return jnp.stack(bars) if len({jnp.shape(b) for b in bars}) == 1 else list(bars)


# ---- reshaping -----------------------------------------------------------------------


def weights_along(weights, a, axis):
    """1-D weights of an average over ``axis`` of ``a``, laid along that axis so that
    they broadcast against ``a``; weights of ``a``'s rank as they are."""
    if axis is None or jnp.ndim(weights) == jnp.ndim(a):
        return weights
    trailing = jnp.ndim(a) - axis % jnp.ndim(a) - 1  # a's axes after ``axis``
    return jnp.expand_dims(weights, tuple(range(1, 1 + trailing)))


def rhs_columns(v, b):
    """``v`` as columns where ``solve``'s ``b`` is a vector."""
    return v[..., None] if jnp.ndim(b) == 1 else v


# ---- products, exact at zeros --------------------------------------------------------


def prod_of_others(a, axis=None):
    """The gradient of the product over ``axis`` (of each reduced group)."""
    return jax.grad(lambda y: jnp.sum(jnp.prod(y, axis=axis)))(a)


def cumprod_bar(cot, a, axis=None):
    return _pullback(lambda y: jnp.cumprod(y, axis=axis), a, cot)


def cumprod_tangent(v, a, axis=None):
    return jax.jvp(lambda y: jnp.cumprod(y, axis=axis), (a,), (v,))[1]


def det_cofactor(a, det_a):
    """The cofactor matrix, det's gradient (JAX's, exact at singular matrices too);
    ``det_a`` (``det(a)``) is read by s2s's helper only, its derivative through ``a``."""
    return jnp.vectorize(jax.grad(jnp.linalg.det), signature="(n,n)->(n,n)")(a)


def cumprod_tangent2(v, w, a, axis=None):
    return jax.jvp(lambda y: cumprod_tangent(v, y, axis), (a,), (w,))[1]


def _on_jets(fn, *jets):
    """``fn`` evaluated on jets: ``jet[s]`` is the coefficient of the product of the
    variables t_r whose bit r is set in s.  Coefficient s of the result is the mixed
    partial derivative, once along each of those t_r, of ``fn`` of the polynomials
    at t = 0."""
    size = len(jets[0])
    m = size.bit_length() - 1

    def polynomial(jet, t):
        return sum(jet[s] * math.prod([t[r] for r in range(m) if s >> r & 1])
                   for s in range(size))

    def at(t):
        return fn(*(polynomial(jnp.asarray(j), t) for j in jets))

    def along(f, r):
        return lambda t: jax.jvp(f, (t,), (jnp.eye(m)[r],))[1]

    out = []
    for s in range(size):
        f = at
        for r in range(m):
            if s >> r & 1:
                f = along(f, r)
        out.append(f(jnp.zeros(m)))
    return jnp.stack(out)


def prod_of_others_jet(x, axis=None):
    return _on_jets(lambda a: prod_of_others(a, axis), x)


def cumprod_jet(x, axis=None):
    return _on_jets(lambda a: jnp.cumprod(a, axis=axis), x)


def cumprod_bar_jet(h, x, axis=None):
    return _on_jets(lambda g, a: cumprod_bar(g, a, axis), h, x)


# ---- gradients of norms ----------------------------------------------------------------


def _is_inf(ord):
    return ord is not None and not isinstance(ord, str) and math.isinf(ord)


def vector_norm_grad(x, norm, ord, axis=None):
    """The gradient of the vector ``ord``-norm over ``axis``, where the norm's value
    is ``norm`` (reduced axes kept): for p-norms, the gradient of
    sum(|x|**p) / (p norm**(p-1)); for ord 0, 1, +-inf JAX's gradient of the norm."""
    if ord == 0 or ord == 1 or _is_inf(ord):
        return jax.grad(lambda y: jnp.sum(jnp.linalg.vector_norm(y, ord=ord, axis=axis)))(x)
    p = 2 if ord is None else ord
    powers = jax.grad(lambda y: jnp.sum(jnp.abs(y) ** p))(x)
    return powers / (p * norm ** (p - 1))


def matrix_norm_grad(x, norm, ord, axes=(-2, -1)):
    """The gradient of the matrix ``ord``-norm over the axis pair ``axes``; the
    Frobenius norm's divides by the given ``norm``."""
    if ord is None or ord == "fro":
        return jax.grad(lambda y: jnp.sum(y**2))(x) / (2 * norm)
    return jax.grad(lambda y: jnp.sum(jnp.linalg.norm(y, ord, tuple(axes))))(x)


def norm_grad(x, norm, ord, axis):
    """``np.linalg.norm``'s reading: a vector norm over one axis or of a vector, a
    matrix norm over two axes or of a matrix."""
    axes = tuple(range(jnp.ndim(x))) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    if len(axes) == 1:
        return vector_norm_grad(x, norm, ord, axes)
    return matrix_norm_grad(x, norm, ord, axes)


# ---- scipy.special -----------------------------------------------------------------------

special_erf = jss.erf
special_erfc = jss.erfc
special_erfinv = jss.erfinv
special_gammaln = jss.gammaln
special_digamma = jss.digamma
special_polygamma = jss.polygamma
special_expit = jss.expit
special_logit = jss.logit
special_xlogy = jss.xlogy
special_xlog1py = jss.xlog1py


def special_logsumexp(a, axis=None, b=None, keepdims=False):
    return jss.logsumexp(a, axis=axis, b=b, keepdims=keepdims)


def special_softmax(x, axis=None):
    return jss.softmax(x, axis=axis)


def special_log_softmax(x, axis=None):
    return jss.log_softmax(x, axis=axis)


# ---- sinc's derivatives at 0 ----------------------------------------------------------


def _sinc_derivative_at_zero(k):
    """The k-th derivative of jnp.sinc at 0, by nesting jax.grad."""
    f = jnp.sinc
    for _ in range(k):
        f = jax.grad(f)
    return f(0.0)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def sinc_taylor(k, x):
    """A constant, sinc's k-th derivative at 0, whose derivative is the (k+1)-th (the
    convention sinc's own derivative rules use where x == 0)."""
    return jnp.full(jnp.shape(x), _sinc_derivative_at_zero(k), jnp.result_type(x, 1.0))


@sinc_taylor.defjvp
def _sinc_taylor_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return sinc_taylor(k, x), sinc_taylor(k + 1, x) * t
