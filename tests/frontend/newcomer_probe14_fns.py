"""Issue 23, fourteenth newcomer probe: 52 short functions written the way a NumPy user
writes them, in territory the thirteen earlier probes did not cover: optimisers written
as functions of the parameters (RMSProp, Adagrad over a dict state, Nesterov look-ahead,
Lion's sign update, clipping by value, a damped Newton step by ``np.linalg.solve``);
losses (Crammer-Singer hinge, log-cosh by ``np.logaddexp``, Jensen-Shannon with
``np.where``, 1-D Wasserstein by ``np.sort``, pairwise ranking hinge, cosine embedding,
the KL of a full-covariance Gaussian by ``slogdet``); physics (orbital energy with
``np.cross``, an FPU chain by ``np.concatenate`` of lists, an XY-model energy, an
inertia tensor by ``np.einsum``, masked pairwise gravity, a soft leaky
integrate-and-fire neuron); statistics (a Poisson mixture by ``np.logaddexp.reduce``,
Laplace, zero-inflated Poisson, AR(1), Gamma by ``xlogy``, Welsch/Geman-McClure by a
string, a smooth KS statistic); signal processing (``np.convolve`` moving averages,
``np.diff`` chains, Hamming-windowed frames, a soft argmax peak); geometry (squared
distances by the Gram trick, Rodrigues' rotation, a triangle mesh's area, Procrustes by
SVD, polar coordinates by ``np.hypot``/``np.arctan2``); and Python styles
(``@staticmethod`` and ``@classmethod`` callees, ``while True`` with ``break``, nested
helpers with keyword arguments and ``**opts``, ``enumerate`` over dict items, a
string-keyed config read by ``.get``, combined ``np.where`` masks, ``np.einsum``
strings, ``np.clip(..., None, hi)`` of ``np.maximum(0, x)``, ``sum(..., start=)``,
parameters unflattened from a vector by a dict of shapes, ``zip`` over dict items, a
tridiagonal matrix by ``np.diag(k=)``, ``np.piecewise``, ``np.array_split``,
``list.sort(key=)``, a hand-written ``scan`` with a step function, a hard k-means
assignment by ``np.argmin``).
tests/frontend/test_newcomer_probe14.py runs each through s2s and compares with JAX on
this same source (``newcomer_harness.twin``) or central differences."""

from __future__ import annotations

import numpy as np
import scipy.special

A4 = np.array([[2.0, 0.3, 0.1, 0.0], [0.3, 1.5, -0.2, 0.1], [0.1, -0.2, 1.0, 0.05],
               [0.0, 0.1, 0.05, 0.8]])
B4 = np.array([0.5, -0.3, 0.2, 0.7])
TARGET = np.array([0.5, -0.2, 0.9, 0.1, -0.6, 0.3])
DATA = np.array([0.1, -0.4, 1.3, 0.7, -1.2, 0.25])
COUNTS = np.array([0.0, 2.0, 1.0, 0.0, 5.0, 3.0])
POS_DATA = np.array([0.4, 1.3, 2.2, 0.7, 3.1])
SERIES = np.array([0.2, 0.5, 0.1, -0.3, -0.4, 0.0, 0.35])

# ---- optimisers written as functions of the parameters -------------------------------


def _quad_loss(w):
    return 0.5 * w @ A4 @ w - B4 @ w + 0.1 * np.sum(w ** 4)


def _quad_grad(w):
    return A4 @ w - B4 + 0.4 * w ** 3


def rmsprop_steps(w, lr=0.05, rho=0.9, eps=1e-8, steps=4):
    s = np.zeros_like(w)
    for _ in range(steps):
        g = _quad_grad(w)
        s = rho * s + (1 - rho) * g ** 2
        w = w - lr * g / (np.sqrt(s) + eps)
    return _quad_loss(w)


def adagrad_dict_state(w, lr=0.1, steps=3):
    state = {"w": w, "g2": np.zeros_like(w)}
    for _ in range(steps):
        g = _quad_grad(state["w"])
        state["g2"] = state["g2"] + g * g
        state["w"] = state["w"] - lr * g / np.sqrt(state["g2"] + 1e-10)
    return _quad_loss(state["w"])


