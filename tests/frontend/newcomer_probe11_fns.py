"""Issue 23, eleventh newcomer probe: 50 short functions written the way a JAX/NumPy user
writes them, in styles the ten earlier probes did not cover: training steps and pytrees
without ``jax.tree_util`` (a dict step zipping params with grads, f-string keys, nested
tuples of layers, a recursive tuple map, ``NamedTuple._replace``, ``dataclasses.replace``,
a history dict of lists, a class with ``__call__`` over its coefficients); NumPy idioms
(an ``np.einsum`` spec zoo with ``optimize=True``, nested ``np.where``, ``np.clip`` then
``np.log``, matrix and vector norms of negative and fractional order, ``@`` and
``np.inner``/``np.vdot``/``np.tensordot`` with 1-D operands, a kernel density by ``[:,
None]``, ragged parts joined after a loop, ``np.roll`` with a tuple shift, ``np.diff``
with ``prepend``/``append``, ``np.kron``/``np.tril``/``np.triu``/``np.trace`` with
offsets, a Cholesky log-determinant, ridge regression in closed form, mish/selu/elu/hard
sigmoid, RMS and layer norm, attention with a padding mask, ``np.average`` with weights
and ``np.quantile``, ``np.cov``/``np.corrcoef``, ``np.convolve``/``np.correlate``,
``np.unravel_index`` of an argmax, an elementwise-function zoo, soft thresholding,
``np.floor``/``np.round`` in a straight-through sum, a triangle's area by ``np.cross``,
``np.diag`` both ways, ``dtype=`` keywords of reductions, ``np.mean`` of a list of
scalars); and Python forms (a Newton iteration on Python floats with a tolerance,
``try``/``except``/``else``/``finally``, an early return in a loop over stages, asserts
with ``%`` and ``str.format``, ``math.*`` on Python floats, ``np.float32(...)`` casts,
keyword-only arguments, ``**{**defaults, **overrides}``, ``map`` with a lambda,
``sorted``/``min`` with a key, ``divmod`` indices, ``zip(..., strict=True)`` with
``enumerate(start=1)``, a ``while`` over a Python counter, a branch on ``x.ndim``, rows
filled into ``np.empty_like``, an in-place add of overlapping slices, an assert on
``np.isfinite``).  tests/frontend/test_newcomer_probe11.py runs each through s2s and
compares with JAX on this same source (``newcomer_harness.twin``) or central
differences."""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np

# ---- training steps and pytrees without jax.tree_util --------------------------------------


def dict_sgd_two_steps(w, lr=0.1):
    params = {"w": w[:3], "b": w[3:]}
    for _ in range(2):
        grads = {"w": 2.0 * params["w"] + np.sin(params["w"]), "b": params["b"] * 4.0}
        params = {k: p - lr * g for (k, p), g in zip(params.items(), grads.values())}
    return sum(np.sum(p ** 2) for p in params.values())


def fstring_keyed_params(x, n_layers=3):
    params = {f"w{i}": x * (i + 1.0) for i in range(n_layers)}
    params.update({f"b{i}": np.full(x.shape, 0.1 * i) for i in range(n_layers)})
    h = x
    for i in range(n_layers):
        h = np.tanh(params[f"w{i}"] * h + params[f"b{i}"])
    return np.sum(h ** 2) + 0.01 * sum(np.sum(v ** 2) for k, v in params.items()
                                       if k.startswith("w"))


def nested_tuple_layers(x, layers=((np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.1, 0.0])),
                                   (np.array([[1.0, 0.4], [-0.3, 0.8]]), np.array([0.0, -0.2])))):
    scales = (1.0, 0.5)
    h = x
    for (w, b), s in zip(layers, scales):
        h = s * np.tanh(h @ w + b)
    (w0, _), (_, b1) = layers
    return np.sum(h ** 2) + np.sum(w0 @ x) * 0.1 + np.sum(b1 * h)


def _tmap(f, t):
    return tuple(_tmap(f, u) if isinstance(u, tuple) else f(u) for u in t)


def _tsum(t):
    return sum(_tsum(u) if isinstance(u, tuple) else np.sum(u) for u in t)


