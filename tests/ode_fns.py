"""Functions that call scipy.integrate.odeint / solve_ivp, for tests/test_odeint.py
(their JAX oracles there are the same dynamics on jax.experimental.ode.odeint)."""

import numpy as np
from scipy.integrate import odeint, solve_ivp

TOL = dict(rtol=1e-10, atol=1e-10)
STATE = {"scale": 1.0}


def decay(y, t, k):
    return -k * y + np.sin(t)


def loss(y0, t, k):
    ys = odeint(decay, y0, t, args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys**2)


def solution(y0, t, k):
    return odeint(decay, y0, t, args=(k,), rtol=1e-10, atol=1e-10)


def linear(y, t, a, b):
    return a @ y + b * np.cos(t)


def loss_matrix(y0, a, b):
    t = np.linspace(0.0, 1.0, 4)
    ys = odeint(linear, y0, t, args=(a, b), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] * ys[1])


def loss_closure(y0, w):
    c = np.cos(w)

    def oscillator(y, t):
        return np.array([y[1], -c * y[0] * STATE["scale"]])

    ys = odeint(oscillator, y0, np.array([0.0, 0.5, 1.0]), rtol=1e-10, atol=1e-10)
    return np.sum(ys**2)


def loss_lambda(y0, k):
    t = np.array([0.0, 0.3, 1.0])
    ys = odeint(lambda y, t, a: -a * y * y + k, y0, t, args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1])


def loss_list_rhs(y0, k):
    def f(y, t, k):
        return [y[1], -k * y[0]]

    ys = odeint(f, y0, np.array([0.0, 1.0]), args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1])


def van_der_pol(y, t, mu):
    return np.array([y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]])


def loss_stiff(y0, mu):
    ys = odeint(van_der_pol, y0, np.array([0.0, 0.5, 1.0]), args=(mu,), rtol=1e-11,
                atol=1e-11)
    return np.sum(ys[-1] ** 2)


def loss_ivp(y0, k):
    sol = solve_ivp(lambda t, y, k: -k * y * (1.0 + t), (0.0, 1.0), y0,
                    t_eval=np.array([0.25, 0.5, 0.9]), args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(sol.y**2)


def loss_ivp_radau(y0, k):
    sol = solve_ivp(lambda t, y, k: -k * y, (0.0, 1.0), y0, method="Radau",
                    t_eval=np.array([0.0, 1.0]), args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(sol.y[:, -1])


def batched(y0, k):
    return odeint(decay, y0, np.array([0.0, 0.5, 1.0]), args=(k,), rtol=1e-10, atol=1e-10)


# ---- refused ------------------------------------------------------------------------


def with_events(y0):
    sol = solve_ivp(decay, (0.0, 1.0), y0, t_eval=np.array([0.0, 1.0]),
                    events=lambda t, y: y[0])
    return np.sum(sol.y)


def without_t_eval(y0):
    sol = solve_ivp(decay, (0.0, 1.0), y0)
    return np.sum(sol.y)


def with_dfun(y0):
    ys = odeint(decay, y0, np.array([0.0, 1.0]), args=(1.0,), Dfun=lambda y, t, k: -k)
    return np.sum(ys)


def numpy_rhs(y0):
    ys = odeint(np.sin, y0, np.array([0.0, 1.0]))
    return np.sum(ys)


# ---- in loops, branches, calling helpers --------------------------------------------


def helper(y, k):
    return -k * np.tanh(y)


def rhs(y, t, k):
    return helper(y, k) + 0.1 * t


def looped(y0, k):
    y = y0
    for i in range(3):
        ys = odeint(rhs, y, np.array([0.0, 0.5]), args=(k * (i + 1),), rtol=1e-10,
                    atol=1e-10)
        y = ys[-1]
    return np.sum(y**2)


def branched(y0, k):
    if k > 0:
        ys = odeint(rhs, y0, np.array([0.0, 0.5]), args=(k,), rtol=1e-10, atol=1e-10)
        out = ys[-1]
    else:
        out = y0
    return np.sum(out**2)


def scalar_y0(y0, k):
    ys = odeint(rhs, y0, np.array([0.0, 0.5, 1.0]), args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys)


def loss_tfirst(y0, k):
    ys = odeint(lambda t, y, k: -k * y * (1.0 + t), y0, np.array([0.0, 0.4, 0.8]),
                args=(k,), tfirst=True, rtol=1e-10, atol=1e-10)
    return np.sum(ys**2)


def list_y0(a, k):
    ys = odeint(decay, [a, 2.0 * a], np.array([0.0, 1.0]), args=(k,))
    return np.sum(ys)


def tuple_in_args(a, k):
    ys = odeint(lambda y, t, p: -p[0] * y, a, np.array([0.0, 1.0]), args=((k, 2.0),))
    return np.sum(ys)


def loss_h0(y0, k):
    ys = odeint(decay, y0, np.array([0.0, 0.5, 1.0]), args=(k,), h0=0.01, rtol=1e-10,
                atol=1e-10)
    return np.sum(ys**2)


# ---- on the JAX backend (tests/test_odes_on_jax.py) -----------------------------------

T_EVAL = np.array([0.25, 0.5, 0.9])


def ivp_default_tol(y0, k):
    sol = solve_ivp(lambda t, y, k: -k * y * (1.0 + t), (0.0, 1.0), y0, t_eval=T_EVAL,
                    args=(k,))
    return np.sum(sol.y**2)


def ivp_max_step(y0, k):
    sol = solve_ivp(lambda t, y, k: -k * np.sin(y) + t, (0.0, 1.0), y0, t_eval=T_EVAL,
                    args=(k,), method="RK45", max_step=0.05, rtol=1e-9, atol=1e-9)
    return np.sum(sol.y[:, -1] * sol.t[-1])


def ivp_first_step(y0):
    sol = solve_ivp(lambda t, y: -y, (0.0, 1.0), y0, t_eval=T_EVAL, first_step=0.1)
    return np.sum(sol.y)


def odeint_h0(y0):
    ys = odeint(decay, y0, np.array([0.0, 1.0]), args=(1.0,), h0=0.01)
    return np.sum(ys)


def ivp_helper_radau(y0):
    return ivp_radau_inner(y0) * 2.0


def ivp_radau_inner(y0):
    sol = solve_ivp(lambda t, y: -y, (0.0, 1.0), y0, t_eval=T_EVAL, method="Radau")
    return np.sum(sol.y)


def ivp_no_t_eval(y0):
    sol = solve_ivp(lambda t, y: -y, (0.0, 1.0), y0)
    return np.sum(sol.y[:, -1])
