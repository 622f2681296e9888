import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def loss_grad_jacfwd(w, x, y, w_dot):
    n_batch = np.shape(w_dot)[0]
    x_at_w = x @ w
    x_at_w_dot = (x @ w_dot[..., None])[..., 0]
    pred = np.tanh(x_at_w)
    pred_sq_2 = pred**2
    v1_minus_pred_sq_2 = 1 - pred_sq_2
    pred_dot = x_at_w_dot * v1_minus_pred_sq_2
    pred_minus_y = pred - y
    shape_pred_minus_y = np.shape(pred_minus_y)
    pred_minus_y_dot = np.broadcast_to(pred_dot, (n_batch, *shape_pred_minus_y))
    pred_minus_y_sq = pred_minus_y**2
    loss = np.mean(pred_minus_y_sq)
    loss_bar = grad_seed(loss)
    size_pred_minus_y_sq = np.size(pred_minus_y_sq)
    ratio = loss_bar / size_pred_minus_y_sq
    shape_pred_minus_y_sq = np.shape(pred_minus_y_sq)
    pred_minus_y_sq_bar = np.broadcast_to(ratio, shape_pred_minus_y_sq)
    pred_minus_y_times_2 = 2 * pred_minus_y
    pred_minus_y_times_2_dot = 2 * pred_minus_y_dot
    pred_minus_y_bar = pred_minus_y_sq_bar * pred_minus_y_times_2
    pred_minus_y_bar_dot = pred_minus_y_sq_bar * pred_minus_y_times_2_dot
    pred_bar = unbroadcast(pred_minus_y_bar, pred)
    pred_bar_dot = unbroadcast(
        pred_minus_y_bar_dot, np.broadcast_to(pred, (n_batch, *np.shape(pred)))
    )
    pred_sq = pred**2
    pred_times_2 = 2 * pred
    pred_sq_dot = pred_dot * pred_times_2
    v1_minus_pred_sq = 1 - pred_sq
    v1_minus_pred_sq_dot = -pred_sq_dot
    prod = pred_bar_dot * v1_minus_pred_sq
    prod_2 = pred_bar * v1_minus_pred_sq_dot
    x_at_w_bar_dot = prod + prod_2
    w_bar_dot = unbroadcast(
        (np.swapaxes(x, -1, -2) @ x_at_w_bar_dot[..., None])[..., 0],
        np.broadcast_to(w, (n_batch, *np.shape(w))),
    )
    return w_bar_dot
