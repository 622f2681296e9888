"""Issue 23, eighth newcomer probe: 40 short functions written the way a new NumPy/JAX
user writes them, of kinds the earlier probes (newcomer_probe3..7_fns.py) did not try:
``super().__init__`` with a ``@property``, ``__getitem__``/``__len__`` and ``__iter__``
on user containers, operator overloading, a property setter, ``abc.ABC`` layers, a
dataclass ``field(default_factory=...)`` with ``__post_init__``, a user generator with
``yield``; ``scipy.special`` (erf, gammaln, betaln, digamma, expit/logit, softmax,
logsumexp keepdims); a training step returning a dict merged with ``|``, nested
``enumerate(zip(...))`` unpacking, ``reversed`` over a tuple of matrices, the walrus in a
comprehension, ``match`` on mapping and tuple patterns, f-strings of shapes,
``numpy.typing`` annotations, ``math.fsum``, ``itertools.combinations``/``pairwise``,
``functools.reduce``; ``np.einsum`` with ellipses and ``tensordot``, ``np.isfinite``
guards, ``np.linalg.norm`` with ord/axis, ``clip`` with one bound, ``cumsum`` losses,
masked class means, ``take_along_axis``, ``np.pad`` modes, ``polyder``/``polyint``,
softplus three ways, causal multi-head attention, Huber by ``np.minimum``, reductions
with ``where=``, ``np.cross``/``arctan2``, ``triu_indices``, ``np.prod`` through zeros.
tests/frontend/test_newcomer_probe8.py runs each through s2s and compares with JAX on
this same source (``newcomer_harness.twin``) or central differences."""

from __future__ import annotations

import abc
import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt
import scipy.special

# ---- classes and containers ---------------------------------------------------------------


class Layer:
    def __init__(self, w, name="layer"):
        self.w = w
        self.name = name

    def __call__(self, x):
        return np.tanh(x * self.w)


class ScaledLayer(Layer):
    def __init__(self, w, scale):
        super().__init__(w, name="scaled")
        self.scale = scale

    @property
    def effective(self):
        return self.scale * self.w

    def __call__(self, x):
        return super().__call__(x) * self.scale + 0.1 * self.effective


def super_init_property(w, x=np.array([0.5, -1.0, 2.0, 0.3])):
    layer = ScaledLayer(w, 1.5)
    return np.sum(layer(x) ** 2) + 0.5 * np.sum(layer.effective ** 2)


class ParamList:
    def __init__(self, *arrays):
        self._items = list(arrays)

    def __len__(self):
        return len(self._items)

    def __getitem__(self, i):
        return self._items[i]


def getitem_len_container(x):
    params = ParamList(x, 2.0 * x, np.sin(x))
    total = 0.0
    for i in range(len(params)):
        total = total + np.sum(params[i] * params[-1])
    return total


class Stack:
    def __init__(self, layers):
        self.layers = layers

    def __iter__(self):
        return iter(self.layers)

    def __call__(self, h):
        for layer in self:
            h = layer(h)
        return h


def iter_container(x):
    net = Stack([np.tanh, lambda v: 0.5 * v ** 2, np.sin])
    return np.sum(net(x)) + sum(np.sum(f(x)) for f in net)


class Vec:
    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        return Vec(self.data + other.data)

    def __sub__(self, other):
        return Vec(self.data - other.data)

    def __mul__(self, s):
        return Vec(self.data * s)

    __rmul__ = __mul__

    def __matmul__(self, other):
        return np.sum(self.data * other.data)

    def norm2(self):
        return self @ self


def operator_overload_vec(x):
    a = Vec(x)
    b = Vec(np.cos(x))
    c = 2.0 * a + b * 0.5
    return c.norm2() + (a - b) @ c


class Weights:
    def __init__(self, w):
        self._w = w
        self.steps = 0

    @property
    def w(self):
        return self._w

    @w.setter
    def w(self, value):
        self._w = value
        self.steps += 1


def property_setter_update(w0, lr=0.1):
    p = Weights(w0)
    for _ in range(3):
        g = 2.0 * p.w + np.cos(p.w)
        p.w = p.w - lr * g
    return np.sum(p.w ** 2) * p.steps


class Activation(abc.ABC):
    @abc.abstractmethod
    def forward(self, v):
        ...

    def __call__(self, v):
        return self.forward(v)


class Softsign(Activation):
    def forward(self, v):
        return v / (1.0 + np.abs(v))


class Elu(Activation):
    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def forward(self, v):
        return np.where(v > 0, v, self.alpha * (np.exp(v) - 1.0))


def abc_abstract_layers(x):
    acts: list[Activation] = [Softsign(), Elu(0.5)]
    return sum(np.sum(a(x) ** 2) for a in acts)


