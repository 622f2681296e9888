"""Issue 23/27, fifth newcomer probe: everyday functions of kinds the earlier probes
(newcomer_probe3/4_fns.py, adversarial_round7-9_fns.py) did not try: a training step
that keeps its optimizer state in a dict with an integer step counter, an EM-style
mixture objective, a Kalman filter over a Python loop, a velocity-Verlet chain with
``np.roll``, losses with ``np.clip``/``np.where`` masks evaluated at their kinks, norms
of zero vectors, ``cumsum``/``diff``/``roll`` chains, ``np.select``/``np.piecewise``,
``np.interp`` in its table values, ``np.sort``/``np.max`` with ties, a string-keyed
config dict, ``dataclasses.field(default_factory=...)``, ``@property`` and
``@staticmethod`` on a model class, ``enumerate(zip(...))`` over rows, ``try/except``
and f-string errors around non-array code, ``itertools.accumulate``/``pairwise``,
batched ``einsum`` with an ellipsis, a least-squares fit with ``np.vander`` and
``np.polyval``... tests/frontend/test_newcomer_probe5.py runs each through s2s and
compares with JAX on this same source (``jax_twin``: numpy swapped for jax.numpy)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

# ---- ML code -------------------------------------------------------------------------


def momentum_state_step(w, x):
    """Three SGD-with-momentum steps whose state lives in a dict with an int counter."""
    state = {"step": 0, "vel": np.zeros_like(w)}
    for _ in range(3):
        g = 2.0 * (w - x) + np.sin(w)
        state["vel"] = 0.9 * state["vel"] + g
        state["step"] += 1
        w = w - 0.1 / state["step"] * state["vel"]
    return np.sum(w ** 2) + state["step"]


def em_objective(means, x):
    """The EM lower bound of a 1-D Gaussian mixture: responsibilities from a stable
    softmax over components, times the complete-data log-likelihood."""
    ll = -0.5 * (x[:, None] - means[None, :]) ** 2
    m = np.max(ll, axis=1, keepdims=True)
    resp = np.exp(ll - m)
    resp = resp / np.sum(resp, axis=1, keepdims=True)
    return np.sum(resp * ll) - np.sum(resp * np.log(resp + 1e-12))


def kalman_nll(obs, q=0.1, r=0.5):
    """A scalar Kalman filter over the observations: the negative log-likelihood."""
    mean, var = 0.0, 1.0
    nll = 0.0
    for z in obs:
        var = var + q
        s = var + r
        k = var / s
        innov = z - mean
        nll = nll + 0.5 * (np.log(2 * np.pi * s) + innov ** 2 / s)
        mean = mean + k * innov
        var = (1.0 - k) * var
    return nll


def verlet_chain(q, n_steps=4, dt=0.05):
    """Velocity Verlet on a periodic spring chain (forces by np.roll)."""
    def force(q):
        return np.roll(q, 1) + np.roll(q, -1) - 2.0 * q

    p = np.zeros_like(q)
    f = force(q)
    for _ in range(n_steps):
        p = p + 0.5 * dt * f
        q = q + dt * p
        f = force(q)
        p = p + 0.5 * dt * f
    return np.sum(q ** 2) + 0.5 * np.sum(p ** 2)


def hinge_clip_where(x):
    """A hinge with a clipped slope and a where-masked square: kinks at 1 and at 0."""
    margin = np.clip(1.0 - x, 0.0, None)
    quad = np.where(x > 0.0, x ** 2, 0.0)
    return np.sum(margin) + np.sum(quad) + np.sum(np.abs(x))


def zero_row_norms(m):
    """Norms of rows, columns and the whole, with ord and axis, where rows may be 0."""
    a = np.linalg.norm(m, axis=1)
    b = np.linalg.norm(m, ord=np.inf, axis=1)
    c = np.linalg.norm(m, ord=1, axis=0)
    return np.sum(a) + np.sum(b) + np.sum(c * m[0])


def safe_norm(v, eps=1e-12):
    """The double-where idiom: the norm's gradient at the zero vector is zero."""
    sq = np.sum(v ** 2)
    safe = np.where(sq > eps, sq, 1.0)
    return np.where(sq > eps, np.sqrt(safe), 0.0)


