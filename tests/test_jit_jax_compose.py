"""``s2s.jit(..., backend="jax")`` of programs that once failed on it: a gradient over
a Python loop slicing with integers computed in the loop (``z[2 * H:3 * H]``: those
integers stay Python values, computed again by the backward instead of taped, so a
``lax.scan`` never turns them into traced arrays), and a transform of a transform
(``s2s.jvp(s2s.grad(f), ...)``: a Hessian-vector product) traced by JAX.

Every expected value is JAX's own transform of the same source (``np`` bound to
``jax.numpy``), in float64 and float32; the NumPy backend must agree too."""

from __future__ import annotations

import types

import numpy as np
import pytest
from support import leaves

import s2s

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

H = 4
STEPS = 5


def on_jax(f):
    """``f``'s own code with ``np`` bound to ``jax.numpy``: JAX's twin of it."""
    return types.FunctionType(f.__code__, {**f.__globals__, "np": jnp}, f.__name__)


def lstm(params, xs):
    h = np.zeros(H)
    c = np.zeros(H)
    for t in range(STEPS):
        z = xs[t] @ params["wx"] + h @ params["wh"] + params["b"]
        i = 1.0 / (1.0 + np.exp(-z[:H]))
        f = 1.0 / (1.0 + np.exp(-z[H:2 * H]))
        o = 1.0 / (1.0 + np.exp(-z[2 * H:3 * H]))
        g = np.tanh(z[3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
    return np.sum(h**2)


def nested_slices(x):
    """Inner loop: ``lo`` is the same in every inner iteration but changes with the
    outer one (recomputed in the inner backward from the outer's value)."""
    total = 0.0
    for j in range(3):
        for k in range(2):
            lo = 2 * j
            width = len(x) // 3
            total = total + np.sum(np.sin(x[lo:lo + width]) * (k + 1.5))
        total = total * 0.9
    return total


def halves(w, x):
    y = x
    for _ in range(3):
        n = y.shape[0] // 2
        y = np.tanh(y[:n] * w[0] + y[n:] * w[1])
        y = np.concatenate([y, y[::-1]])
    return np.sum(y**2)


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def cubic(x, a):
    return np.sum(a * x**3) + np.sum(x[:2] * x[1:3])


def hvp(x, v):
    return s2s.jvp(s2s.grad(tanh_sq), (x,), (v,))[1]


def hvp_args(x, a, v):
    return s2s.jvp(lambda y: s2s.grad(cubic)(y, a), (x,), (v,))


def value_and_hvp(x, v):
    return s2s.jvp(s2s.value_and_grad(tanh_sq), (x,), (v,))


def lstm_args(rng, dtype):
    params = {"wx": rng.normal(size=(3, 4 * H)) * 0.4,
              "wh": rng.normal(size=(H, 4 * H)) * 0.4, "b": rng.normal(size=4 * H) * 0.1}
    params = {k: v.astype(dtype) for k, v in params.items()}
    return params, rng.normal(size=(STEPS, 3)).astype(dtype)


def tol(dtype):
    return dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)


def close(got, want, dtype):
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert np.asarray(a).dtype == np.asarray(b).dtype, (np.asarray(a).dtype, b.dtype)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), **tol(dtype))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lstm_gradient_over_a_python_loop_on_jax(dtype):
    g = s2s.jit(s2s.grad(lstm), backend="jax")
    plain = s2s.grad(lstm)
    want_fn = jax.jit(jax.grad(on_jax(lstm)))
    rng = np.random.default_rng(0)
    for call in range(10):  # values change between calls; the 1st, 3rd, 10th checked
        args = lstm_args(rng, dtype)
        if call in (0, 2, 9):
            want = want_fn(*args)
            close(g(*args), want, dtype)
            close(plain(*args), want, dtype)


