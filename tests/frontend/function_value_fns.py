"""Functions that use functions as values (tests/frontend/test_functions_as_values.py).

Loaded twice: as written (s2s transforms them) and by ``jax_twin`` with ``np`` bound
to ``jax.numpy`` (JAX's results are the oracle)."""

import functools

import numpy as np


def relu(v):
    return np.maximum(v, 0.0)


def square_sum(v):
    return np.sum(v**2)


def apply(f, x):
    return f(x)


def apply_twice(f, x):
    return f(f(x))


def nested_def(x):
    a = np.sin(x)

    def g(y):
        return y * a + 1.0

    return np.sum(g(x) * g(a))


def nested_def_late(x):
    a = x * 2.0

    def g(y):
        return y * a

    a = np.cos(x)  # Python reads `a` when g runs: this value
    return np.sum(g(x))


def nested_lambda(x):
    s = np.exp(x)
    h = lambda y: y * s  # noqa: E731
    return np.sum(h(x) ** 2)


def nested_calls_nested(x):
    a = x + 1.0

    def inner(y):
        return y * a

    def outer(y):
        return inner(y) + np.tanh(y)

    return np.sum(outer(x))


def apply_ufunc(x):
    return np.sum(apply(np.tanh, x))


def apply_user(x):
    return np.sum(apply(relu, x) * x)


def apply_closure(x):
    w = x * 3.0
    return np.sum(apply(lambda y: np.sin(y) * w, x))


def apply_twice_lambda(x):
    return np.sum(apply_twice(lambda y: y * y, x))


def choose(x, kind="tanh"):
    act = np.tanh if kind == "tanh" else relu
    return np.sum(act(x) * x)


def mapped(x):
    parts = [x, x * 2.0, np.sin(x)]
    return np.sum(np.stack(list(map(np.tanh, parts))))


def mapped_lambda(x):
    a = x[0]
    parts = (x, x * x)
    return sum(map(lambda v: np.sum(v * a), parts))


def scale(x, k):
    return np.sum(np.sin(x) * k)


def partial_inside(x):
    g = functools.partial(scale, k=2.5)
    return g(x) + functools.partial(scale, k=x[0])(x)


SCALED = functools.partial(scale, k=1.5)


def partial_global(x):
    return SCALED(x * x)


class Quadratic:
    def __call__(self, x):
        return np.sum(x**2 + np.sin(x))


QUAD = Quadratic()


def callable_object(x):
    return QUAD(x) * 2.0


def cube_sum(y):
    return np.sum(y**3)


def offset_sum(y, c=1.0):
    return np.sum((y - c) ** 2)


def grad_inside(x):
    import_free = 1.0  # (a local, so the transform below is the only call)
    return np.sum(s2s_grad(cube_sum)(x) * x) * import_free


# replaced by the tests: s2s's transforms here, JAX's in the twin
s2s_grad = s2s_jacfwd = s2s_jacrev = s2s_hessian = s2s_value_and_grad = s2s_jvp = None
s2s_jit = s2s_vmap = None


def grad_inside_lambda(x):
    return np.sum(s2s_grad(lambda y: np.sum(y**3))(x) * np.cos(x))


def grad_inside_closure(x):
    a = np.sin(x)
    return np.sum(s2s_grad(lambda y: np.sum(y * y * a))(x))


def grad_inside_default(x):
    return np.sum(s2s_grad(offset_sum)(x) * x)


def callee_of_all(x):
    """Each construct above as a callee of another transformed function."""
    return (nested_def(x) + nested_lambda(x) + apply_closure(x) + apply_user(x)
            + mapped(x) + partial_inside(x) + callable_object(x) + grad_inside_lambda(x))


def make_closure():
    """A function closing over a cell that the test rebinds between calls, read by a
    nested function inside it."""
    c = 1.0

    def f(x):
        def g(y):
            return y * c

        return np.sum(g(np.sin(x)))

    def set_c(value):
        nonlocal c
        c = value

    return f, set_c


def vec(y):
    return np.sin(y) * y


def jacfwd_inside(x):
    return np.sum(s2s_jacfwd(vec)(x) @ x)


def jacrev_inside(x):
    return np.sum(s2s_jacrev(vec)(x) * x)


def hessian_inside(x):
    return np.sum(s2s_hessian(cube_sum)(x))


def value_and_grad_inside(x):
    v, g = s2s_value_and_grad(cube_sum)(x)
    return v + np.sum(g * x)


def jvp_inside(x):
    out, t = s2s_jvp(vec, (x,), (np.ones_like(x),))
    return np.sum(out * t)


def jvp_inside_closure(x):
    a = np.cos(x)
    out, t = s2s_jvp(lambda y: np.sin(y) * a, (x,), (x,))
    return np.sum(t * out)


def jit_inside(x):
    """``s2s.jit(g)(x)`` in the body: a call of g (``jax.jit`` in the twin)."""
    a = np.cos(x)
    return np.sum(s2s_jit(vec)(x) * a) + np.sum(s2s_jit(lambda y: y * a)(x))


def vmap_inside(x):
    """``s2s.vmap(g)(x)`` in the body (``jax.vmap`` in the twin)."""
    return np.sum(s2s_vmap(vec)(x) * x)


def vmap_inside_axes(x):
    m = np.outer(x, x + 1.0)
    a = np.cos(x)
    out = s2s_vmap(lambda r, v: np.sin(r) * v + a, in_axes=(1, None), out_axes=1)(m, x[0])
    return np.sum(out**2)


def pair(r):
    return np.sin(r) * r, np.sum(r**2)


def vmap_inside_tuple(x):
    m = np.outer(x, x) + x
    s, q = s2s_vmap(pair)(m)
    return np.sum(s * x) + np.sum(q)


def pair_by_name(r):
    t = (np.sin(r), r * 2.0)
    return t


def vmap_returns_a_named_tuple(x):
    a, b = s2s_vmap(pair_by_name)(np.outer(x, x))
    return np.sum(a * b)


def vmap_kept_as_value(x):
    h = s2s_vmap(vec)
    return np.sum(h(x))


def bound_in_if(x, kind="tanh"):
    """A name bound to a function on each path of an `if` (`elif` too)."""
    if kind == "tanh":
        act = np.tanh
    elif kind == "relu":
        act = relu
    else:
        act = lambda v: v * x  # noqa: E731
    if kind == "double":
        act = lambda v: v * 2.0  # noqa: E731
    return np.sum(act(x) * x)


def bound_on_a_value(x):
    """Bound on the path a run-time test takes (JAX's grad cannot trace the `if`)."""
    act = np.sin
    if np.sum(x) > 0:
        act = np.tanh
        y = act(x) * 2.0
    else:
        y = act(x) - x
    return np.sum(act(x) * y)


def nested_recursive(x, depth=3):
    """A nested def calling itself, its depth a Python int (JAX traces it unrolled)."""
    def r(y, k):
        if k == 0:
            return y
        return r(np.sin(y) * 1.5, k - 1)

    return np.sum(r(x, depth) * x)


def nested_default(x):
    """Defaults that are not literals: evaluated where the def (or lambda) runs."""
    a = np.cos(x)

    def h(t, k=a * 2.0, *, m=np.sin(x)):
        return t * k + m

    scale = lambda t, s=a[0]: t * s  # noqa: E731
    a = x * 100.0  # (h's default is the value above, as in Python)
    return np.sum(h(x)) + np.sum(h(x, 3.0, m=x)) + np.sum(scale(x) * a)
