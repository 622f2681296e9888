import numpy as np
from s2s.runtime import (
    unbroadcast,
    grad_seed,
    integrate_odeint,
    integrate_odeint_adjoint,
)


def decay_vjp(y, t, k, decay_bar):
    neg_k = -k
    neg_k_times_y = neg_k * y
    sin_t = np.sin(t)
    # return -k * y + np.sin(t)
    neg_k_times_y_bar = unbroadcast(decay_bar, neg_k_times_y)
    sin_t_bar = unbroadcast(decay_bar, sin_t)
    t_bar = sin_t_bar * np.cos(t)
    neg_k_bar = unbroadcast(neg_k_times_y_bar * y, neg_k)
    y_bar = unbroadcast(neg_k_times_y_bar * neg_k, y)
    k_bar = -neg_k_bar
    return (y_bar, t_bar, k_bar)


def decay_adjoint(y, y_bar, t, k):
    # The adjoint ODE of `decay`, integrated backward in time from each output time to
    # the one before: the rates of y, of its cotangent y_bar, and of the cotangents of t
    # and of the args (-y_bar·∂f/∂t, -y_bar·∂f/∂args).
    rate = decay(y, t, k)
    y_vjp, t_vjp, k_vjp = decay_vjp(y, t, k, y_bar)
    return rate, -y_vjp, -t_vjp, (-k_vjp,)


def loss_grad(y0, t, k):
    ys = integrate_odeint(decay, y0, t, args=(k,), rtol=1e-10, atol=1e-10)
    ys_sq = ys**2
    loss = np.sum(ys_sq)
    loss_bar = grad_seed(loss)
    # return np.sum(ys**2)
    ys_sq_bar = np.broadcast_to(loss_bar, np.shape(ys_sq))
    ys_bar = ys_sq_bar * (2 * ys)
    # ys = odeint(decay, y0, t, args=(k,), rtol=1e-10, atol=1e-10)
    y0_bar, t_bar, k_bar = integrate_odeint_adjoint(
        decay_adjoint, y0, ys, t, ys_bar, args=(k,), rtol=1e-10, atol=1e-10
    )
    return (y0_bar, t_bar, k_bar)