def recursive_tuple_map(x):
    tree = (x, (x[:2] * 2.0, (np.sin(x), x[1:])))
    return _tsum(_tmap(lambda a: a ** 2, tree))


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray
    scale: float = 2.0


def namedtuple_replace_step(x, lr=0.1):
    p = Params(w=x[:2], b=x[2:])
    g = Params(*[2.0 * v for v in p[:2]])
    p = p._replace(w=p.w - lr * g.w, b=p.b - lr * g.b)
    return p.scale * sum(np.sum(v ** 2) for v in (p.w, p.b)) + np.sum(np.cos(p.w))


@dataclasses.dataclass
class Cfg:
    lr: float = 0.1
    steps: int = 2
    decay: float = 0.9


def dataclass_replace_cfg(w, cfg=Cfg()):
    fine = dataclasses.replace(cfg, lr=cfg.lr * 0.5, steps=3)
    for c in (cfg, fine):
        for _ in range(c.steps):
            w = w - c.lr * (w ** 3 - np.cos(w))
            c = dataclasses.replace(c, lr=c.lr * c.decay)
    return np.sum(w ** 2)


def history_dict_lists(w, lr=0.2):
    history = {"loss": [], "w": []}
    for _ in range(3):
        loss = np.sum((w - 1.0) ** 2 * np.exp(-w))
        history["loss"].append(loss)
        w = w - lr * (2.0 * (w - 1.0) * np.exp(-w) - (w - 1.0) ** 2 * np.exp(-w))
        history["w"].append(w)
    return history["loss"][-1] + 0.5 * np.sum(history["w"][0] * history["w"][-1])


class Poly:
    def __init__(self, coefs):
        self.coefs = list(coefs)

    def __call__(self, x):
        return sum(c * x ** i for i, c in enumerate(self.coefs))


def callable_poly_class(x):
    p = Poly([0.5, -1.0, 0.25])
    q = Poly(reversed(p.coefs))
    return np.sum(p(x) * q(x)) + np.sum(Poly([1.0, 2.0])(p(x)))


# ---- NumPy idioms --------------------------------------------------------------------------


def einsum_spec_zoo(m, v=np.array([0.5, -1.0, 2.0])):
    a = np.einsum("ij->", m)
    b = np.einsum("ii->i", m)
    c = np.einsum("ij,j->i", m, v)
    d = np.einsum("ij,ij->i", m, m)
    e = np.einsum("i,j->ij", v, np.diag(m))
    f = np.einsum("ij,jk,kl->il", m, m.T, m, optimize=True)
    g = np.einsum("ji", m)
    return a + np.sum(b ** 2) + c @ d + np.sum(e * g) + 0.1 * np.trace(f)


def where_chain_piecewise(x):
    y = np.where(x < -1.0, -1.0 - x,
                 np.where(x > 1.0, x ** 2, np.where(x < 0.0, 0.5 * x, np.sin(x))))
    return np.sum(y * np.arange(1.0, x.size + 1.0))


def clip_then_log_bce(z, y=np.array([1.0, 0.0, 1.0, 0.0, 1.0]), eps=1e-7):
    p = 1.0 / (1.0 + np.exp(-z))
    p = np.clip(p, eps, 1.0 - eps)
    return -np.mean(y * np.log(p) + (1.0 - y) * np.log(1.0 - p))


def norm_negative_orders(m):
    a = np.linalg.norm(m, ord=-np.inf, axis=1)
    b = np.linalg.norm(m, ord=-1)
    c = np.linalg.norm(m, ord=-2)
    d = np.linalg.norm(m.ravel(), ord=0.5)
    e = np.linalg.norm(m, axis=0, keepdims=True)
    return np.sum(a) + b + c + d + np.sum(m / e)


def matmul_1d_operands(x, m=np.array([[1.0, 0.5, -0.2], [0.3, -1.0, 0.4], [0.0, 0.2, 2.0]])):
    a = x @ m
    b = m @ x
    c = x @ x
    d = np.matmul(x, m) @ x
    return (np.sum(a * b) + c + d + np.inner(x, a) + np.vdot(b, x)
            + np.tensordot(x, m, axes=1) @ np.ones(3))


