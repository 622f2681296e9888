"""Transforms of functions that call s2s transforms: grad of a function calling
s2s.jvp (grad of jvp), and of one calling a module-level s2s.grad(f); against JAX."""

from __future__ import annotations

import numpy as np
import pytest

import s2s
import transform_call_fns as T

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

X = np.array([0.1, 0.7, -0.3])
W = np.array([1.5, -0.5, 2.0])


def jf(x, w):
    return jnp.sum(jnp.tanh(x * w) ** 2)


TWINS = {
    "directional": lambda x, w: jax.jvp(jf, (x, w), (T.V, jnp.zeros(3)))[1],
    "both_parts": lambda x, w: (lambda o: o[0] * o[1])(jax.jvp(jf, (x, w), (T.V, w))),
    "grad_norm": lambda x, w: jnp.sum(jax.grad(jf)(x, w) ** 2),
    "grad_both_dot": lambda x, w: (lambda g: jnp.sum(g[0] * g[1]))(
        jax.grad(jf, argnums=(0, 1))(x, w)),
}


def close(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", sorted(TWINS))
def test_value_grad_jvp_vmap_match_jax(name: str) -> None:
    fn, twin = getattr(T, name), TWINS[name]
    close(fn(X, W), twin(X, W))
    close(s2s.grad(fn, argnums=(0, 1))(X, W), jax.grad(twin, argnums=(0, 1))(X, W))
    close(s2s.jvp(fn, (X, W), (W, X)), jax.jvp(twin, (X, W), (W, X)))
    xs = np.stack([X, 2 * X, -X])
    close(s2s.vmap(fn, in_axes=(0, None))(xs, W), jax.vmap(twin, in_axes=(0, None))(xs, W))


def test_grad_of_jvp_reads_as_a_call_to_the_emitted_jvp() -> None:
    g = s2s.grad(T.directional)
    g(X, W)
    text = g.source
    assert "def f_jvp_vjp" in text and "= f_jvp(x, w, V, zeros_3)" in text


def test_jvp_inside_needs_its_arguments_written_out() -> None:
    with pytest.raises(s2s.UnsupportedSyntaxError, match="primals and tangents written out"):
        s2s.grad(T.bad_jvp_star)(X, W)
    with pytest.raises(s2s.UnsupportedSyntaxError, match="one tangent per primal"):
        s2s.grad(T.bad_jvp_lengths)(X, W)


def test_stacking_a_list_of_tuples_is_refused_not_differentiated_to_zero() -> None:
    """NumPy stacks a list of 1-tuples as one array; its cotangent once came back as
    arrays where tuples were expected and was dropped: a zero gradient, silently."""
    with pytest.raises(s2s.TransformError, match="items are containers"):
        s2s.grad(T.stack_of_tuples)(X)


@pytest.mark.parametrize("outer,inner", [("jacfwd", "jacrev"), ("jacrev", "jacfwd"),
                                         ("jacrev", "jacrev"), ("jacfwd", "jacfwd")])
@pytest.mark.slow
def test_jacobian_of_jacobian_matches_jax(outer: str, inner: str) -> None:
    def vec(x):
        return jnp.tanh(x) * jnp.sum(x**2)

    got = getattr(s2s, outer)(getattr(s2s, inner)(T.vector_fn))(X)
    expected = getattr(jax, outer)(getattr(jax, inner)(vec))(X)
    close(got, expected)
    xs = np.stack([X, W])
    close(s2s.vmap(getattr(s2s, inner)(T.vector_fn))(xs),
          jax.vmap(getattr(jax, inner)(vec))(xs))


@pytest.mark.slow
def test_transform_of_a_jacobian_of_two_arguments() -> None:
    """A Jacobian of several arguments as input to another transform: its code is a
    tuple of blocks, one per argument (JAX's layout of jacfwd(jacrev(f, (0, 1))))."""
    def twin(x, w):
        return jnp.sum(jnp.tanh(x * w) ** 2)

    for outer in ("jacfwd", "jacrev"):
        got = getattr(s2s, outer)(s2s.jacrev(T.f, argnums=(0, 1)))(X, W)
        expected = getattr(jax, outer)(jax.jacrev(twin, argnums=(0, 1)))(X, W)
        assert len(got) == len(expected) == 2
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, np.asarray(e), rtol=1e-12, atol=1e-14)
    got = s2s.hessian(T.f, argnums=(0, 1))(X, W)
    expected = jax.hessian(twin, argnums=(0, 1))(X, W)
    for g_row, e_row in zip(got, expected):
        for g, e in zip(g_row, e_row):
            np.testing.assert_allclose(g, np.asarray(e), rtol=1e-12, atol=1e-14)


def test_hessian_with_negative_argnums_and_a_parameter_left_at_its_default() -> None:
    """argnums=-1 means the last argument passed: the inner grad once resolved it
    against every parameter (the default `scale`), giving a (3,) "Hessian"."""
    def twin(x, y, scale=2.0):
        return jnp.sum((x * scale + y) ** 2)

    for name in ("hessian", "jacfwd", "jacrev"):
        if name == "hessian":
            got, expected = s2s.hessian(T.with_scale, argnums=-1)(X, W), jax.hessian(
                twin, argnums=-1)(X, W)
        else:
            got = getattr(s2s, name)(s2s.grad(T.with_scale, argnums=-1), argnums=-1)(X, W)
            expected = getattr(jax, name)(jax.grad(twin, argnums=-1), argnums=-1)(X, W)
        close(got, expected)


@pytest.mark.slow
@pytest.mark.parametrize("outer", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("inner", ["jacfwd", "jacrev"])
def test_a_jacobian_as_input_keeps_a_parameter_named_like_its_locals(outer, inner) -> None:
    """The Jacobian's code as a function (input to another transform) names its basis
    size and loop index apart from the parameters: `n = np.size(out)` once replaced a
    user's `n`, and jacfwd(jacrev(f))(x, n) ran the loop the wrong number of times.
    (A sweep: the default tier runs one pair of the four.)"""
    def loop(x, n):
        y = x
        for i in range(n):
            y = y * x + jnp.sin(y)
        return jnp.sum(y)

    x = np.array([0.3, -0.2, 0.5])
    expected = jax.hessian(loop)(x, 4)
    got = getattr(s2s, outer)(getattr(s2s, inner)(T.loop_with_n))(x, 4)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-12, atol=1e-13)
