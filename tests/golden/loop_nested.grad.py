import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def loop_nested_grad(x, n):
    tape = []
    tape_2 = []
    y = x
    for i in range(n):
        z = y
        i_plus_1 = i + 1
        for j in range(i_plus_1):
            sin_z = np.sin(z)
            sin_z_times_0_9 = sin_z * 0.9
            z_2 = sin_z_times_0_9 + x
            tape.append((sin_z_times_0_9, z))
            z = z_2
        i_plus_1_2 = i + 1.0
        z_over_i_plus_1_2 = z / i_plus_1_2
        y_2 = y + z_over_i_plus_1_2
        tape_2.append((i_plus_1, i_plus_1_2, y, z, z_over_i_plus_1_2))
        y = y_2
    loop_nested = np.sum(y)
    loop_nested_bar = grad_seed(loop_nested)
    # return np.sum(y)
    y_bar = np.broadcast_to(loop_nested_bar, np.shape(y))
    x_bar = np.zeros_like(x)
    for i in reversed(range(n)):
        i_plus_1, i_plus_1_2, y, z, z_over_i_plus_1_2 = tape_2.pop()
        # y = y + z / (i + 1.0)
        y_bar_2 = unbroadcast(y_bar, y)
        z_over_i_plus_1_2_bar = unbroadcast(y_bar, z_over_i_plus_1_2)
        z_bar = z_over_i_plus_1_2_bar / i_plus_1_2
        for j in reversed(range(i_plus_1)):
            sin_z_times_0_9, z = tape.pop()
            # z = np.sin(z) * 0.9 + x
            sin_z_times_0_9_bar = unbroadcast(z_bar, sin_z_times_0_9)
            x_bar = x_bar + unbroadcast(z_bar, x)
            sin_z_bar = sin_z_times_0_9_bar * 0.9
            z_bar_2 = sin_z_bar * np.cos(z)
            z_bar = z_bar_2
        # z = y
        y_bar_2 = y_bar_2 + z_bar
        y_bar = y_bar_2
    # y = x
    x_bar = x_bar + y_bar
    return x_bar
