"""Functions in the supported subset, one construct or combination each.

The test suite differentiates every function here with s2s and compares with JAX
running the very same source (``support.jax_twin`` rebinds the NumPy imports) and with
central finite differences.  Keep the imports below as they are: the twin rewrites
them.
"""

import math

import numpy
import numpy as np
import numpy.linalg as la
from numpy import sin as sine

SCALE = 2.5
OFFSET = np.array([0.5, -1.0, 2.0])


def loss(w, x, y):
    pred = np.tanh(x @ w)
    return np.mean((pred - y) ** 2)


def elementwise_chain(x):
    return np.sum(np.exp(np.sin(x)) * np.cos(x) - np.log1p(x**2) + np.sqrt(x**2 + 1))


def every_unary(x):
    a = np.tan(x * 0.3) + np.tanh(x) + np.expm1(x * 0.1) + np.square(x)
    b = np.abs(x) + np.arctan(x) + np.sinh(x * 0.2) + np.cosh(x * 0.2)
    c = np.log(x**2 + 1) + np.arcsin(x * 0.1) + np.arccos(x * 0.1)
    return np.sum(a * b - c)


def arithmetic_ops(x, y):
    a = x + y
    b = x - y * 2.0
    c = a * b / (y**2 + 1.0)
    d = -c + x**3 - 1.5 * x
    return np.sum(d)


def augmented(x):
    y = x * 1.0
    y += x**2
    y *= np.sin(x)
    y -= 0.5
    y /= 2.0
    return np.sum(y)


def rebinding(x):
    y = x
    y = y * x
    y = np.sin(y) + y
    return np.sum(y)


def unpacking(x, y):
    a, b = x * 2, y + 1
    c, d = b, a
    return np.sum(c * d)


def broadcasting(x, m):
    return np.sum((x[:, None] * m + x) ** 2)


def broadcast_stretch(v, m):
    # v has shape (1, 3): stretched along axis 0 against m (4, 3)
    return np.sum(np.sin(v * m) + v)


def matvec(m, v):
    return np.sum(np.tanh(m @ v))


def matmat(a, b):
    return np.sum((a @ b) ** 2)


def vecmat(v, m):
    return np.sum(np.cos(v @ m))


def vecvec(u, v):
    return u @ v + np.dot(u, v) * 0.5


def dot_matrix(a, b):
    return np.sum(np.dot(a, b) ** 2) + np.sum(a.dot(b))


def batched_matmul(a, b):
    return np.sum(np.sin(a @ b))


def reductions(x):
    s = np.sum(x, axis=0)
    m = np.mean(x, axis=1, keepdims=True)
    p = np.prod(x[0])
    return np.sum(s**2) + np.sum(m * x) + p + np.max(x) - np.min(x, axis=(0, 1))


def reductions_negative_axis(x):
    return np.sum(np.max(x, axis=-1) * np.min(x, axis=-2).sum()) + np.sum(np.mean(x, axis=(-1, 0)))


def prod_with_zero(x):
    return np.prod(x * 1.0) + np.sum(np.prod(x, axis=0))


def max_ties(x):
    return np.max(x) + np.sum(np.maximum(x, 0.5)) + np.sum(np.minimum(x, x[0]))


def where_select(x):
    return np.sum(np.where(x > 0, x**2, -x))


def methods_and_attributes(x):
    y = x.T @ x
    z = y.sum(axis=0) + x.mean() + x.max(axis=1).sum()
    n = x.shape[0] * x.ndim
    return z.sum() * n + x.reshape(-1).sum() + x.reshape(x.shape[1], x.shape[0]).T.sum()


def transposes(x):
    return np.sum(np.transpose(x, (1, 0, 2)) * np.arange(24.0).reshape(3, 2, 4)) + np.sum(
        x.transpose() ** 2
    )


def subscripts(x):
    a = x[0] * x[-1]
    b = x[1:3] ** 2
    c = x[::2]
    d = x[:, 1]
    e = x[..., -1]
    f = x[None, 1:, ::-1]
    return np.sum(a) + np.sum(b) + np.sum(c) + np.sum(d * e) + np.sum(f**3)


