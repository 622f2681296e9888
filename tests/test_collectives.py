"""vmap's axis_name with s2s.lax's collectives (psum, pmean, pmax, pmin, all_gather,
axis_index, axis_size), and derivatives through them, against JAX's ``jax.vmap(...,
axis_name=...)`` with ``jax.lax`` on the same source (float64 and float32)."""

from __future__ import annotations

import collective_fns as F
import collective_jax_fns as FJ
import jax
import numpy as np
import pytest
from support import jax_twin

import s2s

J = jax_twin(F)
DTYPES = [np.float64, np.float32]


def close(got, want, dtype):
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-5)
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, **tol)


def x_of(dtype, shape=(5, 3), seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) + 2).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["centred", "batch_norm", "share", "spread", "gathered",
                                  "psum_of_constant"])
def test_vmap_with_a_collective_is_jaxs(name, dtype):
    x = x_of(dtype)
    got = s2s.vmap(getattr(F, name), axis_name="batch")(x)
    close(got, jax.vmap(getattr(J, name), axis_name="batch")(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_collectives_are_reductions_over_the_batch_axis_in_the_code(dtype):
    v = s2s.vmap(F.batch_norm, axis_name="batch")
    v(x_of(dtype))
    assert "np.mean(x, axis=0)" in v.source
    assert "pmean" not in v.source.replace("pmean_", "")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["centred_loss", "psum_loss", "gather_loss"])
def test_vmap_of_grad_through_a_collective_is_jaxs(name, dtype):
    x = x_of(dtype)
    got = s2s.vmap(s2s.grad(getattr(F, name)), axis_name="batch")(x)
    close(got, jax.vmap(jax.grad(getattr(J, name)), axis_name="batch")(x), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["batch_norm", "share", "gathered"])
def test_vjp_jvp_and_jacobian_of_a_vmap_with_a_collective_are_jaxs(name, dtype):
    x, ct = x_of(dtype), x_of(dtype, seed=1)
    fn, fj = s2s.vmap(getattr(F, name), axis_name="batch"), jax.vmap(
        getattr(J, name), axis_name="batch")
    close(s2s.vjp(fn, x)[1](ct)[0], jax.vjp(fj, x)[1](ct)[0], dtype)
    close(s2s.jvp(fn, (x,), (ct,))[1], jax.jvp(fj, (x,), (ct,))[1], dtype)
    if dtype == np.float64:  # (jacrev through np.mean's VJP is float64 for float32
        close(s2s.jacrev(fn)(x), jax.jacrev(fj)(x), dtype)  # inputs, collectives or not)


def test_grad_of_a_sum_over_a_vmap_with_psum_matches_finite_differences():
    x = x_of(np.float64)
    fn = s2s.vmap(F.share, axis_name="batch")
    _, back = s2s.vjp(fn, x)
    w = x_of(np.float64, seed=2)
    g = back(w)[0]
    d, eps = x_of(np.float64, seed=3), 1e-6
    fd = (np.sum(w * fn(x + eps * d)) - np.sum(w * fn(x - eps * d))) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_nested_vmaps_with_two_names_are_jaxs(dtype):
    x = x_of(dtype, shape=(2, 3, 4))
    got = s2s.vmap(s2s.vmap(F.two_names, axis_name="rows"), axis_name="cols")(x)
    want = jax.vmap(jax.vmap(J.two_names, axis_name="rows"), axis_name="cols")(x)
    close(got, want, dtype)
    got = s2s.vmap(s2s.vmap(F.two_names, axis_name="cols"), axis_name="rows")(x)
    want = jax.vmap(jax.vmap(J.two_names, axis_name="cols"), axis_name="rows")(x)
    close(got, want, dtype)


def test_a_collective_outside_a_vmap_of_its_name_is_a_name_error():
    x = x_of(np.float64)
    for call in (lambda: F.unbound(x), lambda: s2s.vmap(F.unbound)(x),
                 lambda: s2s.vmap(F.unbound, axis_name="batch")(x),
                 lambda: s2s.grad(F.psum_loss)(x)):
        with pytest.raises(NameError, match="unbound axis name") as info:
            call()
        assert " at " in str(info.value)  # (the calling line's file:line)


def test_pmax_has_no_derivative_as_in_jax():
    with pytest.raises(Exception, match="pmax"):
        s2s.vmap(s2s.grad(lambda x: np.sum(F.spread(x))), axis_name="batch")(x_of(np.float64))


def test_a_vmap_with_collectives_runs_on_the_jax_backend():
    x = x_of(np.float64)
    got = s2s.jit(s2s.vmap(F.batch_norm, axis_name="batch"), backend="jax")(x)
    close(got, jax.vmap(J.batch_norm, axis_name="batch")(x), np.float64)


# ---- JAX's spelling (jax.lax.psum) and tuples of axis names -------------------------

JX = jax_twin(FJ)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["jax_spelled", "imported_pmean"])
def test_jax_lax_collectives_in_the_function_are_s2s_collectives(name, dtype):
    x = x_of(dtype)
    v = s2s.vmap(getattr(FJ, name), axis_name="batch")
    for call in range(3):  # (new values each call)
        x = x_of(dtype, seed=call)
        close(v(x), jax.vmap(getattr(JX, name), axis_name="batch")(x), dtype)
    assert "np.mean(" in v.source and "jax." not in v.source and "import jax" not in v.source


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["both_axes", "both_axes_extremes", "empty_axes"])
@pytest.mark.parametrize("shape", [(2, 3, 4), pytest.param((1, 3, 2), marks=pytest.mark.slow),
                                   pytest.param((3, 1, 2), marks=pytest.mark.slow)])
