"""Issue 23, twelfth newcomer probe: 46 short functions written the way a NumPy user writes
them, in styles the eleven earlier probes did not cover: training-loop fragments (a
momentum optimizer object keeping its velocities in a dict, gradient clipping by the
global norm of a list, a learning-rate schedule left by a ``break``, a ``SimpleNamespace``
config, a Sinkhorn loop, a VAE's reparametrized ELBO); physics (a spring chain's energy,
RK4 over a tuple state with helpers, charges' pair energy through ``np.triu``, rotation
matrices built from angles with ``np.array`` of scalars); statistics (a Gaussian
log-likelihood through ``scipy.linalg.solve_triangular``, Tukey's biweight and
pseudo-Huber losses, Poisson regression, soft k-means, a NaN-masked residual summed by
``np.nansum``); signal processing (a moving average by ``np.cumsum`` of ``np.insert``,
``np.gradient``, AR(2) residuals, total variation of an image, max and mean pooling by
``reshape``, a 2-D convolution by a nested comprehension, an FFT power spectrum, a
``collections.deque`` window); small layers (an LSTM cell by ``np.split``, batch norm
with running statistics kept on an object made in the function); configuration by
strings (``getattr(np, name)``, ``"tanh,relu".split(",")``, ``getattr(self,
f"act_{kind}")``); and Python idioms (``itertools.product``/``pairwise``/
``chain.from_iterable``, ``functools.reduce`` with ``operator.mul``, a walrus in a
``while``, ``match`` on a tuple with a guard and on a shape, chained comparisons and
conditional expressions, ``first, *rest =`` unpacking, ``dict(zip(...))``,
``collections.defaultdict``, a ``with`` block of a user context manager, tuple-swap
recurrences, a list recurrence read at ``[-1]``/``[-2]``, ``reversed`` over a tuple,
``np.nonzero``/``np.flatnonzero`` of constants, ``np.tile``/``np.repeat``,
``np.expand_dims``/``np.broadcast_to``, complex intermediates, array methods, ``None``
defaults).  tests/frontend/test_newcomer_probe12.py runs each through s2s and compares
with JAX on this same source (``newcomer_harness.twin``) or central differences."""

from __future__ import annotations

import collections
import functools
import itertools
import math
import operator
import types

import numpy as np
import scipy.linalg

# ---- training-loop fragments ---------------------------------------------------------------


class MomentumSGD:
    def __init__(self, lr=0.1, beta=0.9):
        self.lr, self.beta = lr, beta
        self.velocity = {}

    def step(self, params, grads):
        out = {}
        for k, p in params.items():
            v = self.beta * self.velocity.get(k, 0.0) + grads[k]
            self.velocity[k] = v
            out[k] = p - self.lr * v
        return out


def momentum_object_dict(w):
    opt = MomentumSGD()
    params = {"a": w[:2], "b": w[2:]}
    for _ in range(3):
        grads = {k: np.sin(p) + p ** 3 for k, p in params.items()}
        params = opt.step(params, grads)
    return sum(np.sum(p ** 2) for p in params.values())


def global_norm_clip_list(x, max_norm=1.0):
    grads = [x[:2] * 3.0, np.tanh(x[2:]) * 2.0, x[1:3] ** 2]
    total = np.sqrt(sum(np.sum(g * g) for g in grads))
    scale = np.minimum(1.0, max_norm / (total + 1e-6))
    clipped = [g * scale for g in grads]
    return sum(np.sum(c) * w for c, w in zip(clipped, (1.0, -2.0, 0.5))) + total


def schedule_break_on_lr(w, lr0=0.4):
    lr = lr0
    for step in range(10):
        lr = lr0 * 0.5 ** step
        if lr < 0.04:
            break
        w = w - lr * (w ** 3 - np.sin(w))
    return np.sum(w ** 2) + step


def namespace_config(w, cfg=types.SimpleNamespace(lr=0.1, steps=3, wd=1e-2)):
    for _ in range(cfg.steps):
        w = w - cfg.lr * (np.tanh(w) + cfg.wd * w)
    return np.sum(w ** 2) + cfg.wd * np.sum(np.abs(w))


