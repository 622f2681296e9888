"""Issue 23, fourth newcomer probe: everyday functions of kinds the third probe
(newcomer_probe3_fns.py) did not try: a flax-like Module with ``__call__`` and a params
dict, an Adam step, label smoothing, a pairwise-distance energy, a Runge-Kutta loop
forwarding ``*args``, Horner over a coefficient list, a config dataclass, dispatch
tables, ``**kwargs`` forwarding, an f-string einsum subscript, ``functools.lru_cache``,
``math.prod``, reshape by -1, in-place ``+=`` on a copy, a generator helper, lambdas
made in a loop (late binding), mutable default lists...
tests/frontend/test_newcomer_probe4.py runs each through s2s and compares with JAX on
this same source (``jax_twin``: numpy swapped for jax.numpy)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

# ---- ML code -------------------------------------------------------------------------


class Dense:
    """A flax-like layer: the parameters live in a dict the caller passes."""

    def __init__(self, name, act=None):
        self.name = name
        self.act = act

    def __call__(self, params, x):
        p = params[self.name]
        y = x @ p["w"] + p["b"]
        return self.act(y) if self.act is not None else y


class Sequential:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, params, x):
        for layer in self.layers:
            x = layer(params, x)
        return x


MODEL = Sequential([Dense("l0", np.tanh), Dense("l1")])


def module_loss(params, x):
    return np.mean(MODEL(params, x) ** 2)


def adam_update(w, g, m, v, t, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g ** 2
    m_hat = m / (1 - b1 ** t)
    v_hat = v / (1 - b2 ** t)
    return w - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def adam_two_steps(w, x):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, 3):
        g = 2 * (w - x) + 0.5 * w ** 3
        w, m, v = adam_update(w, g, m, v, t)
    return np.sum(w ** 2)


def label_smoothing_xent(logits, labels, eps=0.1):
    n = logits.shape[-1]
    onehot = np.eye(n)[labels]
    target = onehot * (1.0 - eps) + eps / n
    logp = logits - np.log(np.sum(np.exp(logits), axis=-1, keepdims=True))
    return -np.mean(np.sum(target * logp, axis=-1))


def sgd_dict_step(params, x, lr=0.1):
    grads = {k: 2 * (v - x) for k, v in params.items()}
    new = {k: params[k] - lr * grads[k] for k in params}
    return sum(np.sum(v ** 2) for v in new.values())


def layers_enum_zip(x, ws, bs):
    for i, (w, b) in enumerate(zip(ws, bs)):
        x = x @ w + b
        if i < len(ws) - 1:
            x = np.tanh(x)
    return np.sum(x ** 2)


def huber(r, delta=1.0):
    a = np.abs(r)
    return np.sum(np.where(a < delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def softmax_entropy_kwonly(x, *, temperature=0.5):
    z = x / temperature
    p = np.exp(z - np.max(z))
    p = p / p.sum()
    return -np.sum(p * np.log(p))


# ---- scientific code -----------------------------------------------------------------


def lennard_jones(pos):
    n = pos.shape[0]
    diff = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(diff ** 2, axis=-1) + np.eye(n)
    inv6 = (1.0 / r2) ** 3
    e = 4.0 * (inv6 ** 2 - inv6) * (1.0 - np.eye(n))
    return 0.5 * np.sum(e)


def decay_rhs(t, y, k, c):
    return -k * y + c * np.sin(t)


def rk4_step(f, t, y, h, *args):
    k1 = f(t, y, *args)
    k2 = f(t + h / 2, y + h / 2 * k1, *args)
    k3 = f(t + h / 2, y + h / 2 * k2, *args)
    k4 = f(t + h, y + h * k3, *args)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def rk4_forward_args(y0, k=0.7, c=0.3, steps=6, h=0.1):
    y, t = y0, 0.0
    for _ in range(steps):
        y = rk4_step(decay_rhs, t, y, h, k, c)
        t = t + h
    return np.sum(y ** 2)


def horner(x, coeffs=[0.5, -1.0, 2.0, 0.25]):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return np.sum(acc)


def leapfrog(q, steps=5, h=0.1):
    def grad_v(q):
        return q ** 3

    state = (q, np.zeros_like(q))
    for _ in range(steps):
        q, p = state
        p = p - 0.5 * h * grad_v(q)
        q = q + h * p
        p = p - 0.5 * h * grad_v(q)
        state = (q, p)
    q, p = state
    return np.sum(0.5 * p ** 2 + 0.25 * q ** 4)


def discounted_returns(rewards, gamma=0.9):
    out = []
    g = 0.0
    for r in reversed(list(rewards)):
        g = r + gamma * g
        out.insert(0, g)
    return np.sum(np.stack(out) ** 2)


def gp_nll(x, y, log_ls=0.0):
    sq = np.sum(x ** 2, 1)[:, None] + np.sum(x ** 2, 1)[None, :] - 2 * x @ x.T
    k = np.exp(-0.5 * sq / np.exp(2 * log_ls)) + 0.1 * np.eye(x.shape[0])
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(chol)))


def conv_sliding(x, w=(0.25, 0.5, 0.25)):
    k = len(w)
    n = x.shape[0] - k + 1
    y = sum(w[j] * x[j:j + n] for j in range(k))
    return np.sum(y ** 2)


def fixed_point_while(a, tol=1e-5):
    x = np.zeros_like(a)
    while True:
        x_new = np.cos(a * x) * 0.5
        if np.max(np.abs(x_new - x)) < tol:
            break
        x = x_new
    return np.sum(x_new)


# ---- numerical tricks ----------------------------------------------------------------


def where_log_double(x):
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.log(safe), 0.0))


def where_log_single(x):
    return np.sum(np.where(x > 0, np.log(np.abs(x) + 1e-3), -5.0) * x)


def clip_array_bounds(x, w):
    return np.sum(np.clip(x, -w, w) ** 2 + 0.1 * w * x)


def norm_ords(m):
    a = np.linalg.norm(m, ord=1, axis=0)
    b = np.linalg.norm(m, ord=2, axis=1)
    c = np.linalg.norm(m, "fro")
    d = np.linalg.norm(m.ravel(), ord=3)
    return np.sum(a) + np.sum(b ** 2) + c + d


def einsum_fstring(a, b):
    idx = "ijk"[: a.ndim]
    spec = f"{idx},{idx[1:]}->{idx[0]}"
    return np.sum(np.einsum(spec, a, b) ** 2)


@functools.lru_cache(maxsize=None)
def causal_mask(n):
    return np.tril(np.ones((n, n)))


def lru_cached_mask(x):
    return np.sum((causal_mask(x.shape[0]) @ x) ** 2)


def math_prod_mean(x):
    n = math.prod(x.shape)
    return np.sum(x ** 2) / n + math.prod([2, 3]) * np.sum(x)


def reshape_minus_one(x):
    y = x.reshape(-1, 2)
    z = np.reshape(x, (2, -1))
    return np.sum(y[:, 0] * y[:, 1]) + np.sum(z[0] * z[-1])


def xt_at_w(x, w):
    h = x.T @ w
    return np.sum(h ** 2) + np.sum(w.T @ x)


def inplace_on_copy(x):
    y = x.copy()
    y += 1.0
    y[0] += x[1]
    y *= x
    return np.sum(y ** 2)


# ---- Python idioms -------------------------------------------------------------------


@dataclass
class TrainConfig:
    scale: float = 2.0
    l2: float = 0.01
    act: str = "tanh"
    dims: tuple = (3, 1)


CFG = TrainConfig()


def dataclass_config(w, cfg=CFG):
    act = np.tanh if cfg.act == "tanh" else np.sin
    h = act(cfg.scale * w).reshape(cfg.dims)
    return np.sum(h ** 2) + cfg.l2 * np.sum(w ** 2)


def early_return_flag(x, normalize=False):
    if not normalize:
        return np.sum(x ** 2)
    x = x / np.sqrt(np.sum(x ** 2))
    return np.sum(x ** 3)


def early_return_flag_on(x):
    return early_return_flag(x, normalize=True)


def swish(x):
    return x / (1.0 + np.exp(-x))


ACTIVATIONS = {"tanh": np.tanh, "swish": swish, "softplus": lambda v: np.logaddexp(0.0, v)}


def string_dispatch(x, kinds=("swish", "softplus", "tanh")):
    return sum(np.sum(ACTIVATIONS[k](x) * (i + 1)) for i, k in enumerate(kinds))


def call_with(f, *args):
    return f(*args)


def compose(x, *fns):
    for fn in fns:
        x = fn(x)
    return x


def star_args_forward(x, y):
    return np.sum(call_with(np.hypot, x, y)) + np.sum(compose(x, np.sin, np.exp))


def rms(x, **kw):
    return np.sqrt(np.mean(x ** 2, **kw))


def kwargs_forward(m):
    return np.sum(rms(m, axis=1, keepdims=True) * m) + rms(m)


def pairs(xs):
    for i in range(len(xs) - 1):
        yield xs[i], xs[i + 1]


def generator_pairs(x):
    return sum(a * b for a, b in pairs(x))


def late_binding_lambdas(x):
    fs = []
    for k in range(3):
        fs.append(lambda v: v * k)
    return sum(np.sum(f(x) ** 2) for f in fs)


def default_capture_lambdas(x):
    fs = [lambda v, k=k: np.sin(v * k) for k in range(1, 4)]
    return sum(np.sum(f(x)) for f in fs)


def nested_defs_in_loop(x):
    total = 0.0
    for k in (1.0, 2.0):
        def scaled(v):
            return np.tanh(k * v)

        total = total + np.sum(scaled(x))
    return total


def zip_star_transpose(x):
    pts = [(x[i], x[i + 1]) for i in range(0, x.shape[0], 2)]
    xs, ys = zip(*pts)
    return np.sum(np.stack(xs) * np.stack(ys) ** 2)


def mutable_default_scales(x, scales=[1.0, 0.5]):
    return sum(s * np.sum(np.cos(x * s)) for s in scales)


SEEN = []


def mutable_default_append(x, seen=SEEN):
    """A default list the function grows: its length is read at each call, as Python
    reads it (the result changes from call to call)."""
    seen.append(1)
    return np.sum(x ** 2) * len(seen)


# ---- fixed by this probe --------------------------------------------------------------


class Scale:
    """A callable layer holding a function attribute that may be None."""

    def __init__(self, k, act=None):
        self.k = k
        self.act = act

    def __call__(self, x):
        y = x * self.k
        return self.act(y) if self.act is not None else y


SCALES = [Scale(1.0, np.sin), Scale(2.0)]


def subscript_callable(x):
    """``SCALES[0](x)``: a callable object read by a subscript (its adapter was named
    by the text ``SCALES[0]``: an internal SyntaxError)."""
    return np.sum(SCALES[0](x) + SCALES[1](x))


class Chain:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


CHAIN = Chain(SCALES)


def chain_loss(x):
    """``for layer in self.layers: x = layer(x)`` in a bound object's ``__call__``
    (refused), each layer's ``self.act is not None`` decided now (refused)."""
    return np.sum(CHAIN(x) ** 2)


class Net:
    def __init__(self, act):
        self.act = act

    def loss(self, x):
        return np.sum(self.act(x) * 2.0)


NET = Net(np.sin)


def net_loss(x):
    """``NET.act`` replaced between two calls: the second call used the first
    function (silently stale)."""
    return NET.loss(x)


def rebind_after_early_return(x, flag=False, deep=True):
    if flag:
        if deep:
            return np.sum(x)
        return np.sum(x ** 2)
    x = x * 2.0
    return np.sum(x ** 3)


def last_value_after_loop(x):
    """``y`` (and the loop variable ``v``) first bound in a loop, read after it:
    refused before ("may be used before it is assigned"), bound None before the loop
    now, so the loop carries them out; a loop that runs no iteration raises Python's
    UnboundLocalError, located at the loop."""
    for v in x:
        y = np.sin(v) * 2.0
    return y ** 2 + v


def none_carry_while(a, n=3.0):
    """``x_new = None`` before a ``while`` on a value: under vmap it was stacked into
    an object array, and the batched result came back with dtype object."""
    x_new = None
    i = 0
    while i < n * np.sum(a):
        x_new = a * i
        i = i + 1
    return np.sum(np.sin(x_new))
