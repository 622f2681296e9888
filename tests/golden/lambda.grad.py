import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def lambda_grad(x):
    x_pow_3 = x**3
    x_times_2 = 2.0 * x
    diff = x_pow_3 - x_times_2
    out = np.sum(diff)
    out_bar = grad_seed(out)
    # lambda_fn = lambda x: np.sum(x**3 - 2.0 * x)  # noqa: E731
    diff_bar = np.broadcast_to(out_bar, np.shape(diff))
    x_pow_3_bar = unbroadcast(diff_bar, x_pow_3)
    x_times_2_bar = unbroadcast(-diff_bar, x_times_2)
    x_bar = x_times_2_bar * 2.0
    x_bar_2 = x_pow_3_bar * (3 * x**2)
    x_bar = x_bar + x_bar_2
    return x_bar
