"""Issue 23, sixth newcomer probe: 40 short functions written the way a new NumPy/JAX
user writes them, of kinds the earlier probes (newcomer_probe3/4/5_fns.py) did not
try: model classes whose methods read ``self`` (a module-level model, inheritance
with ``super()``, a ``@classmethod`` constructor), a training step driven by a config
dict, a NamedTuple of parameters, masked and NaN-skipping losses, input guards with
``assert``/``raise``, debug prints, comprehensions over layers, ``functools.partial``,
``*args``/``**kwargs``, closures, a function chosen from a dict, ``math.*`` on
scalars, ``np.random`` inside, early returns, while loops with a tolerance, lists
built then stacked, ``enumerate``/``zip`` over parameters, ``scipy.special``, array
methods (``x.sum()``, ``x.clip()``), boolean-mask reads and writes, index-assignment
loops... tests/frontend/test_newcomer_probe6.py runs each through s2s and compares
with JAX on this same source (``newcomer_probe6_cases.twin``: numpy swapped for
jax.numpy, scipy.special for jax.scipy.special) or central differences."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.special

# ---- models as classes ----------------------------------------------------------------


class LogisticModel:
    def __init__(self, w, b=0.0, l2=0.01):
        self.w = w
        self.b = b
        self.l2 = l2

    def predict(self, x):
        return 1.0 / (1.0 + np.exp(-(x @ self.w + self.b)))

    def loss(self, x, y):
        p = self.predict(x)
        nll = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
        return nll + self.l2 * np.sum(self.w ** 2)


def logistic_method_loss(w, x, y):
    return LogisticModel(w).loss(x, y)


class TinyMLP:
    def __init__(self, sizes, seed=0):
        rng = np.random.default_rng(seed)
        self.weights = [rng.normal(size=(m, n)) * 0.5 for m, n in zip(sizes[:-1], sizes[1:])]

    def __call__(self, x):
        for w in self.weights[:-1]:
            x = np.tanh(x @ w)
        return x @ self.weights[-1]


MODEL = TinyMLP([3, 4, 2])


def global_model_input_grad(x):
    """The gradient of a fixed module-level model's output in its input."""
    return np.sum(MODEL(x) ** 2)


class Layer:
    def __init__(self, scale):
        self.scale = scale

    def act(self, v):
        return np.tanh(v)

    def forward(self, v):
        return self.act(self.scale * v)


class SwishLayer(Layer):
    def act(self, v):
        return v * super().act(v) + 0.1 * v


def subclass_super_call(x):
    return np.sum(SwishLayer(1.5).forward(x) ** 2)


class Quadratic:
    def __init__(self, a, c):
        self.a = a
        self.c = c

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg["a"], cfg["c"])

    def energy(self, x):
        return 0.5 * self.a * np.sum(x ** 2) + self.c * np.sum(x)


def classmethod_constructor(x):
    q = Quadratic.from_config({"a": 2.0, "c": -0.5})
    return q.energy(x) + q.energy(np.sin(x))


# ---- parameters in containers ---------------------------------------------------------


