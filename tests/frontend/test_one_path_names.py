"""A name an ``if`` binds on one path, read again by a later ``if`` on the same test
(``if t: a = ...; z = a`` ... ``if t: b = z * a``).  The later ``if`` binds it to
None on its other path; that placeholder once stayed in where an earlier read of the
same name sat before the ``if`` (``z = a`` above), and reverse mode then dropped that
read's cotangent: a silently wrong ``vjp``, ``jacrev`` and ``jacrev(grad)``.

Expected values: JAX on the same source with the test's truth passed in (the path
the input takes), float64 and float32, both signs of the input."""

from __future__ import annotations

import functools

import numpy as np
import one_path_fns as F  # (pytest puts this directory on sys.path)
import pytest
from support import HAVE_JAX, jax_twin

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax

    J = jax_twin(F)

NAMES = ["alias_then_reads", "negated_then_plain", "three_ifs"]
POINTS = {"positive": np.array([0.3, -0.7, 1.2]), "negative": np.array([-0.3, 0.2, -1.1])}


def close(got, expected, dtype):
    tol = dict(rtol=1e-9, atol=1e-11) if dtype == np.float64 else dict(rtol=3e-4, atol=3e-5)
    for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(e, np.float64), **tol)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("name", NAMES)
def test_every_transform_against_the_path_taken(name, point, dtype) -> None:
    x = POINTS[point].astype(dtype)
    ours = getattr(F, name)
    theirs = functools.partial(getattr(J, name + "_on"), t=bool(np.sum(x) > 0))
    v = np.array([1.0, -2.0, 0.5], dtype)
    close(s2s.grad(ours)(x), jax.grad(theirs)(x), dtype)
    out, pullback = s2s.vjp(s2s.grad(ours), x)
    _, their_pullback = jax.vjp(jax.grad(theirs), x)
    close(pullback(v), their_pullback(v), dtype)
    close(s2s.jacrev(s2s.grad(ours))(x), jax.jacrev(jax.grad(theirs))(x), dtype)
    close(s2s.hessian(ours)(x), jax.hessian(theirs)(x), dtype)
    close(s2s.jvp(s2s.grad(ours), (x,), (v,)), jax.jvp(jax.grad(theirs), (x,), (v,)), dtype)
