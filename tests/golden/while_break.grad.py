import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def while_break_grad(x):
    y = x
    k = 0.0
    sum_y = np.sum(y)
    sum_y_less_10 = sum_y < 10.0
    n_iter = 0
    while sum_y_less_10:
        n_iter = n_iter + 1
        y_times_1_3 = y * 1.3
        y_2 = y_times_1_3 + 0.1
        k_2 = k + 1.0
        max_y_2 = np.max(y_2)
        max_y_2_greater_3 = max_y_2 > 3.0
        if max_y_2_greater_3:
            y = y_2
            k = k_2
            break
        sum_y_2 = np.sum(y_2)
        sum_y_2_less_10 = sum_y_2 < 10.0
        y = y_2
        k = k_2
        sum_y_less_10 = sum_y_2_less_10
    sum_y_3 = np.sum(y)
    while_break = sum_y_3 * k
    while_break_bar = grad_seed(while_break)
    # return np.sum(y) * k
    sum_y_3_bar = unbroadcast(while_break_bar * k, sum_y_3)
    y_bar = np.broadcast_to(sum_y_3_bar, np.shape(y))
    for _ in range(n_iter):
        # y = y * 1.3 + 0.1
        y_bar_2 = y_bar * 1.3
        y_bar = y_bar_2
    return y_bar
