import numpy as np


def loss_jacfwd(w, x, y, w_dot):
    n_batch = np.shape(w_dot)[0]
    x_at_w = x @ w
    x_at_w_dot = (x @ w_dot[..., None])[..., 0]
    pred = np.tanh(x_at_w)
    pred_sq = pred**2
    v1_minus_pred_sq = 1 - pred_sq
    pred_dot = x_at_w_dot * v1_minus_pred_sq
    pred_minus_y = pred - y
    shape_pred_minus_y = np.shape(pred_minus_y)
    pred_minus_y_dot = np.broadcast_to(pred_dot, (n_batch, *shape_pred_minus_y))
    pred_minus_y_times_2 = 2 * pred_minus_y
    pred_minus_y_sq_dot = pred_minus_y_dot * pred_minus_y_times_2
    loss_dot = np.mean(pred_minus_y_sq_dot, axis=1)
    return loss_dot
