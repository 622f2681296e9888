"""Random draws inside the function are constants to every derivative, drawn afresh
at each call as NumPy draws them (issue 23, item 6).

Expected values: JAX differentiating the same computation with the draws passed in
as arguments (draw_fns' ``*_given``, whose draws NumPy makes from the same seed), or
a Python loop; never s2s.  Each check also reads NumPy's random state after the
call: the transformed code drew exactly what the function draws, once."""

from __future__ import annotations

import draw_fns as D
import numpy as np
import pytest
from support import jax_twin

import s2s

jax = pytest.importorskip("jax")
J = jax_twin(D)

X = np.array([0.5, -1.0, 2.0])
DTYPES = [np.float64, np.float32]


def tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)


def after(seed, call):
    """``call()`` with NumPy's global stream at ``seed``, and the next number after."""
    np.random.seed(seed)
    result = call()
    return result, np.random.random()


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_at_calls_1_to_10_equals_jax_with_the_draws_passed_in(dtype):
    """Calls 1-10 of one transform (the later ones on the code kept per signature):
    each draws afresh, and the gradient reads the forward's numbers."""
    g = s2s.grad(D.noisy)
    x = X.astype(dtype)
    for call in range(1, 11):
        got, next_got = after(call, lambda: g(x))
        np.random.seed(call)
        z = np.random.normal(size=X.shape)
        next_want = np.random.random()
        want = jax.grad(J.noisy_given)(X, z)
        assert got.dtype == dtype
        np.testing.assert_allclose(got, np.asarray(want), **tol(dtype))
        assert next_got == next_want  # one draw per call, as the function makes


def test_every_transform_draws_once_and_reads_the_same_numbers():
    for transform in ("value_and_grad", "jvp", "jit", "jacfwd"):
        got, next_got = after(3, {
            "value_and_grad": lambda: s2s.value_and_grad(D.noisy)(X),
            "jvp": lambda: s2s.jvp(D.noisy, (X,), (np.ones(3),)),
            "jit": lambda: s2s.jit(D.noisy)(X),
            "jacfwd": lambda: s2s.jacfwd(D.elementwise)(X),
        }[transform])
        np.random.seed(3)
        z = np.random.normal(size=3)
        next_want = np.random.random()
        assert next_got == next_want, transform
        if transform == "value_and_grad":
            want = jax.value_and_grad(J.noisy_given)(X, z)
        elif transform == "jvp":
            want = jax.jvp(lambda x: J.noisy_given(x, z), (X,), (np.ones(3),))
        elif transform == "jit":
            want = J.noisy_given(X, z)
        else:  # one call's draws for every column of the Jacobian
            want = jax.jacfwd(lambda x: jax.numpy.sin(x) * z)(X)
        for a, b in zip(np.atleast_1d(got) if transform == "jit" else got,
                        np.atleast_1d(want) if transform == "jit" else want):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10)


def test_a_draw_the_gradient_never_reads_still_runs():
    got, next_got = after(5, lambda: s2s.grad(D.draws_unread)(X))
    np.random.seed(5)
    u, z = np.random.uniform(size=2), np.random.randn(3)
    next_want = np.random.random()
    np.testing.assert_allclose(got, np.asarray(jax.grad(J.draws_unread_given)(X, u, z)))
    assert next_got == next_want
    assert "np.random.uniform(size=2)" in s2s.grad(D.draws_unread).source


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_draw_in_a_loop_is_drawn_once_per_iteration_and_the_backward_reads_it(dtype):
    x = X.astype(dtype)
    for seed in range(4):
        got, next_got = after(seed, lambda: s2s.grad(D.in_loop)(x))
        np.random.seed(seed)
        zs = np.stack([np.random.normal(size=3) for _ in range(3)])
        next_want = np.random.random()
        np.testing.assert_allclose(got, np.asarray(jax.grad(J.in_loop_given)(X, zs)),
                                   **tol(dtype))
        assert next_got == next_want


def test_a_generator_made_in_the_function_or_passed_in():
    got = s2s.grad(D.seeded)(X, 11)
    w = np.random.default_rng(11).normal(0.0, 2.0, size=(3,))
    np.testing.assert_allclose(got, np.asarray(jax.grad(J.seeded_given)(X, w)))
    assert "rng = np.random.default_rng(seed)" in s2s.grad(D.seeded).source
    rng = np.random.default_rng(4)
    got = s2s.grad(D.from_argument)(X, rng)
    twin = np.random.default_rng(4)
    np.testing.assert_allclose(got, twin.normal(size=3))
    assert rng.random() == twin.random()  # the generator moved on by one draw


def test_a_seed_set_inside_the_function_is_set_at_each_call():
    got = s2s.grad(D.seeds_inside)(X)
    np.random.seed(7)
    np.testing.assert_allclose(got, np.random.rand(3))


def test_under_vmap_each_example_draws_its_own_numbers():
    """A draw of shape S is one draw of shape (batch,) + S: with one draw per call,
    example i gets what a Python loop over the examples draws for it."""
    xs = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.1, 0.2, 0.3]])
    v = s2s.vmap(D.elementwise)
    for seed in range(3):
        got, next_got = after(seed, lambda: v(xs))
        want, next_want = after(seed, lambda: np.stack([D.elementwise(x) for x in xs]))
        np.testing.assert_allclose(got, want, rtol=1e-12)
        assert next_got == next_want
    assert "size=(n_batch, *x_shape)" in v.source.replace("x_shape_2", "x_shape")


def located(err, fn_text: str, line: int) -> None:
    message = str(err)
    assert "draw_fns.py" in message and f"line {line}" in message
    assert fn_text in message and "Instead:" in message


def _line_of(text: str) -> int:
    import inspect

    lines = inspect.getsource(D).splitlines()
    return next(k for k, ln in enumerate(lines, 1) if text in ln)


def test_a_draw_that_would_run_twice_is_refused_at_its_line():
    """A callee's VJP recomputes the callee's forward values, s2s.vjp's vjp_fn the
    function's: a draw there would give the backward other numbers."""
    line = _line_of("return x * np.random.normal(size=3)")
    for make in (lambda: s2s.grad(D.calls_noisy)(X), lambda: s2s.vjp(D.noisy, X)[1](1.0),
                 lambda: s2s.jacrev(D.elementwise)(X),
                 lambda: s2s.grad(s2s.checkpoint(D.in_loop))(X)):
        with pytest.raises(s2s.TransformError) as info:
            make()
        if "calls_noisy" in str(info.value):
            located(info.value, "return x * np.random.normal(size=3)", line)
            assert "column 16" in str(info.value)
        assert "second time" in str(info.value)


def test_vmap_refuses_a_draw_with_batched_parameters_at_its_line():
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(D.batched_mean)(np.ones((2, 3)))
    located(info.value, "return np.random.normal(x, 1.0)", _line_of("np.random.normal(x, 1.0)"))
