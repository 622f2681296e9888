import numpy as np


def fill_in_loop_jvp(x, x_dot):
    x_shape = np.shape(x)
    x_shape_0 = x_shape[0]
    y = np.zeros(x_shape_0)
    x_shape_2 = np.shape(x)
    x_shape_2_0 = x_shape_2[0]
    y_dot = np.zeros_like(y)
    for i in range(x_shape_2_0):
        x_i = x[i]
        x_i_dot = x_dot[i]
        sin_x_i = np.sin(x_i)
        sin_x_i_dot = x_i_dot * np.cos(x_i)
        i_minus_1 = i - 1
        x_i_minus_1 = x[i_minus_1]
        x_i_minus_1_dot = x_dot[i_minus_1]
        prod = sin_x_i * x_i_minus_1
        prod_dot = sin_x_i_dot * x_i_minus_1 + sin_x_i * x_i_minus_1_dot
        y[i] = prod
        y_dot[i] = prod_dot
    z = y * 2.0
    z_dot = y_dot * 2.0
    z_0 = z[0]
    x_1 = x[1]
    x_1_sq = x_1**2
    x_1_sq_dot = x_dot[1] * (2 * x_1)
    z_0_plus_x_1_sq = z_0 + x_1_sq
    z_0_plus_x_1_sq_dot = z_dot[0] + x_1_sq_dot
    z[0] = z_0_plus_x_1_sq
    z_dot_2 = np.copy(z_dot)
    z_dot_2[0] = z_0_plus_x_1_sq_dot
    z_times_y = z * y
    z_times_y_dot = z_dot_2 * y + z * y_dot
    fill_in_loop = np.sum(z_times_y)
    fill_in_loop_dot = np.sum(z_times_y_dot)
    return fill_in_loop, fill_in_loop_dot