def test_lstm_tape_holds_no_loop_invariant_values():
    text = s2s.grad(lstm).source
    pushed = text.split("tape.append(")[1].split(")\n")[0]
    pushed = {n.strip(" \n()") for n in pushed.split(",")}
    assert "xs_t" in pushed and "z" in pushed
    for name in ("v2_times_4", "v3_times_4", "wx", "wh", "b"):
        assert name not in pushed, (name, pushed)
    assert "= 2 * H" in text.split("tape.pop()")[1]  # computed again by the backward


F32_SLOW = [np.float64, pytest.param(np.float32, marks=pytest.mark.slow)]


@pytest.mark.parametrize("dtype", F32_SLOW)
@pytest.mark.parametrize("fn,make", [
    (nested_slices, lambda r, d: (r.normal(size=9).astype(d),)),
    (halves, lambda r, d: (r.normal(size=2).astype(d), r.normal(size=8).astype(d))),
])
def test_integers_computed_in_loops(fn, make, dtype):
    rng = np.random.default_rng(1)
    args = make(rng, dtype)
    want = jax.grad(on_jax(fn))(*args)
    close(s2s.grad(fn)(*args), want, dtype)
    close(s2s.jit(s2s.grad(fn), backend="jax")(*args), want, dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_hessian_vector_product_jitted_on_jax(dtype):
    h = s2s.jit(hvp, backend="jax")
    want_fn = jax.jit(lambda x, v: jax.jvp(jax.grad(on_jax(tanh_sq)), (x,), (v,))[1])
    rng = np.random.default_rng(2)
    for call in range(10):
        x, v = (rng.normal(size=7).astype(dtype) for _ in range(2))
        if call in (0, 2, 9):
            want = want_fn(x, v)
            close(h(x, v), want, dtype)
            close(hvp(x, v), want, dtype)  # the NumPy code, unjitted
    x, v = (rng.normal(size=(2, 3)).astype(dtype) for _ in range(2))  # a new shape
    close(h(x, v), want_fn(x, v), dtype)


@pytest.mark.parametrize("dtype", F32_SLOW)
def test_hvp_of_a_closure_and_of_value_and_grad_on_jax(dtype):
    rng = np.random.default_rng(3)
    x, a, v = (rng.normal(size=4).astype(dtype) for _ in range(3))
    twin = on_jax(cubic)
    want = jax.jvp(lambda y: jax.grad(twin)(y, a), (x,), (v,))
    close(s2s.jit(hvp_args, backend="jax")(x, a, v), want, dtype)
    want = jax.jvp(jax.value_and_grad(on_jax(tanh_sq)), (x,), (v,))
    close(s2s.jit(value_and_hvp, backend="jax")(x, v), want, dtype)


def test_hvp_with_nan_and_inf_on_jax():
    x = np.array([0.5, np.nan, np.inf, -1.0])
    v = np.ones(4)
    got = np.asarray(s2s.jit(hvp, backend="jax")(x, v))
    want = np.asarray(jax.jvp(jax.grad(on_jax(tanh_sq)), (x,), (v,))[1])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-12)


def vector_out(x):
    return np.sin(x) * x[0] + x**3


def hessian_inside(x):
    return np.sum(s2s.hessian(vector_out)(x) * 2.0)


@pytest.mark.parametrize("dtype", F32_SLOW)
def test_hessian_of_a_vector_output_on_jax(dtype):
    """The Hessian of each output element (jacfwd(jacrev(f)), as jax.hessian lays it
    out), jitted on JAX and inside a jitted function: the JAX backend ran jacfwd(grad)
    and raised "Gradient only defined for scalar-output functions"."""
    twin = on_jax(vector_out)
    for k in range(3):
        x = (np.array([0.3, -0.7, 1.2]) * (k + 1)).astype(dtype)
        want = jax.hessian(twin)(x)
        close(s2s.jit(s2s.hessian(vector_out), backend="jax")(x), want, dtype)
        close(s2s.hessian(vector_out)(x), want, dtype)
        close(s2s.jit(hessian_inside, backend="jax")(x), 2.0 * jnp.sum(want), dtype)
