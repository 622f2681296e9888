"""vmap's per-example ranks of a value bound on several paths (an ``if``'s branches,
``sum`` of a list that is empty on one path), where the first example took none of
them: each path's rank is inferred and the largest taken (a zero on one path broadcasts
against the other's array), not the last path's alone.  A loop the first example ran no
iteration of, carrying ``total = total + sum(parts)`` from ``0.0``, then changes rank,
and is refused, located; on main it ran, giving every example a matrix where Python's
loop gives a number (silently wrong).  Oracle: the function run example by example."""

from __future__ import annotations

import numpy as np
import pytest

import s2s


def carried_sum_of_grown(x, n):
    parts = []
    total = 0.0
    for i in range(n):
        parts.append(x * i)
        total = total + sum(parts)
    return np.sum(total)


def started_with_its_shape(x, n):
    parts = []
    total = np.zeros_like(x)
    for i in range(n):
        parts.append(x * i)
        total = total + sum(parts)
    return np.sum(total)


XS = np.array([[0.3, 0.5], [1.0, 2.0], [-0.4, 0.1]])


@pytest.mark.parametrize("first", [0, 1, 3])
def test_a_carried_value_changing_rank_is_refused_located(first) -> None:
    v = s2s.vmap(carried_sum_of_grown, in_axes=(0, None))
    for n in (first, 3):
        if n == 0:  # no iteration: `total` keeps its rank, the loop's value is Python's
            np.testing.assert_allclose(v(XS, n), [carried_sum_of_grown(x, n) for x in XS])
            continue
        with pytest.raises(s2s.TransformError) as info:
            v(XS, n)
        text = str(info.value)
        assert "test_vmap_branch_ranks.py" in text and "<s2s" not in text, text
        assert "total" in text, text


@pytest.mark.parametrize("order", [(1, 3, 0, 10), (3, 0, 10, 1)])
def test_started_with_its_shape_matches_the_loop(order) -> None:
    v = s2s.vmap(started_with_its_shape, in_axes=(0, None))
    g = s2s.vmap(s2s.grad(started_with_its_shape), in_axes=(0, None))
    for n in order:  # (a loop of 0 iterations at the first call, or a later one)
        np.testing.assert_allclose(v(XS, n), [started_with_its_shape(x, n) for x in XS])
        # d/dx of sum over i<n of sum_{j<=i} x*j: (sum_i i*(i+1)/2) per element
        want = sum(i * (i + 1) / 2 for i in range(n))
        np.testing.assert_allclose(g(XS, n), np.full_like(XS, want))


def test_a_first_call_running_no_iteration_then_later_ones() -> None:
    """The first example's loop ran no iteration: the rank of the sum its backward
    carries is that of the cotangent list's items, rows of the stacked cotangent
    (refused, located, until splices in loop bodies taught the probe a ``list(...)``'s
    items); the later calls (loops that run) give the loop's values."""
    v = s2s.vmap(started_with_its_shape, in_axes=(0, None))
    np.testing.assert_allclose(v(XS, 0), [0.0] * 3)  # (the forward: ranks inferred)
    g = s2s.vmap(s2s.grad(started_with_its_shape), in_axes=(0, None))
    np.testing.assert_allclose(g(XS, 0), np.zeros_like(XS))
    for n in (3, 0, 2):
        np.testing.assert_allclose(v(XS, n), [started_with_its_shape(x, n) for x in XS])
        np.testing.assert_allclose(g(XS, n), np.full_like(
            XS, sum(i * (i + 1) / 2 for i in range(n))))
