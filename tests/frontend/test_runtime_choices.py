"""``functools.reduce(f, xs[, initial])``; ``ACTS[name](x)``, a tuple, list or dict of
functions indexed by a key known only when the function runs; ``first, *rest = x`` of
an array (issue 23, everyday functions that were refused).

Every expected value comes from JAX on the same source (``jax_twin``), in float64 and
float32, at calls whose values change: grad, value_and_grad, jvp, vmap, jacrev,
hessian, ``s2s.jit`` on both backends, and as a callee."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
import runtime_choice_fns as F  # (pytest puts this directory on sys.path)
from support import HAVE_JAX, assert_close_to, compiled, jax_twin

import s2s
from s2s.errors import TransformError

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

X = np.array([0.3, -0.7, 1.2, 0.5, -0.2])
W = np.array([[0.4, -0.3, 0.8, 0.1, 0.6], [-0.5, 0.9, 0.2, -0.7, 0.3]])
M = np.arange(12.0).reshape(4, 3) / 10 - 0.4
DTYPES = [np.float64, np.float32]

# name -> (the arguments after x, the static keyword JAX needs)
PLAIN = {
    "reduce_product": (), "reduce_with_initial": (), "reduce_arrays": (),
    "reduce_layers": (W,), "reduce_static_list": (), "reduce_computed_sequence": (),
    "star_rest": (), "star_middle": (), "star_front": (), "calls_them": (),
}
KEYED = [("act_by_name", "tanh"), ("act_by_name", "softplus"), ("act_by_name_bound", "sin"),
         ("act_by_position", 0), ("act_by_position", -1), ("act_by_position", 1),
         ("local_table", "b"), ("local_table", "c")]
SLOW = {"reduce_arrays", "star_front", "reduce_static_list"}


close = partial(assert_close_to, f64=1e-8, f32=5e-4)


def check(ours, theirs, x, dtype, heavy: bool) -> None:
    """``ours(x)`` against ``theirs(x)`` (one argument; the rest bound) under each
    transform, on the calls it makes."""
    v = (x[::-1] * 0.5 + 0.25).astype(dtype)
    close(s2s.value_and_grad(ours)(x), compiled(jax.value_and_grad(theirs))(x), dtype)
    close(s2s.jvp(ours, (x,), (v,)), compiled(lambda x, v: jax.jvp(theirs, (x,), (v,)))(
        x, v), dtype)
    if heavy:
        batch = np.stack([x, 0.5 * x, x[::-1]])
        close(s2s.vmap(s2s.grad(ours))(batch), compiled(jax.vmap(jax.grad(theirs)))(batch),
              dtype)
        close(s2s.hessian(ours)(x), compiled(jax.hessian(theirs))(x), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", [n if n not in SLOW else pytest.param(
    n, marks=pytest.mark.slow) for n in PLAIN])
@pytest.mark.slow
def test_plain(name, dtype) -> None:
    rest = tuple(a.astype(dtype) for a in PLAIN[name])
    base, twin = getattr(F, name), getattr(J, name)
    if rest:
        w = rest[0]

        def ours(x):
            return base(x, w)

        def theirs(x):
            return twin(x, w)
    else:
        ours, theirs = base, twin
    for call in (1, 2, 3, 10):
        x = (X * (1 + 0.1 * call)).astype(dtype)
        check(ours, theirs, x, dtype, heavy=call == 1)
    # s2s.jit on both backends, of the function and of its gradient
    x = X.astype(dtype)
    for backend in ("numpy", "jax"):
        close(s2s.jit(s2s.grad(base), backend=backend)(x, *rest),
              compiled(jax.grad(twin))(x, *rest), dtype)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name, key", KEYED)
def test_keyed(name, key, dtype) -> None:
    base, twin = getattr(F, name), getattr(J, name)
    for call in (1, 2, 3):
        x = (X * (1 + 0.1 * call)).astype(dtype)
        def ours(x):
            return base(x, key)

        def theirs(x):
            return twin(x, key)
        check(ours, theirs, x, dtype, heavy=call == 1)
    x = X.astype(dtype)
    g = s2s.grad(base)
    close(g(x, key), jax.grad(twin)(x, key), dtype)
    batch = np.stack([x, 2 * x])
    close(s2s.vmap(g, in_axes=(0, None))(batch, key),
          jax.vmap(jax.grad(twin), in_axes=(0, None))(batch, key), dtype)
    close(s2s.jit(g)(x, key), jax.grad(twin)(x, key), dtype)
    close(s2s.jit(g, backend="jax", static_argnums=1)(x, key), jax.grad(twin)(x, key), dtype)


def test_keys_are_checked_as_python_does() -> None:
    """A key the container lacks is Python's KeyError or IndexError when the function
    runs (never the last function in the table, silently)."""
    g = s2s.grad(F.act_by_name)
    g(X, "sin")
    with pytest.raises(KeyError):
        g(X, "cos")
    with pytest.raises(KeyError):
        s2s.grad(F.local_table)(X, "z")
    with pytest.raises(IndexError):
        s2s.grad(F.act_by_position)(X, 3)
    with pytest.raises(IndexError):
        s2s.grad(F.act_by_position)(X, -4)


def test_module_table_changed_between_calls() -> None:
    """ACTS is read at each call: an item replaced between calls is the one called."""
    g = s2s.grad(F.act_by_name)
    before = g(X, "sin")
    saved = F.ACTS["sin"]
    try:
        F.ACTS["sin"] = np.cos
        after = g(X, "sin")
        np.testing.assert_allclose(after, jax.grad(lambda x: J.np.sum(J.np.cos(x) * x))(X))
    finally:
        F.ACTS["sin"] = saved
    np.testing.assert_allclose(g(X, "sin"), before)


def test_unpacking_too_short_and_rows() -> None:
    """Python's ValueError for too few values; rows of a matrix unpack as rows."""
    with pytest.raises(ValueError, match="not enough values to unpack"):
        s2s.grad(F.star_middle)(X[:1])
    close(s2s.grad(F.star_rest)(X[:2]), jax.grad(J.star_rest)(X[:2]), np.float64)
    close(s2s.grad(F.star_rows)(M), jax.grad(J.star_rows)(M), np.float64)
    close(s2s.grad(F.star_rows)(M[:1]), jax.grad(J.star_rows)(M[:1]), np.float64)


def test_reduce_of_empty_sequence() -> None:
    """No initial value over an empty array: Python's TypeError when it runs; with
    one, the initial value (its gradient zero)."""
    with pytest.raises(TypeError, match="reduce"):
        s2s.grad(F.reduce_product)(np.zeros(0))
    assert s2s.grad(F.reduce_with_initial)(np.zeros(0)).shape == (0,)
    with pytest.raises(TransformError, match="initial value"):
        s2s.grad(F.reduce_empty_literal)(X)


def test_index_computed_from_values() -> None:
    """``fs[i]`` for an ``i`` the values decide (JAX cannot trace ``int`` of a value):
    each branch against central differences, under grad and ``s2s.jit`` on NumPy (vmap refuses ``int`` of a batched value)."""
    g = s2s.grad(F.index_from_values)
    for x in (X, -X, 2 * X, -3 * X):
        fd = np.array([(F.index_from_values(x + 1e-6 * e) - F.index_from_values(
            x - 1e-6 * e)) / 2e-6 for e in np.eye(x.size)])
        np.testing.assert_allclose(g(x), fd, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s.jit(g)(x), fd, rtol=1e-6, atol=1e-8)
