"""Casts that change precision or kind, end to end against JAX (float64 mode).

The rule table (rule_rows_dtypes.py) checks casts that keep float64 at 1e-10; here a
cast to float32 in the middle of a function rounds both sides alike only up to the
order of float32 operations, so values are compared at float32's tolerance, and the
dtypes themselves are compared exactly (the tangent of a float32 value is float32, a
gradient is cast back to its input's dtype)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

from support import jax_twin  # noqa: E402

F32 = {"rtol": 1e-5, "atol": 1e-5}  # float32 tanh: NumPy and XLA differ in the last bits


# numpy here is jax.numpy in the twin (support.jax_twin reads this file again)
def to_float32_and_back(x):
    y = x.astype("float32")
    return np.sum(y * y * x) + np.sum(np.sin(x))


def through_float32(x):
    return np.sum(np.tanh(np.astype(x, "float32") * 2.0).astype(x.dtype) * x)


def int_cast_is_zero(x):
    # JAX: a cast to int32 passes a float0 (zero) derivative; x's own term remains
    return np.sum(np.astype(x * 4.0, "int32") * x) + np.sum((x > 0.5) * x)


def cast_like_other(x, y):
    # the target dtype is a value (y's dtype): known only when the code runs
    return np.sum(x.astype(y.dtype) ** 2 * y)


def asarray_to_int(x):
    return np.sum(np.asarray(x * 3.0, dtype="int64") * x + x**3)


CASES = {
    "to_float32_and_back": (to_float32_and_back, (np.array([0.3, -1.2, 2.5, 0.7]),)),
    "through_float32": (through_float32, (np.array([[0.3, -1.2], [2.5, 0.7]]),)),
    "int_cast_is_zero": (int_cast_is_zero, (np.array([0.3, -1.2, 2.5, 0.7]),)),
    "cast_like_other": (cast_like_other, (np.array([0.3, -1.2, 2.5]),
                                          np.array([1.5, 0.5, -2.0], np.float32))),
    "asarray_to_int": (asarray_to_int, (np.array([0.3, -1.2, 2.5, 0.7]),)),
}
_TWIN = None


def twin(name):
    global _TWIN
    if _TWIN is None:
        import sys

        _TWIN = jax_twin(sys.modules[__name__])
    return getattr(_TWIN, name)


def close(got, expected):
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), **F32)


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_jax_and_keeps_input_dtype(name):
    fn, args = CASES[name]
    got = s2s.grad(fn)(*args)
    expected = jax.grad(twin(name))(*args)
    assert got.dtype == args[0].dtype == expected.dtype
    close(got, expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_jvp_matches_jax(name):
    fn, args = CASES[name]
    tangents = (np.linspace(-1.0, 1.0, np.size(args[0])).reshape(np.shape(args[0])),)
    tangents += tuple(np.zeros_like(a) for a in args[1:])
    got = s2s.jvp(fn, args, tangents)
    expected = jax.jvp(twin(name), args, tangents)
    close(got[0], expected[0])
    close(got[1], expected[1])
    assert np.asarray(got[1]).dtype == np.asarray(expected[1]).dtype


@pytest.mark.parametrize("name", sorted(CASES))
def test_hessian_matches_jax(name):
    fn, args = CASES[name]
    close(s2s.hessian(fn)(*args), jax.hessian(twin(name))(*args))


@pytest.mark.parametrize("name", sorted(CASES))
def test_vmap_of_grad_matches_jax(name):
    fn, args = CASES[name]
    xs = np.stack([args[0], args[0] * 1.3, -args[0]])
    in_axes = (0,) + (None,) * (len(args) - 1)
    got = s2s.vmap(s2s.grad(fn), in_axes=in_axes)(xs, *args[1:])
    expected = jax.vmap(jax.grad(twin(name)), in_axes=in_axes)(xs, *args[1:])
    close(got, expected)


def test_float32_tangent_is_float32():
    # the tangent of a float32 value is float32, as JAX's convert_element_type gives
    x = np.array([0.3, -1.2, 2.5])
    y, y_dot = s2s.jvp(lambda x: x.astype("float32") * 3.0, (x,), (np.ones(3),))
    assert y.dtype == y_dot.dtype == np.float32


def test_int_output_tangent_is_float0_and_values_are_zero():
    x = np.array([0.3, -1.2, 2.5])
    y, y_dot = s2s.jvp(lambda x: np.astype(x * 2.0, "int32"), (x,), (np.ones(3),))
    _, expected = jax.jvp(lambda x: jnp.astype(x * 2.0, "int32"), (x,), (np.ones(3),))
    assert y.dtype == np.int32 and y_dot.dtype == expected.dtype  # float0
    np.testing.assert_array_equal(y, np.array([0, -2, 5], np.int32))


def test_emitted_cast_reads_as_a_cast():
    g = s2s.grad(to_float32_and_back)
    g(CASES["to_float32_and_back"][1][0])
    text = s2s.source(g)
    assert 'np.astype(x, "float32")' in text
    assert "np.isdtype(" in text  # the zero for integer targets, decided at run time


# x.astype(np.float32): a NumPy type given as the dtype (a constant of the call)
def test_dtype_given_as_a_numpy_type():
    def f(x):
        return np.sum(x.astype(np.float32) ** 2)

    x = np.array([0.3, -1.2, 2.5])
    close(s2s.grad(f)(x), jax.grad(lambda x: jnp.sum(x.astype(jnp.float32) ** 2))(x))


def test_astype_copy_false_is_refused():
    # its result may be x itself; s2s would treat it as a new array it may write into
    def f(x):
        y = x.astype(x.dtype, copy=False)
        y[0] = 0.0
        return np.sum(y * x)

    with pytest.raises(s2s.TransformError, match="arguments s2s does not support"):
        s2s.grad(f)(np.array([1.0, 2.0]))


def test_write_into_float64_of_an_array_is_refused():
    # np.float64(x) of a float64 array is x itself: writing into it would change x
    def f(x):
        y = np.float64(x)
        y[0] = 5.0
        return np.sum(x * x) + np.sum(y)

    with pytest.raises(s2s.TransformError):
        s2s.grad(f)(np.array([1.0, 2.0]))
