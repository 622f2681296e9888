"""``s2s.jit(s2s.vmap(f), backend="jax")`` of a loop that leaves by a ``break`` in an
``if`` on a per-example value, its body joining an ``if``'s paths.

vmap checks before such a join that the paths give one shape per example (``if
np.shape(a)[1:] != np.shape(b)[1:]: raise if_shapes_differ(...)``).  The JAX backend's
control-flow lowering took that check's ``raise`` for an exit of the loop and kept the
loop Python, so its ``if np.all(done): break`` read a traced value: every such
function raised TracedValueError at a line of emitted code (the slow
test_backend_jax_suite's loop_break/return_in_loop vmap cases).  Shapes are static
under ``jax.jit``: the check runs while JAX traces and the loop is lowered.  Oracle: the
function run as written, example by example."""

from __future__ import annotations

import numpy as np
import pytest
from corpus_fns import loop_break  # (the corpus's: a break in an if on a value)
from support import HAVE_JAX

import s2s

pytestmark = pytest.mark.skipif(not HAVE_JAX, reason="the JAX backend")


def loop_mismatch(x, n):
    total = 0.0
    for i in range(n):
        if np.sum(x) > 0:  # the if
            y = x[:2]
        else:
            y = x[:1] * 3.0
        total = total + np.sum(y**2)
    return total


def test_break_loop_lowers_and_matches_the_examples() -> None:
    jitted = s2s.jit(s2s.vmap(loop_break, in_axes=(0, None)), backend="jax",
                     static_argnums=1)
    rng = np.random.default_rng(1)
    for call in range(1, 4):  # (values changing: examples leave at other iterations)
        xs = rng.uniform(0.2, 1.0, size=(4, 3)) * call
        got = jitted(xs, 6)
        want = [loop_break(x, 6) for x in xs]
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-9)
    assert "stays Python" not in jitted.source


def test_the_shape_check_in_a_lowered_loop_still_refuses_at_your_if() -> None:
    """Paths giving (2,) and (1,) per example: the located error, raised while JAX
    traces the lowered loop (np.where would broadcast them, silently)."""
    jitted = s2s.jit(s2s.vmap(loop_mismatch, in_axes=(0, None)), backend="jax",
                     static_argnums=1)
    xs = np.array([[0.5, 1.0, 2.0], [-3.0, 0.5, 0.25]])
    with pytest.raises(s2s.TransformError) as info:
        jitted(xs, 3)
    text = str(info.value)
    assert "shape (2,)" in text and "shape (1,)" in text and "# the if" in text
    assert "<s2s:" not in text


def test_an_if_in_a_loop_is_located_at_its_own_line() -> None:
    """The loop body's rewrite (frontend/desugar.py's strip_continues) rebuilt every
    ``if`` and statement in it without its position, so errors there named the
    ``def`` line: here vmap's shape check on the NumPy backend."""
    xs = np.array([[0.5, 1.0, 2.0], [-3.0, 0.5, 0.25]])
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(loop_mismatch, in_axes=(0, None))(xs, 3)
    assert "if np.sum(x) > 0:  # the if" in str(info.value)
