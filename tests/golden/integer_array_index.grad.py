import numpy as np
from s2s.runtime import grad_seed


def integer_array_index_grad(x):
    idx = np.array([0, 2, 2, 1])
    x_idx = x[idx]
    sin_x_idx = np.sin(x_idx)
    integer_array_index = np.sum(sin_x_idx)
    integer_array_index_bar = grad_seed(integer_array_index)
    # return np.sum(np.sin(x[idx]))
    sin_x_idx_bar = np.broadcast_to(integer_array_index_bar, np.shape(sin_x_idx))
    x_idx_bar = sin_x_idx_bar * np.cos(x_idx)
    x_bar = np.zeros_like(x)
    np.add.at(x_bar, idx, x_idx_bar)
    return x_bar