def cumsum_diff_roll(x):
    c = np.cumsum(x)
    d = np.diff(c, prepend=0.0)
    r = np.roll(d, 2) * np.arange(1, x.shape[0] + 1)
    return np.sum(r * np.diff(x, n=2, append=[0.0, 0.0])) + np.sum(np.cumsum(r[::-1]))


def select_piecewise(x):
    y = np.select([x < -1.0, x < 1.0], [-x - 0.5, 0.5 * x ** 2], default=x - 0.5)
    z = np.piecewise(x, [x < 0.0, x >= 0.0], [lambda v: np.exp(v), lambda v: 1.0 + v])
    return np.sum(y * z)


def interp_table(fp, x):
    """np.interp differentiated in the table values (and the query points)."""
    xp = np.linspace(0.0, 1.0, fp.shape[0])
    return np.sum(np.interp(x, xp, fp) ** 2) + np.sum(np.interp(0.5 * x, xp, fp ** 2))


def trimmed_sort_loss(x):
    """The mean of the sorted values without the smallest and largest (ties!)."""
    s = np.sort(x)
    return np.mean(s[1:-1] ** 2) + s[-1] - 2.0 * s[0]


def max_ties_axes(m):
    return np.sum(np.max(m, axis=0)) + np.sum(np.min(m, axis=1) ** 2) + np.max(m)


CONFIG = {"act": "softplus", "wd": 0.01, "layers": 2, "scale": 1.5}


def config_dict_model(x):
    act = {"tanh": np.tanh, "softplus": lambda v: np.log1p(np.exp(v))}[CONFIG["act"]]
    h = x
    for _ in range(CONFIG["layers"]):
        h = act(CONFIG["scale"] * h)
    return np.sum(h) + CONFIG["wd"] * np.sum(x ** 2)


@dataclass
class Hyper:
    scales: list = field(default_factory=lambda: [1.0, 0.5, 0.25])
    names: dict = field(default_factory=dict)
    bias: float = 0.1


HYPER = Hyper()


def dataclass_factory(x, h=HYPER):
    total = h.bias * np.sum(x)
    for i, s in enumerate(h.scales):
        total = total + s * np.sum(np.cos(x * (i + 1)))
    return total + len(h.names)


class Linear:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    @property
    def n_out(self):
        return self.w.shape[1]

    @property
    def weight_norm(self):
        return np.sum(self.w ** 2)

    @staticmethod
    def gelu(v):
        return 0.5 * v * (1.0 + np.tanh(0.7978845608 * (v + 0.044715 * v ** 3)))

    def __call__(self, x):
        return self.gelu(x @ self.w + self.b) / self.n_out


def property_model(w, x):
    layer = Linear(w, 0.1)
    return np.sum(layer(x) ** 2) + 0.01 * layer.weight_norm


def enumerate_zip_rows(x, y):
    total = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        total = total + (i + 1) * np.sum(a * np.sin(b))
    return total


def try_except_config(x, cfg={"n": "3"}):
    try:
        n = int(cfg["n"])
    except (KeyError, ValueError):
        n = 2
    try:
        scale = cfg["scale"]
    except KeyError:
        scale = 0.5
    return np.sum(x ** n) * scale


def fstring_guard(x):
    if x.ndim != 1:
        raise ValueError(f"expected a vector, got shape {x.shape}")
    if x.shape[0] < 2:
        raise ValueError(f"need two points, got {x.shape[0]}")
    return np.sum(np.diff(x) ** 2) / (x.shape[0] - 1)


def accumulate_pairwise(x):
    parts = [x * k for k in (1.0, 2.0, 3.0)]
    partial = list(itertools.accumulate(parts))
    gaps = sum(np.sum((b - a) ** 2) for a, b in itertools.pairwise(partial))
    return gaps + np.sum(partial[-1] * np.sin(x)) + math.prod((1, 2, 3))


def batched_einsum(a, b):
    c = np.einsum("...ij,...jk->...ik", a, b)
    return np.sum(np.einsum("...ii->...", c) ** 2) + np.sum(np.einsum("...ij->...", c))


def vander_fit(y):
    t = np.linspace(-1.0, 1.0, y.shape[0])
    v = np.vander(t, 3)
    coef = np.linalg.solve(v.T @ v, v.T @ y)
    resid = np.polyval(coef, t) - y
    return np.sum(resid ** 2) + np.sum(coef ** 2)


