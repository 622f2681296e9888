"""scipy.integrate.odeint and solve_ivp inside transformed functions: reverse mode by
the adjoint ODE, forward mode by the sensitivity equations, vmap per example, the
JAX backend on jax.experimental.ode.odeint.

Oracles: JAX's odeint on the same dynamics written with jnp (its own adjoint), and
central finite differences of SciPy's solution at tight tolerances."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import s2s

pytest.importorskip("scipy.integrate")
import ode_fns as F  # noqa: E402
from support import HAVE_JAX  # noqa: E402

if HAVE_JAX:
    import jax
    import jax.numpy as jnp
    from jax.experimental.ode import odeint as jodeint

GOLDEN = Path(__file__).parent / "golden" / "odeint.grad.py"
Y0 = np.array([1.0, 2.0])
T = np.linspace(0.0, 1.0, 4)
K = 0.5


def fd(f, args, i, eps=1e-6):
    """Central differences of ``f`` in argument ``i``, element by element."""
    x = np.asarray(args[i], dtype=np.float64)
    out = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        step = np.zeros(x.shape)
        step[idx] = eps
        hi = list(args)
        lo = list(args)
        hi[i], lo[i] = x + step, x - step
        out[idx] = (f(*hi) - f(*lo)) / (2 * eps)
    return out


def jax_solution(y0, t, k):
    return jodeint(lambda y, t, k: -k * y + jnp.sin(t), y0, t, k, rtol=1e-10, atol=1e-10)


def jax_loss(y0, t, k):
    return jnp.sum(jax_solution(y0, t, k) ** 2)


needs_jax = pytest.mark.skipif(not HAVE_JAX, reason="JAX is the oracle")


@pytest.fixture(scope="module")
def jax_jacobian():
    """JAX's Jacobian of the solution map in (y0, t, k), by its own adjoint method (one
    compilation serves the grad, vjp and jvp checks: each is this Jacobian
    contracted)."""
    ys = np.asarray(jax_solution(Y0, T, K))
    jacs = jax.jacrev(jax_solution, argnums=(0, 1, 2))(Y0, T, K)
    return ys, [np.asarray(j) for j in jacs]


def _pulled(jacs, ct):
    return [np.tensordot(ct, j, axes=2) for j in jacs]


@pytest.mark.slow
@needs_jax
def test_grad_matches_jax_in_y0_every_time_and_args(jax_jacobian):
    ys, jacs = jax_jacobian
    got = s2s.grad(F.loss, argnums=(0, 1, 2))(Y0, T, K)
    for g, w in zip(got, _pulled(jacs, 2 * ys)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@needs_jax
def test_value_and_grad_and_vjp_match_jax(jax_jacobian):
    ys, jacs = jax_jacobian
    value, grads = s2s.value_and_grad(F.loss, argnums=(0, 2))(Y0, T, K)
    np.testing.assert_allclose(value, np.sum(ys**2), rtol=1e-8)
    np.testing.assert_allclose(grads[0], _pulled(jacs, 2 * ys)[0], rtol=1e-6)
    out, pullback = s2s.vjp(F.solution, Y0, T, K)
    np.testing.assert_allclose(out, ys, rtol=1e-7, atol=1e-9)
    ct = np.arange(8.0).reshape(4, 2)
    for g, w in zip(pullback(ct), _pulled(jacs, ct)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


@needs_jax
def test_jvp_is_the_forward_sensitivity_and_matches_jax(jax_jacobian):
    # (JAX's odeint has reverse mode only: the tangent is its Jacobian times the tangents)
    _, jacs = jax_jacobian
    tangents = (np.array([1.0, -0.5]), np.array([0.1, 0.2, 0.3, 0.4]), 0.7)
    out, tan = s2s.jvp(F.solution, (Y0, T, K), tangents)
    want = sum(np.tensordot(j, np.asarray(v), axes=np.ndim(v)) for j, v in zip(jacs, tangents))
    np.testing.assert_allclose(out, F.solution(Y0, T, K))
    np.testing.assert_allclose(tan, want, rtol=1e-6, atol=1e-8)


def test_args_as_a_tuple_of_arrays_against_finite_differences():
    a = np.array([[-1.0, 0.3], [0.2, -0.5]])
    b = np.array([0.1, -0.2])
    got = s2s.grad(F.loss_matrix, argnums=(0, 1, 2))(Y0, a, b)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd(F.loss_matrix, (Y0, a, b), i), rtol=1e-6,
                                   atol=1e-7)


def test_closure_and_module_state_read_at_each_call():
    g = s2s.grad(F.loss_closure, argnums=(0, 1))
    try:
        for call, scale in enumerate([1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.5]):
            F.STATE["scale"] = scale
            if call + 1 in (1, 3, 10):
                w = 0.3 + call
                got = g(Y0, w)
                for i in range(2):
                    np.testing.assert_allclose(got[i], fd(F.loss_closure, (Y0, w), i),
                                               rtol=2e-5, atol=1e-6)
            else:
                g(Y0, 0.3)
    finally:
        F.STATE["scale"] = 1.0


def test_lambda_a_list_returning_rhs_tfirst_and_a_first_step():
    # (h0 is signed for the forward direction: the backward solve leaves it out; passed
    # on, LSODA stopped at once and the cotangents came back wrong, silently)
    for f in (F.loss_lambda, F.loss_list_rhs, F.loss_tfirst, F.loss_h0):
        got = s2s.grad(f, argnums=(0, 1))(Y0, K)
        for i in range(2):
            np.testing.assert_allclose(got[i], fd(f, (Y0, K), i), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("fn,y0", [(F.looped, Y0), (F.branched, Y0), (F.branched, -Y0),
                                   (F.scalar_y0, 0.7)], ids=["loop", "if", "if-other", "scalar"])
def test_in_loops_branches_and_through_helpers(fn, y0):
    """A solve in a loop (taped), in an `if`, a scalar y0 (SciPy's (T, 1) result), the
    dynamics calling a helper: grad and jvp against finite differences."""
    k = 0.5 if fn is not F.branched or y0[0] > 0 else -0.5
    got = s2s.grad(fn, argnums=(0, 1))(y0, k)
    want = [fd(fn, (y0, k), i) for i in range(2)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=1e-6)
    _, tan = s2s.jvp(fn, (y0, k), (np.ones_like(y0), 1.0))
    np.testing.assert_allclose(tan, np.sum(want[0]) + want[1], rtol=2e-5, atol=1e-6)


def test_y0_written_as_a_list_is_an_array_and_a_container_in_args_is_refused():
    got = s2s.grad(F.list_y0, argnums=(0, 1))(0.5, 0.3)
    for i in range(2):
        np.testing.assert_allclose(got[i], fd(F.list_y0, (0.5, 0.3), i), rtol=2e-5)
    with pytest.raises(s2s.TransformError, match="container") as info:
        s2s.grad(F.tuple_in_args, argnums=1)(0.5, 0.3)
    assert "ode_fns.py" in str(info.value)


def test_one_time_point_and_size_one_state():
    t1 = np.array([0.5])
    got = s2s.grad(F.loss, argnums=(0, 1, 2))(Y0, t1, K)
    np.testing.assert_allclose(got[0], 2 * Y0)  # ys is y0 itself
    np.testing.assert_allclose(got[1], [0.0])
    np.testing.assert_allclose(got[2], 0.0)
    y1 = np.array([0.7])
    got = s2s.grad(F.loss, argnums=(0, 1, 2))(y1, T, K)
    for i in range(3):
        np.testing.assert_allclose(got[i], fd(F.loss, (y1, T, K), i), rtol=2e-5, atol=1e-6)


def test_decreasing_times_and_nan_state():
    """SciPy integrates backward in time when t decreases: the adjoint then runs
    forward; a NaN in one decoupled component leaves the other's gradient finite."""
    t = np.array([1.0, 0.6, 0.2])
    got = s2s.grad(F.loss, argnums=(0, 1, 2))(Y0, t, K)
    for i in range(3):
        np.testing.assert_allclose(got[i], fd(F.loss, (Y0, t, K), i), rtol=2e-5, atol=1e-6)
    with np.errstate(invalid="ignore"):
        got = s2s.grad(F.loss)(np.array([np.nan, 1.0]), T, K)
    assert np.isnan(got[0]) and np.isfinite(got[1])


def test_float32_inputs_give_float32_gradients():
    got = s2s.grad(F.loss, argnums=(0, 2))(Y0.astype(np.float32), T.astype(np.float32),
                                           np.float32(K))
    assert got[0].dtype == np.float32 and np.asarray(got[1]).dtype == np.float32
    want = s2s.grad(F.loss, argnums=(0, 2))(Y0, T, K)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-4)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-4)


