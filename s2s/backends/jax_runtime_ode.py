"""The ODE helpers of ``s2s/runtime_ode.py`` for code running on the JAX backend:
``jax.experimental.ode.odeint`` (Dormand-Prince with adaptive steps) in SciPy's
place.

``integrate_odeint`` is JAX's ``odeint`` of the user's function (``y`` a vector, as
SciPy passes it).  The derivative helpers run runtime_ode's algorithms on the
functions s2s emitted (``<func>_adjoint`` integrated backward interval by interval,
``<func>_tangent`` beside ``y``), with JAX's ``odeint`` as the solver.

``solve_ivp`` (``solver="solve_ivp"``) runs on the same solver where its method is
``"RK45"`` (its default): SciPy's RK45 is the Dormand-Prince 5(4) pair JAX's ``odeint``
steps with, both controlling the error estimate ``|err_i| <= atol + rtol *
max(|y_i|, |y_new_i|)``.  The tolerance mapping: ``rtol``/``atol`` are passed on as
given, with solve_ivp's own defaults (``rtol=1e-3``, ``atol=1e-6``, not JAX's
``1.4e-8``) where the call leaves them out; ``max_step`` becomes ``hmax``; the solve
starts at ``t_span[0]`` (the output at ``t_eval``).  ``odeint``'s ``rtol``, ``atol``,
``mxstep`` and ``hmax`` are passed on as they are.  What has no counterpart
(another ``method``, ``first_step``; odeint's ``hmin``, ``h0``, ``mxordn``,
``mxords``) is refused: :func:`refusal` names it, ``s2s.jit`` checks the transformed
function's solves before tracing and raises at the user's line
(``s2s/api/jit_jax.py``), and the SciPy twins :func:`scipy_odeint` and
:func:`scipy_solve_ivp` (what a user function's own ``odeint``/``solve_ivp`` calls
become under ``s2s.jit``) raise at the line that calls them.
"""

from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint as _odeint

from ..errors import Loc, UnsupportedCallError

__all__ = ["integrate_odeint", "integrate_odeint_adjoint", "integrate_odeint_tangent",
           "integrate_odeint_each", "integrate_odeint_adjoint_each",
           "integrate_odeint_tangent_each", "refusal", "scipy_odeint", "scipy_solve_ivp"]

_ODEINT = ("rtol", "atol", "mxstep", "hmax")
_SOLVE_IVP = ("method", "rtol", "atol", "max_step", "t_span")
_SOLVE_IVP_DEFAULTS = {"rtol": 1e-3, "atol": 1e-6}  # (SciPy's, where the call omits them)
_HINT = ("run it on the NumPy backend (s2s.jit(f, backend='numpy')), or leave the "
         "option out: on the JAX backend s2s solves with jax.experimental.ode.odeint")


def refusal(solver: str, options: dict) -> tuple[str, str] | None:
    """``(option, why)`` for the first of ``options`` (the call's constants)
    jax.experimental.ode.odeint has no counterpart for, else None."""
    if solver == "solve_ivp":
        method = options.get("method", "RK45")
        if method != "RK45":
            return "method", (f"solve_ivp's method={method!r} has no counterpart on the JAX "
                              "backend, which steps with Dormand-Prince 5(4), "
                              "method='RK45'")
        allowed = _SOLVE_IVP
    else:
        allowed = _ODEINT
    for key in options:
        if key not in allowed:
            return key, (f"{'solve_ivp' if solver == 'solve_ivp' else 'odeint'}'s "
                         f"`{key}=` has no counterpart in jax.experimental.ode.odeint "
                         "(the JAX backend's solver)")
    return None


def _checked(solver, options):
    """JAX's odeint options for the call's, and solve_ivp's ``t_span`` start (None for
    odeint); what has no counterpart raises."""
    options = dict(options)
    refused = refusal(solver, options)
    if refused is not None:
        raise UnsupportedCallError(refused[1], _caller(), hint=_HINT)
    if solver != "solve_ivp":
        return options, None
    start = float(options.pop("t_span")[0]) if "t_span" in options else None
    options.pop("method", None)
    if "max_step" in options:
        options["hmax"] = options.pop("max_step")
    return {**_SOLVE_IVP_DEFAULTS, **options}, start


_HERE = os.path.dirname(os.path.abspath(__file__))
_LIBRARIES = (os.path.dirname(_HERE), os.path.dirname(os.path.abspath(jax.__file__)),
              os.path.dirname(os.path.dirname(os.path.abspath(os.__file__))))


