import numpy as np
from s2s.runtime import unbroadcast, grad_seed, prod_of_others


def reductions_grad(x):
    s = np.sum(x, axis=0)
    m = np.mean(x, axis=1, keepdims=True)
    x_0 = x[0]
    p = np.prod(x_0)
    s_sq = s**2
    sum_s_sq = np.sum(s_sq)
    m_times_x = m * x
    sum_m_times_x = np.sum(m_times_x)
    total = sum_s_sq + sum_m_times_x
    total_plus_p = total + p
    max_x = np.max(x)
    total_2 = total_plus_p + max_x
    min_x = np.min(x, axis=(0, 1))
    reductions = total_2 - min_x
    reductions_bar = grad_seed(reductions)
    # return np.sum(s**2) + np.sum(m * x) + p + np.max(x) - np.min(x, axis=(0, 1))
    total_2_bar = unbroadcast(reductions_bar, total_2)
    min_x_bar = -reductions_bar
    min_x_bar_2 = np.expand_dims(min_x_bar, (0, 1))
    min_x_2 = np.expand_dims(min_x, (0, 1))
    winners = x == min_x_2
    count = np.sum(winners * np.ones_like(min_x_2), axis=(0, 1), keepdims=True)
    share = min_x_bar_2 / count
    x_bar = np.where(winners, share, share * 0.0)
    winners_2 = x == max_x
    count_2 = np.sum(winners_2 * np.ones_like(max_x), axis=None, keepdims=True)
    share_2 = total_2_bar / count_2
    x_bar = x_bar + np.where(winners_2, share_2, share_2 * 0.0)
    m_times_x_bar = np.broadcast_to(total_2_bar, np.shape(m_times_x))
    m_bar = unbroadcast(m_times_x_bar * x, m)
    x_bar = x_bar + unbroadcast(m_times_x_bar * m, x)
    s_sq_bar = np.broadcast_to(total_2_bar, np.shape(s_sq))
    s_bar = s_sq_bar * (2 * s)
    # p = np.prod(x[0])
    x_0_bar = total_2_bar * prod_of_others(x_0, None)
    x_bar[0] += x_0_bar
    # m = np.mean(x, axis=1, keepdims=True)
    count_3 = np.size(x) / max(np.size(m), 1)
    x_bar = x_bar + np.broadcast_to(m_bar / count_3, np.shape(x))
    # s = np.sum(x, axis=0)
    s_bar_2 = np.expand_dims(s_bar, 0)
    x_bar = x_bar + np.broadcast_to(s_bar_2, np.shape(x))
    return x_bar