def broadcast_none_kde(x, grid=np.linspace(-2.0, 2.0, 5), h=0.5):
    z = (grid[:, None] - x[None, :]) / h
    dens = np.exp(-0.5 * z ** 2).sum(axis=1) / (len(x) * h * math.sqrt(2.0 * math.pi))
    return np.sum(np.log(dens + 1e-3)) + np.sum(x[..., None] * x[None, ...])


def concat_ragged_loop(x):
    parts = []
    for i in range(x.size):
        parts.append(x[:i + 1] ** 2 * (i + 1))
    flat = np.concatenate(parts)
    rows = [np.stack([x[i], x[-1 - i]]) for i in range(x.size)]
    grid = np.stack(rows, axis=-1)
    return np.sum(flat * np.linspace(0.1, 1.0, flat.size)) + np.sum(np.sin(grid) * grid[::-1])


def roll_tuple_shift(m):
    a = np.roll(m, shift=(1, -1), axis=(0, 1))
    b = np.roll(m, 2)
    c = np.flip(m)
    rows = [np.sum(r ** 2) for r in reversed(list(m))]
    return np.sum(a * m) + np.sum(b * c) + sum(i * r for i, r in enumerate(rows))


def diff_prepend_append(m):
    a = np.diff(m, n=2, axis=1)
    b = np.diff(m[0], prepend=0.0, append=m[0, -1] ** 2)
    c = np.diff(m, axis=0)
    return np.sum(a ** 2) + np.sum(b ** 3) + np.sum(np.abs(c + 0.5))


def kron_tril_triu_trace(m):
    k = np.kron(m, np.array([[1.0, -1.0], [0.5, 2.0]]))
    lo = np.tril(k, k=-1)
    up = np.triu(k, 1)
    return np.sum(lo ** 2) - np.sum(up) + np.trace(k, offset=1) + np.trace(m @ m, offset=-1)


def cholesky_logdet_solve(m, b=np.array([[1.0, 0.0], [0.5, -1.0], [0.0, 2.0]])):
    a = m @ m.T + 3.0 * np.eye(m.shape[0])
    chol = np.linalg.cholesky(a)
    logdet = 2.0 * np.sum(np.log(np.diag(chol)))
    sol = np.linalg.solve(a, b)
    linv = np.linalg.inv(chol)
    return logdet + np.sum(sol * b) + np.sum(linv @ b)


def ridge_closed_form(y, lam=0.1):
    t = np.linspace(-1.0, 1.0, y.size)
    a = np.column_stack([t ** p for p in range(3)])
    w = np.linalg.solve(a.T @ a + lam * np.eye(a.shape[1]), a.T @ y)
    r = a @ w - y
    return r @ r + lam * w @ w


def activation_zoo(x):
    softplus = np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)
    mish = x * np.tanh(softplus)
    alpha, lam = 1.6732632423543772, 1.0507009873554805
    selu = lam * np.where(x > 0.0, x, alpha * np.expm1(x))
    hard_sigmoid = np.clip(x / 6.0 + 0.5, 0.0, 1.0)
    return np.sum(mish) + np.sum(selu ** 2) + np.sum(hard_sigmoid * x)


def rms_layer_norm(x, gamma=np.array([1.0, 0.5, -1.0]), beta=np.array([0.1, 0.0, -0.1]),
                   eps=1e-6):
    rms = x * np.mean(x ** 2, axis=-1, keepdims=True) ** -0.5
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    ln = gamma * (x - mu) / np.sqrt(var + eps) + beta
    return np.sum(rms * ln) + np.sum(np.tanh(ln))


def padded_attention(q, lengths=np.array([3, 2])):
    b, t, d = q.shape
    mask = np.arange(t)[None, :] < lengths[:, None]
    s = np.einsum("btd,bsd->bts", q, q) / np.sqrt(d)
    s = np.where(mask[:, None, :], s, -1e9)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)
    out = p @ q
    return np.sum(out * mask[..., None]) + np.sum(out ** 2)


def average_quantile(x, w=np.array([1.0, 2.0, 0.5, 1.5, 1.0])):
    avg = np.average(x, weights=w)
    q = np.quantile(x, 0.25)
    p = np.percentile(x, np.array([10.0, 90.0]))
    return avg * 2.0 + q + np.sum(p * np.array([1.0, -0.5])) + np.average(x ** 2)


