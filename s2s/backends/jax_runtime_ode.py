"""The ODE helpers of ``s2s/runtime_ode.py`` for code running on the JAX backend:
``jax.experimental.ode.odeint`` (Dormand-Prince with adaptive steps) in SciPy's
place.

``integrate_odeint`` is JAX's ``odeint`` of the user's function (``y`` a vector, as
SciPy passes it).  The derivative helpers run runtime_ode's algorithms on the
functions s2s emitted (``<func>_adjoint`` integrated backward interval by interval,
``<func>_tangent`` beside ``y``), with JAX's ``odeint`` as the solver.  ``solve_ivp`` (SciPy's methods) has no JAX twin and
raises; options JAX's ``odeint`` lacks (``hmin``, ``h0``, ...) raise too.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint as _odeint

__all__ = ["integrate_odeint", "integrate_odeint_adjoint", "integrate_odeint_tangent",
           "integrate_odeint_each", "integrate_odeint_adjoint_each",
           "integrate_odeint_tangent_each"]

_OPTIONS = ("rtol", "atol", "mxstep", "hmax")


def _checked(solver, options):
    if solver != "odeint":
        raise NotImplementedError(
            "scipy.integrate.solve_ivp has no JAX twin on s2s's JAX backend: run it on "
            "the NumPy backend (s2s.jit(f, backend='numpy')), or write odeint")
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise NotImplementedError(
            f"odeint's {', '.join(unknown)} have no counterpart in "
            "jax.experimental.ode.odeint: leave them out on the JAX backend")
    return options


def _solve(rate, y0, t, args, options):
    y0 = jnp.ravel(jnp.asarray(y0, dtype=float))
    return _odeint(lambda y, time, *a: jnp.ravel(jnp.asarray(rate(y, time, *a))), y0,
                   jnp.asarray(t, dtype=float), *args, **options)


def integrate_odeint(func, y0, t, args=(), solver="odeint", tfirst=False, **options):
    options = _checked(solver, options)
    rate = (lambda y, time, *a: func(time, y, *a)) if tfirst else func
    return _solve(rate, y0, t, tuple(args), options)


def integrate_odeint_adjoint(adjoint, y0, ys, t, ys_bar, args=(), solver="odeint",
                             **options):
    """runtime_ode's algorithm, each interval's augmented state (a pytree) integrated
    backward by JAX's odeint: ``s = -t`` runs forward."""
    options = _checked(solver, options)
    ts = jnp.asarray(t, dtype=float)
    ys = jnp.reshape(jnp.asarray(ys, dtype=float), (ts.shape[0], -1))
    ys_bar = jnp.reshape(jnp.asarray(ys_bar, dtype=float), ys.shape)
    args_bar = [jnp.zeros(jnp.shape(a)) for a in adjoint(ys[-1], ys_bar[-1], ts[-1], *args)[3]]

    def rhs(state, s):
        y, y_bar, _, _ = state
        f, y_rate, t_rate, args_rate = adjoint(y, y_bar, -s, *args)
        return (-jnp.ravel(jnp.asarray(f, dtype=float)), -jnp.ravel(y_rate),
                -jnp.asarray(t_rate, dtype=float), tuple(-jnp.asarray(r) for r in args_rate))

    y_bar, t0_bar, t_bar = ys_bar[-1], jnp.zeros(()), [None] * ts.shape[0]
    args_bar = tuple(args_bar)
    for i in range(ts.shape[0] - 1, 0, -1):
        f = jnp.ravel(jnp.asarray(adjoint(ys[i], y_bar, ts[i], *args)[0], dtype=float))
        t_bar[i] = jnp.dot(f, ys_bar[i])  # moving the output time
        t0_bar = t0_bar - t_bar[i]
        state = (ys[i], y_bar, t0_bar, args_bar)
        out = _odeint(rhs, state, jnp.stack([-ts[i], -ts[i - 1]]), **options)
        _, y_bar, t0_bar, args_bar = jax.tree_util.tree_map(lambda v: v[-1], out)
        y_bar = y_bar + ys_bar[i - 1]
    t_bar[0] = t0_bar
    return (jnp.reshape(y_bar, jnp.shape(y0)), jnp.reshape(jnp.stack(t_bar), jnp.shape(t)),
            *args_bar)


def integrate_odeint_tangent(tangent, y0, y0_dot, t, t_dot, args=(), args_dot=(),
                             solver="odeint", **options):
    options = _checked(solver, options)
    t = jnp.asarray(t, dtype=float)
    t_dot = jnp.broadcast_to(jnp.asarray(t_dot, dtype=float), t.shape)
    y0 = jnp.ravel(jnp.asarray(y0, dtype=float))

    def rates(y, y_dot, time):
        f, f_dot = tangent(y, y_dot, time, *args, *args_dot)
        return jnp.ravel(jnp.asarray(f, dtype=float)), jnp.ravel(jnp.asarray(f_dot,
                                                                             dtype=float))

    moved = jnp.ravel(jnp.asarray(y0_dot, dtype=float)) - rates(
        y0, jnp.zeros_like(y0), t[0])[0] * t_dot[0]
    ys, ys_dot = _odeint(lambda state, time: rates(*state, time), (y0, moved), t, **options)
    f = jax.vmap(lambda y, time: rates(y, jnp.zeros_like(y), time)[0])(ys, t)
    return ys_dot + f * t_dot[:, None]


def integrate_odeint_each(func, y0, t, args, batched, solver="odeint", tfirst=False,
                          **options):
    axes = tuple(0 if b else None for b in batched)

    def one(y0, t, *a):
        return integrate_odeint(func, y0, t, a, solver, tfirst, **options)

    return jax.vmap(one, in_axes=axes)(y0, t, *args)


def _axes(batched):
    return tuple(_axes(b) for b in batched) if isinstance(batched, tuple) else (
        0 if batched else None)


def integrate_odeint_adjoint_each(adjoint, values, batched, **options):
    return jax.vmap(lambda *v: integrate_odeint_adjoint(adjoint, *v, **options),
                    in_axes=_axes(batched))(*values)


def integrate_odeint_tangent_each(tangent, values, batched, **options):
    return jax.vmap(lambda *v: integrate_odeint_tangent(tangent, *v, **options),
                    in_axes=_axes(batched))(*values)
