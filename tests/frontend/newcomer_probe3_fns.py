"""Issue 23, third newcomer probe: everyday NumPy functions people write and then
differentiate with jax.grad (scientific code, statistics, ML, optimization, numerical
tricks, Python idioms).  tests/frontend/test_newcomer_probe3.py runs each through s2s
and compares with JAX on this same source (``jax_twin``: numpy swapped for
jax.numpy; ``sps`` for jax.scipy.special)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.special as sps

# ---- scientific code -----------------------------------------------------------------

DT = 0.05


def euler_decay(k, y0=1.0, steps=10):
    y = y0
    for _ in range(steps):
        y = y + DT * (-k * y)
    return y


def rk4_pendulum(theta0, omega0=0.0, steps=8, h=0.1):
    def f(th, om):
        return om, -9.81 * np.sin(th)

    th, om = theta0, omega0
    for _ in range(steps):
        k1 = f(th, om)
        k2 = f(th + 0.5 * h * k1[0], om + 0.5 * h * k1[1])
        k3 = f(th + 0.5 * h * k2[0], om + 0.5 * h * k2[1])
        k4 = f(th + h * k3[0], om + h * k3[1])
        th = th + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        om = om + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
    return th


def spring_mass(x0, k=2.0, m=1.0, steps=12):
    x, v = x0, np.zeros_like(x0)
    energy = []
    for _ in range(steps):
        a = -k / m * x
        v = v + DT * a
        x = x + DT * v
        energy.append(0.5 * m * np.sum(v ** 2) + 0.5 * k * np.sum(x ** 2))
    return energy[-1] - energy[0]


def laplacian_1d(u):
    lap = u[:-2] - 2 * u[1:-1] + u[2:]
    return np.sum(lap ** 2)


def laplacian_2d(u):
    lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    return np.sum(lap ** 2)


def heat_steps(u, alpha=0.1, n=5):
    for _ in range(n):
        interior = u[1:-1] + alpha * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = np.concatenate([u[:1], interior, u[-1:]])
    return np.sum(u ** 2)


def trapezoid_area(y):
    x = np.linspace(0.0, 1.0, y.shape[0])
    return np.trapezoid(y ** 2, x)


def polyval_fit(c, x):
    return np.sum((np.polyval(c, x) - np.cos(x)) ** 2)


def interp_loss(y):
    xp = np.linspace(0.0, 1.0, y.shape[0])
    q = np.array([0.1, 0.35, 0.8])
    return np.sum(np.interp(q, xp, y) ** 2)


def cumprod_diff(x):
    return np.sum(np.diff(np.cumprod(1.0 + 0.1 * x)) ** 2)


# ---- statistics ----------------------------------------------------------------------

LOG2PI = math.log(2 * math.pi)


def normal_loglik(mu, log_sigma, x):
    s = np.exp(log_sigma)
    return np.sum(-0.5 * ((x - mu) / s) ** 2 - log_sigma - 0.5 * LOG2PI)


def poisson_loglik(log_rate, counts):
    return np.sum(counts * log_rate - np.exp(log_rate) - sps.gammaln(counts + 1.0))


def gmm_loglik(means, x, log_w=None):
    if log_w is None:
        log_w = np.full(means.shape[0], -np.log(means.shape[0]))
    comp = -0.5 * (x[:, None] - means[None, :]) ** 2 - 0.5 * LOG2PI + log_w[None, :]
    return np.sum(sps.logsumexp(comp, axis=1))


def kl_gauss(mu, log_var):
    return 0.5 * np.sum(np.exp(log_var) + mu ** 2 - 1.0 - log_var)


def kl_categorical(logits_p, logits_q):
    lp = logits_p - sps.logsumexp(logits_p)
    lq = logits_q - sps.logsumexp(logits_q)
    return np.sum(np.exp(lp) * (lp - lq))


def student_t_loss(r, nu=3.0):
    return np.sum(0.5 * (nu + 1) * np.log1p(r ** 2 / nu))


def logaddexp_pair(a, b):
    return np.sum(np.logaddexp(a, 2.0 * b))


def bce_with_logits(z, y):
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


# ---- ML code -------------------------------------------------------------------------


class MLP:
    """A 2-layer MLP holding its weights; ``loss`` differentiated w.r.t. its input."""

    def __init__(self, w1, w2):
        self.w1 = w1
        self.w2 = w2

    def forward(self, x):
        return np.tanh(x @ self.w1) @ self.w2

    def loss(self, x, y):
        return np.mean((self.forward(x) - y) ** 2)


W1 = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
W2 = np.linspace(0.5, -0.5, 8).reshape(4, 2)
NET = MLP(W1, W2)


def mlp_class_loss(x, y):
    return NET.loss(x, y)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def gru_cell(h, x, wz, wr, wh):
    hx = np.concatenate([h, x])
    z = sigmoid(wz @ hx)
    r = sigmoid(wr @ hx)
    h_tilde = np.tanh(wh @ np.concatenate([r * h, x]))
    return np.sum((1 - z) * h + z * h_tilde)


def causal_attention(q, k, v):
    t = q.shape[0]
    mask = np.triu(np.ones((t, t)), k=1) == 1
    scores = q @ k.T / math.sqrt(q.shape[-1])
    scores = np.where(mask, -1e9, scores)
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / np.sum(w, axis=-1, keepdims=True)
    return np.sum((w @ v) ** 2)


def batch_norm(x, gamma, beta, eps=1e-5):
    mu = np.mean(x, axis=0)
    var = np.var(x, axis=0)
    xhat = (x - mu) / np.sqrt(var + eps)
    return np.sum((gamma * xhat + beta) ** 3)


KEEP = np.array([1.0, 0.0, 1.0, 1.0])


def dropout_fixed(x, p=0.25):
    return np.sum((x * KEEP / (1 - p)) ** 2)


@dataclass
class Schedule:
    base_lr: float = 0.1
    total: int = 100
    warmup: int = 10


SCHED = Schedule()


def cosine_lr_step(w, step=30):
    if step < SCHED.warmup:
        lr = SCHED.base_lr * step / SCHED.warmup
    else:
        frac = (step - SCHED.warmup) / (SCHED.total - SCHED.warmup)
        lr = 0.5 * SCHED.base_lr * (1 + math.cos(math.pi * frac))
    w_new = w - lr * 2 * w
    return np.sum(w_new ** 2)


def layer_norm(x, eps=1e-6):
    mu = x.mean(axis=-1, keepdims=True)
    sd = x.std(axis=-1, keepdims=True)
    return np.sum(((x - mu) / (sd + eps)) ** 2 * np.arange(x.shape[-1]))


def softmax_xent(logits, labels):
    logp = logits - sps.logsumexp(logits, axis=-1, keepdims=True)
    return -np.mean(logp[np.arange(logits.shape[0]), labels])


# ---- optimization code ---------------------------------------------------------------


def inner_gd(w, x, steps=3, lr=0.1):
    for _ in range(steps):
        g = 2 * (w - x)
        w = w - lr * g
    return np.sum(w ** 2)


def penalty_method(x, mu=10.0):
    violation = np.maximum(0.0, np.sum(x) - 1.0)
    return np.sum(x ** 2) + mu * violation ** 2


def log_barrier(x, t=5.0):
    return t * np.sum(x ** 2) - np.sum(np.log(1.0 - x ** 2))


def newton_sqrt(a, tol=1e-10, max_iter=50):
    x = a
    it = 0
    while np.max(np.abs(x * x - a)) > tol and it < max_iter:
        x = 0.5 * (x + a / x)
        it += 1
    return np.sum(x)


# ---- numerical tricks ----------------------------------------------------------------


def safe_sqrt_where(x):
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.sqrt(safe), 0.0))


def clip_loss(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2 + 0.1 * x)


def einsum_ellipsis(a, b):
    return np.sum(np.einsum("...ij,...j->...i", a, b) ** 2)


def row_norms(m):
    return np.sum(np.linalg.norm(m, axis=1))


def errstate_log(x):
    with np.errstate(divide="ignore"):
        y = np.log(x ** 2 + 1.0)
    return np.sum(y)


# ---- Python idioms -------------------------------------------------------------------


def enum_zip(xs, ys):
    total = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        total = total + (i + 1) * a * b
    return total


def sorted_items_weighted(params):
    total = 0.0
    for k, v in sorted(params.items()):
        total = total + len(k) * np.sum(v ** 2)
    return total


def fstring_assert(x):
    assert x.shape[-1] == 3, f"expected 3 features, got {x.shape}"
    return np.sum(x ** 2)


def isinstance_branch(x, scale=2):
    if isinstance(scale, int):
        scale = float(scale)
    return np.sum(np.sin(x) * scale)


def early_return_small(x):
    if x.shape[0] < 2:
        return np.sum(x)
    return np.sum(x[1:] * x[:-1])


def try_finally(x):
    try:
        y = np.tanh(x)
    finally:
        pass
    return np.sum(y ** 2)


def max_generator(xs):
    return max(np.sum(v ** 2) for v in xs)


def walrus_fn(x):
    if (n := x.shape[0]) > 2:
        return np.sum(x[:n - 1] ** 2)
    return np.sum(x)


def match_activation(x, kind="relu"):
    match kind:
        case "relu":
            y = np.maximum(x, 0.0)
        case "gelu":
            y = 0.5 * x * (1 + np.tanh(0.79788456 * (x + 0.044715 * x ** 3)))
        case _:
            y = x
    return np.sum(y ** 2)


def ternary_chain(x, lo=-1.0, hi=1.0):
    s = np.sum(x)
    return s ** 2 if lo < s < hi else np.abs(s)


SCALE = 3.0


def global_read(x):
    global SCALE
    return np.sum(x * SCALE) ** 2


def typed_sig(x: np.ndarray, w: Optional[np.ndarray] = None, *, power: int = 2) -> float:
    if w is None:
        w = np.ones_like(x)
    return float(np.sum(w * x ** power))


def aux_tuple(x):
    loss = np.sum(x ** 2)
    return loss, {"norm": np.sqrt(loss), "n": x.shape[0]}


def dict_comp_total(x):
    feats = {name: f(x) for name, f in (("s", np.sin), ("c", np.cos), ("e", np.exp))}
    return sum(np.sum(v) * i for i, v in enumerate(feats.values()))


def nested_fn_default(x, p=2.0):
    def norm(v, q=p):
        return np.sum(np.abs(v) ** q) ** (1.0 / q)

    return norm(x) + norm(x, 3.0)


def reversed_range(x):
    acc = 0.0
    for i in reversed(range(x.shape[0])):
        acc = acc * 0.5 + x[i]
    return acc ** 2


# ---- fixed by this probe: `*` over a module or closure tuple holding arrays ----------

SHIFT = (np.array([1.0, -2.0, 0.5]), 0.5)


def affine_loss(x, a, b):
    return np.sum(a * x ** 2 + np.sin(b * x))


def spread_module_tuple(x):
    return affine_loss(x, *SHIFT)


def curry_rest(fn, args):
    """``lambda x: f(x, *args[1:])``: the way a harness binds the other arguments."""
    return lambda x: fn(x, *args[1:])


def global_write(x):
    global SCALE
    SCALE = 2.0
    return np.sum(x * SCALE)


def match_or_guard(x, kind="tanh", deep=False):
    match kind:
        case "tanh" | "sigmoid" if deep:
            y = np.tanh(np.tanh(x))
        case "tanh" | "sigmoid":
            y = np.tanh(x)
        case None:
            y = x * 0.5
        case _:
            y = np.sin(x)
    return np.sum(y * x)


def match_capture(x, spec=("scale", 2.0)):
    match spec:
        case ("scale", s):
            return np.sum(x * s)
    return np.sum(x)


def try_finally_in_loop(x, n=3):
    acc = 0.0
    for i in range(n):
        try:
            acc = acc + np.sum(np.cos(x * i))
        finally:
            acc = acc * 0.5
    return acc


def try_finally_return(x):
    try:
        return np.sum(x ** 2)
    finally:
        print("done")
