import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def max_ties_grad(x):
    max_x = np.max(x)
    maximum_x = np.maximum(x, 0.5)
    sum_maximum_x = np.sum(maximum_x)
    total = max_x + sum_maximum_x
    x_0 = x[0]
    minimum_x = np.minimum(x, x_0)
    sum_minimum_x = np.sum(minimum_x)
    max_ties = total + sum_minimum_x
    max_ties_bar = grad_seed(max_ties)
    # return np.max(x) + np.sum(np.maximum(x, 0.5)) + np.sum(np.minimum(x, x[0]))
    minimum_x_bar = np.broadcast_to(max_ties_bar, np.shape(minimum_x))
    x1_share = np.where(x == minimum_x, np.where(x_0 == minimum_x, 0.5, 1.0), 0.0)
    x2_share = np.where(x_0 == minimum_x, np.where(x == minimum_x, 0.5, 1.0), 0.0)
    x_bar = unbroadcast(minimum_x_bar * x1_share, x)
    x_0_bar = unbroadcast(minimum_x_bar * x2_share, x_0)
    x_bar_2 = np.zeros_like(x)
    x_bar_2[0] += x_0_bar
    x_bar = x_bar + x_bar_2
    maximum_x_bar = np.broadcast_to(max_ties_bar, np.shape(maximum_x))
    x1_share_2 = np.where(x == maximum_x, np.where(0.5 == maximum_x, 0.5, 1.0), 0.0)
    x_bar = x_bar + maximum_x_bar * x1_share_2
    winners = x == max_x
    count = np.sum(winners * np.ones_like(max_x), axis=None, keepdims=True)
    share = max_ties_bar / count
    x_bar = x_bar + np.where(winners, share, share * 0.0)
    return x_bar