def nesterov_lookahead(w, lr=0.1, mu=0.9, steps=3):
    v = np.zeros_like(w)
    for _ in range(steps):
        g = _quad_grad(w + mu * v)
        v = mu * v - lr * g
        w = w + v
    return _quad_loss(w)


def lion_sign_step(w, lr=0.02, b1=0.9, b2=0.99, steps=3):
    m = np.zeros_like(w)
    for _ in range(steps):
        g = _quad_grad(w)
        update = np.sign(b1 * m + (1 - b1) * g)
        w = w - lr * (update + 0.1 * w)
        m = b2 * m + (1 - b2) * g
    return _quad_loss(w)


def clip_by_value_sgd(w, lr=0.3, limit=0.5, steps=3):
    for _ in range(steps):
        g = np.clip(_quad_grad(w), -limit, limit)
        w = w - lr * g
    return _quad_loss(w)


def damped_newton_solve(w, damping=0.5):
    g = _quad_grad(w)
    H = A4 + np.diag(1.2 * w ** 2) + damping * np.eye(w.shape[0])
    w_new = w - np.linalg.solve(H, g)
    return _quad_loss(w_new) + 0.1 * np.sum(np.cos(w))


# ---- losses ----------------------------------------------------------------------------

LABELS3 = np.array([0, 2, 1])
MASK6 = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
Q6 = np.array([0.3, 0.0, 0.2, 0.1, 0.25, 0.15])
RELEVANCE = np.array([3.0, 1.0, 2.0, 0.0])
PAIRS_Y = np.array([[1.0, 0.5], [-0.3, 0.8], [0.6, -0.9]])
SIMILAR = np.array([True, False, True])


def crammer_singer_hinge(scores):
    n = scores.shape[0]
    correct = scores[np.arange(n), LABELS3]
    margins = scores - correct[:, None] + 1.0
    margins = np.where(np.eye(scores.shape[1], dtype=bool)[LABELS3], -np.inf, margins)
    return np.sum(np.maximum(0, np.max(margins, axis=1)))


def log_cosh_loss(pred):
    r = pred - TARGET[: pred.shape[0]]
    return np.mean(np.logaddexp(r, -r) - np.log(2.0))


def js_divergence(logits):
    p = np.exp(logits - np.max(logits))
    p = p / p.sum()
    m = 0.5 * (p + Q6)

    def kl(a, b):
        return np.sum(np.where(a > 0, a * np.log(a / b), 0.0))

    return 0.5 * kl(p, m) + 0.5 * kl(Q6, m)


def wasserstein_1d_sorted(x):
    a = np.sort(x)
    b = np.sort(DATA[: x.shape[0]])
    return np.mean(np.abs(a - b)) + 0.1 * np.mean((a - b) ** 2)


def pairwise_ranking_hinge(scores, margin=0.5):
    diff = scores[:, None] - scores[None, :]
    better = RELEVANCE[:, None] > RELEVANCE[None, :]
    return np.sum(np.where(better, np.maximum(0.0, margin - diff), 0.0))


def cosine_embedding_loss(X, margin=0.2):
    nx = np.linalg.norm(X, axis=1)
    ny = np.linalg.norm(PAIRS_Y, axis=1)
    cos = np.sum(X * PAIRS_Y, axis=1) / (nx * ny)
    return np.sum(np.where(SIMILAR, 1 - cos, np.maximum(0.0, cos - margin)))


def kl_mvn_full(L):
    k = L.shape[0]
    Lt = np.tril(L)
    S = Lt @ Lt.T + 0.1 * np.eye(k)
    mu = np.diag(L)
    sign, logdet = np.linalg.slogdet(S)
    return 0.5 * (np.trace(S) + mu @ mu - k - logdet)


# ---- physics ---------------------------------------------------------------------------

POINTS43 = np.array([[0.5, -0.2, 0.1], [-0.3, 0.8, 0.4], [0.9, 0.1, -0.5], [0.0, -0.6, 0.7]])
MASSES4 = np.array([1.0, 2.0, 0.5, 1.5])
OMEGA = np.array([0.3, -0.5, 1.1])


