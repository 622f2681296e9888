import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def helper_vjp_a(a, b, helper_bar):
    sin_a = np.sin(a)
    # return np.sin(a) * b
    sin_a_bar = unbroadcast(helper_bar * b, sin_a)
    a_bar = sin_a_bar * np.cos(a)
    return a_bar


def helper_vjp(a, b, helper_bar):
    sin_a = np.sin(a)
    # return np.sin(a) * b
    sin_a_bar = unbroadcast(helper_bar * b, sin_a)
    b_bar = unbroadcast(helper_bar * sin_a, b)
    a_bar = sin_a_bar * np.cos(a)
    return (a_bar, b_bar)


def calls_helper_grad(x, w):
    z = helper(x, w)
    z_times_x = z * x
    sum_z_times_x = np.sum(z_times_x)
    helper_w = helper(w, 2.0)
    sum_helper_w = np.sum(helper_w)
    calls_helper = sum_z_times_x + sum_helper_w
    calls_helper_bar = grad_seed(calls_helper)
    # return np.sum(z * x) + np.sum(helper(w, 2.0))
    helper_w_bar = np.broadcast_to(calls_helper_bar, np.shape(helper_w))
    w_bar = helper_vjp_a(w, 2.0, helper_w_bar)
    z_times_x_bar = np.broadcast_to(calls_helper_bar, np.shape(z_times_x))
    z_bar = unbroadcast(z_times_x_bar * x, z)
    x_bar = unbroadcast(z_times_x_bar * z, x)
    # z = helper(x, w)
    x_bar_2, w_bar_2 = helper_vjp(x, w, z_bar)
    x_bar = x_bar + x_bar_2
    w_bar_3 = w_bar + w_bar_2
    return (x_bar, w_bar_3)