def integer_array_index(x):
    idx = np.array([0, 2, 2, 1])
    return np.sum(np.sin(x[idx]))


def constants(x):
    return np.sum(x * SCALE + OFFSET) + np.pi * np.sum(x**2)


def import_spellings(x):
    return numpy.sum(sine(x)) + np.sum(numpy.cos(x) ** 2)


def if_else(x):
    y = x * 2
    if np.sum(x) > 0:
        y = np.sin(y)
    else:
        y = np.cos(y) * 3
    return np.sum(y**2)


def if_elif(x):
    total = np.sum(x)
    if total > 1.0:
        z = np.exp(x)
    elif total > -1.0:
        z = x**3
    else:
        z = -x
    return np.sum(z)


def if_without_else(x):
    y = x
    if np.max(x) > 0.0:
        y = y * y
    return np.sum(y)


def early_return(x):
    s = np.sum(x**2)
    if s > 4.0:
        return np.sqrt(s)
    y = np.sin(x) * s
    return np.sum(y)


def conditional_expression(x):
    scale = 2.0 if np.sum(x) > 0 else -1.0
    y = np.tanh(x) if np.max(x) > 0.2 else x**2
    return np.sum(y) * scale


def comparison_chain(x):
    inside = 0.0 < np.mean(x) < 1.0
    if inside:
        return np.sum(x**2)
    return np.sum(x)


def math_scalars(t):
    return math.sin(t) * math.exp(t) + math.sqrt(t + 2.0) + math.log(t + 3.0) + abs(t) ** 3


def helper(a, b):
    return np.sin(a) * b


def calls_helper(x, w):
    z = helper(x, w)
    return np.sum(z * x) + np.sum(helper(w, 2.0))


def inner_layer(h, w):
    return np.tanh(h @ w)


def two_layers(params, x):
    h = inner_layer(x, params["w1"])
    out = inner_layer(h, params["w2"])
    return np.mean(out**2)


def dict_params(params, x):
    w = params["w"]
    h = np.tanh(x @ w + params["b"])
    return np.sum(h**2)


def nested_tree(tree):
    a, b = tree["pair"]
    return np.sum(a * b) + np.sum(tree["list"][0] ** 2) + tree["list"][1] * 3.0


def tuple_arg(pair):
    first, second = pair
    return np.sum(first * second) + np.max(first)


def with_aux(x):
    y = np.exp(x)
    return np.sum(y), {"mean": np.mean(y)}


def keyword_args(x, y, scale=2.0):
    return np.sum((x * scale + y) ** 2)


def unused_arg(x, y):
    return np.sum(x**2)


def returns_param(x):
    return x


def float_conversion(x):
    return float(np.sum(x**2)) * 2.0


def softmax_xent(logits, label):
    shifted = logits - np.max(logits)
    logp = shifted - np.log(np.sum(np.exp(shifted)))
    return -logp[label]


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def powers(x, p):
    return np.sum(x**p) + np.sum(np.power(x, 2.0)) + np.sum(x**0) + np.sum(x**1)


def make_scaled(scale):
    def scaled(x):
        return np.sum(np.sin(x) * scale)

    return scaled


closure_fn = make_scaled(1.5)

lambda_fn = lambda x: np.sum(x**3 - 2.0 * x)  # noqa: E731


def array_of_values(x, y):
    stacked = np.array([np.sum(x**2), np.sum(x * y), y[0]])
    return np.sum(np.sin(stacked) * np.asarray(x))


# ---- loops ------------------------------------------------------------------------


def loop_carried(x, n):
    y = x
    for i in range(n):
        y = y * x + np.sin(y)
    return np.sum(y)


def loop_over_rows(m, w):
    total = 0.0
    for row in m:
        total = total + np.tanh(row @ w)
    return total


