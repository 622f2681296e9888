"""A Python list used as an index and grown afterwards: reverse mode would read the
grown list in the backward of the earlier read, so it refuses; indexing with the list
once it is complete is fine."""

import numpy as np
import pytest

import s2s


def grown_after_use(x):
    idx = [0]
    y = x[idx]
    idx.append(2)
    return np.sum(np.sin(y)) + np.sum(x[idx])


def grown_before_use(x):
    idx = [0]
    idx.append(2)
    return np.sum(np.sin(x[idx]))


def test_index_list_grown_after_use_is_refused_where_it_is_read() -> None:
    with pytest.raises(s2s.TransformError, match="the index list `idx` changes") as err:
        s2s.grad(grown_after_use)(np.array([0.3, 0.5, 0.7]))
    assert "y = x[idx]" in str(err.value)


def test_index_list_complete_before_use_matches_finite_differences() -> None:
    x = np.array([0.3, 0.5, 0.7])
    eps = 1e-6
    expected = [(grown_before_use(x + eps * e) - grown_before_use(x - eps * e)) / (2 * eps)
                for e in np.eye(3)]
    np.testing.assert_allclose(s2s.grad(grown_before_use)(x), expected, rtol=1e-6)


def test_forward_mode_reads_the_list_as_it_was() -> None:
    """Forward mode runs in order: the same function is fine under jvp."""
    x, t = np.array([0.3, 0.5, 0.7]), np.array([1.0, 2.0, -1.0])
    eps = 1e-6
    expected = (grown_after_use(x + eps * t) - grown_after_use(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(s2s.jvp(grown_after_use, (x,), (t,))[1], expected, rtol=1e-6)