def sinkhorn_iterations(x, eps=0.5):
    grid = np.linspace(0.0, 1.0, 3)
    cost = (x[:, None] - grid[None, :]) ** 2
    kernel = np.exp(-cost / eps)
    a, b = np.full(x.size, 1.0 / x.size), np.full(3, 1.0 / 3)
    v = np.ones(3)
    for _ in range(15):
        u = a / (kernel @ v)
        v = b / (kernel.T @ u)
    plan = u[:, None] * kernel * v[None, :]
    return np.sum(plan * cost)


def vae_elbo_reparam(p, noise=np.array([0.3, -1.2]), target=np.array([0.5, -0.5, 1.0])):
    mu, logvar = np.split(p, 2)
    z = mu + np.exp(0.5 * logvar) * noise
    decoded = np.tanh(np.outer(z, np.array([1.0, -0.5, 0.25])).sum(axis=0))
    recon = np.sum((decoded - target) ** 2)
    kl = -0.5 * np.sum(1.0 + logvar - mu ** 2 - np.exp(logvar))
    return recon + kl


# ---- physics -------------------------------------------------------------------------------


def spring_chain_energy(p, k=10.0, rest=0.5, g=9.81, m=np.array([1.0, 2.0, 1.0, 0.5])):
    seg = np.diff(p, axis=0)
    length = np.linalg.norm(seg, axis=1)
    elastic = 0.5 * k * np.sum((length - rest) ** 2)
    gravity = g * np.dot(m, p[:, 1])
    bend = np.sum(1.0 - np.sum(seg[1:] * seg[:-1], axis=1) / (length[1:] * length[:-1]))
    return elastic + gravity + bend


def _lotka(state, a, b):
    u, v = state
    return (a * u - b * u * v, b * u * v - v)


def _axpy(s, h, k):
    return tuple(si + h * ki for si, ki in zip(s, k))


def rk4_tuple_state(x, h=0.05, steps=6):
    state = (x[0] + 1.0, x[1] + 0.5)
    a, b = x[2], 0.7
    for _ in range(steps):
        k1 = _lotka(state, a, b)
        k2 = _lotka(_axpy(state, h / 2, k1), a, b)
        k3 = _lotka(_axpy(state, h / 2, k2), a, b)
        k4 = _lotka(_axpy(state, h, k3), a, b)
        state = tuple(s + h / 6 * (p + 2 * q + 2 * r + w)
                      for s, p, q, r, w in zip(state, k1, k2, k3, k4))
    return state[0] * state[1] + state[0] ** 2


def coulomb_pairs_triu(p, q=np.array([1.0, -1.0, 0.5, 2.0])):
    n = p.shape[0]
    d2 = np.sum((p[:, None, :] - p[None, :, :]) ** 2, axis=-1)
    r = np.sqrt(d2 + np.eye(n))
    return np.sum(np.triu(q[:, None] * q[None, :] / r, k=1)) + 0.1 * np.sum(p ** 2)


def _rot_z(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rot_y(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rotation_from_angles(a, pts=np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 2.0], [0.5, -1.0, 0.3]])):
    rot = _rot_z(a[0]) @ _rot_y(a[1]) @ _rot_z(a[2])
    moved = pts @ rot.T
    return np.sum(moved[:, 0] ** 2) + np.trace(rot) + np.sum((rot.T @ rot - np.eye(3)) ** 2)


# ---- statistics ----------------------------------------------------------------------------


def gauss_loglik_triangular(m, y=np.array([0.5, -1.0, 0.25])):
    n = y.shape[0]
    cov = m @ m.T + np.eye(n)
    chol = np.linalg.cholesky(cov)
    z = scipy.linalg.solve_triangular(chol, y, lower=True)
    return -0.5 * z @ z - np.sum(np.log(np.diag(chol))) - 0.5 * n * math.log(2.0 * math.pi)


def tukey_biweight_loss(r, c=1.5):
    inside = np.abs(r) <= c
    rho = np.where(inside, c ** 2 / 6.0 * (1.0 - (1.0 - (r / c) ** 2) ** 3), c ** 2 / 6.0)
    return np.sum(rho)


def pseudo_huber_cauchy(r, delta=0.7, c=1.2):
    ph = delta ** 2 * (np.sqrt(1.0 + (r / delta) ** 2) - 1.0)
    cauchy = 0.5 * c ** 2 * np.log1p((r / c) ** 2)
    return np.sum(ph) + np.mean(cauchy)


