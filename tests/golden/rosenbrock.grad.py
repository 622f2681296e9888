import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def rosenbrock_grad(x):
    x_slice = x[1:]
    x_slice_2 = x[:-1]
    x_slice_2_sq = x_slice_2**2
    diff = x_slice - x_slice_2_sq
    diff_sq = diff**2
    diff_sq_times_100 = 100.0 * diff_sq
    x_slice_3 = x[:-1]
    v1_minus_x_slice_3 = 1.0 - x_slice_3
    v1_minus_x_slice_3_sq = v1_minus_x_slice_3**2
    total = diff_sq_times_100 + v1_minus_x_slice_3_sq
    rosenbrock = np.sum(total)
    rosenbrock_bar = grad_seed(rosenbrock)
    # return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
    total_bar = np.broadcast_to(rosenbrock_bar, np.shape(total))
    diff_sq_times_100_bar = unbroadcast(total_bar, diff_sq_times_100)
    v1_minus_x_slice_3_sq_bar = unbroadcast(total_bar, v1_minus_x_slice_3_sq)
    v1_minus_x_slice_3_bar = v1_minus_x_slice_3_sq_bar * (2 * v1_minus_x_slice_3)
    x_slice_3_bar = -v1_minus_x_slice_3_bar
    x_bar = np.zeros_like(x)
    x_bar[:-1] += x_slice_3_bar
    diff_sq_bar = diff_sq_times_100_bar * 100.0
    diff_bar = diff_sq_bar * (2 * diff)
    x_slice_bar = unbroadcast(diff_bar, x_slice)
    x_slice_2_sq_bar = unbroadcast(-diff_bar, x_slice_2_sq)
    x_slice_2_bar = x_slice_2_sq_bar * (2 * x_slice_2)
    x_bar[:-1] += x_slice_2_bar
    x_bar[1:] += x_slice_bar
    return x_bar
