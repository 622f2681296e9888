import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def early_return_grad(x):
    x_sq = x**2
    s = np.sum(x_sq)
    s_greater_4 = s > 4.0
    if s_greater_4:
        early_return = np.sqrt(s)
    else:
        sin_x = np.sin(x)
        y = sin_x * s
        early_return = np.sum(y)
    early_return_bar = grad_seed(early_return)
    if s_greater_4:
        # return np.sqrt(s)
        s_bar = early_return_bar / (2 * early_return)
        x_bar = np.zeros_like(x)
    else:
        # return np.sum(y)
        y_bar = np.broadcast_to(early_return_bar, np.shape(y))
        # y = np.sin(x) * s
        sin_x_bar = y_bar * s
        s_bar = unbroadcast(y_bar * sin_x, s)
        x_bar = sin_x_bar * np.cos(x)
    # s = np.sum(x**2)
    x_sq_bar = np.broadcast_to(s_bar, np.shape(x_sq))
    x_bar_2 = x_sq_bar * (2 * x)
    x_bar = x_bar + x_bar_2
    return x_bar