def poisson_regression_nll(w, y=np.array([0.0, 2.0, 1.0, 4.0, 3.0])):
    design = np.column_stack([np.ones(5), np.linspace(-1.0, 1.0, 5), np.linspace(0.0, 2.0, 5) ** 2])
    eta = design @ w
    return np.sum(np.exp(eta) - y * eta) + 0.5 * w @ w


def soft_kmeans(c, pts=np.array([[0.0, 0.0], [1.0, 0.2], [0.9, 1.1], [-0.5, 0.8], [0.3, -0.7]]),
                temp=0.5):
    d = np.sum((pts[:, None, :] - c[None, :, :]) ** 2, axis=-1)
    logits = -d / temp
    logits = logits - logits.max(axis=1, keepdims=True)
    r = np.exp(logits)
    r = r / r.sum(axis=1, keepdims=True)
    return np.sum(r * d)


def nan_mask_nansum(x, y=np.array([1.0, np.nan, 0.5, np.nan, 2.0])):
    mask = ~np.isnan(y)
    resid = np.where(mask, x - y, np.nan)
    mse = np.nansum(resid ** 2) / np.sum(mask)
    return mse + np.nanmax(np.where(mask, x, np.nan)) + np.nanmean(np.where(mask, x ** 2, np.nan))


# ---- signal processing ---------------------------------------------------------------------


def moving_average_insert(x, w=3):
    c = np.cumsum(np.insert(x, 0, 0.0))
    ma = (c[w:] - c[:-w]) / w
    conv = np.convolve(x, np.ones(w) / w, mode="valid")
    return np.sum(ma * conv) + np.sum(ma ** 3)


def np_gradient_smoothness(x):
    g = np.gradient(x)
    g2 = np.gradient(x, 0.5)
    return np.sum(g ** 2) + np.sum(g2 * x)


def ar2_residuals(x, a=(0.6, -0.2)):
    e = x[2:] - a[0] * x[1:-1] - a[1] * x[:-2]
    return np.mean(e ** 2) + 0.1 * np.sum(np.diff(x) ** 2)


def total_variation_image(m, eps=1e-3):
    dx = m[1:, :-1] - m[:-1, :-1]
    dy = m[:-1, 1:] - m[:-1, :-1]
    iso = np.sum(np.sqrt(dx ** 2 + dy ** 2 + eps))
    aniso = np.sum(np.abs(np.diff(m, axis=0))) + np.sum(np.abs(np.diff(m, axis=1)))
    return iso + 0.5 * aniso


