import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def subscripts_grad(x):
    x_0 = x[0]
    x_m1 = x[-1]
    a = x_0 * x_m1
    x_slice = x[1:3]
    b = x_slice**2
    c = x[::2]
    d = x[:, 1]
    e = x[..., -1]
    f = x[None, 1:, ::-1]
    sum_a = np.sum(a)
    sum_b = np.sum(b)
    sum_a_plus_sum_b = sum_a + sum_b
    sum_c = np.sum(c)
    total = sum_a_plus_sum_b + sum_c
    d_times_e = d * e
    sum_d_times_e = np.sum(d_times_e)
    total_2 = total + sum_d_times_e
    f_pow_3 = f**3
    sum_f_pow_3 = np.sum(f_pow_3)
    subscripts = total_2 + sum_f_pow_3
    subscripts_bar = grad_seed(subscripts)
    # return np.sum(a) + np.sum(b) + np.sum(c) + np.sum(d * e) + np.sum(f**3)
    f_pow_3_bar = np.broadcast_to(subscripts_bar, np.shape(f_pow_3))
    f_bar = f_pow_3_bar * (3 * f**2)
    d_times_e_bar = np.broadcast_to(subscripts_bar, np.shape(d_times_e))
    d_bar = unbroadcast(d_times_e_bar * e, d)
    e_bar = unbroadcast(d_times_e_bar * d, e)
    c_bar = np.broadcast_to(subscripts_bar, np.shape(c))
    b_bar = np.broadcast_to(subscripts_bar, np.shape(b))
    a_bar = np.broadcast_to(subscripts_bar, np.shape(a))
    # f = x[None, 1:, ::-1]
    x_bar = np.zeros_like(x)
    x_bar[None, 1:, ::-1] += f_bar
    # e = x[..., -1]
    x_bar[..., -1] += e_bar
    # d = x[:, 1]
    x_bar[:, 1] += d_bar
    # c = x[::2]
    x_bar[::2] += c_bar
    # b = x[1:3] ** 2
    x_slice_bar = b_bar * (2 * x_slice)
    x_bar[1:3] += x_slice_bar
    # a = x[0] * x[-1]
    x_0_bar = unbroadcast(a_bar * x_m1, x_0)
    x_m1_bar = unbroadcast(a_bar * x_0, x_m1)
    x_bar[-1] += x_m1_bar
    x_bar[0] += x_0_bar
    return x_bar
