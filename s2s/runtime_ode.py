"""The emitted code's helpers for ``scipy.integrate.odeint`` and ``solve_ivp``.

Part of the runtime's ABI (:mod:`s2s.runtime_scipy` re-exports them, and runtime.py
re-exports that): emitted code says ``from s2s.runtime import integrate_odeint``.
SciPy is imported on first use.  Each helper takes the user's dynamics ``func(y, t,
*args)`` (``fun(t, y, *args)`` for solve_ivp, ``tfirst``) or a function s2s emitted
from it, and integrates with the solver and options the user's call named:

* ``integrate_odeint``: the forward solve, ``ys[i] = y(t[i])`` (one row per time);
* ``integrate_odeint_adjoint``: the backward pass by the adjoint method.  From the
  last time back to the first, it integrates the emitted ``<func>_adjoint(y, y_bar,
  t, *args)``, which returns the rates of the augmented state ``[y, y_bar, t0_bar,
  args_bar]``, from ``t[i]`` down to ``t[i-1]`` with the same solver, restarting ``y``
  from the saved ``ys[i]`` and adding the output cotangent ``ys_bar[i-1]`` at each
  output time (so the cotangents of ``y0``, of every output time and of ``args``);
* ``integrate_odeint_tangent``: forward sensitivity, ``[y, y_dot]`` integrated
  together by the emitted ``<func>_tangent(y, y_dot, t, *args)``;
* ``integrate_odeint_each``: a loop over a batch (vmap), one solve per example.

The solvers work on one flat float64 vector: ``_pack``/``_unpack`` lay the augmented
state's parts end to end.
"""

from __future__ import annotations

import numpy as np

__all__ = ["integrate_odeint", "integrate_odeint_adjoint", "integrate_odeint_tangent",
           "integrate_odeint_each", "integrate_odeint_adjoint_each",
           "integrate_odeint_tangent_each"]


def _pack(parts):
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])


def _unpack(state, shapes):
    out, k = [], 0
    for shape in shapes:
        n = int(np.prod(shape, dtype=int))
        out.append(state[k:k + n].reshape(shape))
        k += n
    return out


def _solve(rhs, y0, ts, solver, options):
    """``y(t)`` at each of ``ts`` (rows), ``y' = rhs(y, t)`` from ``y(ts[0]) = y0``."""
    options = dict(options)
    if solver == "solve_ivp":
        from scipy.integrate import solve_ivp

        t_span = options.pop("t_span", None)
        start = ts[0] if t_span is None else t_span[0]
        times = np.asarray(ts, dtype=np.float64)
        first = times[:1] if times[0] == start else np.array([start], dtype=np.float64)
        if times[0] != start:  # (t_eval starts after t_span: solve from t_span's start)
            times = np.concatenate([first, times])
        sol = solve_ivp(lambda t, y: rhs(y, t), (times[0], times[-1]), y0, t_eval=times,
                        **options)
        if not sol.success:
            raise RuntimeError(f"solve_ivp failed: {sol.message}")
        ys = sol.y.T
        return ys if len(times) == len(ts) else ys[1:]
    from scipy.integrate import odeint

    return odeint(rhs, y0, np.asarray(ts, dtype=np.float64), **options)


def _start(ts, options):
    """solve_ivp's ``t_span`` start where it comes before ``t_eval``'s first time (the
    derivatives then integrate from there), else None; ``t_span`` leaves
    ``options``."""
    t_span = options.pop("t_span", None)
    return None if t_span is None or t_span[0] == ts[0] else float(t_span[0])


def integrate_odeint(func, y0, t, args=(), solver="odeint", tfirst=False, **options):
    """``scipy.integrate.odeint(func, y0, t, args=args, **options)`` (``solve_ivp``'s
    solution at ``t`` as rows, for ``solver="solve_ivp"``)."""
    def rhs(y, time):  # (y is a vector, as SciPy passes it, whatever y0's shape)
        out = func(time, y, *args) if tfirst else func(y, time, *args)
        return np.ravel(np.asarray(out, dtype=np.float64))

    return _solve(rhs, np.ravel(np.asarray(y0, dtype=np.float64)), t, solver, options)


