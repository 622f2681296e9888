import numpy as np


def if_elif_jvp(x, x_dot):
    total = np.sum(x)
    total_greater_1 = total > 1.0
    if total_greater_1:
        z = np.exp(x)
        z_dot = x_dot * z
    else:
        total_greater_m1 = total > -1.0
        if total_greater_m1:
            z = x**3
            z_dot = x_dot * (3 * x**2)
        else:
            z = -x
            z_dot = -x_dot
    if_elif = np.sum(z)
    if_elif_dot = np.sum(z_dot)
    return if_elif, if_elif_dot