def cov_corrcoef(m):
    c = np.cov(m)
    r = np.corrcoef(m)
    cr = np.cov(m, rowvar=False, ddof=0)
    return np.sum(c * np.arange(1.0, c.size + 1.0).reshape(c.shape)) + np.sum(r ** 2) + np.trace(cr)


def convolve_modes(x, k=np.array([0.25, 0.5, 0.25])):
    v = np.convolve(x, k, mode="valid")
    s = np.convolve(x, np.array([1.0, -1.0]), mode="same")
    f = np.convolve(x, k)
    c = np.correlate(x, k, mode="valid")
    return np.sum(v ** 2) + np.sum(s * x) + np.sum(f * np.arange(f.size)) + np.sum(c * v)


def unravel_argmax(m):
    i, j = np.unravel_index(np.argmax(m), m.shape)
    row, col = m[i], m[:, j]
    return np.sum(row ** 2) + np.sum(col) * m[i, j]


def elementwise_zoo(x):
    a = np.exp2(x) + np.log2(x ** 2 + 1.0) + np.log10(np.abs(x) + 1.0)
    b = np.cbrt(x) * np.square(x) + np.reciprocal(x ** 2 + 2.0)
    c = np.float_power(np.abs(x) + 0.5, 1.5) + np.power(x, 3) + np.negative(x) * np.positive(x)
    return np.sum(a) + np.sum(b) + np.sum(c)


def soft_threshold_prox(x, lam=0.3):
    z = np.sign(x) * np.maximum(np.abs(x) - lam, 0.0)
    return np.sum(z ** 2) + np.sum(z * x) + lam * np.linalg.norm(z, 1)


def floor_round_straight(x):
    frac = x - np.floor(x)
    r = np.round(x * 4.0) / 4.0
    st = x + (r - x) * 1.0
    return np.sum(frac ** 2) + np.sum(st * x) + np.sum(np.ceil(x) * x) + np.sum(np.trunc(x * 2.0))


def triangle_area_cross(p):
    a, b, c = p[0], p[1], p[2]
    n = np.cross(b - a, c - a)
    area = 0.5 * np.linalg.norm(n)
    u, v = b - a, c - a
    cos = np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v))
    return area + np.arccos(np.clip(cos, -1.0, 1.0))


def diag_vector_matrix(m):
    d = np.diag(m)
    dm = np.diag(d ** 2)
    up = np.diag(m, k=1)
    dg = np.diagonal(m, offset=-1)
    return np.sum(dm @ m) + np.sum(up * dg) + np.sum(np.diag(np.exp(up)))


def sum_dtype_kwarg(x):
    s = np.sum(x ** 2, dtype=x.dtype)
    mn = np.mean(x, dtype=x.dtype)
    c = np.cumsum(x, dtype=x.dtype)
    return s + mn * 2.0 + np.sum(c * np.sin(c))


def np_mean_of_list(x):
    terms = [np.sum(x ** 2), np.sum(np.sin(x)), x[0] * x[-1]]
    return np.mean(terms) + np.max([x[1], 0.5 * x[2]]) + np.sum(np.asarray(terms) ** 2)


# ---- Python forms --------------------------------------------------------------------------


def _newton_sqrt_float(c, tol=1e-12):
    r = c if c > 1.0 else 1.0
    while abs(r * r - c) > tol:
        r = 0.5 * (r + c / r)
    return r


def newton_python_float(x, c=2.0):
    root = _newton_sqrt_float(c)
    inv = _newton_sqrt_float(1.0 / c)
    return np.sum(np.sin(root * x)) + inv * np.sum(x ** 2)


def try_except_else(x):
    try:
        y = np.log1p(x ** 2)
    except (ValueError, ZeroDivisionError):
        y = x
    else:
        y = y + 0.5 * x
    finally:
        z = np.cos(x)
    try:
        pass
    except Exception:
        raise
    return np.sum(y * z)


def early_return_named_stage(x, stages=(("scale", 2.0), ("sin", 0.0), ("stop", 0.0),
                                        ("square", 0.0))):
    y = x
    for name, arg in stages:
        if name == "stop":
            return np.sum(y ** 2)
        if name == "scale":
            y = y * arg
        elif name == "sin":
            y = np.sin(y)
    return np.sum(y)


