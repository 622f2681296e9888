import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def recurrence_grad(x, n):
    tape = []
    n_plus_1 = n + 1
    x_shape = np.shape(x)
    x_shape_0 = x_shape[0]
    n_plus_1_x_shape_0 = (n_plus_1, x_shape_0)
    h = np.zeros(n_plus_1_x_shape_0)
    h_overwritten_2 = np.copy(h[0])
    h[0] = x
    for t in range(n):
        t_plus_1 = t + 1
        h_t = h[t]
        h_t_times_1_1 = h_t * 1.1
        h_t_times_1_1_plus_0_2 = h_t_times_1_1 + 0.2
        tanh_2 = np.tanh(h_t_times_1_1_plus_0_2)
        h_overwritten = np.copy(h[t_plus_1])
        h[t_plus_1] = tanh_2
        tape.append((h_overwritten, t_plus_1, tanh_2))
    h_n = h[n]
    h_n_sq = h_n**2
    sum_h_n_sq = np.sum(h_n_sq)
    h_slice = h[1:]
    sum_h_slice = np.sum(h_slice)
    sum_h_slice_times_0_1 = sum_h_slice * 0.1
    recurrence = sum_h_n_sq + sum_h_slice_times_0_1
    recurrence_bar = grad_seed(recurrence)
    # return np.sum(h[n] ** 2) + np.sum(h[1:]) * 0.1
    sum_h_slice_bar = recurrence_bar * 0.1
    h_slice_bar = np.broadcast_to(sum_h_slice_bar, np.shape(h_slice))
    h_bar = np.zeros_like(h)
    h_bar[1:] += h_slice_bar
    h_n_sq_bar = np.broadcast_to(recurrence_bar, np.shape(h_n_sq))
    h_n_bar = h_n_sq_bar * (2 * h_n)
    np.add.at(h_bar, n, h_n_bar)
    for t in reversed(range(n)):
        h_overwritten, t_plus_1, tanh_2 = tape.pop()
        # h[t + 1] = np.tanh(h[t] * 1.1 + 0.2)
        h_2_bar = np.array(h_bar)
        h_2_bar[t_plus_1] = 0
        tanh_2_bar = unbroadcast(h_bar[t_plus_1], tanh_2)
        h[t_plus_1] = h_overwritten
        h_t_times_1_1_plus_0_2_bar = tanh_2_bar * (1 - tanh_2**2)
        h_t_bar = h_t_times_1_1_plus_0_2_bar * 1.1
        h_2_bar[t] += h_t_bar
        h_bar = h_2_bar
    # h[0] = x
    x_bar = unbroadcast(h_bar[0], x)
    h[0] = h_overwritten_2
    return x_bar
