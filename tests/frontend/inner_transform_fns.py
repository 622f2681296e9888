"""Transforms written inside the transformed function (tests/frontend/
test_inner_transforms.py): a transform of a transform, of a partial, of a function
chosen by a test; functions chosen by a run-time test under vmap and the Jacobians.

Loaded twice: as written (s2s transforms them, ``s2s_grad`` ... are s2s's) and by
``jax_twin`` with ``np`` bound to ``jax.numpy`` and ``s2s_grad`` ... to JAX's (JAX's
results are the oracle)."""

import functools

import numpy as np

W = np.array([0.5, -1.0, 2.0])
KIND = "sin"

# replaced by the tests: s2s's transforms here, JAX's in the twin
s2s_grad = s2s_jacfwd = s2s_jacrev = s2s_vmap = s2s_value_and_grad = s2s_jvp = None


def cube_sin(t):
    return np.sin(t) ** 3 + t * t


def energy(y):
    return np.sum(np.sin(y) * y**2)


def weighted(y, w, k=1.0):
    return np.sum(np.sin(y * w) * k)


def sin_energy(y):
    return np.sum(np.sin(y) * y)


def cos_energy(y):
    return np.sum(np.cos(y) * y)


PARTIAL = functools.partial(weighted, w=W, k=3.0)


# ---- 1. a transform of a transform, of a partial, of a choice ------------------------


def grad_of_grad(x):
    """The second derivative of a scalar function at x[0]; the outer grad of it is
    the third."""
    d2 = s2s_grad(s2s_grad(cube_sin))(x[0])
    return d2 * np.sum(x**2)


def grad_of_grad_lambda(x):
    a = np.cos(x[1])
    d2 = s2s_grad(s2s_grad(lambda t: np.sin(t * a) ** 2))(x[0])
    return d2 + np.sum(x) * a


def jacfwd_of_grad(x):
    h = s2s_jacfwd(s2s_grad(energy))(x)
    return np.sum(h @ x)


def jacrev_of_grad(x):
    h = s2s_jacrev(s2s_grad(energy))(np.sin(x))
    return np.sum(h * W)


def jvp_of_grad(x):
    """A Hessian-vector product: s2s.jvp of s2s.grad, written in the body."""
    g, hv = s2s_jvp(s2s_grad(energy), (x,), (np.cos(x),))
    return np.sum(hv * x) + np.sum(g)


def vmap_of_grad(x):
    m = np.outer(x, W)
    g = s2s_vmap(s2s_grad(energy))(m)
    return np.sum(g * x[:, None])


def grad_of_partial(x):
    """A partial written in the body, binding a run-time value by keyword."""
    g = s2s_grad(functools.partial(weighted, w=np.cos(x), k=2.0))(x)
    return np.sum(g * x)


def grad_of_partial_positional(x):
    """A partial binding the first argument: the transform differentiates the next."""
    g = s2s_grad(functools.partial(weighted, W))(x)
    return np.sum(g**2)


def grad_of_module_partial(x):
    return np.sum(s2s_grad(PARTIAL)(x) * np.sin(x))


def grad_of_static_choice(x):
    act = sin_energy if KIND == "sin" else cos_energy
    return np.sum(s2s_grad(act)(x) * x)


def value_and_grad_of_partial(x):
    v, g = s2s_value_and_grad(functools.partial(weighted, w=x * 2.0))(np.cos(x))
    return v * np.sum(g)


def callee_of_all(x):
    return grad_of_grad(x) + vmap_of_grad(x) + grad_of_static_choice(x) + grad_of_partial(x)


def two_transforms_of_one_function(x):
    """``jacrev(grad(energy))`` and ``vmap(grad(energy))`` in two callees: two
    emitted ``energy_grad``s (refused by jacrev, which puts them in one module)."""
    return jacrev_of_grad(x) + vmap_of_grad(x)


# ---- 1b. a transform of a function chosen by a run-time test (JAX: grad only) --------


def grad_of_run_time_choice(x):
    act = sin_energy if np.sum(x) > 0 else cos_energy
    return np.sum(s2s_grad(act)(x) * x)


# ---- 2. a function chosen by a run-time test, under vmap and the Jacobians -----------


def relu(v):
    return np.maximum(v, 0.0)


def choice_by_value(x):
    act = np.tanh if np.sum(x) > 0 else relu
    return np.sum(act(x) * x)


def bound_on_a_branch(x):
    if np.sum(x) > 0:
        w = 2.0 * x
        act = lambda v: v * w  # noqa: E731
    else:
        act = np.sin
    return np.sum(act(x) * x)


def root(v):
    return np.sqrt(v)


def nan_on_the_other_path(x):
    """``np.sqrt`` of a negative number on the path other examples take: NaN there
    (value and derivative), which must not reach the examples that took this one."""
    act = root if np.min(x) > 0 else np.sin
    return np.sum(act(x) * x)


# ---- 4. a vmap kept as a value, passed to another function ---------------------------


def row_sin(r):
    return np.sin(r) * W


def apply_plus_one(f, x):
    return f(x) + 1.0


def kept_vmap_passed_on(x):
    h = s2s_vmap(row_sin)
    return np.sum(apply_plus_one(h, np.outer(x, x)) * x[:, None])


def kept_vmap_of_a_lambda_passed_on(x):
    h = s2s_vmap(lambda r, s: np.cos(r) * s, in_axes=(0, None))
    return np.sum(apply_plus_one(lambda m: h(m, x[0]), np.outer(x, W)))


# ---- what stays refused ------------------------------------------------------------


def loop_in_a_batched_branch(x):
    if np.sum(x) > 0:
        acc = x
        for _ in range(2):
            acc = acc * np.cos(acc)
        y = np.sum(x * acc)
    else:
        y = np.sum(np.sin(x))
    return y