def _caller() -> Loc | None:
    """The innermost line of the user's own code on the stack (the call of odeint or
    solve_ivp a user function makes under s2s.jit), or None (emitted code's call:
    s2s.jit checks those before tracing)."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if name.startswith("<s2s:"):
            return None
        if not name.startswith("<") and not name.startswith(_LIBRARIES):
            import linecache

            text = linecache.getline(name, frame.f_lineno).rstrip("\n")
            return Loc(name, frame.f_lineno, len(text) - len(text.lstrip()) + 1, text)
        frame = frame.f_back
    return None


def _from_start(start, t, *rows):
    """``t`` with solve_ivp's start first (None: as it is), and each of ``rows`` with
    its given first row (the start's) stacked on."""
    if start is None:
        return (t, *(r for _first, r in rows))
    return (jnp.concatenate([jnp.full((1,), start, dtype=t.dtype), t]),
            *(jnp.concatenate([first[None], r]) for first, r in rows))


def _solve(rate, y0, t, args, options):
    y0 = jnp.ravel(jnp.asarray(y0, dtype=float))
    return _odeint(lambda y, time, *a: jnp.ravel(jnp.asarray(rate(y, time, *a))), y0,
                   jnp.asarray(t, dtype=float), *args, **options)


def integrate_odeint(func, y0, t, args=(), solver="odeint", tfirst=False, **options):
    options, start = _checked(solver, options)
    rate = (lambda y, time, *a: func(time, y, *a)) if tfirst else func
    t = jnp.asarray(t, dtype=float)
    ys = _solve(rate, y0, _from_start(start, t)[0], tuple(args), options)
    return ys if start is None else ys[1:]


def integrate_odeint_adjoint(adjoint, y0, ys, t, ys_bar, args=(), solver="odeint",
                             **options):
    """runtime_ode's algorithm, each interval's augmented state (a pytree) integrated
    backward by JAX's odeint: ``s = -t`` runs forward."""
    options, start = _checked(solver, options)
    ts = jnp.asarray(t, dtype=float)
    ys = jnp.reshape(jnp.asarray(ys, dtype=float), (ts.shape[0], -1))
    ys_bar = jnp.reshape(jnp.asarray(ys_bar, dtype=float), ys.shape)
    ts, ys, ys_bar = _from_start(  # (solve_ivp: from t_span's start, a constant)
        start, ts, (jnp.ravel(jnp.asarray(y0, dtype=float)), ys), (jnp.zeros(ys.shape[1:]),
                                                                   ys_bar))
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
    t_bar = t_bar if start is None else t_bar[1:]
    return (jnp.reshape(y_bar, jnp.shape(y0)), jnp.reshape(jnp.stack(t_bar), jnp.shape(t)),
            *args_bar)


def integrate_odeint_tangent(tangent, y0, y0_dot, t, t_dot, args=(), args_dot=(),
                             solver="odeint", **options):
    options, start = _checked(solver, options)
    t = jnp.asarray(t, dtype=float)
    t_dot = jnp.broadcast_to(jnp.asarray(t_dot, dtype=float), t.shape)
    t, t_dot = _from_start(start, t, (jnp.zeros(()), t_dot))
    y0 = jnp.ravel(jnp.asarray(y0, dtype=float))

    def rates(y, y_dot, time):
        f, f_dot = tangent(y, y_dot, time, *args, *args_dot)
        return jnp.ravel(jnp.asarray(f, dtype=float)), jnp.ravel(jnp.asarray(f_dot,
                                                                             dtype=float))

    moved = jnp.ravel(jnp.asarray(y0_dot, dtype=float)) - rates(
        y0, jnp.zeros_like(y0), t[0])[0] * t_dot[0]
    ys, ys_dot = _odeint(lambda state, time: rates(*state, time), (y0, moved), t, **options)
    f = jax.vmap(lambda y, time: rates(y, jnp.zeros_like(y), time)[0])(ys, t)
    out = ys_dot + f * t_dot[:, None]
    return out if start is None else out[1:]


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


# ---- SciPy's odeint and solve_ivp as a user function's own code calls them under jit ----

_LEFT_AT_DEFAULT = (None, False, 0)


def _plain_options(name: str, options: dict, ignored: tuple) -> dict:
    """The options to pass on; one with no counterpart on JAX (a non-default value of
    ``ignored``: Dfun, full_output, events, ...) raises at the caller's line."""
    out = {}
    for key, value in options.items():
        if key in ignored:
            if value is _LEFT_AT_DEFAULT[0] or value is False or (
                    isinstance(value, int) and value == 0):
                continue
            raise UnsupportedCallError(
                f"{name}'s `{key}=` has no counterpart in jax.experimental.ode.odeint "
                "(the JAX backend's solver)", _caller(), hint=_HINT)
        out[key] = value
    return out


def scipy_odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None,
                 mu=None, printmessg=0, tfirst=False, **options):
    """``scipy.integrate.odeint`` on the JAX backend: ``y(t)`` as rows, by JAX's odeint."""
    _plain_options("odeint", {"Dfun": Dfun, "col_deriv": col_deriv,
                              "full_output": full_output, "ml": ml, "mu": mu}, (
        "Dfun", "col_deriv", "full_output", "ml", "mu"))
    ys = integrate_odeint(func, y0, t, tuple(args), "odeint", tfirst, **options)
    return jnp.reshape(ys, (jnp.shape(t)[0],) + jnp.shape(y0)) if jnp.ndim(y0) else ys


class OdeSolution(dict):
    """solve_ivp's result on the JAX backend: ``t``, ``y`` (one row per state
    component), ``success``, ``status`` and ``message``, read as attributes or keys."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def scipy_solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False,
                    events=None, vectorized=False, args=None, **options):
    """``scipy.integrate.solve_ivp`` with ``t_eval`` on the JAX backend (see the
    module's note on tolerances)."""
    if t_eval is None:
        raise UnsupportedCallError(
            "solve_ivp without `t_eval` returns the solver's own times, whose number "
            "JAX cannot trace", _caller(),
            hint="pass t_eval=... (the times you read the solution at)")
    _plain_options("solve_ivp", {"dense_output": dense_output, "events": events,
                                 "vectorized": vectorized}, (
        "dense_output", "events", "vectorized"))
    options = {"method": method, "t_span": (float(t_span[0]), float(t_span[1])),
               **options}
    ys = integrate_odeint(fun, y0, t_eval, tuple(args or ()), "solve_ivp", True,
                          **options)
    return OdeSolution(t=jnp.asarray(t_eval), y=ys.T, success=True, status=0,
                       message="The solver successfully reached the end of the "
                       "integration interval.")