class Params(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def namedtuple_params_loss(p, x):
    pred = np.tanh(x @ p.w + p.b)
    return np.mean(pred ** 2) + 0.1 * np.sum(p.b ** 2)


@dataclass
class OptConfig:
    lr: float
    steps: int
    momentum: float


def dataclass_momentum(w, cfg=OptConfig(lr=0.1, steps=3, momentum=0.5)):
    v = np.zeros_like(w)
    for _ in range(cfg.steps):
        g = np.cos(w) + w
        v = cfg.momentum * v + g
        w = w - cfg.lr * v
    return np.sum(w ** 2)


def train_step_config(w, x, y, config={"lr": 0.05, "steps": 3, "l2": 1e-3, "loss": "mse"}):
    """Gradient steps computed by hand, the settings in a string-keyed dict."""
    for step in range(config["steps"]):
        r = x @ w - y
        if config["loss"] == "mse":
            g = 2.0 * x.T @ r / len(y)
        else:
            g = x.T @ np.sign(r) / len(y)
        w = w - config["lr"] * (g + config["l2"] * w)
    return np.mean((x @ w - y) ** 2)


def enumerate_param_dict(params):
    """A weight decay that grows with the layer index, over a dict's items."""
    total = 0.0
    for i, (name, p) in enumerate(params.items()):
        if name.startswith("b"):
            continue
        total = total + (i + 1) * np.sum(p ** 2)
    return total


def zip_weights_biases(x, ws=None, bs=None):
    if ws is None:
        ws = [np.eye(3) * 0.5, np.ones((3, 2)) * 0.3]
    if bs is None:
        bs = [np.zeros(3), np.array([0.1, -0.1])]
    h = x
    for w, b in zip(ws, bs):
        h = np.maximum(h @ w + b, 0.01 * (h @ w + b))
    return np.sum(h)


# ---- losses with masks and NaN handling ------------------------------------------------


def masked_seq_loss(logits, labels, mask):
    """Token cross-entropy with a padding mask, averaged over real tokens."""
    logits = logits - logits.max(axis=-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(logp, labels[:, None], axis=-1)[:, 0]
    return -(picked * mask).sum() / mask.sum()


def nan_to_num_loss(pred, target):
    """Missing targets are NaN: replaced, and left out of the mean by a weight."""
    w = (~np.isnan(target)).astype(pred.dtype)
    t = np.nan_to_num(target)
    return np.sum(w * (pred - t) ** 2) / np.sum(w)


def nanmean_loss(pred, target):
    return np.nanmean((pred - target) ** 2) + 0.1 * np.nansum(np.abs(pred - target))


def ignore_index_xent(logits, labels, ignore_index=-100):
    valid = labels != ignore_index
    safe = np.where(valid, labels, 0)
    lse = np.log(np.sum(np.exp(logits), axis=1))
    picked = logits[np.arange(logits.shape[0]), safe]
    return np.sum(np.where(valid, lse - picked, 0.0)) / max(int(np.sum(valid)), 1)


def boolean_mask_read(x):
    pos = x[x > 0]
    return np.sum(pos ** 2) + np.sum(x[x <= 0]) * 0.5


def boolean_mask_write(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y ** 2 + np.sin(x))


# ---- guards, prints, small control flow -------------------------------------------------


def guarded_inputs(w, x):
    assert x.ndim == 2, "x must be a matrix"
    if w.shape[0] != x.shape[1]:
        raise ValueError(f"shape mismatch: {w.shape} vs {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("x has NaN or inf")
    return np.sum(np.log1p(np.exp(x @ w)))


def debug_print_loss(x, verbose=True):
    loss = np.sum((x - 1.0) ** 2)
    if verbose:
        print("loss:", loss, "shape:", x.shape)
    return loss


def early_return_positive(x):
    if x.size == 0:
        return 0.0
    if np.all(x > 0):
        return np.sum(np.log(x))
    return np.sum(x ** 2)


def power_iteration_while(a, tol=1e-10, max_iter=500):
    """The largest eigenvalue of a symmetric matrix by power iteration."""
    m = a @ a.T + np.eye(a.shape[0])
    v = np.ones(a.shape[0]) / math.sqrt(a.shape[0])
    lam, lam_old, it = 0.0, np.inf, 0
    while abs(lam - lam_old) > tol and it < max_iter:
        lam_old = lam
        w = m @ v
        v = w / np.linalg.norm(w)
        lam = v @ m @ v
        it += 1
    return lam


def descend_until_small(theta, lr=0.2, tol=1e-8, max_iter=200):
    """An inner minimization run until the gradient is small, differentiated in its
    target (through the iterations taken)."""
    z = np.zeros_like(theta)
    g = z - theta
    n = 0
    while np.linalg.norm(g) > tol and n < max_iter:
        g = (z - theta) + 0.4 * z ** 3
        z = z - lr * g
        n += 1
    return np.sum(z ** 2) + np.sum(theta * z)


# ---- Python function idioms --------------------------------------------------------------


def leaky_relu(v, slope=0.01):
    return np.where(v > 0, v, slope * v)


def partial_activation(x):
    act = functools.partial(leaky_relu, slope=0.2)
    return np.sum(act(x) * act(2.0 * x - 0.5))


def combine(*terms, **weights):
    total = 0.0
    for i, t in enumerate(terms):
        total = total + weights.get(f"w{i}", 1.0) * t
    return total


def star_args_kwargs(x):
    return combine(np.sum(x ** 2), np.sum(np.sin(x)), np.prod(x), w0=0.5, w2=2.0)


def closure_factory(x):
    def make_loss(scale, power=2):
        def loss(v):
            return scale * np.sum(np.abs(v) ** power)
        return loss

    losses = [make_loss(s) for s in (1.0, 0.5)] + [make_loss(0.1, power=3)]
    return sum([f(x) for f in losses])


def relu(v):
    return np.maximum(v, 0.0)


def gelu_tanh(v):
    return 0.5 * v * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (v + 0.044715 * v ** 3)))


ACTIVATIONS = {"relu": relu, "gelu": gelu_tanh, "tanh": np.tanh}


def activation_from_dict(x, name="gelu"):
    act = ACTIVATIONS[name]
    return np.sum(act(x) ** 2)


def lambda_table(x):
    ops = [lambda v: v ** 2, lambda v: np.exp(-v), lambda v: np.log1p(v ** 2)]
    return sum([np.sum(op(x)) for op in ops[:2]]) + np.sum(ops[2](x))


def math_on_scalars(x, sigma=0.5):
    """Gaussian log-density: math.* on the Python float constants."""
    n = x.shape[0]
    return -0.5 * np.sum(x ** 2) / sigma ** 2 - n * math.log(sigma * math.sqrt(2 * math.pi))


def python_max_min(x):
    """Python's max/min on 0-d results (the user means a scalar clamp)."""
    m = max(np.max(x), 0.0)
    return min(np.sum(x ** 2), 10.0) + m


# ---- NumPy idioms ---------------------------------------------------------------------


def noise_injection(x, sigma=0.1):
    """Noise from a seeded generator inside the loss (fixed, the same each call)."""
    rng = np.random.default_rng(42)
    noise = rng.normal(0.0, sigma, size=x.shape)
    return np.sum((x + noise) ** 2)


def list_then_stack(x, n=4):
    rows = []
    for k in range(n):
        rows.append(np.cos(k * x) * x)
    m = np.stack(rows)
    return np.sum(m @ x) + np.sum(np.vstack([x, x ** 2]).mean(axis=0))


def array_method_chain(x):
    z = (x - x.mean()) / x.std()
    return (z.clip(-1.0, 1.0) ** 2).sum() + x.reshape(-1, 2).sum(axis=1).max() + x.T.dot(x)


def index_assign_loop(x, decay=0.9):
    """An exponential moving average written into a preallocated array."""
    out = np.zeros_like(x)
    out[0] = x[0]
    for i in range(1, len(x)):
        out[i] = decay * out[i - 1] + (1 - decay) * x[i]
    return np.sum(out ** 2)


def rnn_unroll(h0, xs=np.array([[0.5, -0.2], [0.1, 0.3], [-0.4, 0.2]]),
               wh=np.array([[0.5, -0.3], [0.2, 0.4]]), wx=np.array([[1.0, 0.1], [0.0, 1.0]])):
    h = h0
    outputs = []
    for t in range(len(xs)):
        h = np.tanh(wh @ h + wx @ xs[t])
        outputs.append(h)
    return np.sum(np.stack(outputs) ** 2)


def rbf_kernel_pairs(x, y=np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]), gamma=0.7):
    d2 = np.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    return np.sum(np.exp(-gamma * d2))