def pool_by_reshape(m):
    h, w = m.shape
    blocks = m.reshape(h // 2, 2, w // 2, 2)
    mx = blocks.max(axis=(1, 3))
    avg = blocks.mean(axis=(1, 3))
    return np.sum(mx * avg) + np.sum(np.tanh(mx))


def conv2d_comprehension(m, k=np.array([[1.0, -1.0], [0.5, 2.0]])):
    h, w = m.shape
    out = np.array([[np.sum(m[i:i + 2, j:j + 2] * k) for j in range(w - 1)]
                    for i in range(h - 1)])
    return np.sum(np.tanh(out)) + np.sum(out ** 2) * 0.1


def fft_power_spectrum(x):
    spec = np.fft.rfft(x)
    power = np.abs(spec) ** 2
    return np.sum(power * np.arange(power.size)) / x.size


def deque_window(x):
    buf = collections.deque(maxlen=3)
    acc = 0.0
    for v in x:
        buf.append(v)
        acc = acc + sum(buf) / len(buf) * v
    return acc


# ---- small layers --------------------------------------------------------------------------

_W_LSTM = np.linspace(-0.5, 0.5, 8 * 4).reshape(8, 4)


def lstm_cell_split(x, steps=2):
    h = np.zeros(2, dtype=x.dtype)
    c = np.zeros(2, dtype=x.dtype)
    for _ in range(steps):
        z = _W_LSTM @ np.concatenate([x, h]) + 0.1
        i, f, g, o = np.split(z, 4)
        sig = lambda t: 1.0 / (1.0 + np.exp(-t))  # noqa: E731
        c = sig(f) * c + sig(i) * np.tanh(g)
        h = sig(o) * np.tanh(c)
    return np.sum(h ** 2) + np.sum(c)


class BatchNorm:
    def __init__(self, n, dtype, momentum=0.1):
        self.mean, self.var = np.zeros(n, dtype=dtype), np.ones(n, dtype=dtype)
        self.momentum = momentum

    def __call__(self, x, training):
        if training:
            mu, var = x.mean(axis=0), x.var(axis=0)
            self.mean = (1 - self.momentum) * self.mean + self.momentum * mu
            self.var = (1 - self.momentum) * self.var + self.momentum * var
        else:
            mu, var = self.mean, self.var
        return (x - mu) / np.sqrt(var + 1e-5)


def batchnorm_object_train(x):
    bn = BatchNorm(x.shape[1], x.dtype)
    y = bn(x, training=True)
    z = bn(x * 0.5 + 1.0, training=False)
    return np.sum(y ** 3) + np.sum(z ** 2)


# ---- configuration by strings --------------------------------------------------------------


def getattr_np_names(x, names=("tanh", "sin", "exp")):
    return sum(np.sum(getattr(np, n)(x)) * (i + 1) for i, n in enumerate(names))


def _relu(t):
    return np.maximum(t, 0.0)


ACTS = {"tanh": np.tanh, "relu": _relu, "softplus": lambda t: np.log1p(np.exp(t))}


def activation_spec_string(x, spec="tanh,relu,softplus"):
    for name in spec.split(","):
        x = ACTS[name.strip()](x) * 0.9 + 0.1 * x
    return np.sum(x ** 2)


class Layer:
    def __init__(self, kind, scale):
        self.kind, self.scale = kind, scale

    def act_tanh(self, x):
        return np.tanh(x)

    def act_square(self, x):
        return x ** 2

    def __call__(self, x):
        return getattr(self, f"act_{self.kind}")(self.scale * x)


def getattr_method_fstring(x):
    layers = [Layer("tanh", 2.0), Layer("square", 0.5), Layer("tanh", 1.0)]
    for layer in layers:
        x = layer(x)
    return np.sum(x)


# ---- Python idioms -------------------------------------------------------------------------


def itertools_product_grid(x, w=np.array([[1.0, -0.5, 0.2], [0.3, 2.0, -1.0]])):
    acc = 0.0
    for i, j in itertools.product(range(2), range(3)):
        acc = acc + w[i, j] * x[i] * x[j + 1]
    return acc


def itertools_pairwise_layers(x, sizes=(4, 3, 2)):
    h = x
    for a, b in itertools.pairwise(sizes):
        weight = np.linspace(-1.0, 1.0, a * b).reshape(a, b)
        h = np.tanh(h @ weight)
    return np.sum(h ** 2)


def chain_from_iterable(x):
    groups = [[x[:2], x[2:]], [x[1:3]], []]
    acc = 0.0
    for part in itertools.chain.from_iterable(groups):
        acc = acc + np.sum(part ** 2)
    for part in itertools.chain([x[0]], (x[1], x[-1])):
        acc = acc + np.sin(part)
    return acc


def reduce_operator_mul(x):
    prod = functools.reduce(operator.mul, [1.0 + x[i] ** 2 for i in range(x.size)])
    total = functools.reduce(operator.add, map(np.sin, x), 0.0)
    return prod + total + operator.truediv(x[0], 2.0) + operator.neg(x[-1])


def walrus_while_countdown(x):
    n = 4
    acc = 0.0
    while (n := n - 1) >= 0:
        acc = acc + np.sum(np.cos(x * n))
    if (k := x.shape[0]) > 3:
        acc = acc + np.sum(x[:k // 2] ** 2)
    return acc


def match_tuple_guard(x, spec=("poly", 3)):
    match spec:
        case ("poly", int(k)) if k > 1:
            y = sum(x ** i / (i + 1) for i in range(k))
        case ("exp", _):
            y = np.exp(x)
        case _:
            y = x
    match x.shape:
        case (n,):
            z = np.sum(y) / n
        case (n, m):
            z = np.sum(y) / (n * m)
    return z + np.sum(y ** 2)


def chained_compare_where(x, lo=-1.0, hi=1.0):
    assert lo < 0.0 < hi <= 2.0
    inside = (lo < x) & (x < hi)
    y = np.where(inside, x ** 2, np.abs(x) * 2.0 - 1.0)
    scale = 0.5 if x.size > 3 else 2.0
    shift = -1.0 if lo < -0.5 else (0.0 if lo < 0.0 else 1.0)
    return scale * np.sum(y) + shift * np.sum(x)


_WS = (np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([[1.0, 0.4], [-0.3, 0.8]]),
       np.array([[0.2, 0.0], [0.0, -0.6]]))


def star_unpack_first_rest(x):
    w0, *ws = _WS
    first, *rest = x
    *init, last = ws
    h = np.tanh(x[:2] @ w0)
    for w in init:
        h = np.tanh(h @ w)
    return np.sum(h @ last) + first * sum(rest)


def dict_zip_keys(x):
    params = dict(zip(("w", "b", "s"), (x[:2], x[2:], 0.5)))
    cfg = dict(lr=0.1, **{"wd": 0.01})
    w = params["w"] - cfg["lr"] * params["w"] ** 2
    return np.sum(w * params["b"]) * params["s"] + cfg["wd"] * params.get("z", 1.0) * np.sum(x ** 2)


def defaultdict_accumulate(x):
    acc = collections.defaultdict(float)
    for k, v in zip("abab", x):
        acc[k] += v ** 2
    return acc["a"] * acc["b"] + acc["c"]


class Counted:
    def __init__(self):
        self.entered = 0

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        return False


def with_context_manager(x):
    with Counted() as c:
        y = np.sin(x) * 2.0
    return np.sum(y ** 2) + c.entered


def chebyshev_tuple_swap(x, coef=np.array([0.5, -1.0, 0.25, 2.0, 0.1])):
    t0, t1 = np.ones_like(x), x
    total = coef[0] * np.sum(t0) + coef[1] * np.sum(t1)
    for n in range(2, coef.size):
        t0, t1 = t1, 2.0 * x * t1 - t0
        total = total + coef[n] * np.sum(t1)
    return total


def legendre_list_recurrence(x, n=4, coefs=(1.0, -0.5, 2.0, 0.25, 1.5)):
    p = [np.ones_like(x), x]
    for k in range(1, n):
        p.append(((2 * k + 1) * x * p[-1] - k * p[-2]) / (k + 1))
    return sum(c * np.sum(q) for c, q in zip(coefs, p))


def continued_fraction_reversed(x, coefs=(1.0, 2.0, 2.0, 2.0)):
    acc = coefs[-1] + 0.0 * x
    for a in reversed(coefs[:-1]):
        acc = a + x ** 2 / acc
    return np.sum(acc)


_MASK = np.array([True, False, True, True, False])
_SIGNS = np.array([1.0, -1.0, 0.0, 2.0, -0.5])


def nonzero_const_index(x):
    idx = np.nonzero(_MASK)[0]
    pos = np.flatnonzero(_SIGNS > 0)
    (rows,) = np.where(~_MASK)
    return np.sum(x[idx] ** 2) + np.sum(np.sin(x[pos])) + np.sum(x[rows] * x[idx[:2]])


_COUNTS = np.array([1, 2, 0, 1])


def tile_repeat(x):
    a = np.tile(x, 2)
    b = np.repeat(x, 2)
    c = np.repeat(x[None, :], 3, axis=0)
    d = np.tile(x[:, None], (1, 3))
    return np.sum(a * b) + np.sum(c * d.T) + np.sum(np.repeat(x, _COUNTS) ** 2)


def expand_broadcast_shapes(x):
    col = np.expand_dims(x, axis=1)
    row = np.atleast_2d(x)
    grid = np.broadcast_to(col, (x.size, 3))
    sq = np.squeeze(row, axis=0)
    return np.sum(grid * np.arange(3.0)) + np.sum(col * row) + np.sum(sq ** 3) + np.ndim(x)


def complex_phase_mag(x):
    z = np.exp(1j * x) * (1.0 + 0.5j)
    return np.sum(np.abs(z + 0.3) ** 2) + np.sum(np.real(z) * np.imag(z)) + np.sum(np.angle(z))


def array_methods_more(m):
    a = m.std(axis=0, ddof=1).sum()
    b = m.prod(axis=1).dot(m[:, 0])
    c = m.swapaxes(0, 1).cumsum(axis=1).trace()
    d = m.diagonal().var()
    return a + b + c + d + m.clip(-0.5, 0.5).mean() + m.max(axis=1).min()


def none_defaults(x, w=None, b=None, scale=None):
    if w is None:
        w = np.ones_like(x)
    b = 0.0 if b is None else b
    scale = scale or 2.0
    return scale * np.sum(w * np.tanh(x) + b) + np.sum(x ** 2)
