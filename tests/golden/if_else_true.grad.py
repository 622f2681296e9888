import numpy as np
from s2s.runtime import grad_seed


def if_else_grad(x):
    y = x * 2
    sum_x = np.sum(x)
    sum_x_greater_0 = sum_x > 0
    if sum_x_greater_0:
        y_2 = np.sin(y)
    else:
        cos_y = np.cos(y)
        y_2 = cos_y * 3
    y_2_sq = y_2**2
    if_else = np.sum(y_2_sq)
    if_else_bar = grad_seed(if_else)
    # return np.sum(y**2)
    y_2_sq_bar = np.broadcast_to(if_else_bar, np.shape(y_2_sq))
    y_2_bar = y_2_sq_bar * (2 * y_2)
    if sum_x_greater_0:
        # y = np.sin(y)
        y_bar = y_2_bar * np.cos(y)
    else:
        # y = np.cos(y) * 3
        cos_y_bar = y_2_bar * 3
        y_bar = -cos_y_bar * np.sin(y)
    # y = x * 2
    x_bar = y_bar * 2
    return x_bar