def loop_enumerate_if(m, w):
    acc = np.zeros(m.shape[1])
    for i, row in enumerate(m):
        if i % 2 == 0:
            acc = acc + row * w
        else:
            acc = acc * np.cos(row)
    return np.sum(acc**2)


def loop_zip(xs, ys):
    total = 0.0
    for a, b in zip(xs, ys):
        total = total + np.sum(a * b) ** 2
    return total


def loop_nested(x, n):
    y = x
    for i in range(n):
        z = y
        for j in range(i + 1):
            z = np.sin(z) * 0.9 + x
        y = y + z / (i + 1.0)
    return np.sum(y)


def loop_indexing(x):
    total = x[0] * 0.0
    for i in range(1, x.shape[0], 2):
        total = total + x[i] * x[i - 1]
    return total


def loop_with_helper(x, n):
    h = x
    for i in range(n):
        h = helper(h, x)
    return np.sum(h)


def loop_unused_index(x):
    y = x * 1.0
    for _ in range(3):
        y = np.tanh(y) * 2.0
    return np.sum(y)


def while_shrinks(x):
    y = x
    while np.sum(y) > 1.0:
        y = y * 0.7 + np.sin(y) * 0.1
    return np.sum(y**2)


def while_in_for(x, n):
    total = 0.0
    for i in range(n):
        y = x * (i + 1.0)
        while np.max(y) > 1.0:
            y = y * 0.5
        total = total + np.sum(np.sin(y))
    return total


def loop_dict_params(params, x, n):
    h = x
    for i in range(n):
        h = np.tanh(h @ params["w"] + params["b"])
    return np.sum(h**2)


def loop_continue(x):
    total = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        total = total + np.sin(x[i]) * x[i]
        if total > 2.0:
            total = total * 0.5
            continue
        total = total + 0.1 * x[i] ** 2
    return total


def loop_break(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * 1.5 + x
        if np.sum(y) > 4.0:
            y = y * 0.5
            break
        y = y + 0.1
    return np.sum(y**2)


def break_after_rebinding(x):
    y = x
    for i in range(3):
        y = y * 1.5
        if np.sum(y) > 2.5:
            break  # y leaves as the line above made it
        y = y * 1.2
    return np.sum(y**3)


def while_break(x):
    y = x
    k = 0.0
    while np.sum(y) < 10.0:
        y = y * 1.3 + 0.1
        k = k + 1.0
        if np.max(y) > 3.0:
            break
    return np.sum(y) * k


# ---- writing into arrays the function made ------------------------------------------


def fill_in_loop(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = np.sin(x[i]) * x[i - 1]
    z = y * 2.0
    z[0] += x[1] ** 2
    return np.sum(z * y)


def slice_updates(x):
    y = x.copy()
    y[1:3] = y[1:3] * 2.0 + np.tanh(x[0])
    y[:, 0] += np.cos(x[:, 1])
    y[x > 0.5] = 0.0
    return np.sum(y**2)


def recurrence(x, n):
    h = np.zeros((n + 1, x.shape[0]))
    h[0] = x
    for t in range(n):
        h[t + 1] = np.tanh(h[t] * 1.1 + 0.2)
    return np.sum(h[n] ** 2) + np.sum(h[1:]) * 0.1


def list_append_loop(x, n):
    ys = []
    y = x
    for i in range(n):
        y = np.sin(y) * 1.1
        ys.append(y * x)
    return np.sum(np.stack(ys) ** 2)


def list_literal_append(x):
    parts = [x * 2.0]
    parts.append(np.sin(x))
    return np.sum(np.concatenate(parts) * 0.5)


def tower(x, n):
    if n == 0:
        return x
    return np.sin(tower(x, n - 1)) * x


def recursive_sum(x, n):
    return np.sum(tower(x, n) ** 2)


def first_large(x, n):
    y = x
    for i in range(n):
        y = np.sin(y) * 1.7 + x
        if np.sum(y) > 3.0:
            return np.sum(y**2) * (i + 1.0)
    return np.sum(y)
