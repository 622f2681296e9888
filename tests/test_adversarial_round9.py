"""Round 9 of adversarial probes (functions as parameters, run-time choices,
functools.reduce, builtins over run-time values, and the first call's probe that
vmap, jacfwd, jacrev and hessian build their code from): each test is a probe that
found a wrong number, an internal or unlocated error, or a refusal where JAX answers,
and fails without its fix.  Oracles: JAX on the same source (jax_twin), float64 and
float32."""

from __future__ import annotations

import adversarial_round9_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=1e-6)


# ---- a product on the path the first example did not take -------------------------------
# jacfwd/jacrev/hessian batch the gradient's code over a basis, with each value's rank
# from a probe run on the first example; a value on the other path of an `if` (a `min`
# is one) takes the rank its operation gives.  The derivatives of np.prod and np.cumprod
# are runtime helpers (prod_of_others_jet, cumprod_bar, ...) whose ranks were not known:
# hessian(min_of_products)([0.5, 1, 3]) raised "the rank of `x_bar_dot` is unknown",
# located at a line of emitted code (<s2s:min_of_products_grad_jvp:...>), where JAX
# gives 0 there and [[0, 6, 2], [6, 0, -1], [2, -1, 0]] at [-0.5, 1, 3].

PRODUCTS = ["min_of_products", "cumprod_on_one_path"]
POINTS = [[0.5, 1.0, 3.0], [-0.5, 1.0, 3.0], [0.5, 2.0, -3.0]]


@pytest.mark.slow  # (about 1 s: three transforms made)
def test_hessian_of_a_product_on_the_path_not_taken() -> None:
    h = s2s.hessian(F.min_of_products)
    np.testing.assert_array_equal(h(np.array(POINTS[0])), np.zeros((3, 3)))
    np.testing.assert_allclose(h(np.array(POINTS[1])),
                               [[0, 6, 2], [6, 0, -1], [2, -1, 0]], rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", PRODUCTS)
def test_a_product_on_the_path_not_taken_against_jax(name, dtype) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    for ours, theirs in ((s2s.hessian(f), jax.hessian(fj)),
                         (s2s.jacfwd(s2s.grad(f)), jax.jacfwd(jax.grad(fj))),
                         (s2s.jacrev(s2s.grad(f)), jax.jacrev(jax.grad(fj)))):
        for point in (POINTS if name == "min_of_products" else POINTS[1:] + POINTS):
            x = np.array(point, dtype)  # (each first at a point taking no product)
            np.testing.assert_allclose(ours(x), theirs(x), **_tol(dtype))


# ---- a max or min over three items, differentiated twice --------------------------------
# `max(a, b, c)` is two `if`s; the gradient's backward sets x's cotangent on each path
# (`if changes: (if not changes_2: g = ...)`, ..., `if changes_2: g = ...`), paths whose
# union is every path, and jacrev of the gradient transforms that code again.  There
# the frontend saw `g` bound on some paths only: jacrev(grad(min_of_products)) and of
# max_of_sums-like functions raised "`x_bar_4` may be used before it is assigned",
# located at a line of emitted code; once bound None first, a write into it was refused
# ("may hold an array this function did not make": None holds none), and vmap did not
# know the rank of an array written into (`x_bar_bar[0] += ...`: "the rank of
# `total_4` is unknown", max_by_key at [0.5, 1, 3]).  JAX gives the Hessians.

THREE = ["max_of_three", "max_by_key", "min_of_three_by_key", "min_of_products"]


@pytest.mark.slow  # (about 1 s: three transforms made)
def test_jacrev_of_the_gradient_of_a_max_of_three() -> None:
    got = s2s.jacrev(s2s.grad(F.max_of_three))(np.array([0.5, 1.0, 3.0]))
    np.testing.assert_array_equal(got, np.diag([0.0, 2.0, 0.0]))  # (x[1] ** 2 wins)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", THREE)
def test_a_max_of_three_differentiated_twice_against_jax(name, dtype) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    ours = (s2s.jacrev(s2s.grad(f)), s2s.hessian(f), s2s.jit(s2s.jacrev(s2s.grad(f))))
    for point in POINTS + [[1.5, 0.2, 1.0], [0.1, -0.3, 1.4], [2.0, 0.5, 0.2]] + POINTS:
        x = np.array(point, dtype)
        expected = jax.hessian(fj)(x)
        for transform in ours:
            np.testing.assert_allclose(transform(x), expected, **_tol(dtype))


# ---- a loop over rows that runs no iteration on the first call --------------------------
# `for i in range(1, len(m))` (functools.reduce over m's rows is this loop) runs no
# iteration for one row, so the probe saw no call of the loop's callee and vmap refused:
# jacrev(rows_loop)(np.ones((1, 3))) raised "`step_vjp` was not called by the probe"
# (hessian: located at a line of emitted code), where JAX gives the (3, 1, 3) Jacobian;
# the same call after one with two rows ran (the code made then serves one row).


def test_default_tier_jacrev_of_a_loop_over_one_row() -> None:
    got = s2s.jacrev(F.rows_loop)(np.full((1, 3), 0.3))
    np.testing.assert_array_equal(got, np.ones((1, 3)))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["rows_loop", "rows_reduce"])
