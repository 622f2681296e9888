import numpy as np
from s2s.runtime import grad_seed


def conditional_expression_grad(x):
    sum_x = np.sum(x)
    sum_x_greater_0 = sum_x > 0
    if sum_x_greater_0:
        scale = 2.0
    else:
        scale = -1.0
    max_x = np.max(x)
    max_x_greater_0_2 = max_x > 0.2
    if max_x_greater_0_2:
        y = np.tanh(x)
    else:
        y = x**2
    sum_y = np.sum(y)
    conditional_expression = sum_y * scale
    conditional_expression_bar = grad_seed(conditional_expression)
    # return np.sum(y) * scale
    sum_y_bar = conditional_expression_bar * scale
    y_bar = np.broadcast_to(sum_y_bar, np.shape(y))
    if max_x_greater_0_2:
        # y = np.tanh(x) if np.max(x) > 0.2 else x**2
        x_bar = y_bar * (1 - y**2)
    else:
        # y = np.tanh(x) if np.max(x) > 0.2 else x**2
        x_bar = y_bar * (2 * x)
    return x_bar
