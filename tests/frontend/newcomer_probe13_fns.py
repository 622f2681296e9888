"""Issue 23, thirteenth newcomer probe: 45 short functions written the way a NumPy user
writes them, in domains and styles the twelve earlier probes did not cover: signal
processing (windowed FFT magnitudes, an FIR filter by slicing, autocorrelation at a few
lags, ``np.correlate``, an exponential smoother by a list, an FFT low-pass by
``irfft``, detrending by ``np.polyfit``); statistics (Student-t and von Mises
log-likelihoods with ``scipy.special``, a kernel density estimate, Huber/Tukey chosen by
a string, the median absolute deviation, ``np.cov`` with ``aweights``, a probit
likelihood by ``log_ndtr``, ``logsumexp`` with ``b=`` weights); geometry (quaternion
products and matrices, barycentric coordinates, the shoelace area, signed distance
functions, point-to-segment distance, the haversine formula); finance (Black-Scholes by
``erf``, portfolio variance, compound interest in a ``while`` with a counter, the Sharpe
ratio, a Monte-Carlo option price with a seeded generator); classic ML (SVM hinge with
L2, a GMM E-step, soft k-means with a keyword-only temperature, PCA reconstruction error
by SVD, kernel ridge regression, a dict-of-parameters MLP); small simulators (a pendulum
by Verlet recording every fifth energy, the 2-D heat equation with ``np.roll``, a soft
Ising energy, a wave equation by a tuple-swap recurrence, Lotka-Volterra over a dict
state); and Python styles (early ``return`` in branches, ``elif`` chains on config
strings, ``while`` with a counter around a bisection, a walrus in an ``if``, ``match`` on
a string with a capture, nested helpers with keyword-only defaults, keyword-only
parameters, ``continue`` in a static loop, ``sorted`` dict items zipped with weights,
``for ... else``, ``lambda`` helpers, ``enumerate`` with ``start=``, ``*`` unpacking in
a call, ``isinstance`` on a parameter, a class with ``__slots__``).
tests/frontend/test_newcomer_probe13.py runs each through s2s and compares with JAX on
this same source (``newcomer_harness.twin``) or central differences."""

from __future__ import annotations

import math

import numpy as np
import scipy.special

# ---- signal processing ---------------------------------------------------------------------


def windowed_fft_magnitude(x):
    n = x.shape[0]
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / (n - 1))
    spectrum = np.fft.rfft(x * window)
    mag = np.abs(spectrum)
    freqs = np.fft.rfftfreq(n, d=0.1)
    return np.sum(mag[1:] * freqs[1:]) + np.log1p(mag[0] ** 2)


def fir_filter_slicing(x, taps=(0.25, 0.5, 0.25)):
    k = len(taps)
    n = x.shape[0] - k + 1
    y = 0.0
    for i, t in enumerate(taps):
        y = y + t * x[i:i + n]
    return np.sum(np.tanh(y) ** 2)


def autocorrelation_lags(x, max_lag=3):
    xc = x - x.mean()
    r0 = np.dot(xc, xc)
    acf = [np.dot(xc[:-k], xc[k:]) / r0 for k in range(1, max_lag + 1)]
    return sum(a ** 2 for a in acf)


def np_correlate_full(x):
    r = np.correlate(x, x, mode="full")
    return np.sum(r * np.linspace(-1.0, 1.0, r.shape[0]) ** 2)


def exp_smoother_list(x, alpha=0.3):
    ys = [x[0]]
    for xi in x[1:]:
        ys.append(alpha * xi + (1 - alpha) * ys[-1])
    y = np.stack(ys)
    return np.sum((y - x) ** 2)


def fft_lowpass_irfft(x, keep=2):
    spec = np.fft.rfft(x)
    mask = np.arange(spec.shape[0]) < keep
    smooth = np.fft.irfft(spec * mask, n=x.shape[0])
    return np.sum((x - smooth) ** 2) + np.sum(smooth ** 3)


def detrend_polyfit(x):
    t = np.arange(x.shape[0], dtype=float)
    coef = np.polyfit(t, x, 1)
    resid = x - np.polyval(coef, t)
    return np.sum(resid ** 2) + coef[0] ** 2


# ---- statistics ------------------------------------------------------------------------------

