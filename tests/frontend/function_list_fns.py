"""Functions for test_function_lists.py: lists of functions built in a loop or a
comprehension, tuples and lists of functions and ``*fns`` passed to helpers, a
function parameter passed on, ``**kw`` of a dict parameter, ``max(d, key=...)`` over a
dict of values, a keyword-only parameter under vmap.  Loaded twice: as written, and
by ``jax_twin`` with ``numpy`` bound to ``jax.numpy`` (the oracle)."""

import numpy as np


def relu(v):
    return np.maximum(v, 0.0)


def softplus(v):
    return np.log1p(np.exp(v))


# ---- helpers that take functions ----------------------------------------------------

def compose(x, *fns):
    for f in fns:
        x = f(x)
    return x


def chain(fs, x):
    for f in fs:
        x = f(x) * 1.5
    return x


def inner(x, f):
    return f(x) * 2.0 + x


def with_kw(v, a, b=1.0):
    return np.sum(np.sin(a * v) + b * v ** 2)


# ---- lists of functions built in the function ----------------------------------------

def appended_powers(x):
    fs = []
    for k in range(3):
        fs.append(lambda t, k=k: t ** k * np.sin(t))
    return np.sum(sum(f(x) for f in fs))


def appended_defs(x):
    fs = [np.tanh]
    for k in (0.5, 2.0):
        def scaled(t, k=k):
            return np.sin(k * t) * x
        fs.append(scaled)
    return np.sum(chain(fs, x))


def late_binding(x):
    fs = []
    for k in range(3):
        fs.append(lambda t: t * k + x)  # (each reads k when called: 2, as in Python)
    return np.sum(fs[0](x) * fs[1](x ** 2))


def comprehension_lambdas(x):
    fs = [lambda t, k=k: k * np.sin(t) for k in range(1, 4)]
    return np.sum(sum(f(x) for f in fs))


def comprehension_partials(x):
    gs = [lambda t, c=c: np.tanh(c * t) for c in (0.5, 1.0, -2.0)]
    return np.sum(compose(x, *gs) * x)


# ---- passed to helpers ---------------------------------------------------------------

def composed(x):
    return np.sum(compose(x, np.sin, np.tanh, softplus) * x)


def chained(x):
    return np.sum(chain((np.sin, np.tanh), x) ** 2) + np.sum(chain([np.cos, relu], x))


def chain_local(x):
    fs = [np.tanh, lambda t: t * x]
    return np.sum(chain(fs, x)) + np.sum(compose(x, *fs))


def outer_calls(x):
    return np.sum(inner(x, np.sin) * inner(x, lambda t: t ** 3))


# ---- the transformed function given functions ---------------------------------------

def outer(x, f):
    return np.sum(inner(x, f) ** 2)


def chain_arg(x, fs):
    return np.sum(chain(fs, x) * x)


def compose_arg(x, fs):
    return np.sum(compose(x, *fs) ** 2)


def kw_spread(v, kw):
    return with_kw(v, **kw)


# ---- max over a dict of values, a keyword-only parameter ------------------------------

def argmax_key(x):
    d = {"a": np.sum(x), "b": np.sum(x ** 2), "c": np.sum(np.sin(x))}
    best = max(d, key=lambda k: d[k])
    return d[best] * 2.0 + d["a"]


def kwonly(x, *, k):
    return np.sum(np.sin(x) ** k)


def calls_them(x):
    return appended_powers(x) + chained(2.0 * x) + argmax_key(x) * comprehension_lambdas(x)


def nested_appends(x):
    fs = []
    for i in range(2):
        for j in (0.5, 1.5):
            fs.append(lambda t, i=i, j=j: np.sin(t * j) + i * t)
        fs.append(np.tanh)
    total = 0.0
    for f in fs:
        total = total + np.sum(f(x) * x)
    return total


def act(v):
    return np.tanh(v)


def appends_a_module_function(x):
    fs = []
    for k in range(2):
        fs.append(act)
        fs.append(lambda t, k=k: t * (k + 1))
    return np.sum(sum(f(x) for f in fs)) + np.sum(chain((act, np.sin), x))
