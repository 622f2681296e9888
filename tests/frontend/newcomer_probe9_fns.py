"""Issue 23, ninth newcomer probe: 40 short functions written the way a new NumPy/JAX
user writes them, aimed at soundness (where wrong numbers hide): module state read by
the function and changed between calls (a module array written in place or rebound, a
module dict's value, a class attribute, a global flag, a closure variable rebound by
``nonlocal``, a module list appended to, an array default written in place); integer,
bool and 0-d arguments; float32 inputs with Python-float constants; kinks and NaN/inf
(``np.maximum(x, 0)`` and ``np.abs`` at 0, ``np.where`` with NaN in the branch not
taken, ``np.sqrt`` at 0, a norm at a zero row); size-0 and size-1 axes, ``keepdims``
broadcasting; ``argmax``/``sort``/``unique``; in-place updates (``y[i] += ...``,
``out[mask] = ...``); ``np.einsum``, ``np.linalg.norm(axis=...)``, ``np.clip``,
``np.cumsum``; and functions whose result is an argument unchanged or a view of it
(``x``, ``x[::2]``, ``x.T``, ``x.reshape``), run under jvp, vmap, jacfwd and jit with
the caller writing into a result.  tests/frontend/test_newcomer_probe9.py runs each
through s2s and compares with JAX on this same source (``newcomer_harness.twin``) or
central differences."""

from __future__ import annotations

import numpy as np

# ---- module state read by the function ----------------------------------------------------

W = np.array([1.0, 0.5, -0.25, 2.0])
CFG = {"lam": 0.1, "bias": 0.5}
USE_L1 = False
TERMS = [1.0, 0.5]


def module_array_weights(x):
    return np.sum(W * x ** 2) + np.dot(W, np.sin(x))


def module_dict_coef(x):
    return CFG["lam"] * np.sum(x ** 2) + CFG["bias"] * np.sum(np.tanh(x))


class Decay:
    rate = 0.5


def class_attr_rate(x):
    return np.sum(np.exp(-Decay.rate * x ** 2))


def global_flag_l1(x):
    if USE_L1:
        return np.sum(np.abs(x)) + 0.1 * np.sum(x ** 2)
    return np.sum(x ** 2) * 0.5


def _make_scaled_loss():
    k = 1.0

    def loss(x):
        return k * np.sum(np.sin(x) ** 2)

    def set_k(value):
        nonlocal k
        k = value

    return loss, set_k


closure_scaled, set_closure_scale = _make_scaled_loss()


def closure_rebound(x):
    return closure_scaled(x) + np.sum(x)


def module_list_terms(x):
    total = 0.0
    for i, t in enumerate(TERMS):
        total = total + t * np.sum(x ** (i + 1))
    return total


def array_default_written(x, w=np.array([1.0, 2.0, 3.0, 4.0])):
    return np.sum(w * np.cos(x))


# ---- integer, bool and 0-d arguments; float32 with Python floats --------------------------


def int_power_arg(x, n):
    return np.sum(x ** n) / n


def bool_normalize_arg(x, normalize):
    y = x ** 2
    if normalize:
        y = y / np.sum(y)
    return np.sum(y * np.arange(1.0, y.size + 1.0))


def zero_d_input(x):
    return np.tanh(x) * np.exp(-x ** 2) + x ** 3


def int_index_arg(x, i):
    return x[i] ** 2 + np.sum(x[:i] * 2.0) + np.sum(x[i:] ** 3)


def python_float_consts(x):
    y = 1e-3 * x ** 2 + 0.1
    z = x / 3.0 - np.pi * x
    return np.sum(y * z) + 2.5


# ---- kinks, NaN and inf --------------------------------------------------------------------


def relu_at_zero(x):
    return np.sum(np.maximum(x, 0.0) ** 2 + np.maximum(x, 0))


def abs_at_zero(x):
    return np.sum(np.abs(x)) + np.sum(np.abs(x) * x)


def where_nan_untaken(x):
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, np.sqrt(safe), 0.0)) + np.sum(np.where(x > 0, np.log(safe), x))


def sqrt_at_zero(x):
    return np.sum(np.sqrt(x ** 2 + 1e-12)) + np.sqrt(np.sum(x ** 2) + 1.0)


def norm_rows_zero(x):
    return np.sum(np.linalg.norm(x, axis=1)) + np.sum(np.linalg.norm(x, axis=0, keepdims=True) * x)


def clip_bounds(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2) + np.sum(np.clip(2.0 * x, 0.0, None))


# ---- size-0 and size-1 axes, keepdims -----------------------------------------------------


def mean_keepdims_center(x):
    c = x - x.mean(axis=1, keepdims=True)
    return np.sum(c ** 2) + np.sum(x.max(axis=0, keepdims=True) * x)


def standardize_rows(x):
    mu = np.mean(x, axis=-1, keepdims=True)
    sd = np.std(x, axis=-1, keepdims=True)
    return np.sum(((x - mu) / (sd + 1e-3)) * np.arange(x.shape[-1]))


def sum_over_empty_axis(x):
    return np.sum(np.sum(x, axis=0) ** 2) + np.sum(x ** 2) + float(x.shape[0])


def logsumexp_keepdims(x):
    m = np.max(x, axis=1, keepdims=True)
    return np.sum(m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True)))


# ---- argmax, sort, unique -----------------------------------------------------------------


def argmax_pick(x):
    i = np.argmax(x)
    return x[i] ** 2 + np.sum(x) * i


def sort_topk(x):
    s = np.sort(x)
    return np.sum(s[-2:] ** 2) - s[0]


def unique_label_means(x, labels):
    total = 0.0
    for c in np.unique(labels):
        total = total + np.mean(x[labels == c]) ** 2
    return total


def argsort_rank_weights(x):
    order = np.argsort(x)
    return np.sum(x[order] * np.arange(1.0, x.size + 1.0))


# ---- in-place updates inside the function ------------------------------------------------


def inplace_index_add(x):
    y = x.copy()
    y[0] += 2.0 * x[1]
    y[-1] *= 3.0
    y[1:3] -= x[2:4] ** 2
    return np.sum(y ** 2)


def masked_assign(x):
    out = np.zeros_like(x)
    out[x > 0] = x[x > 0] ** 2
    out[x <= 0] = 0.1 * x[x <= 0]
    return np.sum(out * np.cos(x))


def loop_accumulate_rows(x):
    acc = np.zeros(x.shape[1])
    for row in x:
        acc += row ** 2
    acc /= x.shape[0]
    return np.sum(np.sqrt(acc + 1.0))


# ---- einsum, norm, clip, cumsum ------------------------------------------------------------


def einsum_bilinear_trace(x):
    a = np.outer(x, x) + np.eye(x.size)
    return np.einsum("i,ij,j->", x, a, x) + np.einsum("ii->", a) + np.einsum("ij,ij->", a, a)


def cumsum_discounted(x):
    c = np.cumsum(x[::-1])[::-1]
    return np.sum(c * x) + np.sum(np.cumsum(x ** 2, axis=0))


# ---- results that are an argument or a view of it (vector results) -----------------------


def identity_return(x):
    return x


def strided_view(x):
    return x[::2]


def transpose_view(x):
    return x.T


def reshape_view(x):
    return x.reshape(-1)


def arg_and_computed(x):
    return x, np.sin(x)


def squeeze_or_copy(x):
    if x.shape[0] == 1:
        return np.squeeze(x, axis=0)
    return x[0]


def asarray_passthrough(x):
    return np.asarray(x, dtype=float) * 1.0


def relu_vector(x):
    return np.maximum(x, 0.0)


def clip_copy_inplace(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y
