import numpy as np


def inner_layer_jvp(h, w, h_dot, w_dot):
    h_at_w = h @ w
    h_at_w_dot = h_dot @ w + h @ w_dot
    inner_layer = np.tanh(h_at_w)
    inner_layer_dot = h_at_w_dot * (1 - inner_layer**2)
    return inner_layer, inner_layer_dot


def two_layers_jvp(params, x, params_dot, x_dot):
    w1 = params["w1"]
    h, h_dot = inner_layer_jvp(x, w1, x_dot, params_dot["w1"])
    w2 = params["w2"]
    out, out_dot = inner_layer_jvp(h, w2, h_dot, params_dot["w2"])
    out_sq = out**2
    out_sq_dot = out_dot * (2 * out)
    two_layers = np.mean(out_sq)
    two_layers_dot = np.mean(out_sq_dot)
    return two_layers, two_layers_dot