def orbital_energy_momentum(state, gm=1.0):
    r, v = state[:3], state[3:]
    energy = 0.5 * v @ v - gm / np.linalg.norm(r)
    h = np.cross(r, v)
    return energy + 0.1 * np.dot(h, h)


def fpu_chain_energy(q, alpha=0.25):
    padded = np.concatenate([[0.0], q, [0.0]])
    d = np.diff(padded)
    return np.sum(0.5 * d ** 2 + alpha / 3 * d ** 3)


def xy_model_energy(theta, coupling=1.0):
    horiz = np.cos(theta[:, 1:] - theta[:, :-1])
    vert = np.cos(theta[1:, :] - theta[:-1, :])
    return -coupling * (horiz.sum() + vert.sum()) + 0.1 * np.sum(np.sin(theta) ** 2)


def inertia_tensor_energy(r):
    m = MASSES4[: r.shape[0]]
    inertia = (np.einsum("n,nk,nk->", m, r, r) * np.eye(3)
               - np.einsum("n,ni,nj->ij", m, r, r))
    return 0.5 * OMEGA @ inertia @ OMEGA


def masked_gravity_potential(pos):
    n = pos.shape[0]
    d = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(d ** 2, axis=-1) + np.eye(n)
    off = ~np.eye(n, dtype=bool)
    inv = np.where(off, 1 / np.sqrt(r2), 0.0)
    return -0.5 * MASSES4[:n] @ inv @ MASSES4[:n]


def lif_neuron_soft(current, tau=5.0, threshold=1.0, k=8.0):
    v = 0.0
    spikes = 0.0
    for i_t in current:
        v = v + (4.0 * i_t - v) / tau
        s = 1 / (1 + np.exp(-k * (v - threshold)))
        spikes = spikes + s
        v = v * (1 - s)
    return spikes


# ---- statistics ------------------------------------------------------------------------


def poisson_mixture_logaddexp(params):
    log_rates, logit_w = params[:2], params[2]
    w = 1 / (1 + np.exp(-logit_w))
    comp = (COUNTS[None, :] * log_rates[:, None] - np.exp(log_rates)[:, None]
            - scipy.special.gammaln(COUNTS + 1)[None, :])
    log_w = np.array([np.log(w), np.log1p(-w)])
    return np.sum(np.logaddexp.reduce(log_w[:, None] + comp, axis=0))


def laplace_loglik(params):
    mu, log_b = params[0], params[1]
    b = np.exp(log_b)
    return np.sum(-np.log(2 * b) - np.abs(DATA - mu) / b)


def zero_inflated_poisson_nll(params):
    logit_pi, log_lam = params
    pi = scipy.special.expit(logit_pi)
    lam = np.exp(log_lam)
    zero = np.log(pi + (1 - pi) * np.exp(-lam))
    nonzero = (np.log1p(-pi) + scipy.special.xlogy(COUNTS, lam) - lam
               - scipy.special.gammaln(COUNTS + 1))
    return -np.sum(np.where(COUNTS == 0, zero, nonzero))


def ar1_loglik(params):
    phi = np.tanh(params[0])
    sigma = np.exp(params[1])
    resid = SERIES[1:] - phi * SERIES[:-1]
    n = resid.shape[0]
    return -0.5 * n * np.log(2 * np.pi * sigma ** 2) - np.sum(resid ** 2) / (2 * sigma ** 2)


def gamma_loglik_xlogy(params):
    a, rate = np.exp(params[0]), np.exp(params[1])
    return np.sum(scipy.special.xlogy(a - 1, POS_DATA) + a * np.log(rate)
                  - rate * POS_DATA - scipy.special.gammaln(a))


def robust_kernel_by_name(r, c=0.7, kind="welsch"):
    z = (r - TARGET[: r.shape[0]]) / c
    if kind == "welsch":
        return np.sum(1 - np.exp(-0.5 * z ** 2))
    if kind == "geman_mcclure":
        return np.sum(z ** 2 / (1 + z ** 2))
    raise ValueError(f"unknown kernel {kind!r}")


def smooth_ks_statistic(x, k=20.0):
    grid = np.linspace(-2.0, 2.0, 9)
    ecdf = np.mean(1 / (1 + np.exp(-k * (grid[:, None] - x[None, :]))), axis=1)
    ref = 0.5 * (1 + scipy.special.erf(grid / np.sqrt(2)))
    return np.max(np.abs(ecdf - ref))


