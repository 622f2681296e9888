import numpy as np
from s2s.runtime import unbroadcast


def loss_jacrev(w, x, y, loss_bar):
    n_batch = np.shape(loss_bar)[0]
    x_at_w = x @ w
    pred = np.tanh(x_at_w)
    pred_minus_y = pred - y
    pred_minus_y_sq = pred_minus_y**2
    size_pred_minus_y_sq = np.size(pred_minus_y_sq)
    ratio = loss_bar / size_pred_minus_y_sq
    shape_pred_minus_y_sq = np.shape(pred_minus_y_sq)
    pred_minus_y_sq_bar = np.broadcast_to(
        ratio[:, None], (n_batch, *shape_pred_minus_y_sq)
    )
    pred_minus_y_times_2 = 2 * pred_minus_y
    pred_minus_y_bar = pred_minus_y_sq_bar * pred_minus_y_times_2
    pred_bar = unbroadcast(
        pred_minus_y_bar, np.broadcast_to(pred, (n_batch, *np.shape(pred)))
    )
    pred_sq = pred**2
    v1_minus_pred_sq = 1 - pred_sq
    x_at_w_bar = pred_bar * v1_minus_pred_sq
    w_bar = unbroadcast(
        (np.swapaxes(x, -1, -2) @ x_at_w_bar[..., None])[..., 0],
        np.broadcast_to(w, (n_batch, *np.shape(w))),
    )
    return (w_bar,)