DATA = np.array([0.1, -0.4, 1.3, 0.7, -1.2, 0.25])
ANGLES = np.array([0.2, 0.5, -0.3, 0.9, 0.1])


def student_t_loglik(x, nu=4.0, scale=0.8):
    z = (DATA[: x.shape[0]] - x) / scale
    const = (scipy.special.gammaln((nu + 1) / 2) - scipy.special.gammaln(nu / 2)
             - 0.5 * np.log(nu * np.pi) - np.log(scale))
    return np.sum(const - (nu + 1) / 2 * np.log1p(z ** 2 / nu))


def von_mises_loglik(params):
    mu, log_kappa = params[0], params[1]
    kappa = np.exp(log_kappa)
    n = ANGLES.shape[0]
    # log I0(kappa) = log(i0e(kappa)) + kappa
    log_norm = np.log(2 * np.pi) + np.log(scipy.special.i0e(kappa)) + kappa
    return np.sum(kappa * np.cos(ANGLES - mu)) - n * log_norm


def kde_log_density(x, bandwidth=0.5):
    d = (x[:, None] - DATA[None, :]) / bandwidth
    dens = np.mean(np.exp(-0.5 * d ** 2), axis=1) / (bandwidth * np.sqrt(2 * np.pi))
    return np.sum(np.log(dens))


def _robust(r, kind, c):
    if kind == "huber":
        a = np.abs(r)
        return np.where(a <= c, 0.5 * r ** 2, c * (a - 0.5 * c))
    elif kind == "tukey":
        inside = (1 - (r / c) ** 2) ** 3
        return np.where(np.abs(r) <= c, c ** 2 / 6 * (1 - inside), c ** 2 / 6)
    elif kind == "l2":
        return 0.5 * r ** 2
    else:
        raise ValueError(f"unknown loss {kind!r}")


def robust_loss_by_name(x, c=1.0):
    r = x - DATA[: x.shape[0]]
    return np.sum(_robust(r, "huber", c)) + np.sum(_robust(r, "tukey", 2 * c)) \
        + 0.1 * np.sum(_robust(r, "l2", c))


def median_abs_deviation(x):
    med = np.median(x)
    return np.median(np.abs(x - med)) + 0.5 * med ** 2


def weighted_cov_aweights(x):
    w = np.exp(x)
    pts = np.stack([DATA[:4], DATA[1:5] ** 2])
    c = np.cov(pts, aweights=w)
    return c[0, 1] + np.trace(c)


def probit_log_ndtr(w):
    feats = np.stack([DATA, DATA ** 2, np.ones_like(DATA)], axis=1)
    labels = np.array([1, 0, 1, 1, 0, 1])
    z = feats @ w
    sign = 2 * labels - 1
    return -np.sum(scipy.special.log_ndtr(sign * z))


def logsumexp_b_weights(x):
    b = np.array([0.5, 1.0, 2.0, 0.25])[: x.shape[0]]
    return scipy.special.logsumexp(x, b=b) + scipy.special.logsumexp(2 * x)


# ---- geometry --------------------------------------------------------------------------------


def _qmul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw)


def quaternion_rotate(q, v=(1.0, 0.5, -0.3)):
    q = q / np.sqrt(np.sum(q ** 2))
    conj = (q[0], -q[1], -q[2], -q[3])
    p = (0.0, v[0], v[1], v[2])
    _, rx, ry, rz = _qmul(_qmul(q, p), conj)
    return rx ** 2 + 2 * ry - rz


def quaternion_to_matrix(q):
    w, x, y, z = q / np.linalg.norm(q)
    R = np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])
    pts = np.array([[1.0, 0.0, 0.0], [0.3, -0.2, 0.9]])
    return np.sum((pts @ R.T) * np.array([1.0, 2.0, 3.0]))


TRIANGLE = np.array([[0.0, 0.0], [2.0, 0.0], [0.5, 1.5]])


def barycentric_coords(p):
    a, b, c = TRIANGLE
    v0, v1, v2 = b - a, c - a, p - a
    d00, d01, d11 = v0 @ v0, v0 @ v1, v1 @ v1
    d20, d21 = v2 @ v0, v2 @ v1
    denom = d00 * d11 - d01 * d01
    v = (d11 * d20 - d01 * d21) / denom
    w = (d00 * d21 - d01 * d20) / denom
    u = 1.0 - v - w
    return u ** 2 + 2 * v ** 2 + 3 * w ** 2