def test_caller_arrays_are_not_written_and_results_are_the_callers():
    y0, t = Y0.copy(), T.copy()
    g = s2s.grad(F.loss, argnums=(0, 1, 2))
    first = g(y0, t, K)
    kept = [np.copy(a) for a in first]
    for a in first:
        a[...] = np.nan  # the caller writes into what it was given
    for a, b in zip(g(y0, t, K), kept):
        np.testing.assert_array_equal(a, b)
    s2s.jvp(F.solution, (y0, t, K), (y0, t, 1.0))
    np.testing.assert_array_equal(y0, Y0)
    np.testing.assert_array_equal(t, T)


def test_solve_ivp_y_and_t_eval_after_t_span_start():
    te = np.array([0.25, 0.5, 0.9])
    got = s2s.grad(F.loss_ivp, argnums=(0, 1))(Y0, K)
    for i in range(2):
        np.testing.assert_allclose(got[i], fd(F.loss_ivp, (Y0, K), i), rtol=1e-6)
    _, tan = s2s.jvp(F.loss_ivp, (Y0, K), (np.array([1.0, 0.0]), 1.0))
    np.testing.assert_allclose(tan, fd(F.loss_ivp, (Y0, K), 0)[0] + fd(F.loss_ivp, (Y0, K), 1),
                               rtol=1e-6)
    assert te is not None