@dataclass
class LossConfig:
    scales: List[float] = field(default_factory=lambda: [1.0, 0.5, 0.25])
    power: int = 2

    def __post_init__(self):
        self.total = sum(self.scales)


def dataclass_field_factory(x):
    cfg = LossConfig(power=3)
    terms = [s * np.sum(np.abs(x) ** cfg.power) for s in cfg.scales]
    return sum(terms) / cfg.total


def batches(x, size):
    for start in range(0, len(x), size):
        yield x[start:start + size]


def generator_batches(x):
    return sum(np.sum(b ** 2) * (i + 1) for i, b in enumerate(batches(x, 2)))


# ---- scipy.special ------------------------------------------------------------------------

SQRT_HALF = 0.7071067811865476


def gelu_erf_exact(x):
    g = 0.5 * x * (1.0 + scipy.special.erf(x * SQRT_HALF))
    return np.sum(g * np.cos(x)) + np.sum(scipy.special.erfc(x))


def negbin_gammaln_nll(params, counts=np.array([0.0, 2.0, 5.0, 1.0])):
    log_mu, log_r = params[0], params[1]
    mu, r = np.exp(log_mu), np.exp(log_r)
    ll = (scipy.special.gammaln(counts + r) - scipy.special.gammaln(r)
          - scipy.special.gammaln(counts + 1.0)
          + r * np.log(r / (r + mu)) + counts * np.log(mu / (r + mu)))
    return -np.sum(ll)


def beta_loglik_betaln(log_ab, x=np.array([0.2, 0.5, 0.9, 0.35])):
    a, b = np.exp(log_ab)
    return (np.sum((a - 1) * np.log(x) + (b - 1) * np.log1p(-x))
            - len(x) * scipy.special.betaln(a, b))


def expit_logit_calibration(z, y=np.array([1.0, 0.0, 1.0, 1.0]), eps=1e-6):
    p = scipy.special.expit(z)
    p = np.clip(p, eps, 1 - eps)
    back = scipy.special.logit(p)
    return (-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
            + 0.1 * np.sum((back - z) ** 2))


def dirichlet_kl_digamma(log_alpha, beta=np.array([1.0, 2.0, 0.5])):
    alpha = np.exp(log_alpha)
    a0, b0 = np.sum(alpha), np.sum(beta)
    return (scipy.special.gammaln(a0) - np.sum(scipy.special.gammaln(alpha))
            - scipy.special.gammaln(b0) + np.sum(scipy.special.gammaln(beta))
            + np.sum((alpha - beta) * (scipy.special.digamma(alpha)
                                       - scipy.special.digamma(a0))))


def special_softmax_keepdims(x, labels=np.array([2, 0])):
    p = scipy.special.softmax(x, axis=1)
    lse = scipy.special.logsumexp(x, axis=1, keepdims=True)
    logp = x - lse
    return -np.sum(logp[np.arange(2), labels]) + np.sum(p ** 2)


# ---- Python idioms ------------------------------------------------------------------------


def train_step(w, x, y, lr=0.1) -> dict:
    r = x @ w - y
    loss = np.mean(r ** 2)
    g = 2.0 * x.T @ r / len(y)
    return {"loss": loss, "w": w - lr * g, "grad_norm": np.sqrt(np.sum(g ** 2))}


def train_step_returns_dict(w, x=np.array([[1.0, 0.5], [0.2, -1.0], [0.3, 0.8]]),
                            y=np.array([0.5, -0.3, 0.9])):
    out = train_step(w, x, y)
    out = train_step(out["w"], x, y) | {"first_norm": out["grad_norm"]}
    return out["loss"] + 0.1 * out["first_norm"]


def enumerate_zip_nested_unpack(x, ws=(0.5, -1.0, 2.0), bs=(0.1, 0.0, -0.2),
                                names=("a", "b", "c")):
    h = x
    total = 0.0
    for i, (w, (b, name)) in enumerate(zip(ws, zip(bs, names))):
        h = np.tanh(w * h + b)
        if name != "b":
            total = total + (i + 1) * np.sum(h ** 2)
    return total


def reversed_list_layers(x, mats=(np.array([[1.0, 0.5], [-0.3, 0.8]]),
                                  np.array([[0.2, -1.0], [0.7, 0.4]]))):
    h = x
    for m in reversed(mats):
        h = np.tanh(m @ h)
    for _, c in sorted(zip((2, 0, 1), (0.5, 1.5, -1.0))):
        h = h * c + 0.1
    outs = [np.sum(h * row) for row in reversed(list(mats[0]))]
    return sum(outs) + np.sum(h ** 2)


