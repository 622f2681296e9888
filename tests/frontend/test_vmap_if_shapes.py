"""vmap of an ``if`` on a per-example value whose paths give a value of one rank and
different shapes (``x[:2]`` on one path, ``x[:1]`` or ``np.cos(x)`` on the other;
issue 23): one array cannot hold both, and JAX refuses (its select needs one shape).
Before, s2s either broadcast (1,) against (2,) in ``np.where``, silently returning
wrong numbers, or raised NumPy's broadcasting error from a line of emitted code.
Now the vmapped code checks the paths' shapes per example before the join and raises
a located error at the user's ``if`` (file, line, column, quoted line, what to write),
under ``s2s.vmap`` and ``s2s.jit(s2s.vmap(...))`` on both backends, at every call
(the 1st, 3rd and 10th, values changing).  The paths agreeing still match JAX,
float64 and float32."""

from __future__ import annotations

import numpy as np
import pytest
import vmap_if_shapes_fns as F
from support import HAVE_JAX, assert_close_to

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax


MAKERS = {
    "vmap": lambda f: s2s.vmap(f),
    "jit_numpy": lambda f: s2s.jit(s2s.vmap(f), backend="numpy"),
    "jit_jax": lambda f: s2s.jit(s2s.vmap(f), backend="jax"),
}


def _xs(call: int, dtype) -> np.ndarray:
    r = np.random.default_rng(call)
    xs = np.abs(r.normal(size=(3, 3))) + 0.1
    xs[1] *= -1  # (example 1 takes the other path)
    return xs.astype(dtype)


def _refused(name: str, how: str, dtype, calls=(0, 2, 9)) -> None:
    f = getattr(F, name)
    t = MAKERS[how](f)
    for call in range(max(calls) + 1):
        xs = _xs(call, dtype)
        with pytest.raises(s2s.TransformError) as err:
            t(xs)
        if call in calls:
            e = err.value
            assert e.loc.file == F.__file__ and "# the if" in e.loc.text, e
            assert "`y`" in e.what and "shape (2,)" in e.what, e.what
            assert "np.where" in e.hint and "<s2s" not in str(e), e
            assert not isinstance(e.__cause__, ValueError), e.__cause__


def test_default_tier() -> None:
    _refused("broadcastable", "vmap", np.float64, calls=(0, 2))
    _refused("not_broadcastable", "jit_jax", np.float32, calls=(0,))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("how", list(MAKERS))
@pytest.mark.parametrize("name", ["broadcastable", "not_broadcastable"])
def test_refused_at_the_if(name, how, dtype) -> None:
    _refused(name, how, dtype)


def test_paths_of_one_shape_match_a_python_loop() -> None:
    _paths_of_one_shape(np.float64)


@pytest.mark.slow
def test_paths_of_one_shape_match_a_python_loop_float32() -> None:
    _paths_of_one_shape(np.float32)


def _paths_of_one_shape(dtype) -> None:
    """The check passes where the shapes agree: vmap against the function per example
    (JAX's vmap refuses a Python `if` on a traced value), vmap of grad against JAX's
    gradient of the path each example takes (the branch's own jnp code), the 1st, 3rd
    and 10th calls."""
    v, vg = s2s.vmap(F.same_shapes), s2s.vmap(s2s.grad(F.same_shapes))
    paths = (lambda x: jax.numpy.sum(jax.numpy.sin(x[:2]) * x[:2]),
             lambda x: jax.numpy.sum(jax.numpy.sin(x[1:] * 3.0) * (x[1:] * 3.0)))
    for call in range(10):
        xs = _xs(call, dtype)
        got, grads = v(xs), vg(xs)
        if call in (0, 2, 9):
            want = np.stack([F.same_shapes(x) for x in xs])
            assert_close_to(got, want, dtype, f32=3e-4)
            want = np.stack([jax.grad(paths[0 if x.sum() > 0 else 1])(x) for x in xs])
            assert_close_to(grads, want, dtype, f32=3e-4)
