import numpy as np


def loss_jvp(w, x, y, w_dot, x_dot, y_dot):
    x_at_w = x @ w
    x_at_w_dot = x_dot @ w + x @ w_dot
    pred = np.tanh(x_at_w)
    pred_dot = x_at_w_dot * (1 - pred**2)
    pred_minus_y = pred - y
    pred_minus_y_dot = pred_dot - y_dot
    pred_minus_y_sq = pred_minus_y**2
    pred_minus_y_sq_dot = pred_minus_y_dot * (2 * pred_minus_y)
    loss = np.mean(pred_minus_y_sq)
    loss_dot = np.mean(pred_minus_y_sq_dot)
    return loss, loss_dot
