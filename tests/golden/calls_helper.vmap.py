import numpy as np


def helper_vmap(a, b):
    sin_a = np.sin(a)
    helper = sin_a * b
    return helper


def calls_helper_vmap(x, w):
    z = helper_vmap(x, w)
    z_times_x = z * x
    sum_z_times_x = np.sum(z_times_x, axis=1)
    helper_w = helper(w, 2.0)
    sum_helper_w = np.sum(helper_w)
    calls_helper = sum_z_times_x + sum_helper_w
    return calls_helper
