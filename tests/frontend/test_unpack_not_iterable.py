"""Unpacking a value with no items (issue 23): ``a, b = np.sum(x)`` raised
``object of type 'numpy.float64' has no len()`` from a line of emitted code (the
run-time width check's ``len``); JAX's jit raised "iteration over a 0-d array" at
JAX's frames.  Now Python's TypeError, ``cannot unpack non-iterable numpy.float64
object``, as :class:`s2s.errors.NotIterableError` at the user's line (file, line,
column, the line quoted), under grad, jvp, vmap, jacfwd, hessian, s2s.jit on both
backends (of a transform and of the plain function), at the 1st, 3rd and 10th calls
with changing values; the right widths still match JAX, float64 and float32.

Oracles: Python running the same source (the error, its message, the line); JAX on
the same source (jax_twin)."""

from __future__ import annotations

import functools
import traceback

import numpy as np
import pytest
import unpack_not_iterable_fns as F
from support import HAVE_JAX, assert_close_to

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

if HAVE_JAX:
    import jax
    from support import jax_twin

    J = jax_twin(F)

WRONG = ["of_a_sum", "of_an_item", "in_a_callee"]
TRANSFORMS = ["grad", "jvp", "vmap", "jacfwd", "hessian", "jit_numpy", "jit_jax",
              "plain_jit_numpy", "plain_jit_jax"]
close = functools.partial(assert_close_to, f64=1e-9, f32=3e-4)


def _x(k: int, dtype) -> np.ndarray:
    return (np.array([0.3, -0.5, 2.0, 0.1]) * (1 + 0.25 * k)).astype(dtype)


def _make(transform, f):
    if transform == "grad":
        return s2s.grad(f)
    if transform == "jvp":
        return lambda x: s2s.jvp(f, (x,), (np.ones_like(x),))
    if transform == "vmap":
        v = s2s.vmap(f)
        return lambda x: v(np.stack([x, -x]))
    if transform == "jacfwd":
        return s2s.jacfwd(f)
    if transform == "hessian":
        return s2s.hessian(f)
    if transform.startswith("plain_jit_"):
        return s2s.jit(f, backend=transform.removeprefix("plain_jit_"))
    return s2s.jit(s2s.grad(f), backend=transform.removeprefix("jit_"))


def _python_error(f, x) -> str:
    with pytest.raises(TypeError) as err:
        f(x)
    return str(err.value)


def _check(err, f, x, transform) -> None:
    """s2s's located NotIterableError, or Python's own error from the user's own line
    where the transform runs the user's function itself (a callee's forward value)."""
    assert isinstance(err, TypeError)
    if not isinstance(err, s2s.TransformError):
        assert str(err) == _python_error(f, x), err
        frame = traceback.extract_tb(err.__traceback__)[-1]
        assert frame.filename == F.__file__ and "# unpacks" in frame.line, frame
        return
    assert isinstance(err, s2s.errors.NotIterableError), err
    assert err.what == _python_error(f, x), (err.what, _python_error(f, x))
    assert err.loc.file == F.__file__ and "# unpacks" in err.loc.text, err
    assert err.loc.col == len(err.loc.text) - len(err.loc.text.lstrip()) + 1
    assert "# unpacks" in str(err) and "<s2s" not in str(err), err


def _each_call(transform, name, dtype, calls=(1, 3, 10)) -> None:
    f = getattr(F, name)
    t = _make(transform, f)
    for k in range(1, max(calls) + 1):
        x = _x(k, dtype)
        with pytest.raises(TypeError) as err:
            t(x)
        if k in calls:
            _check(err.value, f, x, transform)


def test_default_tier() -> None:
    """grad, vmap (its rank probe runs the check) and jit on JAX of the plain
    function, float64 and float32, the 1st and 3rd calls."""
    _each_call("grad", "of_a_sum", np.float64, calls=(1, 3))
    _each_call("vmap", "of_an_item", np.float32, calls=(1, 3))
    _each_call("grad", "in_a_callee", np.float32, calls=(1, 3))
    _each_call("plain_jit_jax", "of_a_sum", np.float64, calls=(1,))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", WRONG)
def test_every_transform(name, transform, dtype) -> None:
    _each_call(transform, name, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["of_a_slice", "of_a_grown_list"])
def test_right_widths_still_match_jax(name, dtype) -> None:
    """The new check does not touch values that have items: grad and vmap against
    JAX on the same source, the 1st, 3rd and 10th calls."""
    g, v = s2s.grad(getattr(F, name)), s2s.vmap(getattr(F, name))
    for k in range(1, 11):
        x = _x(k, dtype)
        if k in (1, 3, 10):
            close(g(x), jax.grad(getattr(J, name))(x), dtype)
            xs = np.stack([x, -x])
            close(v(xs), jax.vmap(getattr(J, name))(xs), dtype)


def test_the_check_reads_like_hand_written_code() -> None:
    g = s2s.grad(F.of_a_sum)
    with pytest.raises(TypeError):
        g(_x(1, np.float64))
    text = s2s.source(g)
    assert "if not_iterable(" in text and "raise not_iterable_error(" in text, text