def assert_percent_format(x):
    assert x.ndim == 1, "expected a vector, got %d dims" % x.ndim
    assert x.shape[0] >= 2, "need {} or more, got {}".format(2, x.shape[0])
    n = x.shape[0]
    return np.sum(x[: n // 2] ** 2) - np.sum(x[n // 2:] ** 3)


def math_module_floats(x, t=0.3):
    a = math.erf(t) + math.gamma(2.5) + math.copysign(1.0, -t) + math.cos(math.radians(30.0))
    b = math.hypot(3.0, 4.0) + math.log(8.0, 2) + math.floor(x.shape[0] / 3) + math.isclose(t, 0.3)
    return a * np.sum(x ** 2) + b * np.sum(np.sin(x)) + math.tau * math.fabs(-t)


def float32_casts(x):
    half = np.float32(0.5)
    two = np.float64(2.0)
    y = half * x + two * x ** 2
    z = (x * 3).astype(x.dtype) + np.asarray(0.25, dtype=x.dtype)
    return np.sum(y * z) + np.sum(np.tanh(x).astype(x.dtype))


def kwonly_defaults(x, scale=2.0, *, shift=0.1, power=3):
    return np.sum((scale * x + shift) ** power) + _kwonly_helper(x, shift=-shift)


def _kwonly_helper(x, *, shift, power=2):
    return np.sum(np.abs(x - shift) ** power)


def dict_merge_kwargs(x, **overrides):
    defaults = {"a": 1.0, "b": 0.5, "c": -0.25}
    opts = {**defaults, **overrides, "c": 0.75}
    return _poly_terms(x, **opts) + _poly_terms(x, **{**opts, "a": 0.0})


def _poly_terms(x, a, b, c):
    return np.sum(a * x ** 2 + b * np.sin(x) + c)


def map_lambda_sorted_key(x):
    parts = {"c": x[2:], "a": x[:2], "b": x[1:3]}
    ordered = sorted(parts.items(), key=lambda kv: kv[0], reverse=True)
    sq = list(map(lambda kv: np.sum(kv[1] ** 2), ordered))
    shortest = min(parts.values(), key=len)
    longest = max(parts, key=lambda k: parts[k].shape[0])
    return sum(w * s for w, s in zip((1.0, 2.0, 3.0), sq)) + np.sum(shortest) * np.sum(parts[longest])


def divmod_index_loop(x, m=np.array([[1.0, -0.5], [0.25, 2.0], [0.0, 1.5]])):
    acc = 0.0
    for k in range(x.size):
        i, j = divmod(k, m.shape[1])
        acc = acc + m[i % m.shape[0], j] * x[k] ** (k // 2 + 1)
    return acc + x[-1 % x.size] * x[x.size // 2]


def zip_strict_enumerate_start(x, w=np.array([0.5, 1.0, -1.0, 2.0])):
    total = 0
    for i, (a, b) in enumerate(zip(x, w, strict=True), start=1):
        total += i * a * b + a ** 2 / i
    return total


def while_static_counter(x):
    i, acc = 0, 0.0
    while i < len(x):
        acc += np.sin(x[i]) * (i + 1)
        i += 2
    j = len(x) - 1
    while j >= 0 and j > len(x) - 3:
        acc = acc + x[j] ** 2
        j -= 1
    return acc


def ndim_branch_promote(x):
    if x.ndim == 1:
        x = x[None, :]
    if x.shape[0] == 1:
        x = np.concatenate([x, 2.0 * x], axis=0)
    return np.sum(np.tanh(x) * x[::-1]) + np.sum(x.mean(axis=0) ** 2)


def empty_like_row_fill(m):
    out = np.empty_like(m)
    for i, row in enumerate(m):
        out[i, :] = row / (np.sum(np.abs(row)) + 1.0)
    return np.sum(out ** 2) + np.sum(out[:, 0] * m[:, -1])


def overlapping_inplace_slices(x):
    y = x.copy()
    y[::2] *= 2.0
    y[1:] += y[:-1]
    return np.sum(y ** 2 * np.arange(1.0, y.size + 1.0))


def assert_isfinite_guard(x):
    assert np.all(np.isfinite(x)), "non-finite input"
    if not np.any(np.isnan(x)):
        x = x * 1.5
    return np.sum(x ** 2)
