"""Issue 23, tenth newcomer probe: 44 short functions written the way a new NumPy user
writes them, in styles the nine earlier probes did not cover: numerical methods written
out (Simpson's rule by strided slices, Gram-Schmidt by columns, power iteration and
Newton's method with a fixed count, a least-squares fit through ``np.linalg.qr``, Heun's
method with a Python-float clock, a Householder reflection, ``matrix_power``/``pinv``,
singular values); ML losses and steps (focal, contrastive and triplet margins, one-hot by
``np.eye(k)[labels]``, an embedding lookup with repeated ids, a top-k mask by a sorted
threshold, log-sigmoid by ``np.logaddexp``, batch norm with running statistics as
arguments, a softmax masked with ``-np.inf``, an EMA of SGD iterates); array idioms
(``np.fmax``/``np.fmin`` with NaN, ``np.newaxis`` broadcasting, ufunc methods
``outer``/``reduce``/``accumulate``, ``np.bincount`` with weights, ``np.add.at``,
method chains, tuple ``axis``, the stack family, flips/rotations/``moveaxis``,
``np.searchsorted`` interpolation, ``np.ptp``/``np.heaviside``/``np.sinc``); and Python
forms (``for ... else``, multiple-target assignment then an in-place update, an
in-place update through a view, ``y.sort()`` in place, ``np.fill_diagonal``, unpacking an
array's rows, ``slice`` objects, ``np.s_`` and ``np.ix_``, ``np.array`` of computed
scalars, ``np.finfo(x.dtype).eps``, the builtin ``sum`` over an array's rows, chained
comparisons and nested conditional expressions on shapes, a module object and a module
step counter changed between calls).  tests/frontend/test_newcomer_probe10.py runs each
through s2s and compares with JAX on this same source (``newcomer_harness.twin``) or
central differences."""

from __future__ import annotations

import numpy as np

# ---- numerical methods written out --------------------------------------------------------


def simpson_rule(y, h=0.1):
    return h / 3.0 * (y[0] + y[-1] + 4.0 * np.sum(y[1:-1:2]) + 2.0 * np.sum(y[2:-1:2]))


def gram_schmidt_cols(a):
    qs = []
    for j in range(a.shape[1]):
        v = a[:, j]
        for q in qs:
            v = v - np.dot(q, v) * q
        qs.append(v / np.linalg.norm(v))
    q = np.stack(qs, axis=1)
    return np.sum(q * np.arange(1.0, q.size + 1.0).reshape(q.shape))


def power_iter_fixed(m, n=12):
    a = m + m.T
    v = np.ones(a.shape[0])
    for _ in range(n):
        v = a @ v
        v = v / np.linalg.norm(v)
    return v @ a @ v


def newton_cbrt_fixed(c, n=6):
    x = 1.0
    for _ in range(n):
        x = x - (x ** 3 - c) / (3.0 * x ** 2)
    return np.sum(x * np.array([1.0, 2.0, 3.0]))


def qr_least_squares(y, t=np.linspace(0.0, 1.0, 5)):
    a = np.stack([np.ones_like(t), t, t ** 2], axis=1)
    q, r = np.linalg.qr(a)
    coef = np.linalg.solve(r, q.T @ y)
    resid = y - a @ coef
    return resid @ resid + np.sum(coef ** 2)


def heun_float_clock(y0, h=0.1, t_end=0.5):
    t = 0.0
    y = y0
    while t < t_end - 1e-12:
        k1 = -y ** 3 + np.sin(t)
        k2 = -(y + h * k1) ** 3 + np.sin(t + h)
        y = y + 0.5 * h * (k1 + k2)
        t += h
    return np.sum(y ** 2)


def householder_apply(v, b=np.array([1.0, -2.0, 0.5])):
    n = v.shape[0]
    hmat = np.eye(n) - 2.0 * np.outer(v, v) / (v @ v)
    return np.sum((hmat @ b) * np.arange(1.0, n + 1.0))


def matrix_power_pinv(m):
    sq = m.T @ m
    return np.sum(np.linalg.matrix_power(sq, 3)) * 1e-2 + np.sum(np.linalg.pinv(m) ** 2)


def singular_values(m):
    s = np.linalg.svd(m, compute_uv=False)
    return s[0] + 0.5 * np.sum(s ** 2)


# ---- ML losses and steps -------------------------------------------------------------------


def focal_loss(z, y=np.array([1.0, 0.0, 1.0, 0.0]), gamma=2.0):
    p = 1.0 / (1.0 + np.exp(-z))
    pt = np.where(y == 1.0, p, 1.0 - p)
    return -np.sum((1.0 - pt) ** gamma * np.log(pt))


