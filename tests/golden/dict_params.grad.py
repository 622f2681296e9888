import numpy as np
from s2s.runtime import unbroadcast, grad_seed, matmul_lhs_bar, matmul_rhs_bar


def dict_params_grad(params, x):
    w = params["w"]
    x_at_w = x @ w
    b = params["b"]
    x_at_w_plus_b = x_at_w + b
    h = np.tanh(x_at_w_plus_b)
    h_sq = h**2
    dict_params = np.sum(h_sq)
    dict_params_bar = grad_seed(dict_params)
    # return np.sum(h**2)
    h_sq_bar = np.broadcast_to(dict_params_bar, np.shape(h_sq))
    h_bar = h_sq_bar * (2 * h)
    # h = np.tanh(x @ w + params["b"])
    x_at_w_plus_b_bar = h_bar * (1 - h**2)
    x_at_w_bar = unbroadcast(x_at_w_plus_b_bar, x_at_w)
    b_bar = unbroadcast(x_at_w_plus_b_bar, b)
    x_bar = matmul_lhs_bar(x_at_w_bar, x, w)
    w_bar = matmul_rhs_bar(x_at_w_bar, x, w)
    return ({"w": w_bar, "b": b_bar}, x_bar)