def walrus_comprehension_scan(h0, xs=np.array([0.5, -0.2, 0.1, 0.3])):
    h = h0
    hs = [(h := np.tanh(0.8 * h + v)) for v in xs]
    if (n := len(hs)) > 2:
        return np.sum(np.stack(hs) ** 2) / n + np.sum(h)
    return np.sum(h)


def penalty(w, spec):
    match spec:
        case {"kind": "l2", "weight": lam}:
            return lam * np.sum(w ** 2)
        case {"kind": "l1", "weight": lam}:
            return lam * np.sum(np.abs(w))
        case {"kind": "none"}:
            return 0.0
        case _:
            raise ValueError(f"unknown penalty {spec}")


def match_mapping_pattern(w, specs=({"kind": "l2", "weight": 0.5},
                                    {"kind": "l1", "weight": 0.1}, {"kind": "none"}),
                          mode=("adam", "cosine")):
    total = sum(penalty(w, s) for s in specs)
    match mode:
        case ("sgd", _):
            scale = 1.0
        case ("adam", "cosine"):
            scale = 0.5
        case _:
            scale = 2.0
    return scale * total + np.sum(np.sin(w))


def shape_fstring_checks(x):
    assert x.ndim == 2, f"expected a matrix, got shape {x.shape}"
    rows, cols = x.shape
    tag = f"{rows}x{cols}"
    desc = "shape={}".format(x.shape)
    if tag == "2x3" and desc.endswith("(2, 3)"):
        w = np.arange(1.0, cols + 1)
    else:
        w = np.ones(cols)
    return np.sum(np.tanh(x) * w) + str(x.shape).count(",")


Array = npt.NDArray[np.float64]


def apply_twice(f: Callable[[Array], Array], v: Array) -> Array:
    return f(f(v))


def typing_npt_callable(x: Array, scales: Sequence[float] = (1.0, 0.5),
                        shift: Optional[float] = None, *,
                        power: Union[int, float] = 2) -> float:
    act: Callable[[Array], Array] = np.tanh
    y: Array = apply_twice(act, x)
    total: float = 0.0
    for s in scales:
        total += s * float(power) * np.sum(y ** power)
    if shift is not None:
        total += shift
    return total


def math_fsum_terms(x, weights=(0.1, 0.2, 0.7)):
    norm = math.fsum(weights)
    terms = [np.sum(x ** 2), np.sum(np.sin(x)), np.sum(np.exp(-x))]
    return math.fsum(w * t for w, t in zip(weights, terms)) / norm


def itertools_combinations_pairs(x):
    e = 0.0
    for i, j in itertools.combinations(range(len(x)), 2):
        e = e + 1.0 / (1.0 + (x[i] - x[j]) ** 2)
    return e + sum(a * b for a, b in itertools.pairwise(x))


def functools_reduce_matmul(m, mats=(np.eye(2) * 0.5, np.array([[0.0, 1.0], [-1.0, 0.3]]))):
    chain = functools.reduce(np.matmul, [m, *mats, m.T])
    total = functools.reduce(lambda acc, v: acc + np.sum(v ** 2), [m, chain], 0.0)
    return np.trace(chain) + total


# ---- NumPy idioms -------------------------------------------------------------------------


def einsum_ellipsis_tensordot(x, w=np.array([[1.0, -0.5], [0.3, 0.8], [0.0, 1.2]])):
    y = np.einsum("...ij,jk->...ik", x, w)
    s = np.einsum("...i,...i->...", x, x)
    t = np.tensordot(x, w, axes=([2], [0]))
    return np.sum(y * t) + np.sum(np.sqrt(s + 1.0)) + np.tensordot(s, s, axes=2)


def isfinite_where_guard(pred, target=np.array([0.5, np.nan, -1.0, np.inf])):
    ok = np.isfinite(target)
    safe_target = np.where(ok, target, 0.0)
    r = np.where(ok, pred - safe_target, 0.0)
    return np.sum(r ** 2) / np.sum(ok)


def norm_ord_axis(m):
    return (np.sum(np.linalg.norm(m, ord=1, axis=1))
            + np.sum(np.linalg.norm(m, ord=np.inf, axis=0))
            + np.linalg.norm(m, ord=2) + np.linalg.norm(m, "nuc")
            + np.linalg.norm(m.ravel(), 3))


def clip_one_bound(x, lo=np.array([-0.5, -1.0, 0.0, 0.2]), hi=np.array([0.5, 1.0, 1.0, 0.4])):
    a = x.clip(min=-0.5)
    b = np.clip(x, None, 1.0)
    c = np.clip(x, lo, hi)
    return np.sum(a ** 2) + np.sum(b ** 3) + np.sum(np.sin(c))


def cumsum_emd_returns(logits, q=np.array([0.1, 0.4, 0.3, 0.2]), gamma=0.9):
    p = np.exp(logits - np.max(logits))
    p = p / np.sum(p)
    emd = np.sum(np.abs(np.cumsum(p - q)))
    disc = gamma ** np.arange(len(p))
    to_go = np.cumsum((p * disc)[::-1])[::-1]
    return emd + np.sum(to_go ** 2)


