import numpy as np
from s2s.runtime import grad_seed


def if_elif_grad(x):
    total = np.sum(x)
    total_greater_1 = total > 1.0
    if total_greater_1:
        z = np.exp(x)
    else:
        total_greater_m1 = total > -1.0
        if total_greater_m1:
            z = x**3
        else:
            z = -x
    if_elif = np.sum(z)
    if_elif_bar = grad_seed(if_elif)
    # return np.sum(z)
    z_bar = np.broadcast_to(if_elif_bar, np.shape(z))
    if total_greater_1:
        # z = np.exp(x)
        x_bar = z_bar * z
    else:
        if total_greater_m1:
            # z = x**3
            x_bar = z_bar * (3 * x**2)
        else:
            # z = -x
            x_bar = -z_bar
    return x_bar