def polyval_in_x(x, c=(0.5, -1.0, 0.0, 2.0)):
    return np.sum(np.polyval(np.array(c), x) * x)


def running_max_drawdown(x):
    peak = np.maximum.accumulate(x)
    return np.sum(peak - x) + np.max(peak)


def nan_masked_mse(pred, target):
    """A loss that skips NaN targets."""
    ok = np.isfinite(target)
    diff = np.where(ok, pred - np.where(ok, target, 0.0), 0.0)
    return np.sum(diff ** 2) / np.maximum(np.sum(ok), 1)


def logsumexp_stable(x):
    """Log-sum-exp written by hand with the max subtracted and stopped nowhere."""
    m = np.max(x, axis=-1, keepdims=True)
    return np.sum(np.squeeze(m, -1) + np.log(np.sum(np.exp(x - m), axis=-1)))


def softplus_where(x):
    """A softplus that switches to x above 30 (no overflow, inf inputs allowed)."""
    big = x > 30.0
    return np.sum(np.where(big, x, np.log1p(np.exp(np.where(big, 0.0, x)))))


def sign_abs_kinks(x):
    return np.sum(np.sign(x) * x ** 2) + np.sum(np.abs(x) ** 3) + np.sum(np.maximum(x, 0.0))


def ddof_std(x):
    return np.sum(np.std(x, axis=0, ddof=1)) + np.var(x)


def argsort_take(x, w):
    """Weights applied in the order of x (a rank-weighted loss)."""
    idx = np.argsort(x)
    return np.sum(np.take_along_axis(x, idx, axis=0) * w) + np.sum(x[idx[:2]] ** 2)


def median_loss(x):
    return np.median(x) ** 2 + np.sum(np.abs(x - np.median(x)))


def inf_norm_ties(x):
    return np.linalg.norm(x, ord=np.inf) + np.linalg.norm(x, ord=-np.inf) ** 2


def trapezoid_energy(y):
    t = np.linspace(0.0, 1.0, y.shape[0])
    return np.trapezoid(y ** 2, t) + np.trapezoid(np.gradient(y, t) ** 2, t)


# ---- fixed by this probe --------------------------------------------------------------


def counter_in_dict(w):
    """``state["step"] += 1`` on a dict literal's int item inside a loop (refused as a
    write "into an array `state_step` shares with another name")."""
    state = {"step": 0, "scale": 1.0}
    for _ in range(3):
        state["step"] += 1
        state["scale"] *= 0.5
        w = w - 0.1 / state["step"] * np.sin(w)
    return np.sum(w ** 2) * state["scale"]


def dict_item_read_then_added(x):
    """NumPy adds into the array ``a`` also holds: the result is sum(x * x), where s2s
    gave 0 (the dict got a new item, ``a`` kept the zeros)."""
    state = {"acc": np.zeros_like(x)}
    a = state["acc"]
    state["acc"] += x
    return np.sum(a * x)


def dict_item_from_a_name(x):
    z = np.zeros_like(x)
    state = {"acc": z}
    state["acc"] += x
    return np.sum(z * x)


def dict_item_kept_in_a_list(x):
    state = {"acc": np.zeros_like(x)}
    keep = [state["acc"]]
    state["acc"] += x
    return np.sum(keep[0] * x)


def dict_item_of_its_own(x):
    """An item no other name holds: ``+=`` in place or a new item give the same."""
    state = {"acc": x * 1.0, "n": 0}
    state["acc"] += x
    state["n"] += 2
    return np.sum(state["acc"] * x) * state["n"]


def det_of_rank_one(x):
    """det of a singular matrix: NumPy's value is 0; its derivative is JAX's adjugate
    (from the SVD, both backends: a LinAlgError before); its second derivative JAX's
    0 (sound13; NaN before, the probe's pin said WRONG)."""
    m = np.stack([x, 2.0 * x])
    return np.linalg.det(m)


def spread_then_keyed(x, p):
    """A dict literal spreading another (its string keys read by the frontend)."""
    q = {**p, "b": x * 2.0}
    return np.sum(q["a"] * q["b"])