def class_centroids_masked_mean(x, labels=np.array([0, 2, 0, 1, 2]), n_classes=3):
    loss = 0.0
    for k in range(n_classes):
        m = (labels == k).astype(x.dtype)
        count = max(m.sum(), 1.0)
        centroid = (m @ x) / count
        loss = loss + np.sum(m[:, None] * (x - centroid) ** 2) / count
    return loss + np.average(x[:, 0], weights=np.arange(1.0, len(labels) + 1))


def take_along_axis_nll(logits, labels=np.array([2, 0, 1])):
    logp = logits - scipy.special.logsumexp(logits, axis=1, keepdims=True)
    picked = np.take_along_axis(logp, labels[:, None], axis=1)
    order = np.argsort(logits, axis=1)
    ranked = np.take_along_axis(logits, order, axis=1)
    return -np.mean(picked) + np.sum(ranked[:, -1] * ranked[:, 0])


def pad_modes_stencil(u):
    e = np.pad(u, 1, mode="edge")
    lap = e[:-2] - 2.0 * u + e[2:]
    z = np.pad(u, (2, 1))
    r = np.pad(u, 1, mode="reflect")
    w = np.pad(u, (1, 1), mode="wrap")
    sm = np.convolve(u, np.array([0.25, 0.5, 0.25]), mode="same")
    return (np.sum(lap ** 2) + np.sum(z * np.arange(len(z))) + np.sum(r[:-2] * r[2:])
            + np.sum(w[1:] * w[:-1]) + np.sum(sm ** 2))


def polyder_polyint(c, t=np.linspace(-1.0, 1.0, 5)):
    v = np.polyval(c, t)
    dv = np.polyval(np.polyder(c), t)
    area = np.polyval(np.polyint(c), 1.0) - np.polyval(np.polyint(c), -1.0)
    return np.sum(v ** 2) + np.sum(dv ** 2) + area


def softplus_three_ways(x):
    stable = np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)
    guarded = np.where(x > 20.0, x, np.log1p(np.exp(np.minimum(x, 20.0))))
    naive = np.log(1.0 + np.exp(x))
    return np.sum(stable) + 2.0 * np.sum(guarded) + 0.5 * np.sum(naive)


def multihead_causal_attention(x, n_heads=2):
    t, d = x.shape
    hd = d // n_heads
    q = x.reshape(t, n_heads, hd).transpose(1, 0, 2)
    k = np.roll(q, 1, axis=-1)
    v = np.tanh(q)
    s = q @ k.transpose(0, 2, 1) / hd ** 0.5
    mask = np.tril(np.ones((t, t), dtype=bool))
    s = np.where(mask, s, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    a = np.exp(s)
    a = a / a.sum(axis=-1, keepdims=True)
    out = (a @ v).transpose(1, 0, 2).reshape(t, d)
    return np.sum(out ** 2)


def huber_minimum_logcosh(r, delta=1.0):
    a = np.abs(r)
    q = np.minimum(a, delta)
    huber = q * (a - 0.5 * q)
    pseudo = delta ** 2 * (np.sqrt(1.0 + (r / delta) ** 2) - 1.0)
    logcosh = np.log(np.cosh(r))
    return np.sum(huber) + np.sum(pseudo) + np.sum(logcosh)


def where_kwarg_reductions(x, mask=np.array([True, False, True, True])):
    m = np.mean(x ** 2, where=mask)
    s = np.sum(np.exp(x), where=x > 0)
    mx = np.max(x, where=mask, initial=-np.inf)
    return m + s + mx


def dihedral_cross_arctan2(p):
    b0 = p[0] - p[1]
    b1 = p[2] - p[1]
    b2 = p[3] - p[2]
    n1 = np.cross(b0, b1)
    n2 = np.cross(b1, b2)
    m1 = np.cross(n1, b1 / np.linalg.norm(b1))
    phi = np.arctan2(m1 @ n2, n1 @ n2)
    bond = np.hypot(b0[0], b0[1])
    return np.cos(phi) + 0.5 * (phi - 1.0) ** 2 + bond


def triu_indices_pairwise(x):
    n = len(x)
    i, j = np.triu_indices(n, k=1)
    d = np.linalg.norm(x[i] - x[j], axis=1)
    return np.sum(1.0 / d ** 6 - 1.0 / d ** 3) + np.sum(np.tril(x @ x.T, k=-1))


def prod_with_zeros(x):
    return (np.prod(x) + np.sum(np.prod(x.reshape(2, 2), axis=0))
            + np.sum(np.cumprod(x)))