def polygon_area_shoelace(pts):
    xs, ys = pts[:, 0], pts[:, 1]
    area = 0.5 * np.abs(np.dot(xs, np.roll(ys, -1)) - np.dot(np.roll(xs, -1), ys))
    perimeter = np.sum(np.linalg.norm(pts - np.roll(pts, -1, axis=0), axis=1))
    return area / perimeter ** 2


def _sdf_circle(p, center, r):
    return np.linalg.norm(p - center) - r


def _sdf_box(p, half):
    q = np.abs(p) - half
    return np.linalg.norm(np.maximum(q, 0.0)) + min(max(q[0], q[1]), 0.0)


def sdf_union(p):
    d1 = _sdf_circle(p, np.array([1.0, 0.0]), 0.5)
    d2 = _sdf_box(p, np.array([0.5, 0.3]))
    return np.minimum(d1, d2) ** 2 + 0.1 * np.maximum(d1, d2)


def point_segment_distance(p, a=(0.0, 0.0), b=(2.0, 1.0)):
    a, b = np.asarray(a), np.asarray(b)
    ab = b - a
    t = np.clip(np.dot(p - a, ab) / np.dot(ab, ab), 0.0, 1.0)
    closest = a + t * ab
    return np.sum((p - closest) ** 2)


def haversine_distance(latlon):
    lat1, lon1, lat2, lon2 = np.radians(latlon)
    dlat, dlon = lat2 - lat1, lon2 - lon1
    h = np.sin(dlat / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin(dlon / 2) ** 2
    return 2 * 6371.0 * np.arcsin(np.sqrt(h))


# ---- finance ---------------------------------------------------------------------------------


def black_scholes_call(params, K=1.0, r=0.02):
    S, sigma, T = params[0], params[1], params[2]
    N = lambda z: 0.5 * (1 + scipy.special.erf(z / math.sqrt(2)))  # noqa: E731
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * N(d1) - K * np.exp(-r * T) * N(d2)


COV = np.array([[0.04, 0.006, 0.01], [0.006, 0.09, -0.012], [0.01, -0.012, 0.0625]])
MU = np.array([0.05, 0.08, 0.06])


def portfolio_variance(w, risk_aversion=3.0):
    w = w / np.sum(w)
    var = w @ COV @ w
    return risk_aversion / 2 * var - MU @ w + np.sqrt(var)


def compound_interest_while(rates, years=6):
    balance = np.ones_like(rates)
    year = 0
    while year < years:
        balance = balance * (1 + rates / 12) ** 12
        year += 1
    return np.sum(np.log(balance)) + np.max(balance)


def sharpe_ratio(returns, periods=252):
    excess = returns - 0.0001
    return np.mean(excess) / np.std(excess, ddof=1) * np.sqrt(periods)


def mc_option_seeded(params, n_paths=200):
    S, sigma = params[0], params[1]
    rng = np.random.default_rng(0)
    z = rng.standard_normal(n_paths)
    ST = S * np.exp(-0.5 * sigma ** 2 + sigma * z)
    return np.mean(np.maximum(ST - 1.0, 0.0))


# ---- classic ML ------------------------------------------------------------------------------

SVM_X = np.array([[1.0, 0.0], [0.5, 1.0], [-1.0, 0.3], [0.2, -1.5], [2.0, 1.0]])
SVM_Y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])


def svm_hinge_l2(w, lam=0.1):
    margins = SVM_Y * (SVM_X @ w[:-1] + w[-1])
    return np.mean(np.maximum(0.0, 1.0 - margins)) + lam * np.dot(w[:-1], w[:-1])


def gmm_e_step(means, sigma=0.7):
    logp = -0.5 * ((DATA[:, None] - means[None, :]) / sigma) ** 2
    logr = logp - scipy.special.logsumexp(logp, axis=1, keepdims=True)
    r = np.exp(logr)
    new_means = (r * DATA[:, None]).sum(axis=0) / r.sum(axis=0)
    return np.sum((new_means - means) ** 2) - np.sum(r * logr)


