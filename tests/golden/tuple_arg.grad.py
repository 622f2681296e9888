import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def tuple_arg_grad(pair):
    first = pair[0]
    second = pair[1]
    first_times_second = first * second
    sum_first_times_second = np.sum(first_times_second)
    max_first = np.max(first)
    tuple_arg = sum_first_times_second + max_first
    tuple_arg_bar = grad_seed(tuple_arg)
    # return np.sum(first * second) + np.max(first)
    winners = first == max_first
    count = np.sum(winners * np.ones_like(max_first), axis=None, keepdims=True)
    share = tuple_arg_bar / count
    first_bar = np.where(winners, share, share * 0.0)
    first_times_second_bar = np.broadcast_to(
        tuple_arg_bar, np.shape(first_times_second)
    )
    first_bar = first_bar + unbroadcast(first_times_second_bar * second, first)
    second_bar = unbroadcast(first_times_second_bar * first, second)
    return (first_bar, second_bar)
