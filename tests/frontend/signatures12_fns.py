"""The functions people actually write (issue 23): ``*terms, **weights`` keyed by an
f-string of the loop's index, a draw from a generator with a literal seed inside a
callee, function factories with statements before the nested ``def``, ``*args`` and
defaults that are not literals, and a loop over ``ops[:k]`` with ``k`` an argument.
tests/frontend/test_signatures12.py compares each with JAX on this same source
(``numpy`` bound to ``jax.numpy``, ``np.random`` left NumPy's) or with central
differences."""

from __future__ import annotations

import numpy as np

# ---- 1. *args and **kwargs keyed by an f-string (newcomer probe 6's) -----------------


def combine(*terms, **weights):
    total = 0.0
    for i, t in enumerate(terms):
        total = total + weights.get(f"w{i}", 1.0) * t
    return total


def star_args_kwargs(x):
    return combine(np.sum(x ** 2), np.sum(np.sin(x)), np.prod(x), w0=0.5, w2=2.0)


def keyed_by_name(x, **scales):
    total = 0.0
    for name in ("a", "b"):
        for k in range(2):
            total = total + scales.get(f"{name}{k}", 0.0) * np.sum(x ** (k + 1))
    return total


# ---- 2. a draw with a literal seed in a callee ---------------------------------------


def _jitter(x):
    rng = np.random.default_rng(0)
    noise = rng.normal(size=x.shape)
    return x + 0.1 * noise


def noise_in_callee(x):
    return np.sum(np.sin(_jitter(x)) ** 2)


def _jitter_twice(x, scale):
    rng = np.random.default_rng(5)
    a = rng.normal(size=x.shape)
    b = rng.uniform(size=x.shape)
    for _ in range(3):
        a = a + rng.normal(size=x.shape)
    return x * b + scale * a


def noise_drawn_in_a_loop(x):
    return np.sum(np.sin(_jitter_twice(x, 0.1)) ** 2) + np.sum(_jitter_twice(2.0 * x, 0.2) ** 3)


def _global_jitter(x):
    return x + 0.1 * np.random.normal(size=x.shape)


def unseeded_in_callee(x):
    return np.sum(np.sin(_global_jitter(x)) ** 2)


def _fresh_jitter(x):
    rng = np.random.default_rng()
    return x + 0.1 * rng.normal(size=x.shape)


def entropy_seeded_in_callee(x):
    return np.sum(np.sin(_fresh_jitter(x)) ** 2)


def _seeded_by(x, seed):
    rng = np.random.default_rng(seed)
    return x + 0.1 * rng.normal(size=x.shape)


def seed_argument_in_callee(x):
    return np.sum(np.sin(_seeded_by(x, 3)) ** 2)


def _drawn_from(x, rng):
    return x + 0.1 * rng.normal(size=x.shape)


def generator_passed_to_callee(x):
    rng = np.random.default_rng(0)
    return np.sum(np.sin(_drawn_from(x, rng)) ** 2)


# ---- 3. function factories ---------------------------------------------------------

W0 = np.array([0.5, -1.0, 2.0, 0.25])


def make_scaled(act, k):
    scale = 2.0 * k
    shift: float = np.sqrt(k) - 1.0  # (an annotated one)
    def g(x):
        return act(x) * scale + shift
    return g


def factory_statements(x):
    f = make_scaled(np.tanh, 1.5)
    return np.sum(f(x) ** 2) + np.sum(make_scaled(np.sin, 0.5)(2.0 * x))


def make_star(act, k):
    c = k + 1.0
    def g(*args):
        return act(args[0]) * args[1] * c + args[-1] * len(args)
    return g


def factory_star_args(x):
    f = make_star(np.sin, 2.0)
    return np.sum(f(x, 3.0) ** 2) + np.sum(f(x, x, x ** 2, 1.0))


def make_module_default(act):
    def g(x, w=W0):
        return act(x) * w
    return g


def factory_module_default(x):
    f = make_module_default(np.sin)
    return np.sum(f(x) ** 2) + np.sum(f(x, 2.0))


def make_param_default(act, w0):
    def g(x, w=w0, *, b=0.5):
        return act(x) * w + b
    return g


def factory_param_default(x):
    f = make_param_default(np.tanh, 2.0 * x)  # (the default depends on x)
    h = make_param_default(np.sin, W0)
    return np.sum(f(x) ** 2) + np.sum(h(x, 3.0 * W0)) + np.sum(h(x, w=x, b=1.0) ** 2)


def make_lambda(k):
    s = np.exp(k)
    return lambda v, w=W0: np.cos(v) * s * w


def factory_lambda(x):
    return np.sum(make_lambda(0.5)(x) ** 2)


def make_drawing(act):
    noise = np.random.normal(size=4)
    def g(x):
        return act(x) + noise
    return g


def factory_draws(x):
    f = make_drawing(np.sin)
    return np.sum(f(x) ** 2)


def make_writing(act, k):
    d = {}
    d["a"] = k
    def g(x):
        return act(x) * d["a"]
    return g


def factory_writes(x):
    f = make_writing(np.sin, 2.0)
    return np.sum(f(x))


def make_local_default(act, k):
    scale = 2.0 * k
    def g(x, w=scale):
        return act(x) * w
    return g


def factory_local_default(x):
    f = make_local_default(np.sin, 2.0)
    return np.sum(f(x))


# ---- 4. ops[:k] with k an argument --------------------------------------------------

OPS = [
    np.sin,
    lambda v: v ** 2,
    np.tanh,
    lambda v: 3.0 * v,
]


def first_k_ops(x, k):
    ops = [np.sin, lambda v: v ** 2, np.tanh, lambda v: 3.0 * v]
    for op in ops[:k]:
        x = op(x)
    return np.sum(x)


def first_k_module_ops(x, k):
    for op in OPS[:k]:
        x = op(x) + 0.5 * x
    return np.sum(x ** 2)


def window_of_ops(x, j, k):
    ops = (np.sin, lambda v: v ** 2, np.tanh, lambda v: 3.0 * v, np.cos)
    for op in ops[j:k]:
        x = op(x)
    return np.sum(x)


def every_other_op(x, k):
    ops = [np.sin, lambda v: v ** 2, np.tanh, lambda v: 3.0 * v, np.cos]
    for op in ops[1:k:2]:
        x = op(x) + x
    return np.sum(x)


def run_time_step(x, k):
    ops = [np.sin, np.cos, np.tanh]
    for op in ops[::k]:
        x = op(x)
    return np.sum(x)