def test_vmap_solves_each_example():
    ys0 = np.stack([Y0, 2 * Y0, -Y0])
    ks = np.array([0.1, 0.5, 2.0])
    got = s2s.vmap(F.batched)(ys0, ks)
    want = np.stack([F.batched(y, k) for y, k in zip(ys0, ks)])
    np.testing.assert_allclose(got, want)
    got = s2s.vmap(F.batched, in_axes=(0, None))(ys0, 0.3)
    np.testing.assert_allclose(got, np.stack([F.batched(y, 0.3) for y in ys0]))


def test_jit_numpy_backend():
    got = s2s.jit(s2s.grad(F.loss, argnums=(0, 2)))(Y0, T, K)
    want = s2s.grad(F.loss, argnums=(0, 2))(Y0, T, K)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w)


@pytest.mark.slow
@needs_jax
def test_jax_backend_lowers_to_jax_odeint(jax_jacobian):
    ys, jacs = jax_jacobian
    got = s2s.jit(s2s.grad(F.loss, argnums=(0, 1, 2)), backend="jax")(Y0, T, K)
    for g, w in zip(got, _pulled(jacs, 2 * ys)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
    got = s2s.jit(s2s.jacfwd(F.solution, argnums=(0, 2)), backend="jax")(Y0, T, K)
    for g, w in zip(got, (jacs[0], jacs[2])):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
    a, b = np.array([[-1.0, 0.3], [0.2, -0.5]]), np.array([0.1, -0.2])
    for fn, args in ((F.loss_closure, (Y0, 0.3)), (F.loss_lambda, (Y0, K)),
                     (F.loss_matrix, (Y0, a, b))):  # (JAX's Dormand-Prince vs LSODA)
        got = s2s.jit(s2s.grad(fn, argnums=(0, 1)), backend="jax")(*args)
        for g, w in zip(got, s2s.grad(fn, argnums=(0, 1))(*args)):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)


