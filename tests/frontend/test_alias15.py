"""In-place writes and aliasing where NumPy's semantics are clear (issue 23, alias15;
functions in alias15_fns.py).

1. vmap of ``y[m] = v`` at a boolean mask that differs per example (``y[y < 0] =
   0.0``) was refused ("writing at a batched index"): it is ``y[:] = np.where(m, v,
   y)`` (batched_masks.py), ``v`` a scalar, a value of one selected element's shape,
   or ``w[m]`` at the same mask.  The gradient of a write at one boolean mask is the
   basic index's (``unbroadcast(g[m], v)``: a mask names no element twice), and
   vmap holds every read at the mask whole, zero elsewhere (``np.where(m, g, 0)``),
   so vmap of grad runs too (``w[m]``'s cotangent added back with ``a += t``).
2. ``d["k"] += v`` on an item a list literal also holds (``keep = [d["k"]]``): the
   list is built again with the sum, as NumPy's ``keep[0]`` sees it (refused before).
3. ``c = z[[0, 1]]; c += 5``: NumPy's advanced indexing copies, so ``c`` shares nothing
   (refused before); ``b = a; b.append(v)`` then reading ``a``: the message named
   "`a` shares memory with `a`", it names ``b`` now.
4. ``np.add.at`` of batched values into an unbatched float32 array, under
   ``s2s.jit(s2s.vmap(f), backend="jax")``: the values are cast to the array's dtype
   (a float64 value warned in JAX, "will result in an error").

Oracles: a Python loop over the examples of the NumPy function, NumPy's closed forms,
JAX on ``jnp.where`` twins (slow tier), float64 and float32.  The default tier runs
one test (vmap of the mask write, no JAX compile); the rest is slow."""

from __future__ import annotations

import warnings

import alias15_fns as F
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to

import s2s

DTYPES = [np.float64, np.float32]


def _batch(call, dtype, shape=(5, 3)):
    """Values changing with the call, with an all-negative and an all-positive row
    (a mask all true, all false)."""
    x = np.random.default_rng(call).normal(size=shape) * (1 + 0.1 * call)
    x[0], x[-1] = -np.abs(x[0]) - 0.1, np.abs(x[-1]) + 0.3
    return x.astype(dtype)


def _tol(dtype):
    return dict(rtol=1e-12, atol=1e-14) if dtype == np.float64 else dict(rtol=2e-6,
                                                                        atol=2e-6)


# ---- 1. a write at a per-example mask -----------------------------------------------------


def test_a_write_at_a_per_example_mask_is_the_loops() -> None:
    """vmap of ``y[y < 0] = 0.0`` (returned: probe 9's clip_copy_inplace), and its
    squared sum's gradient under vmap, against a Python loop over the examples and the
    closed form 2 max(x, 0); a result shares no memory with the argument, and writing
    into it changes no later result."""
    v, vg = s2s.vmap(F.clip_returned), s2s.vmap(s2s.grad(F.clip_sq))
    for call in (1, 3, 10):
        x = _batch(call, np.float64)
        x0 = x.copy()
        got = v(x)
        np.testing.assert_array_equal(got, np.stack([F.clip_returned(r) for r in x]))
        np.testing.assert_allclose(vg(x), 2 * np.maximum(x, 0), rtol=1e-14)
        assert not np.shares_memory(got, x)
        got[:] = 7.0
        np.testing.assert_array_equal(x, x0)
        np.testing.assert_array_equal(v(x), np.maximum(x, 0))


@pytest.mark.slow
def test_a_value_read_at_another_mask_or_one_per_element_is_refused_located() -> None:
    for name, words in (("masked_from_changed", "a mask that differs per example"),
                        ("per_element_value", "one value per selected element"),
                        ("int_positions_of_a_mask", "writing at a batched index")):
        with pytest.raises(s2s.TransformError) as info:
            s2s.vmap(getattr(F, name))(np.array([[0.5, -1.0, 2.0], [0.1, 0.3, 0.0]]))
        message = str(info.value)
        assert words in message and "alias15_fns.py" in message, message


