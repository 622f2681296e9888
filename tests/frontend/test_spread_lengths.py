"""``h(*xs)`` where ``xs``'s length is known only per call and ``h`` has defaults left
to fill or a ``*args`` of its own (issue 23, item 5; the fixed-arity case is
tests/frontend/test_star_items.py): the transform is made per call's length, the
spread read as ``h(xs[0], ..., xs[n - 1])``, binding ``h``'s parameters as Python
binds them.  Expected values from JAX on the same source
(tests/frontend/spread_length_fns.py), float64 and float32, over calls whose length
and values change (the 1st, 3rd and 10th compared), under grad, value_and_grad, jvp,
jacfwd, jacrev, hessian, vmap of grad, s2s.jit on both backends, and as a callee."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import spread_length_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, central_grad, compiled, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2])
close = partial(assert_close_to, f64=1e-9, f32=3e-4)
COMPARED = (0, 2, 9)
NAMES = ["spreads_into_defaults", "spreads_into_star_args", "spreads_after_a_positional",
         "calls_a_spreading_function"]


def _xs(dtype, k):
    """Lengths 1, 2, 3, 1, 2, ... (a tuple, then a list), values changing."""
    items = [(X * (1 + 0.1 * k)).astype(dtype), (X[::-1] - 0.1 * k).astype(dtype),
             np.asarray(0.3 + 0.05 * k, dtype)][:1 + k % 3]
    return tuple(items) if k % 2 else items


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", NAMES)
def test_a_spread_of_a_length_the_call_gives_against_jax(name, dtype):
    ours, theirs = getattr(F, name), getattr(J, name)
    grad = s2s.grad(ours, argnums=(0, 1))
    for k in range(10):
        x, xs = (X + 0.1 * k).astype(dtype), _xs(dtype, k)
        got = grad(x, xs)
        if k in COMPARED:
            close(got, jax.grad(theirs, argnums=(0, 1))(x, xs), dtype)
    xs, v = _xs(dtype, 1), X[::-1].astype(dtype)
    close(s2s.value_and_grad(ours)(x, xs), jax.value_and_grad(theirs)(x, xs), dtype)
    close(s2s.jvp(ours, (x, xs), (v, xs)), jax.jvp(theirs, (x, xs), (v, xs)), dtype)
    close(s2s.jacfwd(ours)(x, xs), jax.jacfwd(theirs)(x, xs), dtype)
    close(s2s.jacrev(ours, argnums=1)(x, xs), jax.jacrev(theirs, argnums=1)(x, xs), dtype)
    close(s2s.hessian(ours)(x, xs), jax.hessian(theirs)(x, xs), dtype)
    batch = np.stack([x, 0.5 * x, -x])
    close(s2s.vmap(s2s.grad(ours), in_axes=(0, None))(batch, xs),
          jax.vmap(jax.grad(theirs), in_axes=(0, None))(batch, xs), dtype)
    close(s2s.jit(s2s.grad(ours))(x, xs), jax.grad(theirs)(x, xs), dtype)
    close(s2s.jit(s2s.grad(ours), backend="jax")(x, xs), compiled(jax.grad(theirs))(x, xs),
          dtype)


def test_default_tier_against_central_differences():
    """Lengths 1 and 2 into defaults left to fill, and 2 into ``*args``, against
    central differences of the NumPy function."""
    for name, lengths in (("spreads_into_defaults", (1, 2)), ("spreads_into_star_args", (2,))):
        grad = s2s.grad(getattr(F, name))
        for n in lengths:
            xs = _xs(np.float64, n - 1)
            np.testing.assert_allclose(grad(X, xs), central_grad(
                lambda t: getattr(F, name)(t, xs), X), rtol=1e-6, atol=1e-8)


def test_too_many_items_is_pythons_type_error():
    """Four items for ``scale_by(a, b=2.0, c=0.5)``: Python's TypeError, as JAX's
    trace raises it (the transform is made for that length and calls the function)."""
    xs = (X, X, X, X)
    with pytest.raises(TypeError):
        J.spreads_into_defaults(X, xs)
    with pytest.raises((TypeError, s2s.errors.TransformError)) as err:
        s2s.grad(F.spreads_into_defaults)(X, xs)
    assert "scale_by" in str(err.value)