# ---- signal processing -----------------------------------------------------------------


def moving_average_convolve(x, k=3):
    kernel = np.ones(k) / k
    smooth = np.convolve(x, kernel, mode="valid")
    h = k // 2
    return np.sum((x[h:-h] - smooth) ** 2) + 0.1 * np.sum(smooth ** 2)


def diff_chain_curvature(x):
    d1 = np.diff(x)
    d2 = np.diff(d1)
    d3 = np.diff(x, n=3)
    return np.sum(d2 ** 2) + 0.1 * np.sum(np.abs(d3)) + np.sum(d1[::2])


def hamming_frames(x, width=4, hop=2):
    win = np.hamming(width)
    frames = [x[i:i + width] * win for i in range(0, x.shape[0] - width + 1, hop)]
    F = np.stack(frames)
    return np.sum(np.log1p(F ** 2))


def soft_argmax_peak(x, beta=4.0):
    w = np.exp(beta * (x - np.max(x)))
    w = w / w.sum()
    idx = np.arange(x.shape[0])
    return w @ idx + np.max(x)


# ---- geometry --------------------------------------------------------------------------

FACES = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 1]])
B42 = np.array([[0.1, 1.0], [-0.8, 0.3], [0.5, -0.6], [0.2, 0.9]])
PTS3 = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -0.4, 0.8]])


def gram_trick_sqdist(X):
    sq = np.sum(X ** 2, axis=1)
    D2 = sq[:, None] + sq[None, :] - 2 * X @ X.T
    return np.sum(np.exp(-np.maximum(D2, 0.0)))


def rodrigues_rotation(axis_angle):
    theta = np.linalg.norm(axis_angle)
    k = axis_angle / theta
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    R = np.eye(3) + np.sin(theta) * K + (1 - np.cos(theta)) * (K @ K)
    rotated = PTS3 @ R.T
    return np.sum((rotated - PTS3[::-1]) ** 2)


def triangle_mesh_area(verts):
    a, b, c = verts[FACES[:, 0]], verts[FACES[:, 1]], verts[FACES[:, 2]]
    normals = np.cross(b - a, c - a)
    return 0.5 * np.sum(np.linalg.norm(normals, axis=1))


def procrustes_svd(A):
    U, S, Vt = np.linalg.svd(A.T @ B42)
    R = U @ Vt
    return np.sum((A @ R - B42) ** 2)


def polar_hypot_arctan2(xy):
    P = xy.reshape(-1, 2)
    r = np.hypot(P[:, 0], P[:, 1])
    th = np.arctan2(P[:, 1], P[:, 0])
    return np.sum(r * np.cos(2 * th)) + np.sum(np.log(r))


# ---- Python styles ---------------------------------------------------------------------


class Normalizer:
    def __init__(self, scale):
        self.scale = scale

    @staticmethod
    def _center(v):
        return v - v.mean()

    @classmethod
    def default(cls):
        return cls(scale=2.0)

    def __call__(self, x):
        return self.scale * self._center(x) / (np.std(x) + 1e-6)


def staticmethod_classmethod_callees(x):
    norm = Normalizer.default()
    return np.sum(np.tanh(norm(x)) ** 2) + Normalizer._center(x) @ x


def while_true_break(x):
    k = 0
    y = x
    while True:
        y = 0.5 * (y + np.sin(y))
        k += 1
        if k >= 6:
            break
    return np.sum(y ** 2)


def nested_helper_kwargs(x):
    def layer(v, *, scale=1.0, **opts):
        shift = opts.get("shift", 0.0)
        return np.tanh(scale * v + shift)

    h = layer(x, scale=2.0, shift=0.1)
    h = layer(h, **{"scale": 0.5})
    return np.sum(h ** 2)


PENALTIES = {"l1": 0.01, "l2": 0.1, "smooth": 0.05}


def enumerate_dict_items_penalty(x):
    total = np.sum((x - TARGET[: x.shape[0]]) ** 2)
    for i, (name, coef) in enumerate(PENALTIES.items()):
        if name == "l1":
            total = total + coef * np.sum(np.abs(x))
        elif name == "l2":
            total = total + coef * (i + 1) * np.sum(x ** 2)
        else:
            total = total + coef * np.sum(np.diff(x) ** 2)
    return total


