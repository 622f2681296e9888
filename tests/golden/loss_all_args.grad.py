import numpy as np
from s2s.runtime import unbroadcast, grad_seed, matmul_lhs_bar, matmul_rhs_bar


def loss_grad(w, x, y):
    x_at_w = x @ w
    pred = np.tanh(x_at_w)
    pred_minus_y = pred - y
    pred_minus_y_sq = pred_minus_y**2
    loss = np.mean(pred_minus_y_sq)
    loss_bar = grad_seed(loss)
    # return np.mean((pred - y) ** 2)
    pred_minus_y_sq_bar = np.broadcast_to(
        loss_bar / np.size(pred_minus_y_sq), np.shape(pred_minus_y_sq)
    )
    pred_minus_y_bar = pred_minus_y_sq_bar * (2 * pred_minus_y)
    pred_bar = unbroadcast(pred_minus_y_bar, pred)
    y_bar = unbroadcast(-pred_minus_y_bar, y)
    # pred = np.tanh(x @ w)
    x_at_w_bar = pred_bar * (1 - pred**2)
    x_bar = matmul_lhs_bar(x_at_w_bar, x, w)
    w_bar = matmul_rhs_bar(x_at_w_bar, x, w)
    return (w_bar, x_bar, y_bar)
