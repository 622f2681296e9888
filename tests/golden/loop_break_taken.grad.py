import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def loop_break_grad(x, n):
    tape = []
    y = x
    n_iter = 0
    for i in range(n):
        n_iter = n_iter + 1
        sin_y = np.sin(y)
        sin_y_times_1_5 = sin_y * 1.5
        y_2 = sin_y_times_1_5 + x
        sum_y_2 = np.sum(y_2)
        sum_y_2_greater_4 = sum_y_2 > 4.0
        tape.append((sin_y_times_1_5, sum_y_2_greater_4, y))
        if sum_y_2_greater_4:
            y_3 = y_2 * 0.5
            y = y_3
            break
        else:
            y_3 = y_2 + 0.1
        y = y_3
    y_sq = y**2
    loop_break = np.sum(y_sq)
    loop_break_bar = grad_seed(loop_break)
    # return np.sum(y**2)
    y_sq_bar = np.broadcast_to(loop_break_bar, np.shape(y_sq))
    y_bar = y_sq_bar * (2 * y)
    x_bar = np.zeros_like(x)
    for _ in range(n_iter):
        sin_y_times_1_5, sum_y_2_greater_4, y = tape.pop()
        if sum_y_2_greater_4:
            # y = y * 0.5
            y_2_bar = y_bar * 0.5
        else:
            y_2_bar = y_bar
        # y = np.sin(y) * 1.5 + x
        sin_y_times_1_5_bar = unbroadcast(y_2_bar, sin_y_times_1_5)
        x_bar = x_bar + unbroadcast(y_2_bar, x)
        sin_y_bar = sin_y_times_1_5_bar * 1.5
        y_bar_2 = sin_y_bar * np.cos(y)
        y_bar = y_bar_2
    # y = x
    x_bar = x_bar + y_bar
    return x_bar