def test_a_loop_over_one_row_first_against_jax(name, dtype) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    rows = [np.full((1, 3), 0.3), np.arange(6.0).reshape(2, 3) * 0.1, np.full((1, 3), -0.2),
            np.arange(9.0).reshape(3, 3) * 0.1 - 0.3]
    for make, jmake in ((s2s.jacrev, jax.jacrev), (s2s.hessian, jax.hessian),
                        (s2s.jacfwd, jax.jacfwd),
                        (lambda f: s2s.vmap(s2s.grad(f)), lambda f: jax.vmap(jax.grad(f)))):
        ours, theirs = make(f), jmake(fj)
        for m in rows:
            m = m.astype(dtype)
            arg = np.stack([m, -m]) if make not in (s2s.jacrev, s2s.hessian,
                                                     s2s.jacfwd) else m
            np.testing.assert_allclose(ours(arg), theirs(arg), **_tol(dtype))


# ---- a run-time choice of a function inside functools.reduce, under hessian -------------
# `ACTS[name](b)` is an `if` over the keys; the gradient's code calls the softplus
# lambda's derivative on one path.  jacfwd of the gradient (the Hessian) batches it
# with arguments for the call the probe did not make, taken from the caller's example
# by position: (a, b, name, ...) for (v, out_bar, v_dot, ...), the string where an
# array goes; the probe failed and hessian(reduce_by_name)(x, "tanh") was refused as
# "`lambda_vjp_jvp` was not called by the probe", located at a line of emitted code.
# Now such arguments must run the callee, else they are computed from the example's
# values.  JAX: diag(-2 tanh(x) (1 - tanh(x) ** 2)) for "tanh".


