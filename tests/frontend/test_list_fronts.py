"""Lists changed at their front or in their middle, and read by comprehensions (issue
23: JAX's trace runs each, s2s refused them): ``out.insert(0, g)`` and ``out = [g] +
out`` in a loop from ``out = []``, ``insert`` at other positions, ``del parts[0]``,
``del parts[i]`` (``i`` a constant), ``del parts[1:3]``, ``v = parts.pop(0)``, of a
literal list and of a list grown in a loop, and ``[o**2 for o in out]`` over a list a
loop filled (docs/python-subset.md, "Containers"; s2s/frontend/list_edits.py).

Every expected value comes from JAX on the same source (``jax_twin``), float64 and
float32, or from a Python loop over the batch (``vmap``); the loop counts (3, 0, 1,
...) and the values change between calls of one transformed function, the 1st, 3rd and
10th checked against every transform."""

from __future__ import annotations

import functools
from functools import partial

import list_front_fns as F  # (pytest puts this directory on sys.path)
import numpy as np
import pytest
from support import HAVE_JAX, assert_close_to, central_grad, jax_twin

import s2s
from s2s.errors import ListIndexError, TransformError

if HAVE_JAX:
    import jax
    import jax.numpy as jnp

    J = jax_twin(F)

needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")

X = np.array([0.3, -0.7, 1.2])
# the loop's count at calls 1 to 10 (0 and 1: an empty list and a list of one item)
COUNTS = (3, 0, 1, 4, 2, 5, 1, 3, 0, 6)
GROWN = ["insert_front", "plus_front", "insert_front_reads", "insert_middle",
         "del_grown_first", "del_grown_slice", "pop_grown_first", "del_then_grow",
         "squares_grown", "zip_star_grown", "pop_front_queue", "insert_then_append"]
FIXED = ["insert_front_unrolled", "insert_literal", "del_first", "del_static_i",
         "del_slice", "pop_first", "pop_value", "squares_unrolled"]

# front-first from `out = []`: at a count of 1 the splice's copy loop over `out` runs
# no iteration, so vmap's probe (the first example) never computed the values of the
# backward's copy loop; vmap(grad) and jacrev there are refused at the user's line
# (as a splice loop that runs zero times is: test_list_splices_in_loops.py)
NO_BATCHED_VJP_AT_ONE = {"insert_front", "plus_front", "insert_then_append"}

close = partial(assert_close_to, f64=1e-9, f32=5e-4)


def _point(call, dtype):
    return (X * (1 + call / 4) * (-1) ** call + 0.05 * call).astype(dtype)


@needs_jax
@pytest.mark.slow  # (about 8 s a case: JAX compiles per count)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", GROWN + FIXED)
def test_against_jax(name, dtype):
    """One transformed grad called ten times (counts and values changing): its value
    and gradient against JAX's each time; at the 1st, 3rd and 10th call jvp,
    value_and_grad, vmap (against a Python loop), jacrev, hessian and s2s.jit on both
    backends against JAX too."""
    ours, theirs = getattr(F, name), getattr(J, name)
    grown = name in GROWN
    grad = s2s.grad(ours)
    for call, n in enumerate(COUNTS, 1):
        x = _point(call, dtype)
        args = (x, n) if grown else (x,)
        p = functools.partial(ours, n=n) if grown else ours
        q = functools.partial(theirs, n=n) if grown else theirs
        close(grad(*args), jax.grad(q)(x), dtype)
        if call not in (1, 3, 10):
            continue
        close(p(x), q(x), dtype)
        v = np.cos(x + 0.3).astype(dtype)
        close(s2s.value_and_grad(p)(x), jax.value_and_grad(q)(x), dtype)
        close(s2s.jvp(p, (x,), (v,)), jax.jvp(q, (x,), (jnp.asarray(v),)), dtype)
        batch = np.stack([x, np.sin(x), -0.5 * x]).astype(dtype)
        close(s2s.vmap(p)(batch), np.stack([p(row) for row in batch]), dtype)
        if n == 1 and name in NO_BATCHED_VJP_AT_ONE:
            with pytest.raises(TransformError, match="the first example never") as err:
                s2s.jacrev(p)(x)
            assert err.value.loc.file == F.__file__, err.value
        else:
            close(s2s.vmap(s2s.grad(p))(batch), jax.vmap(jax.grad(q))(batch), dtype)
            close(s2s.jacrev(p)(x), jax.jacrev(q)(x), dtype)
        close(s2s.hessian(p)(x), jax.hessian(q)(x), dtype)
        close(s2s.jit(p, backend="numpy")(x), q(x), dtype)
        close(s2s.jit(s2s.grad(p), backend="jax")(x), jax.grad(q)(x), dtype)


def test_front_first_cheaply():
    """The default tier: ``out.insert(0, g)`` from ``out = []``, one transformed
    function, counts 3, 0, 1 in turn: the gradient
    against central differences (JAX: test_against_jax, under -m slow)."""
    for f in (F.insert_front,):  # (del_grown_first and the rest: test_against_jax)
        grad = s2s.grad(f)
        for call, n in enumerate((3, 0, 1), 1):
            x = _point(call, np.float64)
            np.testing.assert_allclose(
                grad(x, n), central_grad(functools.partial(f, n=n), x), rtol=1e-6,
                atol=1e-7)