def string_keyed_config_get(x, cfg=None):
    cfg = cfg or {"act": "softplus", "scale": 1.5}
    acts = {"softplus": lambda v: np.logaddexp(0.0, v), "relu": lambda v: np.maximum(0, v)}
    act = acts[cfg.get("act", "relu")]
    return np.sum(act(cfg.get("scale", 1.0) * x) * cfg.get("weight", 0.5))


def where_combined_masks(x):
    mask = ((x > -0.5) & (x < 1.0)) | (x == 0)
    return np.sum(np.where(mask, x ** 2, np.abs(x))) + np.sum(np.where(~mask, 0.0, x))


V3 = np.array([0.2, -0.5, 1.0])


def einsum_strings_batch(M):
    quad = np.einsum("i,ij,j->", V3, M, V3)
    rows = np.einsum("ij,ij->i", M, M)
    batched = np.einsum("bij,bjk->bik", np.stack([M, M.T]), np.stack([M.T, M]))
    return quad + rows @ V3 + 0.1 * np.einsum("bii->", batched)


def relu6_clip_none(x):
    y = np.clip(np.maximum(0, x) * 3.0, None, 6.0)
    return np.sum(y * x)


def sum_with_start(x):
    terms = [np.sum(x[i:] ** 2) / (i + 1) for i in range(x.shape[0])]
    return sum(terms, start=0.5)


SHAPES = {"W": (2, 3), "b": (2,), "v": (2,)}
INPUT3 = np.array([0.4, -1.0, 0.6])


def unflatten_params_dict(theta):
    params, offset = {}, 0
    for name, shape in SHAPES.items():
        size = int(np.prod(shape))
        params[name] = theta[offset:offset + size].reshape(shape)
        offset += size
    h = np.tanh(params["W"] @ INPUT3 + params["b"])
    return params["v"] @ h


LAYERS = {"first": (np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([0.1, 0.0])),
          "second": (np.array([[1.0, 0.4], [-0.6, 0.3]]), np.array([0.0, -0.2]))}


def zip_dict_items_layers(x):
    h = x[:2]
    for (name, (w, b)), scale in zip(LAYERS.items(), (1.0, 0.5)):
        h = np.tanh(w @ h + b) * scale
    return np.sum(h) + np.sum(x[2:] ** 2)


def tridiagonal_diag_k(x):
    n = x.shape[0]
    A = (np.diag(2.0 + x ** 2) + np.diag(-np.ones(n - 1), k=1)
         + np.diag(-0.5 * np.ones(n - 1), k=-1))
    u = np.linalg.solve(A, np.ones(n))
    return u @ u


def piecewise_branches(x):
    y = np.piecewise(x, [x < 0, x >= 0], [lambda v: v ** 2, lambda v: np.sin(v)])
    return np.sum(y * np.cos(x))


def array_split_uneven(x):
    parts = np.array_split(x, 2)
    return sum(np.sum(p ** 2) * (i + 1) for i, p in enumerate(parts))


def list_sort_key_lambda(x):
    items = [("c", 0.5), ("a", 2.0), ("b", -1.0)]
    items.sort(key=lambda kv: kv[0])
    ws = np.array([w for _, w in items])
    return np.sum(ws * x[:3] ** 2) + np.sum(x[3:])


def handwritten_scan(x):
    def scan(f, init, xs):
        carry, ys = init, []
        for v in xs:
            carry, y = f(carry, v)
            ys.append(y)
        return carry, np.stack(ys)

    def step(c, v):
        c = 0.8 * c + v
        return c, c ** 2

    c, ys = scan(step, 0.0, x)
    return c + np.sum(ys)


CENTERS = np.array([[0.0, 0.0], [1.0, 1.0], [-1.0, 0.5]])


def hard_kmeans_argmin(X):
    d = np.sum((X[:, None, :] - CENTERS[None, :, :]) ** 2, axis=-1)
    k = np.argmin(d, axis=1)
    return np.sum(d[np.arange(X.shape[0]), k])
