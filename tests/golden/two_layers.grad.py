import numpy as np
from s2s.runtime import grad_seed, matmul_lhs_bar, matmul_rhs_bar


def inner_layer_vjp(h, w, inner_layer_bar):
    h_at_w = h @ w
    inner_layer = np.tanh(h_at_w)
    # return np.tanh(h @ w)
    h_at_w_bar = inner_layer_bar * (1 - inner_layer**2)
    h_bar = matmul_lhs_bar(h_at_w_bar, h, w)
    w_bar = matmul_rhs_bar(h_at_w_bar, h, w)
    return (h_bar, w_bar)


def inner_layer_vjp_w(h, w, inner_layer_bar):
    h_at_w = h @ w
    inner_layer = np.tanh(h_at_w)
    # return np.tanh(h @ w)
    h_at_w_bar = inner_layer_bar * (1 - inner_layer**2)
    w_bar = matmul_rhs_bar(h_at_w_bar, h, w)
    return w_bar


def two_layers_grad(params, x):
    w1 = params["w1"]
    h = inner_layer(x, w1)
    w2 = params["w2"]
    out = inner_layer(h, w2)
    out_sq = out**2
    two_layers = np.mean(out_sq)
    two_layers_bar = grad_seed(two_layers)
    # return np.mean(out**2)
    out_sq_bar = np.broadcast_to(two_layers_bar / np.size(out_sq), np.shape(out_sq))
    out_bar = out_sq_bar * (2 * out)
    # out = inner_layer(h, params["w2"])
    h_bar, w2_bar = inner_layer_vjp(h, w2, out_bar)
    # h = inner_layer(x, params["w1"])
    w1_bar = inner_layer_vjp_w(x, w1, h_bar)
    return {"w1": w1_bar, "w2": w2_bar}
