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
        h_2_t = h[t]
        h_2_t_times_1_1 = h_2_t * 1.1
        total = h_2_t_times_1_1 + 0.2
        tanh_total = np.tanh(total)
        h_overwritten = np.copy(h[t_plus_1])
        h[t_plus_1] = tanh_total
        tape.append((h, h_overwritten, t_plus_1, tanh_total))
    h_2_n = h[n]
    h_2_n_sq = h_2_n**2
    sum_h_2_n_sq = np.sum(h_2_n_sq)
    h_2_slice = h[1:]
    sum_h_2_slice = np.sum(h_2_slice)
    prod = sum_h_2_slice * 0.1
    recurrence = sum_h_2_n_sq + prod
    recurrence_bar = grad_seed(recurrence)
    # return np.sum(h[n] ** 2) + np.sum(h[1:]) * 0.1
    sum_h_2_slice_bar = recurrence_bar * 0.1
    h_2_slice_bar = np.broadcast_to(sum_h_2_slice_bar, np.shape(h_2_slice))
    h_2_bar = np.zeros_like(h)
    h_2_bar[1:] += h_2_slice_bar
    h_2_n_sq_bar = np.broadcast_to(recurrence_bar, np.shape(h_2_n_sq))
    h_2_n_bar = h_2_n_sq_bar * (2 * h_2_n)
    np.add.at(h_2_bar, n, h_2_n_bar)
    for t in reversed(range(n)):
        h, h_overwritten, t_plus_1, tanh_total = tape.pop()
        # h[t + 1] = np.tanh(h[t] * 1.1 + 0.2)
        h_2_bar_2 = np.array(h_2_bar)
        h_2_bar_2[t_plus_1] = 0
        tanh_total_bar = unbroadcast(h_2_bar[t_plus_1], tanh_total)
        h[t_plus_1] = h_overwritten
        total_bar = tanh_total_bar * (1 - tanh_total**2)
        h_2_t_bar = total_bar * 1.1
        h_2_bar_2_2 = np.zeros_like(h)
        np.add.at(h_2_bar_2_2, t, h_2_t_bar)
        h_2_bar_2 = h_2_bar_2 + h_2_bar_2_2
        h_2_bar = h_2_bar_2
    # h[0] = x
    x_bar = unbroadcast(h_2_bar[0], x)
    h[0] = h_overwritten_2
    return x_bar
