"""Workloads for tools/bench_wide.py, in formulations the optimizer was not tuned for,
each beside its gradient written by hand (forward values reused, no work for terms
whose gradient is zero). `twin(module)` re-executes this file with `np` bound to
another NumPy-like module (jax.numpy, autograd.numpy)."""

import numpy as np

B, C = 64, 10


def xent_onehot(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(np.sum(labels * logp, axis=1))


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def xent_onehot_hand(logits, labels):
    return (_softmax_rows(logits) - labels) / logits.shape[0]  # rows of labels sum to 1


def xent_int(logits, y):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(logits.shape[0]), y])


def xent_int_hand(logits, y):
    p = _softmax_rows(logits)
    p[np.arange(logits.shape[0]), y] -= 1.0
    return p / logits.shape[0]


def smoothed(logits, labels):
    soft = 0.9 * labels + 0.1 / logits.shape[1]
    logp = logits - np.max(logits, axis=1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
    return -np.sum(soft * logp) / logits.shape[0]


def smoothed_hand(logits, labels):
    soft = 0.9 * labels + 0.1 / logits.shape[1]
    return (_softmax_rows(logits) - soft) / logits.shape[0]


def attention(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    a = np.exp(s - np.max(s, axis=1, keepdims=True))
    a = a / np.sum(a, axis=1, keepdims=True)
    return np.sum((a @ v) ** 2)


def attention_hand(q, k, v):
    a = _softmax_rows(q @ k.T / np.sqrt(q.shape[1]))
    ga = (2 * (a @ v)) @ v.T
    gs = a * (ga - (ga * a).sum(axis=1, keepdims=True))
    return gs @ k / np.sqrt(q.shape[1])


MASK = np.tril(np.ones((32, 32), dtype=bool))


def attention_masked(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[1])
    s = np.where(MASK, s, -1e9)
    a = np.exp(s - np.max(s, axis=1, keepdims=True))
    a = a / np.sum(a, axis=1, keepdims=True)
    return np.sum((a @ v) ** 2)


def attention_masked_hand(q, k, v):
    a = _softmax_rows(np.where(MASK, q @ k.T / np.sqrt(q.shape[1]), -1e9))
    ga = (2 * (a @ v)) @ v.T
    gs = a * (ga - (ga * a).sum(axis=1, keepdims=True))  # zero where masked: a is
    return gs @ k / np.sqrt(q.shape[1])


def layer_norm(x, gamma, t):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma
    return np.sum(y * t)


def layer_norm_hand(x, gamma, t):
    n = x.shape[-1]
    xc = x - x.mean(axis=-1, keepdims=True)
    inv = 1.0 / np.sqrt((xc**2).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = xc * inv
    g = t * gamma
    return inv / n * (n * g - g.sum(axis=-1, keepdims=True)
                      - xhat * (g * xhat).sum(axis=-1, keepdims=True))


def mixture(mu, x, logw):
    d = x[:, None] - mu[None, :]
    lp = logw - 0.5 * d**2
    m = np.max(lp, axis=1, keepdims=True)
    lse = m + np.log(np.sum(np.exp(lp - m), axis=1, keepdims=True))
    return -np.sum(lse)


def mixture_hand(mu, x, logw):
    d = x[:, None] - mu
    lp = logw - 0.5 * d**2
    r = np.exp(lp - lp.max(axis=1, keepdims=True))
    r /= r.sum(axis=1, keepdims=True)
    return -(r * d).sum(axis=0)


def gp_nll(ell, x, y):
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell**2) + 0.1 * np.eye(x.shape[0])
    alpha = np.linalg.solve(k, y)
    return 0.5 * (y @ alpha) + 0.5 * np.linalg.slogdet(k)[1]


def gp_nll_hand(ell, x, y):
    sq = (x[:, None] - x) ** 2
    rbf = np.exp(-0.5 * sq / ell**2)
    kinv = np.linalg.inv(rbf + 0.1 * np.eye(x.shape[0]))
    alpha = kinv @ y
    dk = rbf * sq / ell**3
    return 0.5 * np.sum((kinv - np.outer(alpha, alpha)) * dk)


def logistic(w, x, y):
    return np.log1p(np.exp(-y * (x @ w)))


def logistic_hand(w, xs, ys):  # per-example gradients, one row each
    s = 1.0 / (1.0 + np.exp(ys * (xs @ w)))
    return (-ys * s)[:, None] * xs


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def tanh_sq_hand(x, v):  # Hessian-vector product
    t2 = np.tanh(x) ** 2
    return 2 * (1 - t2) * (1 - 3 * t2) * v


def mlp_dict(params, x, y):
    h = np.maximum(x @ params["w1"] + params["b1"], 0.0)
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def mlp_dict_hand(params, x, y):
    pre = x @ params["w1"] + params["b1"]
    h = np.maximum(pre, 0.0)
    g = 2.0 / y.size * (h @ params["w2"] + params["b2"] - y)
    gh = (g @ params["w2"].T) * (pre > 0)
    return {"w1": x.T @ gh, "b1": gh.sum(axis=0), "w2": h.T @ g, "b2": g.sum(axis=0)}


H = 16


def lstm(params, xs):
    h = np.zeros(H)
    c = np.zeros(H)
    for t in range(8):
        z = xs[t] @ params["wx"] + h @ params["wh"] + params["b"]
        i = 1.0 / (1.0 + np.exp(-z[:H]))
        f = 1.0 / (1.0 + np.exp(-z[H:2 * H]))
        o = 1.0 / (1.0 + np.exp(-z[2 * H:3 * H]))
        g = np.tanh(z[3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h**2)


def lstm_hand(params, xs):
    wx, wh, b = params["wx"], params["wh"], params["b"]
    h, c = np.zeros(H), np.zeros(H)
    saved = []
    for t in range(8):
        z = xs[t] @ wx + h @ wh + b
        i, f, o = (1.0 / (1.0 + np.exp(-z[k * H:(k + 1) * H])) for k in range(3))
        g = np.tanh(z[3 * H:])
        c_prev, h_prev = c, h
        c = f * c + i * g
        tc = np.tanh(c)
        h = o * tc
        saved.append((xs[t], h_prev, c_prev, i, f, o, g, tc))
    gwx, gwh, gb = np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
    gh, gc = 2 * h, np.zeros(H)
    for x, h_prev, c_prev, i, f, o, g, tc in reversed(saved):
        gc = gc + gh * o * (1 - tc**2)
        gz = np.concatenate([gc * g * i * (1 - i), gc * c_prev * f * (1 - f),
                             gh * tc * o * (1 - o), gc * i * (1 - g**2)])
        gwx += np.outer(x, gz)
        gwh += np.outer(h_prev, gz)
        gb += gz
        gh = wh @ gz
        gc = gc * f
    return {"wx": gwx, "wh": gwh, "b": gb}


def make_args(name):
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(B, C)) * 2
    labels = np.eye(C)[rng.integers(0, C, B)]
    if name in ("xent_onehot", "smoothed"):
        return logits, labels
    if name == "xent_int":
        return logits, rng.integers(0, C, B)
    if name.startswith("attention"):
        return tuple(rng.normal(size=(32, 16)) for _ in range(3))
    if name == "layer_norm":
        return rng.normal(size=(B, 32)), rng.normal(size=32), rng.normal(size=(B, 32))
    if name == "mixture":
        return rng.normal(size=5), rng.normal(size=256) * 2, np.log(np.full(5, 0.2))
    if name == "gp_nll":
        x = np.sort(rng.uniform(0, 5, 40))
        return np.float64(0.7), x, np.sin(x) + 0.1 * rng.normal(size=40)
    if name == "logistic":
        return rng.normal(size=8), rng.normal(size=(256, 8)), rng.choice([-1.0, 1.0], 256)
    if name == "tanh_sq":
        return rng.normal(size=1000), rng.normal(size=1000)
    if name == "mlp_dict":
        params = {"w1": rng.normal(size=(32, 64)) * 0.2, "b1": rng.normal(size=64) * 0.1,
                  "w2": rng.normal(size=(64, 10)) * 0.2, "b2": np.zeros(10)}
        return params, rng.normal(size=(B, 32)), rng.normal(size=(B, 10))
    if name == "lstm":
        params = {"wx": rng.normal(size=(8, 4 * H)) * 0.3,
                  "wh": rng.normal(size=(H, 4 * H)) * 0.3, "b": np.zeros(4 * H)}
        return params, rng.normal(size=(8, 8))
    raise KeyError(name)


def make_small_args(name):
    """The arguments of ``make_args`` at the smallest sizes that still mean the same
    program (a batch of 4, 3 classes, 8 elements, a 3-point GP): where
    a call is mostly the Python around the arithmetic, the cells ``NAME:KIND:small``
    of ``tools/bench_jit_instructions.py``."""
    global B, C
    rng = np.random.default_rng(1)
    saved, (B, C) = (B, C), (4, 3)
    try:
        if name == "attention":
            return tuple(rng.normal(size=(3, 2)) for _ in range(3))
        if name == "layer_norm":
            return rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(4, 3))
        if name == "mixture":
            return rng.normal(size=2), rng.normal(size=6) * 2, np.log(np.full(2, 0.5))
        if name == "gp_nll":
            x = np.sort(rng.uniform(0, 5, 3))
            return np.float64(0.7), x, np.sin(x) + 0.1 * rng.normal(size=3)
        if name == "logistic":
            return rng.normal(size=2), rng.normal(size=(3, 2)), rng.choice([-1.0, 1.0], 3)
        if name == "tanh_sq":
            return rng.normal(size=8), rng.normal(size=8)
        if name == "mlp_dict":
            params = {"w1": rng.normal(size=(3, 4)) * 0.2, "b1": rng.normal(size=4) * 0.1,
                      "w2": rng.normal(size=(4, 2)) * 0.2, "b2": np.zeros(2)}
            return params, rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
        return make_args(name)  # (attention_masked: its mask fixes 32 rows; lstm: 8 steps, 16 units)
    finally:
        B, C = saved


def twin(module):
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    namespace = {}
    exec(compile(source, __file__, "exec"), namespace)
    namespace["np"] = module
    return namespace