def contrastive_margin(a, b=np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]),
                       same=np.array([1.0, 0.0, 0.0]), margin=1.0):
    d = np.sqrt(np.sum((a - b) ** 2, axis=1))
    return np.mean(same * d ** 2 + (1.0 - same) * np.maximum(margin - d, 0.0) ** 2)


def one_hot_eye_xent(logits, labels=np.array([2, 0, 1, 2])):
    y = np.eye(logits.shape[1])[labels]
    z = logits - np.max(logits, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.sum(y * logp) / len(labels)


def embedding_repeated_ids(table, ids=np.array([0, 2, 0, 1, 0])):
    e = table[ids]
    w = np.linspace(0.5, 1.5, e.shape[1])
    return np.sum(np.tanh(e) * w) + np.sum(e[0] * e[-1])


def topk_threshold_mask(x, k=2):
    thr = np.sort(x)[-k]
    mask = x >= thr
    return np.sum(np.where(mask, x ** 2, 0.0)) + np.sum(mask * x)


def logsigmoid_pair(x):
    return np.sum(-np.logaddexp(0.0, -x)) + 0.5 * np.sum(-np.logaddexp(0, x))


def batchnorm_running(x, running_mean=np.array([0.1, -0.2]), running_var=np.array([1.0, 0.5]),
                      momentum=0.1, eps=1e-5):
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    new_mean = (1 - momentum) * running_mean + momentum * mu
    new_var = (1 - momentum) * running_var + momentum * var * x.shape[0] / (x.shape[0] - 1)
    y = (x - mu) / np.sqrt(var + eps)
    return np.sum(y * np.array([1.0, -0.5])) + np.sum(new_mean ** 2) + np.sum(np.log(new_var))


def masked_softmax_neginf(s, mask=np.array([[True, False, True], [True, True, False]]),
                          v=np.array([1.0, 2.0, -1.0])):
    s = np.where(mask, s, -np.inf)
    s = s - np.max(s, axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / np.sum(p, axis=-1, keepdims=True)
    return np.sum(p @ v)


def triplet_hinge(anchor, pos=np.array([[0.2, 0.1], [1.0, 1.0]]),
                  neg=np.array([[0.0, 0.5], [1.2, 0.9]]), margin=0.2):
    dp = np.sum((anchor - pos) ** 2, axis=-1)
    dn = np.sum((anchor - neg) ** 2, axis=-1)
    return np.mean(np.maximum(dp - dn + margin, 0.0))


def ema_sgd_loop(w, steps=4, lr=0.2, decay=0.8):
    ema = w.copy()
    for _ in range(steps):
        g = 2.0 * (w - 1.0) + np.cos(w)
        w = w - lr * g
        ema = decay * ema + (1.0 - decay) * w
    return np.sum(ema ** 2)


# ---- array idioms --------------------------------------------------------------------------


def fmax_fmin_nan(x):
    return np.sum(np.fmax(x, 0.0) ** 2) + np.sum(np.fmin(x, 0.5) * x)


def newaxis_rbf(x):
    d = x[:, np.newaxis, :] - x[np.newaxis, :, :]
    return np.sum(np.exp(-np.sum(d ** 2, axis=-1)))


def ufunc_outer_reduce(x):
    o = np.add.outer(x, x ** 2)
    return (np.sum(np.multiply.outer(x, x) * o) + np.multiply.reduce(x)
            + np.logaddexp.reduce(x) + np.sum(np.maximum.accumulate(x)))


def bincount_weighted(x, labels=np.array([0, 2, 0, 1, 2])):
    totals = np.bincount(labels, weights=x, minlength=4)
    return np.sum(totals ** 2) + totals[3]


def add_at_scatter(x, idx=np.array([0, 2, 0, 1, 2])):
    out = np.zeros(3)
    np.add.at(out, idx, x ** 2)
    return np.sum(out * np.array([1.0, -2.0, 3.0]) + np.sin(out))


def method_chain_forms(m):
    return (m.clip(min=0.0).sum(axis=0).mean() + m.ravel().dot(m.flatten())
            + m.prod(axis=1).sum() + m.cumsum(axis=1).max() + m.T.std())


def tuple_axis_reductions(t):
    a = np.sum(t ** 2, axis=(0, 2))
    b = np.mean(t, axis=(1, 2), keepdims=True)
    c = np.max(t, axis=(0, 1))
    return np.sum(a) + np.sum(b * t) + np.sum(c)


def stack_family(x):
    h = np.hstack([x, [1.0]])
    v = np.vstack([x, x ** 2])
    c = np.column_stack([x, np.cos(x)])
    flat = np.concatenate([v, c.T], axis=None)
    return np.sum(h ** 2) + np.sum(v[1] * c[:, 1]) + np.sum(flat * np.arange(flat.size))


def flip_rot_move(m):
    a = np.flip(m, axis=0) * np.arange(1.0, m.shape[1] + 1.0)
    b = np.rot90(m)
    t = np.moveaxis(np.expand_dims(m, -1) * np.ones(2), -1, 0)
    r = np.repeat(m, 2, axis=1)
    return np.sum(a * m) + np.sum(b[0] ** 2) + np.sum(np.swapaxes(t, 1, 2)[1] ** 3) + np.sum(
        np.tile(r, (2, 1)) * 0.1)


def searchsorted_lerp(x, grid=np.array([-1.0, 0.0, 0.5, 2.0]),
                      table=np.array([1.0, 0.0, 0.5, 3.0])):
    i = np.clip(np.searchsorted(grid, x) - 1, 0, grid.size - 2)
    w = (x - grid[i]) / (grid[i + 1] - grid[i])
    return np.sum((1.0 - w) * table[i] + w * table[i + 1])


def ptp_heaviside_sinc(x):
    return np.ptp(x) + np.sum(np.heaviside(x, 0.5) * x) + np.sum(np.sinc(x))


# ---- Python forms --------------------------------------------------------------------------


def for_else_static(x, scales=(1.0, 0.5, 0.25), stop=5):
    total = 0.0
    for i, s in enumerate(scales):
        if i == stop:
            break
        total = total + s * np.sum(x ** (i + 1))
    else:
        total = total + np.sum(np.cos(x))
    return total


def adam_zeros_init(w, lr=0.1, b1=0.9, b2=0.99):
    m = v = np.zeros_like(w)
    for t in range(1, 4):
        g = 2.0 * w + np.sin(w)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g ** 2
        w = w - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
    return np.sum(w ** 2)


def multi_target_inplace(x):
    a = b = x * 2.0
    a += 1.0
    return np.sum(a * b)


def view_inplace_base(x):
    y = x.copy()
    v = y[1:]
    v *= 3.0
    return np.sum(y ** 2 * np.arange(1.0, y.size + 1.0))


def sort_inplace_copy(x):
    y = x.copy()
    y.sort()
    return y[-1] ** 2 + y[0] + np.sum(y * np.arange(y.size))


def fill_diagonal_gram(m):
    g = m @ m.T
    np.fill_diagonal(g, 0.0)
    return np.sum(g ** 2)


def unpack_array_rows(x):
    a, b = x
    *head, last = a
    return np.sum(a * b) + last ** 2 + sum(head)


def slice_objects_ix(m):
    s = slice(1, None)
    r = slice(None, None, -1)
    sub = m[np.ix_([0, 2], [1, 0])]
    return np.sum(m[s] ** 2) + np.sum(m[..., r] * m) + np.sum(m[np.s_[::2]]) + np.sum(sub ** 3)


def array_of_scalars(x):
    v = np.array([x[0] * x[1], np.sum(x), x[2] ** 2])
    return v @ v + np.asarray([x[0], 1.0]).sum()


def finfo_eps_log(x):
    eps = np.finfo(x.dtype).eps
    half = x.dtype.type(0.5)
    return np.sum(np.log(x ** 2 + eps)) * half + np.sum(np.sqrt(x ** 2 + eps))


def builtin_sum_rows(m):
    rows = sum(m)
    return np.sum(rows ** 2) + sum(m[0]) * len(m)


def chained_comparison_shape(x, lo=1, hi=4):
    n = x.shape[0]
    scale = 2.0 if lo < n <= hi else 0.5 if n > hi else 1.0
    if 0 < n < 3:
        return scale * np.sum(x ** 2)
    return scale * np.sum(x ** 2) + (np.sum(x[:3]) if n >= 3 else 0.0)


# ---- module state changed between calls ---------------------------------------------------


class Affine:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.sum(np.tanh(self.w * x + self.b) ** 2)


MODEL = Affine(np.array([1.0, -0.5, 2.0, 0.3]), 0.1)
STEP = 0
SCHEDULE = [1.0, 0.5, 0.25, 0.125]


def callable_instance_state(x):
    return MODEL(x) + np.sum(MODEL.w * x)


def schedule_step_state(w):
    lr = SCHEDULE[STEP % len(SCHEDULE)]
    return lr * np.sum(w ** 2) + np.sum(np.sin(w)) * STEP
