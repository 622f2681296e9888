"""scipy.integrate.solve_ivp (and odeint) under ``s2s.jit(..., backend="jax")``: the
solve lowers to jax.experimental.ode.odeint (solve_ivp's RK45 is the same
Dormand-Prince 5(4) pair), with solve_ivp's own default tolerances; options with no
counterpart are refused at the user's line before tracing.

Oracles: JAX's odeint on the same dynamics written with jnp, with the documented
tolerance mapping (its own adjoint for derivatives), and the NumPy backend (SciPy's
solver, itself checked against finite differences in tests/test_odeint.py)."""

from __future__ import annotations

import numpy as np
import pytest

import s2s

pytest.importorskip("scipy.integrate")
import ode_fns as F  # noqa: E402
from support import HAVE_JAX  # noqa: E402

if not HAVE_JAX:
    pytest.skip("JAX is the oracle and the backend", allow_module_level=True)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental.ode import odeint as jodeint  # noqa: E402

Y0 = np.array([1.0, 2.0])
TIMES = np.concatenate([[0.0], F.T_EVAL])  # (from t_span's start, read at t_eval)


def jax_ivp(y0, k, rtol, atol):
    ys = jodeint(lambda y, t, k: -k * y * (1.0 + t), y0, jnp.asarray(TIMES), k, rtol=rtol,
                 atol=atol)
    return jnp.sum(ys[1:] ** 2)


@pytest.mark.slow
def test_grad_of_solve_ivp_on_jax_matches_jax_odeint_calls_1_3_10():
    f = s2s.jit(s2s.grad(F.loss_ivp, argnums=(0, 1)), backend="jax")
    want_fn = jax.jit(jax.grad(lambda y0, k: jax_ivp(y0, k, 1e-10, 1e-10), argnums=(0, 1)))
    for call in range(1, 11):
        y0, k = Y0 * call, 0.1 * call  # (values change between calls)
        got = f(y0, k)
        if call in (1, 3, 10):
            for g, w in zip(got, want_fn(y0, k)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-7)
        if call == 10:  # (and SciPy's solver on the NumPy backend)
            for g, w in zip(got, s2s.grad(F.loss_ivp, argnums=(0, 1))(y0, k)):
                np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6)
    np.testing.assert_array_equal(Y0, [1.0, 2.0])  # (the caller's array untouched)


def test_default_tolerances_are_solve_ivps():
    """No rtol/atol in the call: JAX's odeint with SciPy's 1e-3/1e-6 (not JAX's
    1.4e-8): the same numbers as JAX's odeint told so, and within those tolerances
    of SciPy's own solve_ivp."""
    got = s2s.jit(F.ivp_default_tol, backend="jax")(Y0, 0.5)
    np.testing.assert_allclose(float(got), float(jax_ivp(Y0, 0.5, 1e-3, 1e-6)), rtol=1e-12)
    np.testing.assert_allclose(float(got), F.ivp_default_tol(Y0, 0.5), rtol=1e-2)
    assert abs(float(got) - float(jax_ivp(Y0, 0.5, 1e-10, 1e-10))) > 1e-9  # (loose: mapped)


@pytest.mark.parametrize("fn,option", [
    (F.loss_ivp_radau, "method='Radau'"), (F.ivp_first_step, "first_step"),
    (F.odeint_h0, "h0"), (F.ivp_helper_radau, "method='Radau'"),
])
def test_options_without_counterpart_refused_at_the_users_line(fn, option):
    args = (Y0, 0.5) if fn is F.loss_ivp_radau else (Y0,)
    for wrapped in (fn, s2s.grad(fn), s2s.jacfwd(fn), s2s.vmap(s2s.grad(fn))):
        call_args = tuple(np.stack([a, a]) for a in args) if isinstance(
            wrapped, type(s2s.vmap(fn))) else args
        with pytest.raises(s2s.TransformError) as info:
            s2s.jit(wrapped, backend="jax")(*call_args)
        text = str(info.value)
        assert option in text and "Instead:" in text, text
        assert f'File "{F.__file__}"' in text and "<s2s:" not in text, text
        assert "solve_ivp(" in text or "odeint(" in text, text


def test_solve_ivp_without_t_eval_refused_at_the_users_line():
    with pytest.raises(s2s.TransformError) as info:
        s2s.jit(F.ivp_no_t_eval, backend="jax")(Y0)
    text = str(info.value)
    assert "t_eval" in text and f'File "{F.__file__}"' in text, text


@pytest.mark.slow
def test_plain_jit_of_user_code_calling_odeint_and_solve_ivp():
    t, k = np.linspace(0.0, 1.0, 4), 0.5
    np.testing.assert_allclose(float(s2s.jit(F.loss, backend="jax")(Y0, t, k)),
                               F.loss(Y0, t, k), rtol=1e-8)
    np.testing.assert_allclose(float(s2s.jit(F.loss_ivp, backend="jax")(Y0, k)),
                               F.loss_ivp(Y0, k), rtol=1e-8)
    np.testing.assert_allclose(float(s2s.jit(F.ivp_max_step, backend="jax")(Y0, k)),
                               F.ivp_max_step(Y0, k), rtol=1e-7)


@pytest.mark.slow
def test_jacfwd_jacrev_vmap_of_solve_ivp_on_jax():
    for transform in (s2s.jacfwd, s2s.jacrev):
        got = s2s.jit(transform(F.ivp_max_step, argnums=(0, 1)), backend="jax")(Y0, 0.5)
        want = transform(F.ivp_max_step, argnums=(0, 1))(Y0, 0.5)
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-9)
    ys0, ks = np.stack([Y0, -Y0, 0.5 * Y0]), np.array([0.2, 0.5, 1.5])
    got = s2s.jit(s2s.vmap(s2s.grad(F.loss_ivp)), backend="jax")(ys0, ks)
    want = np.stack([s2s.grad(F.loss_ivp)(y, k) for y, k in zip(ys0, ks)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


@pytest.mark.slow
def test_nan_start_propagates_as_jax_does():
    got = s2s.jit(s2s.grad(F.loss_ivp), backend="jax")(np.array([np.nan, 1.0]), 0.5)
    want = jax.grad(lambda y0: jax_ivp(y0, 0.5, 1e-10, 1e-10))(jnp.array([np.nan, 1.0]))
    np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(np.asarray(want)))


def test_odeint_without_a_start_keeps_its_rows():
    """odeint has no t_span start (``start`` None): ``_from_start`` gives its rows as
    they are.  It gave each row's ``(first, rows)`` pair, so the adjoint indexed a
    tuple: every ``s2s.jit(s2s.grad(...), backend="jax")`` of an odeint raised
    ``IndexError: tuple index out of range`` (tests/test_odeint.py's slow
    test_jax_backend_lowers_to_jax_odeint, against JAX's odeint, runs it whole)."""
    from s2s.backends.jax_runtime_ode import _from_start

    t, ys, bars = jnp.arange(3.0), jnp.ones((3, 2)), jnp.zeros((3, 2))
    got = _from_start(None, t, (jnp.zeros(2), ys), (jnp.ones(2), bars))
    assert len(got) == 3 and got[0] is t and got[1] is ys and got[2] is bars
    t2, ys2 = _from_start(0.5, t, (jnp.full(2, 7.0), ys))
    np.testing.assert_array_equal(t2, [0.5, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(ys2, np.concatenate([[[7.0, 7.0]], np.ones((3, 2))]))