def test_the_emitted_code_reads_as_python():
    """A literal's ``del parts[0]`` is a new literal of the kept items: nothing of the
    deleted item's derivative is computed; a grown list's is a copy over slices of
    ``range(len(parts))``."""
    text = s2s.grad(F.del_first).source
    assert "parts_2 = [" in text, text
    text = s2s.grad(F.del_grown_first).source
    assert "parts_kept.append(" in text and "[1:]" in text, text


@pytest.mark.parametrize("name, says, at", [
    ("del_shared", "the name `other` refers to it too", "del "),
    ("del_stored", "a container or a call refers to it too", "del "),
    ("del_at_argument", "at a position s2s knows only when the function runs", "del "),
    ("del_grown_step", "a:b:step", "del "),
    # a sliding window under reverse mode (vmap and jvp run it: test_sliding_window)
    ("sliding_window", "grown in the loop is not used afterwards", "del parts[0]"),
])
def test_refused_located(name, says, at):
    """What stays refused, at the user's line with what to write instead: a list
    another name or a container also holds (Python's in-place change would show
    there), a position the call passes, a slice with a step of a grown list."""
    fn = getattr(F, name)
    args = (X, 1) if name in ("del_at_argument", "del_grown_step", "sliding_window") \
        else (X,)
    with pytest.raises(TransformError, match=says) as err:
        s2s.grad(fn)(*args)
    assert err.value.loc.file == F.__file__ and at in err.value.loc.text
    assert "Instead:" in str(err.value) and "<s2s:" not in str(err.value)


def test_index_errors_are_pythons():
    """``parts.pop(2)`` of a literal of two items is Python's IndexError when s2s
    reads it; ``del parts[0]`` of a grown list that is empty on this call is Python's
    IndexError at the user's line when the code runs (a list of one item runs)."""
    with pytest.raises(ListIndexError, match="out of range") as err:
        s2s.grad(F.pop_out_of_range)(X)
    assert err.value.loc.file == F.__file__ and "pop(2)" in err.value.loc.text
    grad = s2s.grad(F.del_grown_out_of_range)
    np.testing.assert_allclose(grad(X, 1), np.ones(3))
    with pytest.raises(IndexError, match="list assignment index out of range") as err:
        grad(X, 0)
    assert f'File "{F.__file__}", line ' in str(err.value), err.value
    assert "del parts[0]" in str(err.value), err.value



@needs_jax
@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_zip_star_of_a_list_argument(dtype):
    """``xs, ys = zip(*pts)`` of a list argument of 3, 1 and 2 rows in turn (one
    transformed function): grad, value_and_grad, jvp, jacrev and s2s.jit against JAX;
    an empty list is Python's ValueError, naming the user's line."""
    grad = s2s.grad(F.zip_star_argument)
    for call, count in enumerate((3, 1, 2), 1):
        x = _point(call, dtype)
        pts = [(x * (k + 1), np.sin(x + k)) for k in range(count)]
        close(grad(pts), jax.grad(J.zip_star_argument)(pts), dtype)
        close(s2s.value_and_grad(F.zip_star_argument)(pts),
              jax.value_and_grad(J.zip_star_argument)(pts), dtype)
        tangents = [(np.cos(a), b) for a, b in pts]
        close(s2s.jvp(F.zip_star_argument, (pts,), (tangents,)),
              jax.jvp(J.zip_star_argument, (pts,), (tangents,)), dtype)
        close(s2s.jacrev(F.zip_star_argument)(pts), jax.jacrev(J.zip_star_argument)(pts),
              dtype)
        close(s2s.jit(F.zip_star_argument, backend="jax")(pts), J.zip_star_argument(pts),
              dtype)
    with pytest.raises(ValueError, match="not enough values to unpack") as err:
        grad([])
    assert f'File "{F.__file__}", line ' in str(err.value), err.value


def test_zip_star_of_an_empty_grown_list():
    """A list grown in a loop that runs no iteration: ``zip(*pts)`` gives no column,
    Python's ValueError, naming the user's line (one row: runs); rows of 3 items
    unpacked into 2 names: Python's ValueError too."""
    grad = s2s.grad(F.zip_star_empty)
    assert grad(X, 1).shape == X.shape
    with pytest.raises(ValueError, match="not enough values to unpack") as err:
        grad(X, 0)
    assert f'File "{F.__file__}", line ' in str(err.value) and "xs, ys = zip(*pts)" in str(
        err.value)
    with pytest.raises(ValueError, match="needs rows of 2 items") as err:  # (3 columns)
        s2s.grad(F.zip_wrong_width)(X, 1)
    assert f'File "{F.__file__}", line ' in str(err.value), err.value


@pytest.mark.slow
def test_sliding_window_forward_and_vmap():
    """``del parts[0]`` in the loop that appends to ``parts``: vmap against a Python
    loop over the batch, jvp's value and tangent against Python and central
    differences (counts 3, 0, 1)."""
    for n in (3, 0, 1):
        batch = np.stack([X, np.sin(X), -X])
        np.testing.assert_allclose(
            s2s.vmap(F.sliding_window, in_axes=(0, None))(batch, n),
            [F.sliding_window(row, n) for row in batch], rtol=1e-12)
        v = np.cos(X)
        value, tangent = s2s.jvp(functools.partial(F.sliding_window, n=n), (X,), (v,))
        np.testing.assert_allclose(value, F.sliding_window(X, n), rtol=1e-12)
        step = F.sliding_window(X + 1e-6 * v, n) - F.sliding_window(X - 1e-6 * v, n)
        np.testing.assert_allclose(tangent, step / 2e-6, rtol=1e-6, atol=1e-7)
