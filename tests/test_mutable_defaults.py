"""A mutable default changed in place between calls (``f.__defaults__[0]["a"] = 5.0``,
or through the object the ``def`` was given) is the one a later call reads, as Python
reads it: the emitted signature spelled the dict and the list as literal copies of
what they held when the code was generated, so every transform kept the old values
(a wrong gradient, silently; found by probe 7).  The oracle is the closed form of the
function at the values the default holds at that call."""

from __future__ import annotations

import mutable_defaults_fns as F
import numpy as np
import pytest

import s2s

X = np.array([0.3, -0.5, 1.1])


def _expected_grad(x, a, e):
    return a * np.cos(x) + 2.0 * e * x


@pytest.fixture
def defaults():
    cfg, extra = F.scaled.__defaults__
    saved = dict(cfg), list(extra)
    yield cfg, extra
    cfg.clear(), cfg.update(saved[0])
    extra[:] = saved[1]


def test_every_transform_reads_the_default_as_it_is_now(defaults) -> None:
    cfg, extra = defaults
    grad, jitted = s2s.grad(F.scaled), s2s.jit(F.scaled)
    hessian, outer = s2s.hessian(F.scaled), s2s.grad(F.calls_scaled)
    for call in range(10):
        cfg["a"], extra[0] = 1.0 + call, 0.5 - 0.1 * call
        x = X * (1 + 0.1 * call)
        want = _expected_grad(x, cfg["a"], extra[0])
        np.testing.assert_allclose(grad(x), want, rtol=1e-12)
        np.testing.assert_allclose(outer(x), 2.0 * want, rtol=1e-12)
        np.testing.assert_allclose(jitted(x), F.scaled(x), rtol=1e-12)
        if call in (0, 2, 9):
            value, tangent = s2s.jvp(F.scaled, (x,), (np.ones(3),))
            np.testing.assert_allclose(value, F.scaled(x), rtol=1e-12)
            np.testing.assert_allclose(tangent, np.sum(want), rtol=1e-12)
            batch = np.stack([x, 2 * x])
            np.testing.assert_allclose(s2s.vmap(grad)(batch), np.stack(
                [want, _expected_grad(2 * x, cfg["a"], extra[0])]), rtol=1e-12)
            np.testing.assert_allclose(hessian(x), np.diag(
                -cfg["a"] * np.sin(x) + 2.0 * extra[0]), rtol=1e-12, atol=1e-14)


def test_a_key_added_in_place_is_walked_at_the_next_call() -> None:
    """``for _, v in cfg.items()`` of a dict default: the loop is unrolled over its
    keys, so a key added in place makes the transform again (it kept the old keys:
    ``cos(x)`` where NumPy gives ``3 cos(x)``); ``s2s.jvp``, ``s2s.vjp`` and
    ``jacfwd`` too (jvp's own cache of plans kept the old keys: ``sum(sin(x))`` and
    ``cos(x)`` after a key was added)."""
    (cfg,) = F.walked.__defaults__
    grad, hessian = s2s.grad(F.walked), s2s.hessian(F.walked)
    try:
        for call in range(10):
            if call in (2, 5):
                cfg[f"k{call}"] = float(call)
            x = X * (1 + 0.1 * call)
            total = sum(cfg.values())
            np.testing.assert_allclose(grad(x), total * np.cos(x), rtol=1e-12)
            if call in (0, 2, 9):
                np.testing.assert_allclose(hessian(x), np.diag(-total * np.sin(x)),
                                           rtol=1e-12, atol=1e-14)
                batch = np.stack([x, 2 * x])
                np.testing.assert_allclose(s2s.vmap(grad)(batch), total * np.cos(batch),
                                           rtol=1e-12)
            v = np.linspace(-1.0, 1.0, x.size)
            out, tangent = s2s.jvp(F.walked, (x,), (v,))
            np.testing.assert_allclose(out, total * np.sum(np.sin(x)), rtol=1e-12)
            np.testing.assert_allclose(tangent, total * np.cos(x) @ v, rtol=1e-12)
            out, pullback = s2s.vjp(F.walked, x)
            np.testing.assert_allclose(pullback(np.float64(2.0))[0], 2 * total * np.cos(x),
                                       rtol=1e-12)
            np.testing.assert_allclose(s2s.jacfwd(F.walked)(x), total * np.cos(x),
                                       rtol=1e-12)
    finally:
        cfg.clear()
        cfg["a"] = 1.0
