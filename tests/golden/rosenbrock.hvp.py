import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def rosenbrock_grad_jvp(x, x_dot):
    x_slice = x[1:]
    x_slice_dot = x_dot[1:]
    x_slice_2 = x[:-1]
    x_slice_2_dot = x_dot[:-1]
    x_slice_2_sq = x_slice_2**2
    x_slice_2_sq_dot = x_slice_2_dot * (2 * x_slice_2)
    diff = x_slice - x_slice_2_sq
    diff_dot = x_slice_dot - x_slice_2_sq_dot
    diff_sq = diff**2
    diff_sq_times_100 = 100.0 * diff_sq
    x_slice_3 = x[:-1]
    x_slice_3_dot = x_dot[:-1]
    v1_minus_x_slice_3 = 1.0 - x_slice_3
    v1_minus_x_slice_3_dot = -x_slice_3_dot
    v1_minus_x_slice_3_sq = v1_minus_x_slice_3**2
    total = diff_sq_times_100 + v1_minus_x_slice_3_sq
    rosenbrock = np.sum(total)
    rosenbrock_bar = grad_seed(rosenbrock)
    shape_total = np.shape(total)
    total_bar = np.broadcast_to(rosenbrock_bar, shape_total)
    diff_sq_times_100_bar = unbroadcast(total_bar, diff_sq_times_100)
    v1_minus_x_slice_3_sq_bar = unbroadcast(total_bar, v1_minus_x_slice_3_sq)
    prod = 2 * v1_minus_x_slice_3
    prod_dot = 2 * v1_minus_x_slice_3_dot
    v1_minus_x_slice_3_bar = v1_minus_x_slice_3_sq_bar * prod
    v1_minus_x_slice_3_bar_dot = v1_minus_x_slice_3_sq_bar * prod_dot
    x_slice_3_bar = -v1_minus_x_slice_3_bar
    x_slice_3_bar_dot = -v1_minus_x_slice_3_bar_dot
    x_bar = np.zeros_like(x)
    x_bar_slice = x_bar[:-1]
    total_2 = x_bar_slice + x_slice_3_bar
    total_2_dot = np.broadcast_to(x_slice_3_bar_dot, np.shape(total_2))
    x_bar[:-1] = total_2
    x_bar_dot = np.zeros_like(x_bar)
    x_bar_dot[:-1] = total_2_dot
    diff_sq_bar = diff_sq_times_100_bar * 100.0
    diff_times_2 = 2 * diff
    diff_times_2_dot = 2 * diff_dot
    diff_bar = diff_sq_bar * diff_times_2
    diff_bar_dot = diff_sq_bar * diff_times_2_dot
    x_slice_bar = unbroadcast(diff_bar, x_slice)
    x_slice_bar_dot = unbroadcast(diff_bar_dot, x_slice)
    neg_diff_bar = -diff_bar
    neg_diff_bar_dot = -diff_bar_dot
    x_slice_2_sq_bar = unbroadcast(neg_diff_bar, x_slice_2_sq)
    x_slice_2_sq_bar_dot = unbroadcast(neg_diff_bar_dot, x_slice_2_sq)
    x_slice_2_times_2 = 2 * x_slice_2
    x_slice_2_times_2_dot = 2 * x_slice_2_dot
    x_slice_2_bar = x_slice_2_sq_bar * x_slice_2_times_2
    x_slice_2_bar_dot = (
        x_slice_2_sq_bar_dot * x_slice_2_times_2
        + x_slice_2_sq_bar * x_slice_2_times_2_dot
    )
    x_bar_slice_2 = x_bar[:-1]
    x_bar_slice_2_dot = x_bar_dot[:-1]
    total_3 = x_bar_slice_2 + x_slice_2_bar
    total_3_dot = x_bar_slice_2_dot + x_slice_2_bar_dot
    x_bar[:-1] = total_3
    x_bar_dot[:-1] = total_3_dot
    x_bar_slice_3 = x_bar[1:]
    x_bar_slice_3_dot = x_bar_dot[1:]
    total_4 = x_bar_slice_3 + x_slice_bar
    total_4_dot = x_bar_slice_3_dot + x_slice_bar_dot
    x_bar[1:] = total_4
    x_bar_dot[1:] = total_4_dot
    return x_bar, x_bar_dot