def test_a_tuple_of_axis_names_reduces_over_both_nested_vmaps(name, shape, dtype):
    x = x_of(dtype, shape=shape)
    for inner, outer in (("rows", "cols"), ("cols", "rows")):
        got = s2s.vmap(s2s.vmap(getattr(FJ, name), axis_name=inner), axis_name=outer)(x)
        want = jax.vmap(jax.vmap(getattr(JX, name), axis_name=inner), axis_name=outer)(x)
        close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_through_a_tuple_of_axis_names_is_jaxs(dtype):
    x = x_of(dtype, shape=(2, 3, 4))
    got = s2s.vmap(s2s.vmap(s2s.grad(FJ.both_axes_loss), axis_name="rows"),
                   axis_name="cols")(x)
    want = jax.vmap(jax.vmap(jax.grad(JX.both_axes_loss), axis_name="rows"),
                    axis_name="cols")(x)
    close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["index_two", "index_two_swapped"])
def test_axis_index_over_a_tuple_of_names_is_jaxs(name, dtype):
    """JAX's combined index: row-major in the names' order, whichever vmap is inner."""
    x = x_of(dtype, shape=(2, 3, 4))
    for inner, outer in (("rows", "cols"), ("cols", "rows")):
        got = s2s.vmap(s2s.vmap(getattr(FJ, name), axis_name=inner), axis_name=outer)(x)
        want = jax.vmap(jax.vmap(getattr(JX, name), axis_name=inner), axis_name=outer)(x)
        close(got, want, dtype)


def _jax_all_gather(v, names, axis=0):
    """all_gather over a tuple of names written with JAX's psum and axis_index: JAX's
    vmap batching of all_gather itself stops at a tuple of names ('axis size doesn't
    match', jax 0.10), while its psum and axis_index over one hold its semantics."""
    import jax.numpy as jnp

    n = jax.lax.psum(1, names)
    one_hot = jax.nn.one_hot(jax.lax.axis_index(names), n, dtype=v.dtype)
    return jnp.moveaxis(jax.lax.psum(one_hot.reshape((n,) + (1,) * v.ndim) * v, names),
                        0, axis)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather_over_a_tuple_of_names_is_jaxs(dtype):
    x = x_of(dtype, shape=(2, 3, 4))
    oracles = {"gather_two": lambda v: _jax_all_gather(v, ("rows", "cols")),
               "gather_two_swapped": lambda v: _jax_all_gather(v, ("cols", "rows"), 1)}
    for name, oracle in oracles.items():
        for inner, outer in (("rows", "cols"), ("cols", "rows")):
            got = s2s.vmap(s2s.vmap(getattr(FJ, name), axis_name=inner),
                           axis_name=outer)(x)
            want = jax.vmap(jax.vmap(oracle, axis_name=inner), axis_name=outer)(x)
            close(got, want, dtype)
    with pytest.raises(Exception, match="axis size"):  # (the reason for the oracle)
        jax.vmap(jax.vmap(JX.gather_two, axis_name="rows"), axis_name="cols")(x)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_through_all_gather_over_a_tuple_of_names_is_jaxs(dtype):
    import jax.numpy as jnp

    x = x_of(dtype, shape=(2, 3, 4))
    got = s2s.vmap(s2s.vmap(s2s.grad(FJ.gather_two_loss), axis_name="rows"),
                   axis_name="cols")(x)

    def loss(v):
        return jnp.sum(_jax_all_gather(v, ("rows", "cols")) ** 2 * jnp.cos(v))

    want = jax.vmap(jax.vmap(jax.grad(loss), axis_name="rows"), axis_name="cols")(x)
    close(got, want, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_jax_lax_stop_gradient_in_the_function_is_s2s_s(dtype):
    x = x_of(dtype, shape=(3,))
    close(s2s.grad(FJ.stopped)(x), jax.grad(JX.stopped)(x), dtype)
    close(s2s.jvp(FJ.stopped, (x,), (x,))[1], jax.jvp(JX.stopped, (x,), (x,))[1], dtype)
    code = [line.split("#")[0] for line in s2s.source(s2s.grad(FJ.stopped)).splitlines()]
    assert not any("jax" in line for line in code)  # (the user's line, as a comment)