MASKED = ["clip_sq", "clip_returned", "band_set", "masked_from"]


def _jax(name):
    import jax.numpy as jnp

    twin = getattr(F, name + "_jx")
    return lambda x: twin(jnp, x)


def _rows(dtype, call):
    x = np.random.default_rng(call).normal(size=(4, 3, 3)) * (1 + 0.1 * call)
    x[0] = -np.abs(x[0]) - 0.1  # (no row selected: all false)
    x[1] = np.abs(x[1]) + 0.1  # (every row: all true)
    return x.astype(dtype)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
@pytest.mark.parametrize("name", MASKED + ["rows_set", "masked_rows_from"])
def test_a_per_example_mask_write_under_every_transform_is_jaxs(name, dtype) -> None:
    """vmap, jvp of vmap, vmap of jvp, the gradient of the vmapped function (vjp), jit
    of vmap on both backends, against jax.vmap of the ``jnp.where`` twin; calls 1, 3,
    10 with new values, masks all true and all false; float32 stays float32."""
    import jax

    f, jf = getattr(F, name), _jax(name)
    v = s2s.vmap(f)
    jits = [s2s.jit(s2s.vmap(f)), s2s.jit(s2s.vmap(f), backend="jax")]
    for call in (1, 3, 10):
        x = _rows(dtype, call) if name.startswith(("rows", "masked_rows")) else _batch(
            call, dtype)
        t = np.cos(x).astype(dtype)
        want = jax.vmap(jf)(x)
        for got in [v(x)] + [j(x) for j in jits]:
            assert_close_to(got, want, dtype)
            assert not np.shares_memory(got, x)
        assert_close_to(s2s.jvp(v, (x,), (t,)), jax.jvp(jax.vmap(jf), (x,), (t,)), dtype)
        assert_close_to(s2s.vmap(lambda a, b: s2s.jvp(f, (a,), (b,)))(x, t),
                        jax.vmap(lambda a, b: jax.jvp(jf, (a,), (b,)))(x, t), dtype)
        out, pull = s2s.vjp(v, x)
        cot = np.linspace(0.5, 1.5, out.size).reshape(out.shape).astype(dtype)
        assert_close_to(pull(cot), jax.vjp(jax.vmap(jf), x)[1](cot), dtype)
        if name != "clip_returned":  # (a scalar result)
            want = jax.vmap(jax.grad(jf))(x)
            for vg in (s2s.vmap(s2s.grad(f)), s2s.jit(s2s.vmap(s2s.grad(f))),
                       s2s.grad(lambda a: np.sum(s2s.vmap(f)(a)))):  # (grad of a vmap-sum)
                assert_close_to(vg(x), want, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_mask_write_with_no_example_or_no_element(dtype) -> None:
    """Size 0: examples of no element (a mask of shape (0,)), and a single example."""
    for x in (np.zeros((3, 0), dtype), _batch(2, dtype, (1, 4))):
        np.testing.assert_array_equal(s2s.vmap(F.clip_returned)(x), np.maximum(x, 0))
        got = s2s.vmap(s2s.grad(F.clip_sq))(x)
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_allclose(got, 2 * np.maximum(x, 0), **_tol(dtype))


# ---- 2. `d["k"] += v` on an item a list holds -------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_a_dict_item_a_list_holds_sees_the_add(dtype) -> None:
    """NumPy's closed forms (JAX's `+=` makes a new array: no oracle): 2 * sum((1 + x)
    * x) and its gradient 2 (1 + 2x); keep[0] returned is x (not zeros), a new array."""
    f, g = F.dict_item_in_a_list_and_a_constant, F.dict_item_in_a_list_returned
    for call in (1, 3, 10):
        for x in (np.array([0.3, -0.7, 1.2]) * (1 + 0.1 * call), np.zeros(0), np.array([0.4])):
            x = x.astype(dtype)
            assert f(x.copy()) == pytest.approx(2 * np.sum((1 + x) * x), rel=1e-5)
            for grad in (s2s.grad(f), s2s.jit(s2s.grad(f)), s2s.jit(s2s.grad(f), backend="jax")):
                np.testing.assert_allclose(grad(x), 2 * (1 + 2 * x), **_tol(dtype))
            primal, tangent = s2s.jvp(g, (x,), (np.ones_like(x),))
            np.testing.assert_array_equal(primal, x)
            np.testing.assert_array_equal(tangent, np.ones_like(x))
            assert not np.shares_memory(primal, x)
            for jac in (s2s.jacfwd(g), s2s.jit(s2s.jacrev(g), backend="jax")):
                np.testing.assert_allclose(jac(x), np.eye(x.size), **_tol(dtype))


@pytest.mark.slow
def test_a_dict_item_a_list_read_before_or_sharing_is_refused_located() -> None:
    for name in ("dict_item_in_a_list_read_before", "dict_item_in_a_list_with_an_array"):
        with pytest.raises(s2s.TransformError) as info:
            s2s.grad(getattr(F, name))(np.array([1.0, 2.0]))
        message = str(info.value)
        assert 'state["acc"] += x' in message and "alias15_fns.py" in message, message


# ---- 3. NumPy's copies; the object a second name changed -------------------------------


@pytest.mark.slow
def test_an_add_into_a_fancy_indexed_copy_and_the_message_of_a_shared_list() -> None:
    """``c = z[[0, 1]]; c += 5``: sum((z[:2] + 5) z[:2]), gradient 2 z + 5 on the first
    two; ``d = c`` before the add still refused; ``b.append`` then ``a``: named."""
    z = np.array([1.0, 2.0, 3.0])
    value, grad = s2s.value_and_grad(F.fancy_copy_added)(z)
    assert value == F.fancy_copy_added(z.copy()) == 20.0
    np.testing.assert_array_equal(grad, [7.0, 9.0, 0.0])
    with pytest.raises(s2s.TransformError, match="also refers to"):
        s2s.grad(F.fancy_copy_held)(z)
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(F.list_appended_through_another_name)(z)
    message = str(info.value)
    assert "`a` is the object `b` also names, changed in place through `b`" in message
    assert "read `b` here" in message and "`a` shares memory with `a`" not in message


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", DTYPES, ids=["f64", "f32"])
def test_an_add_into_a_fancy_indexed_copy_is_jaxs(dtype) -> None:
    import jax

    f, jf = F.fancy_copy_added, _jax("fancy_copy_added")
    for call in (1, 3, 10):
        z = (np.array([1.0, -2.0, 3.0, 0.5]) * (1 + 0.1 * call)).astype(dtype)
        for got, want in ((s2s.value_and_grad(f)(z), jax.value_and_grad(jf)(z)),
                          (s2s.jit(s2s.grad(f), backend="jax")(z), jax.grad(jf)(z)),
                          (s2s.hessian(f)(z), jax.hessian(jf)(z))):
            assert_close_to(got, want, dtype)
        zs = np.stack([z, -z, 2 * z])
        assert_close_to(s2s.vmap(s2s.grad(f))(zs), jax.vmap(jax.grad(jf))(zs), dtype)


# ---- 4. np.add.at into an unbatched float32 array, on the JAX backend -------------------


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
def test_add_at_into_a_float32_array_under_jit_of_vmap_on_jax_is_cast() -> None:
    import jax

    jf = _jax("add_at_float32")
    for dtype in DTYPES:
        for call in (1, 3, 10):
            x = _batch(call, dtype)
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # (JAX: "scatter inputs have incompatible types")
                got = s2s.jit(s2s.vmap(F.add_at_float32), backend="jax")(x)
            assert np.asarray(got).dtype == np.float32
            assert_close_to(got, jax.vmap(jf)(x), np.float32)
            np.testing.assert_allclose(s2s.vmap(F.add_at_float32)(x),
                                       np.stack([F.add_at_float32(r) for r in x]), rtol=1e-6)
