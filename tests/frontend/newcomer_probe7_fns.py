"""Issue 23, seventh newcomer probe: 40 short functions written the way a new NumPy/JAX
user writes them, of kinds the earlier probes (newcomer_probe4/5/6_fns.py) did not
try: an Adam loop with a state dict, training with early stopping on the loss,
velocity Verlet of two bodies over a Python loop, a Gaussian log-likelihood with
``slogdet``, a Matern kernel by broadcasting, ``np.logaddexp(0, x)``, pinball and
masked losses with ``np.where``, parameter dicts built by comprehensions, a class
hierarchy calling ``super().__call__``, chained ``@property`` reads, a
``@staticmethod`` called on the class, ``enum`` settings, annotated locals, tuple
defaults, ``math.pi``/``math.tau``, ``np.einsum``, ``np.linalg.norm(axis=...)``,
``scipy.special.logsumexp(b=...)``, recursion over a nested list, a ``while`` with a
tolerance, ``x.T @ A @ x``, ``x[::-1]``, boolean indexing by labels, gradient clipping,
``sliding_window_view``, ``lstsq``, ``scipy.linalg.cho_solve``, ``meshgrid``,
``scipy.stats``, ``np.vectorize``, ``apply_along_axis``, ``nonlocal``... written before
reading what s2s supports.  tests/frontend/test_newcomer_probe7.py runs each through
s2s and compares with JAX on this same source (``newcomer_harness.twin``) or central
differences."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Dict, List, Tuple

import numpy as np
import scipy.linalg
import scipy.special
import scipy.stats

# ---- optimization loops -----------------------------------------------------------------


def adam_loop(w, target=np.array([1.0, -0.5, 0.25, 2.0]), steps=5, lr=0.05):
    """Adam on a quartic loss, the state in a dict, bias correction by step count."""
    state = {"m": np.zeros_like(w), "v": np.zeros_like(w), "t": 0}
    b1, b2, eps = 0.9, 0.999, 1e-8
    for _ in range(steps):
        g = 2.0 * (w - target) + 0.1 * w ** 3
        state["t"] += 1
        state["m"] = b1 * state["m"] + (1 - b1) * g
        state["v"] = b2 * state["v"] + (1 - b2) * g * g
        m_hat = state["m"] / (1 - b1 ** state["t"])
        v_hat = state["v"] / (1 - b2 ** state["t"])
        w = w - lr * m_hat / (np.sqrt(v_hat) + eps)
    return np.sum((w - target) ** 2)


def early_stop_train(w0, x=np.array([[1.0, 0.5], [0.2, -1.0], [0.3, 0.8]]),
                     y=np.array([0.5, -0.3, 0.9]), lr=0.1, max_steps=50, tol=1e-3):
    """Gradient descent on least squares, stopping when the loss stops improving."""
    w = w0
    prev = np.inf
    for step in range(max_steps):
        r = x @ w - y
        loss = np.mean(r ** 2)
        if prev - loss < tol:
            break
        prev = loss
        w = w - lr * 2.0 * x.T @ r / len(y)
    return np.sum(w ** 2) + loss


def cosine_lr_loop(w, steps=6, lr_max=0.3):
    """A cosine learning-rate schedule computed with math inside the loop."""
    for t in range(steps):
        lr = 0.5 * lr_max * (1 + math.cos(math.pi * t / steps))
        g = np.sin(w) + 0.5 * w
        w = w - lr * g
    return np.sum(w ** 2)


def clip_grad_norm_step(w, max_norm=1.0, lr=0.5):
    """One SGD step with the gradient clipped elementwise and by its global norm."""
    g = 3.0 * w ** 2 - 1.0
    g = np.clip(g, -2.0, 2.0)
    norm = np.linalg.norm(g)
    g = g * min(1.0, max_norm / (norm + 1e-12))
    w = w - lr * g
    return np.sum(w ** 2) + np.sum(np.cos(w))


# ---- physics ------------------------------------------------------------------------------


def verlet_two_body(q, steps=5, dt=0.05):
    """Velocity Verlet for two bodies on springs, positions in a (2, 2) array."""
    p = np.zeros_like(q)

    def force(pos):
        d = pos[0] - pos[1]
        r = np.sqrt(d @ d)
        f = -(r - 1.0) * d / r
        return np.stack([f, -f]) - 0.1 * pos

    f = force(q)
    for _ in range(steps):
        p = p + 0.5 * dt * f
        q = q + dt * p
        f = force(q)
        p = p + 0.5 * dt * f
    return 0.5 * np.sum(p ** 2) + np.sum(q[0] * q[1])


# ---- statistics and kernels -------------------------------------------------------------


def gauss_loglik_slogdet(log_scales, x=np.array([[0.3, -0.2], [1.0, 0.4], [-0.5, 0.7]])):
    """A zero-mean Gaussian log-likelihood whose covariance is built from parameters."""
    d = x.shape[1]
    a = np.array([[1.0, 0.3], [0.3, 1.0]])
    cov = np.diag(np.exp(log_scales)) @ a @ np.diag(np.exp(log_scales))
    sign, logdet = np.linalg.slogdet(cov)
    prec = np.linalg.inv(cov)
    quad = np.einsum("ni,ij,nj->n", x, prec, x)
    return -0.5 * np.sum(quad) - 0.5 * len(x) * (logdet + d * np.log(2 * np.pi))


def matern_kernel_quadform(x, y=np.array([0.5, -0.2, 0.8]), ls=0.7):
    """A Matern-3/2 kernel matrix by broadcasting, and y^T K^-1 y."""
    diff = x[:, None, :] - x[None, :, :]
    r = np.sqrt(np.sum(diff ** 2, axis=-1) + 1e-12)
    s = math.sqrt(3.0) * r / ls
    k = (1.0 + s) * np.exp(-s) + 0.1 * np.eye(len(x))
    return y @ np.linalg.solve(k, y)


def cholesky_scipy_solve(x, y=np.array([0.5, -0.2, 0.8])):
    """A GP data fit with scipy.linalg.cho_factor/cho_solve."""
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2) + 0.2 * np.eye(len(x))
    c, low = scipy.linalg.cho_factor(k, lower=True)
    alpha = scipy.linalg.cho_solve((c, low), y)
    return y @ alpha + 2.0 * np.sum(np.log(np.diag(c)))


def stats_norm_mixture(mu, x=np.array([-1.0, 0.2, 0.9, 1.7])):
    """A two-component mixture log-likelihood with scipy.stats.norm.logpdf."""
    lp0 = scipy.stats.norm.logpdf(x, loc=mu[0], scale=0.5)
    lp1 = scipy.stats.norm.logpdf(x, loc=mu[1], scale=1.0)
    return np.sum(np.logaddexp(np.log(0.3) + lp0, np.log(0.7) + lp1))


def logsumexp_weighted_axis(x, w=np.array([[1.0, 0.5, 2.0], [0.2, 1.0, 1.0]])):
    return np.sum(scipy.special.logsumexp(x, axis=1, b=w)) + scipy.special.logsumexp(x)


def lstsq_fit_residual(y, t=np.array([0.0, 0.5, 1.0, 1.5, 2.0])):
    """A straight-line fit by least squares; the residual and slope."""
    a = np.stack([np.ones_like(t), t], axis=1)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return np.sum((a @ coef - y) ** 2) + coef[1] ** 2


# ---- losses --------------------------------------------------------------------------------


def softplus_logaddexp(x):
    return np.sum(np.logaddexp(0, x)) - np.sum(np.logaddexp(0.0, -2.0 * x))


def pinball_where(pred, target=np.array([0.1, -0.2, 0.5, 1.0]), q=0.3):
    """The quantile loss with np.where, padded entries (target 0) masked out."""
    r = target - pred
    loss = np.where(r >= 0, q * r, (q - 1) * r)
    mask = np.where(target != 0, 1.0, 0.0)
    return np.sum(loss * mask) / np.sum(mask)


def class_weighted_log_softmax(logits, labels=np.array([0, 2, 1]),
                               class_weights=np.array([1.0, 2.0, 0.5])):
    logp = scipy.special.log_softmax(logits, axis=-1)
    picked = logp[np.arange(len(labels)), labels]
    w = class_weights[labels]
    return -np.sum(w * picked) / np.sum(w)


def boolean_index_by_labels(x, labels=np.array([1, 0, 1, 1])):
    """The mean of one class's rows minus the other's: a mask from an int argument."""
    pos = x[labels == 1]
    neg = x[labels == 0]
    return np.sum(pos.mean(axis=0) ** 2) - np.sum(neg.mean(axis=0) * pos[0])


# ---- parameters in dicts and classes -------------------------------------------------------

NAMES = ["dense", "head", "bias"]


def dict_comprehension_params(x):
    params = {name: x * (i + 1) for i, name in enumerate(NAMES)}
    sizes = {k: np.sum(v ** 2) for k, v in params.items() if k != "bias"}
    return sum(sizes.values()) + np.sum(params["bias"])


class Module:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return np.tanh(self.scale * x)


class Residual(Module):
    def __call__(self, x):
        return x + super().__call__(x)


class Gated(Residual):
    def __call__(self, x):
        return super().__call__(x) * (1.0 / (1.0 + np.exp(-x)))


def super_call_hierarchy(x):
    return np.sum(Gated(0.8)(x) ** 2)


class Affine:
    def __init__(self, w, b):
        self._w = w
        self._b = b

    @property
    def w(self):
        return self._w

    @property
    def w_squared(self):
        return self.w * self.w

    @property
    def penalty(self):
        return 0.5 * np.sum(self.w_squared)

    def __call__(self, x):
        return x * self.w + self._b


def chained_properties(w, x=np.array([1.0, 2.0, -1.0, 0.5])):
    layer = Affine(w, 0.1)
    return np.sum(layer(x) ** 2) + layer.penalty


class Activations:
    @staticmethod
    def swish(v):
        return v / (1.0 + np.exp(-v))

    @staticmethod
    def mish(v):
        return v * np.tanh(np.log1p(np.exp(v)))


def staticmethod_by_class(x):
    return np.sum(Activations.swish(x) + Activations.mish(0.5 * x))


class Act(enum.Enum):
    RELU = "relu"
    TANH = "tanh"
    SOFTPLUS = "softplus"


def apply_act(v, act):
    if act == Act.RELU:
        return np.maximum(v, 0.0)
    elif act is Act.TANH:
        return np.tanh(v)
    return np.log1p(np.exp(v))


def enum_config(x, act=Act.TANH, head=Act.SOFTPLUS):
    return np.sum(apply_act(x, act) * apply_act(x, head)) + np.sum(apply_act(x, Act.RELU))


@dataclass(frozen=True)
class Poly:
    a: float = 1.0
    b: float = -0.5

    def __call__(self, v):
        return self.a * v ** 2 + self.b * v


def frozen_dataclass_call(x):
    p = Poly(2.0)
    return np.sum(p(x)) + np.sum(Poly()(np.sin(x)))


def make_counter_loss():
    calls = 0

    def loss(v):
        nonlocal calls
        calls += 1
        return calls * np.sum(v ** 2)

    return loss


def nonlocal_counter(x):
    loss = make_counter_loss()
    return loss(x) + loss(np.sin(x))  # 1 * sum(x^2) + 2 * sum(sin(x)^2)


# ---- Python idioms ---------------------------------------------------------------------------


def annotated_locals(x: np.ndarray, weights: Dict[str, float] = {"a": 1.0, "b": 0.5}
                     ) -> float:
    total: float = 0.0
    parts: List[np.ndarray] = []
    for key, wt in weights.items():
        part: np.ndarray = wt * np.sin(x)
        parts.append(part)
    pair: Tuple[np.ndarray, np.ndarray] = (parts[0], parts[1])
    total = total + np.sum(pair[0] * pair[1])
    return total


def tuple_defaults_reshape(x, shape=(2, 3), scales=(1.0, 0.5, 0.25)):
    m = x.reshape(shape)
    col = np.array(scales)
    return np.sum(np.tanh(m) * col) + np.sum(m.sum(axis=1) ** 2)


def math_constants_periodic(x, period=2.0):
    phase = 2 * math.pi * x / period
    return np.sum(np.sin(phase) + np.cos(math.tau * x) / math.e) + math.sqrt(2) * np.sum(x)


def recursive_sum(tree):
    if isinstance(tree, list):
        return sum(recursive_sum(t) for t in tree)
    return np.sum(tree ** 2)


def recursive_nested_list(x):
    nested = [x[:2], [x[2:4], [x[4:]]], [np.sin(x)]]
    return recursive_sum(nested)


def series_while_tolerance(x, tol=1e-10):
    """exp(x) summed term by term until the terms are small."""
    term = np.ones_like(x)
    total = np.ones_like(x)
    k = 1
    while np.max(np.abs(term)) > tol:
        term = term * x / k
        total = total + term
        k += 1
    return np.sum(total * np.cos(x))


def generator_sum_penalty(w, ws=(np.array([1.0, -2.0]), np.array([0.5, 0.5]))):
    l1 = sum(np.sum(np.abs(v)) for v in ws)
    l2 = sum(np.sum((w * v) ** 2) for v in ws)
    return l1 + l2 + np.sum(np.abs(w))


def filtered_comprehension(x):
    evens = [x[i] ** 2 for i in range(len(x)) if i % 2 == 0]
    odds = [np.sin(x[i]) for i in range(len(x)) if i % 2 == 1]
    return sum(evens) * sum(odds)


# ---- NumPy idioms --------------------------------------------------------------------------


def einsum_bilinear(x, a=np.array([[1.0, 0.2, 0.0], [0.1, 2.0, -0.3], [0.0, 0.4, 1.5]])):
    rows = np.einsum("ij,jk->ik", x, a)
    return np.einsum("i,ij,j->", x[0], a, x[1]) + np.einsum("ij,ij->", rows, x)


def cosine_similarity_norm_axis(x):
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    sim = xn @ xn.T
    return np.sum(sim ** 2) + np.sum(np.linalg.norm(x, axis=0))


def quadratic_form_transpose(x, a=np.array([[2.0, 0.5], [0.5, 1.0]]), b=np.array([1.0, -1.0])):
    return x.T @ a @ x + b.T @ x + (x @ x) ** 2


def reversed_and_strided(x):
    return np.sum(x * x[::-1]) + np.sum(x[1::2] ** 2) - np.sum(x[-2::-2]) + x[::-1][0] ** 3


def sliding_window_mean(x, k=3):
    win = np.lib.stride_tricks.sliding_window_view(x, k)
    return np.sum(win.mean(axis=1) ** 2) + np.sum(win.max(axis=1))


def meshgrid_surface(x, y=np.array([0.0, 0.5, 1.0])):
    xx, yy = np.meshgrid(x, y)
    return np.sum(np.sin(xx) * np.cos(yy) * xx)


def outer_trace_kron(x):
    m = np.outer(x, x)
    k = np.kron(m[:2, :2], np.eye(2))
    return np.trace(m @ m) + np.sum(k) + np.sum(np.tile(x, 2) * np.arange(2 * len(x)))


def vectorize_python_fn(x):
    def smooth_step(v):
        return 3 * v ** 2 - 2 * v ** 3

    f = np.vectorize(smooth_step)
    return np.sum(f(x))


def apply_along_axis_rows(x):
    def row_energy(r):
        return np.sum(r ** 2) - r[0] * r[-1]

    return np.sum(np.apply_along_axis(row_energy, 1, x))


def topk_sorted_reverse(x, k=2):
    s = np.sort(x)[::-1]
    return np.mean(s[:k]) - np.mean(s[-k:])


def inv_det_solve(x, b=np.array([1.0, 0.5])):
    a = np.array([[2.0 + x[0] ** 2, x[1]], [x[1], 1.0 + x[2] ** 2]])
    sol = np.linalg.inv(a) @ b
    return np.sum(sol ** 2) + np.log(np.linalg.det(a))
