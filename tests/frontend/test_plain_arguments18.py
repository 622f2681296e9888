"""Issue 23: an object of a plain class of yours passed as an argument that is not
differentiated (``s2s.grad(loss)(w, Cfg())``, ``class Cfg`` setting ``self.scale`` in
``__init__``): its attributes (its class's data attributes too) are read at each call,
as a loose dataclass's or a ``SimpleNamespace``'s fields (api/trees.py
``plain_object``), so an attribute changed between calls gives the new number.  JAX
refuses such an argument unless it is static; its oracle here is ``jax.grad`` of the
function closing over the object.  A static one on ``s2s.jit(..., backend="jax")`` is
refused (jax.jit keys its code by the object and would not see a changed attribute)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from support import HAVE_JAX, central_grad

import s2s


class Cfg:
    offset = 0.5  # (a class attribute: read at each call too)

    def __init__(self, scale, steps=2):
        self.scale = scale
        self.steps = steps

    def shift(self, w):
        return w + self.offset


def loss(w, cfg):
    for _ in range(cfg.steps):
        w = np.tanh(w) * cfg.scale
    return cfg.scale * np.sum(cfg.shift(w) ** 2)


def loss_keyword_default(w, cfg=None):
    s = 1.0 if cfg is None else cfg.scale
    return np.sum(np.sin(w) * w) * s


W = np.array([0.3, -0.7, 0.45, 1.2])


def test_attributes_changed_between_calls_are_read() -> None:
    """Calls 1, 3 and 10 with ``cfg.scale`` changed at each call, ``cfg.steps`` at
    call 3 and the class attribute at call 5, the caller writing into each result."""
    c = Cfg(2.0)
    g = s2s.grad(loss)
    try:
        for call in range(1, 11):
            c.scale = 0.8 + 0.1 * call
            c.steps = 3 if call >= 3 else 2
            if call == 5:
                Cfg.offset = -0.25
            w = W * (1.0 + 0.07 * call)
            got = g(w, c)
            if call in (1, 3, 10):
                np.testing.assert_allclose(got, central_grad(lambda t: loss(t, c), w),
                                           rtol=1e-6, atol=1e-8, err_msg=f"call {call}")
            got[...] = np.nan  # (the caller writes into its result)
    finally:
        Cfg.offset = 0.5
    other = Cfg(0.7, 1)  # (another object of the class)
    np.testing.assert_allclose(g(W, other), central_grad(lambda t: loss(t, other), W),
                               rtol=1e-6, atol=1e-8)


def test_keyword_passing_and_value() -> None:
    c = Cfg(1.5)
    value, grad = s2s.value_and_grad(loss_keyword_default)(W, cfg=c)
    np.testing.assert_allclose(value, loss_keyword_default(W, cfg=c), rtol=1e-12)
    np.testing.assert_allclose(grad, central_grad(lambda t: loss_keyword_default(t, c), W),
                               rtol=1e-6, atol=1e-8)


def test_jit_reads_the_object_at_each_call_and_jax_static_is_refused() -> None:
    """NumPy backend, the object static or not: the attribute changed is seen.  JAX
    backend, static: refused (JAX would key its code by the object)."""
    c = Cfg(2.0)
    for static in ((), (1,)):
        j = s2s.jit(s2s.grad(loss), static_argnums=static)
        for scale in (1.1, 1.3, 0.9):
            c.scale = scale
            np.testing.assert_allclose(j(W, c), central_grad(lambda t: loss(t, c), W),
                                       rtol=1e-6, atol=1e-8, err_msg=f"{static} {scale}")
    if HAVE_JAX:
        with pytest.raises(s2s.TransformError, match="a `Cfg` object: JAX keys"):
            s2s.jit(s2s.grad(loss), backend="jax", static_argnums=1)(W, c)


def test_jax_backend_given_an_object_says_what_jax_says() -> None:
    """Not static, on the JAX backend: JAX's own TypeError, as jax.jit gives (before
    probe 18 a ``SimpleNamespace`` here ran into a RecursionError inside s2s)."""
    if not HAVE_JAX:
        pytest.skip("JAX backend")
    for cfg in (Cfg(2.0), types.SimpleNamespace(scale=2.0, steps=1, offset=0.5)):
        with pytest.raises(TypeError, match="non-array argument"):
            s2s.jit(s2s.grad(lambda w, c: c.scale * np.sum(w ** 2)), backend="jax")(W, cfg)


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_against_jax_closing_over_the_object(dtype) -> None:
    import jax
    import jax.numpy as jnp

    class JCfg:
        offset = 0.5

        def __init__(self, scale, steps=2):
            self.scale, self.steps = scale, steps

        def shift(self, w):
            return w + self.offset

    def jloss(w, cfg):
        for _ in range(cfg.steps):
            w = jnp.tanh(w) * cfg.scale
        return cfg.scale * jnp.sum(cfg.shift(w) ** 2)

    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)
    c, jc = Cfg(2.0), JCfg(2.0)
    g, vg = s2s.grad(loss), s2s.jit(s2s.grad(loss))
    for call in (1, 3, 10):
        c.scale = jc.scale = 0.8 + 0.1 * call
        c.steps = jc.steps = 3 if call >= 3 else 2
        w = (W * (1.0 + 0.07 * call)).astype(dtype)
        expected = jax.grad(lambda t: jloss(t, jc))(w)
        for got in (g(w, c), vg(w, c)):
            assert got.dtype == dtype
            np.testing.assert_allclose(got, expected, **tol)
    xs = np.stack([W, 0.5 * W]).astype(dtype)
    np.testing.assert_allclose(s2s.vmap(s2s.grad(loss), in_axes=(0, None))(xs, c),
                               jax.vmap(jax.grad(lambda t: jloss(t, jc)))(xs), **tol)


def loss_default(w, cfg=Cfg(1.5, 2)):
    for _ in range(cfg.steps):
        w = np.tanh(w) * cfg.scale
    return np.sum(cfg.shift(w) ** 2)


def test_vmap_leaves_a_default_object_unbatched() -> None:
    """``vmap(f)(xs)`` and ``vmap(grad(f))(xs)`` of ``def f(w, cfg=Cfg(...))``: the
    default is passed in its place, not batched (JAX leaves defaults out of
    ``in_axes``), its attributes read at each call: a default changed in place
    between calls is seen.  Before probe 18 vmap batched the default ("its rank
    should be at least 1") and vmap of grad refused `.steps`."""
    xs = np.stack([W, 0.8 * W, -W])
    v, vg = s2s.vmap(loss_default), s2s.vmap(s2s.grad(loss_default))
    default = loss_default.__defaults__[0]
    try:
        for scale in (1.5, 0.9, 1.2):
            default.scale = scale
            np.testing.assert_allclose(v(xs), [loss_default(x) for x in xs], rtol=1e-12)
            np.testing.assert_allclose(vg(xs), [central_grad(loss_default, x) for x in xs],
                                       rtol=1e-6, atol=1e-8, err_msg=f"scale {scale}")
    finally:
        default.scale = 1.5


def test_vmap_of_an_object_argument_at_in_axes_none() -> None:
    c = Cfg(1.3, 3)
    xs = np.stack([W, 0.5 * W])
    got = s2s.vmap(s2s.grad(loss), in_axes=(0, None))(xs, c)
    np.testing.assert_allclose(got, [central_grad(lambda t: loss(t, c), x) for x in xs],
                               rtol=1e-6, atol=1e-8)
    c.scale = 0.7
    np.testing.assert_allclose(s2s.vmap(loss, in_axes=(0, None))(xs, c),
                               [loss(x, c) for x in xs], rtol=1e-12)