def test_emitted_adjoint_is_readable_golden():
    g = s2s.grad(F.loss, argnums=(0, 1, 2))
    g(Y0, T, K)
    text = s2s.source(g)
    if os.environ.get("S2S_UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
    assert "def decay_adjoint(y, y_bar, t, k):" in text


@pytest.mark.parametrize("fn,what", [
    (F.with_events, "events"), (F.without_t_eval, "t_eval"), (F.with_dfun, "Dfun"),
    (F.numpy_rhs, "your own"),
])
def test_refused_at_the_users_line(fn, what):
    with pytest.raises(s2s.TransformError) as info:
        s2s.grad(fn)(Y0)
    text = str(info.value)
    assert what in text and "ode_fns.py" in text and "Instead:" in text


def test_jacfwd_jacrev_and_vmap_of_grad_solve_each_direction(jax_jacobian):
    _, jacs = jax_jacobian
    for transform in (s2s.jacfwd, s2s.jacrev):
        got = transform(F.solution, argnums=(0, 1, 2))(Y0, T, K)
        for g, w in zip(got, jacs):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-8)
    ys0 = np.stack([Y0, 2 * Y0])
    got = s2s.vmap(s2s.grad(F.loss), in_axes=(0, None, None))(ys0, T, K)
    want = np.stack([s2s.grad(F.loss)(y, T, K) for y in ys0])
    np.testing.assert_allclose(got, want)


def test_differentiating_the_derivative_again_is_refused_at_the_users_line():
    g = s2s.grad(F.loss, argnums=2)
    attempts = [lambda: s2s.grad(g, argnums=2)(Y0, T, K),
                lambda: s2s.hessian(F.loss)(Y0, T, K),
                lambda: s2s.jvp(g, (Y0, T, K), (Y0, T, K))]
    for attempt in attempts:
        with pytest.raises(s2s.TransformError, match="second derivative through this "
                           "ODE solve") as info:
            attempt()
        message = str(info.value)
        assert "s2s cannot transform `loss`" in message, message
        assert f'File "{F.__file__}"' in message and "<s2s:" not in message, message
        assert "ys = odeint(decay, y0, t" in message, message


@pytest.mark.slow
def test_stiff_van_der_pol_against_finite_differences():
    y0, mu = np.array([2.0, 0.0]), 10.0
    got = s2s.grad(F.loss_stiff, argnums=(0, 1))(y0, mu)
    for i in range(2):
        np.testing.assert_allclose(got[i], fd(F.loss_stiff, (y0, mu), i, eps=1e-7),
                                   rtol=1e-4)


@pytest.mark.slow
def test_solve_ivp_radau():
    got = s2s.grad(F.loss_ivp_radau, argnums=(0, 1))(Y0, K)
    for i in range(2):
        np.testing.assert_allclose(got[i], fd(F.loss_ivp_radau, (Y0, K), i), rtol=1e-6)


@pytest.mark.slow
@needs_jax
def test_float32_against_jax_float32():
    jax.config.update("jax_enable_x64", False)
    try:
        y0, t, k = Y0.astype(np.float32), T.astype(np.float32), np.float32(K)
        want = jax.grad(lambda y0, k: jnp.sum(jodeint(lambda y, t, k: -k * y + jnp.sin(t),
                                                      y0, jnp.asarray(t), k,
                                                      rtol=1e-6, atol=1e-6) ** 2),
                        argnums=(0, 1))(y0, k)
    finally:
        jax.config.update("jax_enable_x64", True)
    got = s2s.grad(F.loss, argnums=(0, 2))(y0, t, k)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-3)