@pytest.mark.slow  # (about 1 s: three transforms made)
def test_hessian_of_a_reduce_over_a_run_time_choice() -> None:
    x = np.array([0.3, -0.7, 1.2, 0.05])
    t = np.tanh(x)
    np.testing.assert_allclose(s2s.hessian(F.reduce_by_name)(x, "tanh"),
                               np.diag(-2 * t * (1 - t ** 2)), rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_reduce_over_a_run_time_choice_against_jax(dtype) -> None:
    h, g = s2s.hessian(F.reduce_by_name), s2s.jacfwd(s2s.grad(F.reduce_by_name))
    for step, name in enumerate(["sin", "tanh", "softplus", "sin", "tanh"] * 2):
        x = (np.array([0.3, -0.7, 1.2, 0.05]) * (1 + 0.1 * step)).astype(dtype)
        expected = jax.hessian(J.reduce_by_name)(x, name)
        np.testing.assert_allclose(h(x, name), expected, **_tol(dtype))
        np.testing.assert_allclose(g(x, name), expected, **_tol(dtype))


# ---- a loop over range(n) whose first call runs no iteration, under jacrev ---------------
# The same probe, with the count an argument: n = 0 runs no iteration, and
# jacrev(splice_per_iteration)(x, 0) raised "the rank of `total` is unknown (the first
# example never computed it)" (hessian: located at a line of emitted code), where JAX
# gives diag(2 x); the same call after one with n = 1 ran.  The probe now also runs
# with each count from 0 to 2 two more.

COUNTED = ["splice_per_iteration", "copy_literal_loop"]


@pytest.mark.slow  # (the default tier has the one-row case above)
def test_jacrev_of_a_loop_that_first_runs_no_iteration() -> None:
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_allclose(s2s.jacrev(F.splice_per_iteration)(x, 0), np.diag(2 * x),
                               rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", COUNTED)
def test_a_loop_that_first_runs_no_iteration_against_jax(name, dtype) -> None:
    f, fj = getattr(F, name), getattr(J, name)
    for make, jmake in ((s2s.jacrev, jax.jacrev), (s2s.jacfwd, jax.jacfwd),
                        (s2s.hessian, jax.hessian)):
        ours, theirs = make(f), jmake(fj)
        for step, n in enumerate([0, 2, 1, 0, 3]):
            x = (np.array([0.3, -0.7, 1.2]) * (1 + 0.1 * step)).astype(dtype)
            if make is s2s.hessian:
                x = x[:1]  # (a one-element output: its Hessian is JAX's (1, 1, 1))
            np.testing.assert_allclose(ours(x, n), theirs(x, n), **_tol(dtype))


# ---- s2s.jit on JAX of a function whose parameter holds a function ----------------------
# The JAX backend runs a plain function translated (np -> jax.numpy), but a function
# given for a parameter, or its default, stayed NumPy's: s2s.jit(layer, backend="jax")(x)
# raised TracedValueError ("a Python conversion on a value JAX traces") at
# `return np.sum(act(x) * x)`, with np.sin given as the static argument its hint asks
# for too, where jax.jit(layer, static_argnums=1) gives the value.  And an `if` on a
# traced value binding a function (`f = ACTS[name]` / `f = relu`) raised JAX's
# internal TypeError ("returned a value of type <class 'function'>"), unlocated; now
# the TracedValueError every traced `if` gets, at the user's line.


def test_default_tier_jit_on_jax_of_a_function_parameter() -> None:
    x = np.array([0.3, -0.7, 1.2, 0.05])
    np.testing.assert_allclose(s2s.jit(F.layer, backend="jax")(x), np.sum(np.tanh(x) * x),
                               rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_jit_on_jax_of_a_function_parameter_against_jax(dtype) -> None:
    import jax.numpy as jnp

    on_jax = s2s.jit(F.layer, backend="jax", static_argnums=1)
    keyword = s2s.jit(F.keyword_act, backend="jax", static_argnames=("act", "scale"))
    for step in range(6):
        x = (np.array([0.3, -0.7, 1.2, 0.05]) * (1 + 0.2 * step)).astype(dtype)
        ours, theirs = [(np.sin, jnp.sin), (F.relu, J.relu), (np.tanh, jnp.tanh)][step % 3]
        np.testing.assert_allclose(on_jax(x, ours), J.layer(x, theirs), **_tol(dtype))
        np.testing.assert_allclose(s2s.jit(F.layer, backend="jax")(x), J.layer(x),
                                   **_tol(dtype))
        np.testing.assert_allclose(keyword(x, act=ours, scale=0.5 + step),
                                   J.keyword_act(x, act=theirs, scale=0.5 + step),
                                   **_tol(dtype))


def test_an_if_on_a_traced_value_binding_a_function_is_located() -> None:
    from s2s.backends.base import TracedValueError

    with pytest.raises(TracedValueError) as info:
        s2s.jit(F.chosen_by_value, backend="jax", static_argnums=1)(
            np.array([0.3, -0.7, 1.2]), "sin")
    message = str(info.value)
    assert "adversarial_round9_fns.py" in message and "if np.sum(x) > 0:" in message, (
        message)