def scipy_special_mix(x):
    return (np.sum(scipy.special.gammaln(x ** 2 + 1.0))
            + np.sum(scipy.special.expit(x))
            + scipy.special.logsumexp(x)
            + np.sum(scipy.special.erf(x / 2.0)))


def scipy_xlogy_entropy(p):
    q = scipy.special.softmax(p)
    return -np.sum(scipy.special.xlogy(q, q))


def float_for_logging(x):
    """The user converts the loss to a Python float only to print it."""
    loss = np.sum(x ** 2)
    value = float(loss)
    print(f"loss = {value:.4f}")
    return loss


def concat_split_parts(x):
    a, b = np.split(np.concatenate([x, x[::-1] * 2.0]), 2)
    return np.sum(a * b) + np.sum(np.hstack([a, b]) ** 2)


def argmax_pick(x):
    i = np.argmax(x)
    return x[i] ** 2 + np.sum(x) - x[np.argmin(x)]


def eigh_spectrum(a):
    s = 0.5 * (a + a.T)
    vals = np.linalg.eigvalsh(s)
    return np.sum(vals ** 2) + vals[-1]


def float_scalar_lr(lr, w=np.array([1.0, -2.0, 0.5])):
    """Gradient in a Python float (a learning rate), through three steps."""
    for _ in range(3):
        w = w - lr * (w ** 3 + w)
    return np.sum(w ** 2)


# ---- fixed by this probe (not among the 40) ----------------------------------------------


def running_min_from_inf(x):
    """A running minimum started at ``np.inf``: its Hessian (``jacfwd`` of the
    gradient: the loop's carried tangent stacked per example) was NaN in the first
    row, the zero tangent of the number made as ``np.inf * np.zeros(n)``."""
    best = np.inf
    for v in x:
        best = np.minimum(best, v)
    return best * x[0]


def printed_sum(x):
    """A debug print that computes from the argument: under ``vmap`` it printed the
    sum of the whole batch (3.75 for two examples summing to 1.25 and 2.5)."""
    print("sum:", np.sum(x))
    print(f"first: {x[0]:.2f}")
    return np.sum(x ** 2)


def printed_name(x):
    """A print of names as they are: under vmap it shows the batched value, once."""
    s = np.sum(x)
    print("s", s, f"{s}")
    return s


class Scaled:
    def __init__(self, scale):
        self.scale = scale

    def act(self, v):
        return np.tanh(v) * self.scale


class ExplicitParent(Scaled):
    def act(self, v):
        return v * Scaled.act(self, v) + 0.1 * v


def explicit_parent_call(x):
    """``Scaled.act(self, v)`` in a method of an object the function built: emitted
    code called ``Scaled.act`` with the dict of the object's fields (AttributeError
    at ``self.scale``)."""
    return np.sum(ExplicitParent(1.5).act(x) ** 2)


SWISH = SwishLayer(0.5)


def module_object_super(x):
    """``super().act(v)`` in a method of a module-level object called inside."""
    return np.sum(SWISH.forward(x) ** 2)
