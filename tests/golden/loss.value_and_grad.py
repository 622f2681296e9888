import numpy as np
from s2s.runtime import unbroadcast, grad_seed, matmul_rhs_bar


def loss_value_and_grad(w, x, y):
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
    # pred = np.tanh(x @ w)
    x_at_w_bar = pred_bar * (1 - pred**2)
    w_bar = matmul_rhs_bar(x_at_w_bar, x, w)
    return loss, w_bar
