import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def while_shrinks_grad(x):
    tape = []
    y = x
    sum_y = np.sum(y)
    sum_y_greater_1 = sum_y > 1.0
    n_iter = 0
    while sum_y_greater_1:
        n_iter = n_iter + 1
        y_times_0_7 = y * 0.7
        sin_y = np.sin(y)
        sin_y_times_0_1 = sin_y * 0.1
        y_2 = y_times_0_7 + sin_y_times_0_1
        sum_y_2 = np.sum(y_2)
        sum_y_2_greater_1 = sum_y_2 > 1.0
        tape.append((sin_y_times_0_1, y, y_times_0_7))
        y = y_2
        sum_y_greater_1 = sum_y_2_greater_1
    y_sq = y**2
    while_shrinks = np.sum(y_sq)
    while_shrinks_bar = grad_seed(while_shrinks)
    # return np.sum(y**2)
    y_sq_bar = np.broadcast_to(while_shrinks_bar, np.shape(y_sq))
    y_bar = y_sq_bar * (2 * y)
    for _ in range(n_iter):
        sin_y_times_0_1, y, y_times_0_7 = tape.pop()
        # y = y * 0.7 + np.sin(y) * 0.1
        y_times_0_7_bar = unbroadcast(y_bar, y_times_0_7)
        sin_y_times_0_1_bar = unbroadcast(y_bar, sin_y_times_0_1)
        sin_y_bar = sin_y_times_0_1_bar * 0.1
        y_bar_2 = sin_y_bar * np.cos(y)
        y_bar_2 = y_bar_2 + y_times_0_7_bar * 0.7
        y_bar = y_bar_2
    return y_bar
