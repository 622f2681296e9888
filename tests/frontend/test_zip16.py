"""``zip`` of a sequence whose length is known per call with a tuple literal of another
length, and an ``if``'s refusal naming emitted code (zip16; functions in zip16_fns.py).

1. ``for (w, b), s in zip(layers, (1.0, 0.5, 2.0))``, ``layers`` a parameter left at a
   tuple default of 2 items: the literal's length alone was the loop's count, and the
   emitted code read ``layers[2]`` (IndexError from emitted code, under grad, jvp and
   hessian).  The count is now the shortest of all: the default's length is read per
   call (``len(layers[:3])``, ir/unroll_lengths.py ``cut_default``), so a default
   replaced between calls by a longer or shorter tuple takes its own count.
2. ``if x.shape[0] == 1: x = np.concatenate([x, 2.0 * x])`` under hessian and vmap of
   grad: the refusal named ``x_x_times_2``, a name of the emitted code; it says "a list
   or tuple this `if` builds" now, and names ``parts`` where the user bound one.

Oracles: the NumPy function itself (a Python loop) for values, central differences for
derivatives.  The default tier runs one grad (~0.5 s of CPU); the rest is slow."""

from __future__ import annotations

import numpy as np
import pytest
import zip16_fns as F

import s2s

LAYERS = {1: F.L1, 2: F.L2, 3: F.L3, 4: F.L4}
FNS = [F.longer, F.shorter, F.equal, F.indexed]


def _fd_grad(f, x, eps=1e-6):
    return np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(x.size)])


def _fd_hessian(f, x, eps=1e-4):
    return np.array([(_fd_grad(f, x + eps * e, 1e-5) - _fd_grad(f, x - eps * e, 1e-5))
                     / (2 * eps) for e in np.eye(x.size)])


@pytest.fixture
def restore():
    saved = {f: f.__defaults__ for f in FNS}
    yield
    for f, d in saved.items():
        f.__defaults__ = d


def test_literal_longer_than_the_default():
    x = np.array([0.3, -0.8])
    np.testing.assert_allclose(s2s.grad(F.longer)(x), _fd_grad(F.longer, x), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.slow
def test_literal_longer_than_a_default_changed_between_calls(restore):
    """Calls 1, 2, 3, 10 with the default 2, 1, 3 and 4 layers long (the literal: 3)."""
    f, g = F.longer, s2s.grad(F.longer)
    for call, n in ((1, 2), (2, 1), (3, 3), (10, 4)):
        f.__defaults__ = (LAYERS[n],)
        x = np.array([0.3, -0.8]) + 0.01 * call
        np.testing.assert_allclose(g(x), _fd_grad(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.slow
@pytest.mark.parametrize("f", FNS, ids=lambda f: f.__name__)
def test_grad_jvp_hessian_vmap_per_default(f, restore):
    for call, n in ((1, 1), (2, 2), (3, 3), (10, 4), (11, 2)):
        f.__defaults__ = (LAYERS[n],)
        x = np.array([0.3, -0.8]) + 0.02 * call
        v = np.array([0.7, -0.4])
        np.testing.assert_allclose(s2s.grad(f)(x), _fd_grad(f, x), rtol=1e-6, atol=1e-8)
        out, tangent = s2s.jvp(f, (x,), (v,))
        np.testing.assert_allclose(out, f(x), rtol=1e-12)
        np.testing.assert_allclose(tangent, _fd_grad(f, x) @ v, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(s2s.hessian(f)(x), _fd_hessian(f, x), rtol=1e-4,
                                   atol=1e-6)
        xs = np.stack([x, -x, 2 * x])
        np.testing.assert_allclose(s2s.vmap(s2s.grad(f))(xs),
                                   np.stack([_fd_grad(f, r) for r in xs]), rtol=1e-6,
                                   atol=1e-8)


@pytest.mark.slow
def test_float32(restore):
    f = F.longer
    for n in (1, 2, 4):
        f.__defaults__ = (LAYERS[n],)
        x = np.array([0.3, -0.8], np.float32)
        g = s2s.grad(f)(x)
        np.testing.assert_allclose(g, _fd_grad(f, x.astype(np.float64)), rtol=2e-4,
                                   atol=1e-5)


@pytest.mark.slow
def test_if_built_list_refusal_names_no_emitted_code():
    """2. ``x = np.concatenate([x, 2.0 * x])`` under an ``if``: hessian's refusal named
    ``x_x_times_2``, a name of s2s's emitted code; it names what the user wrote."""
    with pytest.raises(s2s.TransformError) as info:
        s2s.hessian(F.doubled)(np.array([0.3]))
    text = str(info.value)
    assert "x_x_times_2" not in text and "times" not in text, text
    assert "a list or tuple this `if` builds" in text and "zip16_fns.py" in text, text
    assert "build the list before the `if`" in text, text


@pytest.mark.slow
def test_if_built_list_refusal_under_vmap_of_grad_and_named_list():
    with pytest.raises(s2s.TransformError) as info:
        s2s.vmap(s2s.grad(F.doubled))(np.array([[0.3], [0.5]]))
    assert "x_x_times_2" not in str(info.value) and "builds" in str(info.value)
    with pytest.raises(s2s.TransformError) as info:
        s2s.hessian(F.doubled_named)(np.array([0.3]))
    assert "`parts` holds a container" in str(info.value), str(info.value)
    x = np.array([0.3, 0.7])  # (the other path: runs, against the closed form)
    np.testing.assert_allclose(s2s.grad(F.doubled)(x), np.sin(2 * x), rtol=1e-12)