def soft_kmeans_kwonly(centers, *, temperature=0.5, points=SVM_X):
    d2 = np.sum((points[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    logits = -d2 / temperature
    logits = logits - logits.max(axis=1, keepdims=True)
    r = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return np.sum(r * d2)


def pca_reconstruction_error(X, k=1):
    Xc = X - X.mean(axis=0)
    U, S, Vt = np.linalg.svd(Xc, full_matrices=False)
    recon = (U[:, :k] * S[:k]) @ Vt[:k]
    return np.sum((Xc - recon) ** 2) + S[0]


def kernel_ridge_lengthscale(log_ls, lam=0.1):
    ls = np.exp(log_ls[0])
    xs = DATA[:5]
    ys = np.sin(3 * xs)
    K = np.exp(-0.5 * (xs[:, None] - xs[None, :]) ** 2 / ls ** 2)
    alpha = np.linalg.solve(K + lam * np.eye(xs.shape[0]), ys)
    pred = K @ alpha
    return np.mean((pred - ys) ** 2) + log_ls[1] ** 2 * np.sum(alpha ** 2)


def _mlp_forward(p, inputs):
    h = np.tanh(inputs @ p["W1"] + p["b1"])
    return h @ p["w2"] + p["b2"]


def dict_params_mlp(theta):
    params = {"W1": theta[:4].reshape(2, 2), "b1": theta[4:6], "w2": theta[6:8],
              "b2": theta[8]}
    pred = _mlp_forward(params, SVM_X)
    return np.mean((pred - SVM_Y) ** 2) + 1e-2 * sum(np.sum(v ** 2) for v in params.values())


# ---- small simulators ------------------------------------------------------------------------


def pendulum_verlet_energies(state, dt=0.1, n_steps=15):
    theta, omega = state[0], state[1]
    energies = []
    acc = -np.sin(theta)
    for step in range(n_steps):
        theta = theta + dt * omega + 0.5 * dt ** 2 * acc
        new_acc = -np.sin(theta)
        omega = omega + 0.5 * dt * (acc + new_acc)
        acc = new_acc
        if step % 5 == 0:
            energies.append(0.5 * omega ** 2 - np.cos(theta))
    return np.std(np.array(energies)) + theta ** 2


def heat_2d_periodic(u, kappa=0.1, steps=4):
    for _ in range(steps):
        lap = (np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1)
               + np.roll(u, -1, axis=1) - 4 * u)
        u = u + kappa * lap
    return np.sum(u ** 2) + np.sum(u * np.arange(u.size).reshape(u.shape))


def ising_soft_energy(s, J=1.0, h=0.2):
    spins = np.tanh(s)
    bonds = spins * np.roll(spins, 1, axis=0) + spins * np.roll(spins, 1, axis=1)
    return -J * np.sum(bonds) - h * np.sum(spins)


def wave_leapfrog_swap(u0, c2=0.3, steps=5):
    u_prev, u = u0, u0
    for _ in range(steps):
        edge = np.zeros(1)
        lap = np.concatenate([edge, u[2:] - 2 * u[1:-1] + u[:-2], edge])
        u_prev, u = u, 2 * u - u_prev + c2 * lap
    return np.sum(u ** 2) + u[1] * u_prev[2]


def lotka_volterra_dict(x, dt=0.05, steps=6):
    state = {"prey": x[0], "pred": x[1]}
    rates = {"a": 1.0, "b": 0.4, "c": 0.8, "d": 0.3}
    for _ in range(steps):
        d = {"prey": rates["a"] * state["prey"] - rates["b"] * state["prey"] * state["pred"],
             "pred": rates["d"] * state["prey"] * state["pred"] - rates["c"] * state["pred"]}
        state = {k: state[k] + dt * d[k] for k in state}
    return state["prey"] * state["pred"] + state["pred"] ** 2


# ---- Python styles ---------------------------------------------------------------------------


def _scaled(x, mode):
    if mode == "sum":
        return np.sum(x)
    if mode == "mean":
        return np.mean(x)
    elif mode == "max":
        return np.max(x)
    return np.sum(x ** 2)


def early_return_modes(x):
    return _scaled(x ** 2, "sum") + _scaled(np.sin(x), "mean") + 0.5 * _scaled(x, "max") \
        + _scaled(x, "other")


def _optimize(w, opt, steps=3, lr=0.1):
    v = np.zeros_like(w)
    s = np.zeros_like(w)
    for t in range(1, steps + 1):
        g = w ** 3 - np.cos(w)
        if opt == "sgd":
            w = w - lr * g
        elif opt == "momentum":
            v = 0.9 * v + g
            w = w - lr * v
        elif opt == "rmsprop":
            s = 0.9 * s + 0.1 * g ** 2
            w = w - lr * g / (np.sqrt(s) + 1e-8)
        else:
            raise ValueError(opt)
    return np.sum(w ** 2)


def elif_chain_optimizer(w):
    return sum(_optimize(w, opt) for opt in ("sgd", "momentum", "rmsprop"))


def while_counter_bisection(x, iters=30):
    lo = np.full_like(x, -5.0)
    hi = np.full_like(x, 5.0)
    it = 0
    while it < iters:
        mid = 0.5 * (lo + hi)
        below = mid ** 3 + mid < x
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
        it += 1
    t = 0.5 * (lo + hi)
    t = t - (t ** 3 + t - x) / (3 * t ** 2 + 1)  # one Newton step carries the derivative
    return np.sum(t ** 2)


def walrus_if_norm(x, max_norm=1.0):
    if (n := np.sqrt(np.sum(x ** 2))) > max_norm:
        x = x * (max_norm / n)
    return np.sum(np.sin(x)) + n


def match_string_capture(x, kind="softplus"):
    match kind:
        case "relu":
            y = np.maximum(x, 0.0)
        case "softplus" | "smooth":
            y = np.logaddexp(x, 0.0)
        case other:
            raise ValueError(f"unknown activation {other}")
    return np.sum(y * np.arange(1, x.shape[0] + 1))


def nested_helper_kwonly(x):
    def poly(t, a=1.0, *, b=0.5, c=0.0):
        return a * t ** 2 + b * t + c

    return np.sum(poly(x)) + np.sum(poly(x, 2.0, c=1.0)) + np.sum(poly(np.sin(x), b=-1.0))


def kwonly_scale_shift(x, *, scale=2.0, shift=0.1):
    z = scale * x + shift
    return np.sum(np.log1p(z ** 2))


def continue_static_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        if i % 2 == 1:
            continue
        total = total + x[i] ** 2 * (i + 1)
    return total + np.sum(x)


WEIGHTS = {"b": 2.0, "a": 0.5, "c": -1.0}


def sorted_items_zip(x):
    parts = {"a": x[:2], "b": np.sin(x[1:3]), "c": x[2:] ** 2}
    total = 0.0
    for (name, part), (wname, wt) in zip(sorted(parts.items()), sorted(WEIGHTS.items())):
        assert name == wname, name
        total = total + wt * np.sum(part)
    return total


def for_else_search(x, threshold=3):
    for k in range(5):
        if k * k > threshold:
            break
    else:
        k = 0
    return np.sum(x ** k) + k


def lambda_helpers_dict(x):
    fns = {"sq": lambda t: t ** 2, "cube": lambda t: t ** 3, "sin": np.sin}
    return sum(fns[k](x[i]) for i, k in enumerate(("sq", "cube", "sin", "sq")))


def enumerate_start_weights(x):
    total = 0.0
    for i, xi in enumerate(x, start=1):
        total = total + xi ** 2 / i
    return total


def star_unpack_call(x):
    def combine(a, b, c, d):
        return a * b + c * d

    return combine(*x) + combine(*np.sin(x)) + combine(x[0], *x[1:3], d=x[3])


def isinstance_param_branch(x, scale=2):
    if isinstance(scale, (int, float)):
        y = x * scale
    else:
        y = x * np.asarray(scale)
    return np.sum(y ** 2) + np.sum(np.tanh(x))


class Affine:
    __slots__ = ("w", "b")

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, z):
        return self.w * z + self.b


def slots_class_layer(x):
    layer = Affine(x[:2], x[2:])
    out = layer(np.array([1.0, -0.5]))
    return np.sum(np.tanh(out) ** 2) + np.sum(layer.w * layer.b)
