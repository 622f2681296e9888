"""vmap of an `if` that joins a tuple: on a test that is not batched (an int argument),
each path builds its own tuple, and the other path may batch other leaves.  The join's
leaves are read by their place (not through the last path's `make_tuple`), and only the
leaves the other path batched get a batch axis.  Checked against a Python loop and,
for the gradient, against per-example jax.grad (float64)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

XS = np.array([[0.1, -0.4, 0.9], [1.3, 0.2, -0.7], [-1.1, 0.6, 0.25], [0.5, 0.5, -2.0]])
Y = np.array([0.3, -0.8, 1.7])


def pair(x, y, n):
    if n == 0:
        out = (x, np.cos(y))
    else:
        out = (np.sin(y), x * 2.0)
    return out


def pair_summed(x, y, n):
    if n == 0:
        out = (x, np.cos(y))
    else:
        out = (np.sin(y), x * 2.0)
    return np.sum(out[0] * out[1]) + np.sum(out[1] ** 2)


def pair_summed_jax(x, y, n):
    if n == 0:
        out = (x, jnp.cos(y))
    else:
        out = (jnp.sin(y), x * 2.0)
    return jnp.sum(out[0] * out[1]) + jnp.sum(out[1] ** 2)


def nested(x, y, n):
    if n > 1:
        out = ((x * y, y), np.sum(x))
    else:
        out = ((y, np.exp(x)), 1.5)
    return out[0][0] + out[0][1] * out[1]


@pytest.mark.parametrize("n", [0, 1])
def test_vmap_of_a_tuple_joined_at_an_if_returned(n: int) -> None:
    got = s2s.vmap(pair, in_axes=(0, None, None))(XS, Y, n)
    loop = [pair(x, Y, n) for x in XS]
    assert isinstance(got, tuple) and len(got) == 2
    for k in (0, 1):
        np.testing.assert_allclose(got[k], np.stack([e[k] for e in loop]), rtol=1e-14)


@pytest.mark.parametrize("n", [0, 2])
def test_vmap_of_a_nested_tuple_joined_at_an_if(n: int) -> None:
    got = s2s.vmap(nested, in_axes=(0, None, None))(XS, Y, n)
    np.testing.assert_allclose(got, np.stack([nested(x, Y, n) for x in XS]), rtol=1e-14)


@pytest.mark.parametrize("n", [0, 1])
def test_vmap_of_grad_through_a_tuple_joined_at_an_if(n: int) -> None:
    expected = np.stack([jax.grad(pair_summed_jax)(x, Y, n) for x in XS])
    got = s2s.vmap(s2s.grad(pair_summed), in_axes=(0, None, None))(XS, Y, n)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    expected_y = np.stack([jax.grad(pair_summed_jax, argnums=1)(x, Y, n) for x in XS])
    got_y = s2s.vmap(s2s.grad(pair_summed, argnums=1), in_axes=(0, None, None))(XS, Y, n)
    np.testing.assert_allclose(got_y, expected_y, rtol=1e-12, atol=1e-14)



# ---- a recursive call the probe (the first example) never makes ---------------------
# (corpus recursion_base_case: with n == 0 the first example never takes the branch
# that calls `tower` again; the call's example is the caller's own arguments)


def tower_jax(x, n):
    return x if n == 0 else jnp.sin(tower_jax(x, n - 1)) * x


def recursive_sum_jax(x, n):
    return jnp.sum(tower_jax(x, n) ** 2)


@pytest.mark.slow
@pytest.mark.parametrize("n", [0, 2])
def test_recursion_the_probe_never_enters(n: int) -> None:
    import corpus_fns

    f = corpus_fns.recursive_sum
    x = XS[0]
    np.testing.assert_allclose(s2s.vmap(corpus_fns.tower, in_axes=(0, None))(XS, n),
                               np.stack([tower_jax(v, n) for v in XS]), rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(f), in_axes=(0, None))(XS, n),
                               np.stack([jax.grad(recursive_sum_jax)(v, n) for v in XS]),
                               rtol=1e-12)
    np.testing.assert_allclose(s2s.jacfwd(f)(x, n), jax.jacfwd(recursive_sum_jax)(x, n),
                               rtol=1e-12)
    np.testing.assert_allclose(s2s.hessian(f)(x, n), jax.hessian(recursive_sum_jax)(x, n),
                               rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(s2s.jacrev(s2s.grad(f))(x, n),
                               jax.jacrev(jax.grad(recursive_sum_jax))(x, n),
                               rtol=1e-12, atol=1e-14)


def copies_its_rows(x):
    rows = list(x)
    more = list(rows)  # a copy of a list of rows: not the rows of an array
    more.append(np.sin(x[0]))
    return np.sum(np.stack(more) * np.arange(1.0, 4.0))


def copies_its_rows_jax(x):
    rows = list(x)
    more = list(rows)
    more.append(jnp.sin(x[0]))
    return jnp.sum(jnp.stack(more) * jnp.arange(1.0, 4.0))


@pytest.mark.slow
def test_list_of_a_list_keeps_its_items_batch_axes() -> None:
    xs = np.stack([XS[:2], XS[2:]])  # two examples of (2, 3)
    got = s2s.vmap(copies_its_rows)(xs)
    np.testing.assert_allclose(got, [copies_its_rows(x) for x in xs], rtol=1e-12)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(copies_its_rows))(xs),
                               np.stack([jax.grad(copies_its_rows_jax)(x) for x in xs]),
                               rtol=1e-12)
    np.testing.assert_allclose(s2s.jacfwd(s2s.jacrev(copies_its_rows))(XS[:2]),
                               jax.jacfwd(jax.jacrev(copies_its_rows_jax))(XS[:2]),
                               rtol=1e-10, atol=1e-12)


def asarray_of_items(x):
    y = np.asarray([x[0], 2.0 * x[1], x[2] ** 2])
    return np.sum(y * np.arange(1.0, 4.0)) + y[2]


def test_asarray_of_a_list_of_items_stacks_them_per_example() -> None:
    # np.asarray([...]) of batched items was batched as one array: items first, the
    # batch axis second (a silently wrong layout); it is np.array's join
    loop = np.stack([asarray_of_items(x) for x in XS])
    np.testing.assert_allclose(s2s.vmap(asarray_of_items)(XS), loop, rtol=1e-12)
    twin = type(asarray_of_items)(asarray_of_items.__code__,
                                  {**asarray_of_items.__globals__, "np": jnp})
    per_example = jax.vmap(jax.grad(twin))(XS)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(asarray_of_items))(XS), per_example,
                               rtol=1e-12)
