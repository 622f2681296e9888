import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def fill_in_loop_grad(x):
    tape = []
    x_shape = np.shape(x)
    x_shape_0 = x_shape[0]
    y = np.zeros(x_shape_0)
    x_shape_2 = np.shape(x)
    x_shape_2_0 = x_shape_2[0]
    for i in range(x_shape_2_0):
        x_i = x[i]
        sin_x_i = np.sin(x_i)
        i_minus_1 = i - 1
        x_i_minus_1 = x[i_minus_1]
        prod = sin_x_i * x_i_minus_1
        y_overwritten = np.copy(y[i])
        y[i] = prod
        tape.append((i_minus_1, prod, sin_x_i, x_i, x_i_minus_1, y_overwritten))
    z = y * 2.0
    z_0 = np.copy(z[0])
    x_1 = x[1]
    x_1_sq = x_1**2
    z_0_plus_x_1_sq = z_0 + x_1_sq
    z_overwritten = np.copy(z[0])
    z[0] = z_0_plus_x_1_sq
    z_times_y = z * y
    fill_in_loop = np.sum(z_times_y)
    fill_in_loop_bar = grad_seed(fill_in_loop)
    # return np.sum(z * y)
    z_times_y_bar = np.broadcast_to(fill_in_loop_bar, np.shape(z_times_y))
    z_bar = unbroadcast(z_times_y_bar * y, z)
    y_bar = unbroadcast(z_times_y_bar * z, y)
    # z[0] += x[1] ** 2
    z_bar_2 = np.array(z_bar)
    z_bar_2[0] = 0
    z_0_plus_x_1_sq_bar = unbroadcast(z_bar[0], z_0_plus_x_1_sq)
    z[0] = z_overwritten
    z_0_bar = unbroadcast(z_0_plus_x_1_sq_bar, z_0)
    x_1_sq_bar = unbroadcast(z_0_plus_x_1_sq_bar, x_1_sq)
    x_1_bar = x_1_sq_bar * (2 * x_1)
    x_bar = np.zeros_like(x)
    x_bar[1] += x_1_bar
    z_bar_2[0] += z_0_bar
    # z = y * 2.0
    y_bar = y_bar + z_bar_2 * 2.0
    for i in reversed(range(x_shape_2_0)):
        i_minus_1, prod, sin_x_i, x_i, x_i_minus_1, y_overwritten = tape.pop()
        # y[i] = np.sin(x[i]) * x[i - 1]
        y_bar_2 = np.array(y_bar)
        y_bar_2[i] = 0
        prod_bar = unbroadcast(y_bar[i], prod)
        y[i] = y_overwritten
        sin_x_i_bar = unbroadcast(prod_bar * x_i_minus_1, sin_x_i)
        x_i_minus_1_bar = unbroadcast(prod_bar * sin_x_i, x_i_minus_1)
        x_bar[i_minus_1] += x_i_minus_1_bar
        x_i_bar = sin_x_i_bar * np.cos(x_i)
        x_bar[i] += x_i_bar
        y_bar = y_bar_2
    return x_bar
