"""Functions with *args, **kwargs, keyword-only parameters and non-literal defaults
(tests/frontend/test_signatures.py), loaded again by ``jax_twin`` as the oracle."""

import numpy as np

W0 = np.array([0.5, -1.0, 2.0])
W1 = np.array([1.5, 0.25, -0.75])


def star_args(*xs):
    return np.sum(xs[0] * xs[1])


def named_and_star(x, *rest):
    return np.sum(x * sum(rest))


def star_kwargs(x, **kw):
    return np.sum(np.sin(x) * kw["scale"])


def helper_kwonly(x, *, k=2.0):
    return np.sin(x) * k


def uses_kwonly(x):
    return np.sum(helper_kwonly(x, k=3.0) + helper_kwonly(x))


def helper_kwonly_required(x, *, k):
    return x * k


def uses_kwonly_required(x):
    return np.sum(helper_kwonly_required(x, k=x))


def calls_variadic(x):
    return star_args(x, np.sin(x)) + named_and_star(x, x, x * x)


def calls_star(x):
    parts = (x, np.cos(x))
    return star_args(*parts)


def calls_kwstar(x):
    opts = {"scale": x * x}
    return star_kwargs(x, **opts)


def calls_star_into_numpy(x):
    pair = [x, x * 2.0]
    return np.sum(np.multiply(*pair))


def with_array_default(x, w=W0):
    return np.sum(np.tanh(x * w))


def calls_array_default(x):
    return with_array_default(x) + with_array_default(x, W1)


def with_tuple_default(x, ws=(W0, W1)):
    return np.sum(x * ws[0] + ws[1])


def calls_tuple_default(x):
    return with_tuple_default(x * x)


def forwards_everything(x, *args, **kwargs):
    return star_kwargs(x, **kwargs) + named_and_star(x, *args)


def calls_forwarder(x):
    return forwards_everything(x, x, np.sin(x), scale=2.0)
