"""Functions bound in loops and branches, recursive closures, vmaps kept as values,
and objects called inside the function (tests/frontend/test_function_idioms.py).

Loaded twice: as written (s2s transforms them) and by ``jax_twin`` with ``np`` bound
to ``jax.numpy`` (JAX's results are the oracle)."""

import numpy as np

W = np.array([0.5, -1.0, 2.0])

# replaced by the tests: s2s's vmap here, JAX's in the twin
s2s_vmap = None


# ---- 1. a function bound inside a loop body --------------------------------------


def lambda_in_loop(x):
    acc = 0.0 * x
    for k in range(3):
        g = lambda y: y * W[k]  # noqa: E731
        acc = acc + g(x)
    return np.sum(acc * x)


def def_in_loop(x, n=3):
    """Over ``range(n)``: a run-time trip count for s2s (JAX unrolls the Python int)."""
    acc = x
    for k in range(n):
        def g(y):
            return np.sin(y) * acc + k

        acc = g(x)
    return np.sum(acc)


def lambda_in_while(x):
    acc = x
    i = 0
    while i < 3:
        h = lambda y: y * acc  # noqa: E731
        acc = np.cos(h(x))
        i = i + 1
    return np.sum(acc)


def bound_in_loop_called_after(x):
    """A loop of a constant count binds it: after the loop it is the last one bound,
    reading the carried `s` as Python's closure does."""
    s = x
    for _ in range(3):
        s = np.sin(s)
        g = lambda y: y * s  # noqa: E731
    return np.sum(g(x))


# ---- 2. a function bound in one branch, reading what only that branch computed -------


def bound_in_a_branch(x, kind=1):
    if kind > 0:
        w = 2.0 * x
        act = lambda v: v * w  # noqa: E731
    else:
        act = np.sin
    return np.sum(act(x))


def bound_and_called_in_a_branch(x, kind=1):
    y = x
    if kind > 0:
        w = np.cos(x)

        def act(v):
            return v * w + np.sin(w)

        y = act(x)
    return np.sum(y * x)


# ---- 3. a recursive nested def reading the enclosing function's values -------------


def recursive_closure(x, depth=2):
    a = np.cos(x)

    def r(y, k):
        return y * a if k == 0 else r(np.sin(y) * a, k - 1)

    return np.sum(r(x, depth))


# ---- 4, 5. a vmap kept as a value, pytree in_axes, a tuple returned by a name -------


def vec(y):
    return np.sin(y) * y


def vmap_kept_as_value(x):
    h = s2s_vmap(vec)
    m = np.outer(x, x)
    return np.sum(h(m)) + np.sum(h(m * 2.0) * x)


def lin(p, v):
    w, b = p
    return np.tanh(w * v + b)


def vmap_tuple_axes(x):
    p = (np.outer(x, x), x[0])
    return np.sum(s2s_vmap(lin, in_axes=((0, None), 0))(p, x) ** 2)


def lin_dict(p, v):
    return np.tanh(p["w"] * v + p["b"])


def vmap_dict_axes(x):
    p = {"w": np.outer(x, x + 1.0), "b": x[1]}
    h = s2s_vmap(lin_dict, in_axes=({"w": 0, "b": None}, None), out_axes=1)
    return np.sum(h(p, x) * x)


def pair_by_name(r):
    t = (np.sin(r), r * 2.0)
    return t


def vmap_returns_a_named_tuple(x):
    a, b = s2s_vmap(pair_by_name)(np.outer(x, x))
    return np.sum(a * b)


# ---- 6. an empty batch ------------------------------------------------------------


def scaled(y):
    return np.sin(y) * np.sum(y)


def vmap_over_rows(x, m):
    """``m`` of shape (0, 3), (1, 3) or (4, 3): the vmap's batch size."""
    return np.sum(s2s_vmap(scaled)(m) * x) + np.sum(x**2)


def vmap_over_columns(x, m):
    """``m`` of shape (3, 0) or (3, 1): the batch is its columns, stacked on axis 1."""
    out = s2s_vmap(lambda r, v: np.sin(r) * v, in_axes=(1, None), out_axes=1)(m, x)
    return out * x[0]


def vmap_pairs_over_rows(x, m):
    a, b = s2s_vmap(pair_by_name)(m)
    return np.sum(a * x) + np.sum(b * x)


# ---- 7, 8. objects -----------------------------------------------------------------


class Net:
    def __init__(self):
        self.w = np.array([1.0, 2.0, 3.0])
        self.scale = 0.5

    def __call__(self, x):
        return np.sum(np.tanh(x * self.w)) * self.scale

    def features(self, x):
        return x * self.w

    def loss(self, x):
        return np.sum(self.features(x) ** 2) + self(x)


NET = Net()


def calls_an_object(x):
    return NET(x) * 2.0 + np.sum(x)


def calls_a_method(x):
    return NET.loss(np.sin(x))


class Wider(Net):
    def features(self, x):
        return x * self.w * 3.0


WIDER = Wider()


def calls_a_subclass_method(x):
    return WIDER.loss(x)


def callee_of_all(x):
    """Each construct above as a callee of another transformed function."""
    return (lambda_in_loop(x) + def_in_loop(x) + recursive_closure(x)
            + bound_in_a_branch(x) + vmap_kept_as_value(x) + vmap_tuple_axes(x)
            + vmap_returns_a_named_tuple(x) + calls_an_object(x) + calls_a_method(x))
