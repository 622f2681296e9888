"""``h(*xs)`` where ``xs``'s length is known only per call (a tuple or list argument, a
list the function grew), into a user function whose remaining positional parameters
have no defaults (issue 23: JAX's trace runs it, s2s refused it): lowered as
``h(xs[0], ..., xs[n - 1])`` after a kept check raising Python's TypeError, at the
user's line, where the call's ``xs`` has another length.  Expected values from JAX on
the same source, float64 and float32, over calls whose values change, under grad,
value_and_grad, jvp, jacrev, hessian, vmap of grad, as a callee, and ``s2s.jit`` on
both backends."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import star_item_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s
from s2s.errors import TransformError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
close = partial(assert_close_to, f64=1e-9, f32=3e-4)


def _pair(dtype, k):
    return ((X * (1.0 + k)).astype(dtype), (X[::-1] - 0.2 * k).astype(dtype))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["spreads_a_tuple_argument", "calls_a_spreading_function"])
def test_a_tuple_argument_spread_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours, argnums=(0, 1))
    for k in range(10):  # values change at every call; the 2nd specializes
        x, y = _pair(dtype, k)
        xs = (y, x * 0.5) if k % 2 else [y, x * 0.5]  # a tuple, then a list
        if k in (0, 2, 9):
            close(grad(x, xs), jax.grad(theirs, argnums=(0, 1))(x, xs), dtype)
        else:
            grad(x, xs)
    x, y = _pair(dtype, 3)
    xs, v = (y, x), (X + 1.0).astype(dtype)
    close(s2s.value_and_grad(ours)(x, xs), jax.value_and_grad(theirs)(x, xs), dtype)
    close(s2s.jvp(lambda t: ours(t, xs), (x,), (v,)),
          jax.jvp(lambda t: theirs(t, xs), (x,), (v,)), dtype)
    close(s2s.jacrev(ours, argnums=1)(x, xs), jax.jacrev(theirs, argnums=1)(x, xs), dtype)
    close(s2s.hessian(ours)(x, xs), jax.hessian(theirs)(x, xs), dtype)
    batch = np.stack([x, 0.5 * x, x[::-1]])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(batch, xs),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, xs), dtype)
    close(s2s.jit(ours)(x, xs), theirs(x, xs), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(x, xs),
          compiled(jax.grad(theirs))(x, xs), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_spread_after_positional_arguments_and_of_a_grown_list(dtype):
    for k in range(3):
        x, y = _pair(dtype, k)
        ws = [y, np.asarray(0.5 + k, dtype)]
        close(s2s.grad(F.spreads_after_a_positional, argnums=(0, 1))(x, ws),
              jax.grad(J.spreads_after_a_positional, argnums=(0, 1))(x, ws), dtype)
        close(s2s.grad(F.spreads_a_grown_list)(x), jax.grad(J.spreads_a_grown_list)(x),
              dtype)
    close(s2s.hessian(F.spreads_a_grown_list)(x), jax.hessian(J.spreads_a_grown_list)(x),
          dtype)
    close(s2s.jit(s2s.grad(F.spreads_after_a_positional), backend="jax")(x, ws),
          compiled(jax.grad(J.spreads_after_a_positional))(x, ws), dtype)


def test_another_length_is_pythons_type_error_at_the_users_line():
    grad = s2s.grad(F.spreads_a_tuple_argument)
    x, y = _pair(np.float64, 0)
    grad(x, (y, x))
    grad(x, (y, x))  # (specialized from here on)
    for xs in ((y, x, x), (y, x, x, y)):  # (too many: the kept check)
        with pytest.raises(TypeError) as err:
            grad(x, xs)
        text = str(err.value)
        assert "scaled_sin() takes 2 positional arguments from `*xs`" in text, text
        assert f'File "{F.__file__}"' in text and "scaled_sin(*xs)" in text, text
        assert "Instead:" in text and "<s2s:" not in text, text
    for xs in ((y,), ()):  # (too few: the read of a missing item, when it transforms)
        with pytest.raises(TransformError, match="out of range for a tuple") as err:
            grad(x, xs)
        assert err.value.loc.file == F.__file__ and "scaled_sin(*xs)" in err.value.loc.text
    with pytest.raises(TypeError, match="takes 2 positional arguments"):
        s2s.vmap(s2s.grad(F.spreads_a_tuple_argument), in_axes=(0, None))(
            np.stack([x, x]), (y, x, x))
    np.testing.assert_allclose(grad(x, (y, x)), jax.grad(J.spreads_a_tuple_argument)(x, (y, x)))


def test_defaults_left_to_fill_run_per_length():
    """With a default left, the length decides which parameters the items bind: the
    transform is made per call's length (tests/frontend/test_spread_lengths.py)."""
    grad = s2s.grad(F.spreads_into_defaults)
    for xs in ((X,), (X, 0.5 * X)):
        np.testing.assert_allclose(grad(X, xs), jax.grad(J.spreads_into_defaults)(X, xs),
                                   rtol=1e-12)