def integrate_odeint_adjoint(adjoint, y0, ys, t, ys_bar, args=(), solver="odeint",
                             **options):
    """The cotangents ``(y0_bar, t_bar, *args_bar)`` of ``ys = integrate_odeint(func,
    y0, t, args)`` given ``ys_bar``, by integrating ``adjoint`` backward in time."""
    options.pop("h0", None)  # (signed for the forward direction: LSODA picks its own)
    ts = np.asarray(t, dtype=np.float64)
    ys = np.asarray(ys, dtype=np.float64).reshape(len(ts), -1)
    ys_bar = np.asarray(ys_bar, dtype=np.float64).reshape(ys.shape)
    start = _start(ts, options)
    if start is not None:  # (solve_ivp from t_span's start, before t_eval's first)
        ts = np.concatenate([[start], ts])
        ys = np.concatenate([np.reshape(y0, (1, -1)), ys])
        ys_bar = np.concatenate([np.zeros((1,) + ys.shape[1:]), ys_bar])
    y_shape = ys.shape[1:]
    _, _, _, args_bar = adjoint(ys[-1], ys_bar[-1], ts[-1], *args)
    args_bar = [np.zeros(np.shape(a)) for a in args_bar]
    shapes = [y_shape, y_shape, ()] + [np.shape(a) for a in args_bar]

    def rhs(state, time):
        y, y_bar = _unpack(state, shapes[:2])
        f, y_rate, t_rate, args_rate = adjoint(y, y_bar, time, *args)
        return _pack([f, y_rate, t_rate, *args_rate])

    y_bar, t0_bar = ys_bar[-1], 0.0
    t_bar = np.zeros(len(ts))
    for i in range(len(ts) - 1, 0, -1):
        f = adjoint(ys[i], y_bar, ts[i], *args)[0]
        t_bar[i] = np.dot(np.ravel(f), np.ravel(ys_bar[i]))  # moving the output time
        t0_bar -= t_bar[i]
        state = _pack([ys[i], y_bar, t0_bar, *args_bar])
        back = _solve(rhs, state, np.array([ts[i], ts[i - 1]]), solver, options)[-1]
        _, y_bar, t0_bar, *args_bar = _unpack(back, shapes)
        y_bar = y_bar + ys_bar[i - 1]
    t_bar[0] = t0_bar
    t_bar = t_bar if start is None else t_bar[1:]  # (t_span is a constant)
    return (np.reshape(y_bar, np.shape(y0)), t_bar.reshape(np.shape(t)), *args_bar)


def integrate_odeint_tangent(tangent, y0, y0_dot, t, t_dot, args=(), args_dot=(),
                             solver="odeint", **options):
    """The tangent ``ys_dot`` of ``ys = integrate_odeint(func, y0, t, args)``: the
    sensitivity equations ``tangent(y, y_dot, t, *args, *args_dot) -> (f, f_dot)``
    integrated beside ``y``; a moved output time adds ``f(y(t[i]), t[i]) * t_dot[i]``
    and a moved start ``-f(y0, t[0]) * t_dot[0]`` to ``y0_dot``."""
    ts = np.asarray(t, dtype=np.float64)
    t_dot = np.broadcast_to(np.asarray(t_dot, dtype=np.float64), ts.shape)
    start = _start(ts, options)
    if start is not None:  # (solve_ivp from t_span's start, before t_eval's first)
        ts, t_dot = np.concatenate([[start], ts]), np.concatenate([[0.0], t_dot])
    y0 = np.ravel(np.asarray(y0, dtype=np.float64))

    def rates(y, y_dot, time):
        f, f_dot = tangent(y, y_dot, time, *args, *args_dot)
        return np.ravel(np.asarray(f, dtype=np.float64)), np.ravel(np.asarray(
            f_dot, dtype=np.float64))

    moved = np.ravel(y0_dot) - rates(y0, np.zeros(y0.size), ts[0])[0] * t_dot[0]

    def rhs(state, time):
        return _pack(rates(state[:y0.size], state[y0.size:], time))

    both = _solve(rhs, _pack([y0, moved]), ts, solver, options)
    ys, ys_dot = both[:, :y0.size], both[:, y0.size:]
    for i in range(len(ts)):
        ys_dot[i] += rates(ys[i], np.zeros(y0.size), ts[i])[0] * t_dot[i]
    return ys_dot if start is None else ys_dot[1:]


def integrate_odeint_each(func, y0, t, args, batched, solver="odeint", tfirst=False,
                          **options):
    """``integrate_odeint`` per example of a batch (vmap): ``batched`` says which of
    ``(y0, t, *args)`` carry the batch on their first axis; one solve per example,
    stacked."""
    values = (y0, t, *args)
    size = next(len(v) for v, b in zip(values, batched) if b)
    out = []
    for k in range(size):
        y0_k, t_k, *args_k = (v[k] if b else v for v, b in zip(values, batched))
        out.append(integrate_odeint(func, y0_k, t_k, tuple(args_k), solver, tfirst,
                                    **options))
    return np.stack(out)


def _each(helper, fn, values, batched, options):
    """``helper(fn, *values_k, **options)`` for each example ``k`` (``batched``: which
    of ``values``, tuples of them too, carry the batch on their first axis), the
    results stacked (a tuple of results: each stacked)."""
    def size(v, b):
        if isinstance(b, tuple):
            return next((s for s in map(size, v, b) if s is not None), None)
        return len(v) if b else None

    def pick(v, b, k):
        return tuple(pick(u, c, k) for u, c in zip(v, b)) if isinstance(b, tuple) else (
            v[k] if b else v)

    out = [helper(fn, *pick(values, batched, k), **options)
           for k in range(size(values, batched))]
    if isinstance(out[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*out))
    return np.stack(out)


def integrate_odeint_adjoint_each(adjoint, values, batched, **options):
    """``integrate_odeint_adjoint(adjoint, *values)`` per example (vmap, jacrev)."""
    return _each(integrate_odeint_adjoint, adjoint, values, batched, options)


def integrate_odeint_tangent_each(tangent, values, batched, **options):
    """``integrate_odeint_tangent(tangent, *values)`` per example (vmap, jacfwd)."""
    return _each(integrate_odeint_tangent, tangent, values, batched, options)
