import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def nested_tree_grad(tree):
    pair = tree["pair"]
    a = pair[0]
    b = pair[1]
    a_times_b = a * b
    sum_a_times_b = np.sum(a_times_b)
    list_ = tree["list"]
    list_0 = list_[0]
    list_0_sq = list_0**2
    sum_list_0_sq = np.sum(list_0_sq)
    total = sum_a_times_b + sum_list_0_sq
    list__2 = tree["list"]
    list__2_1 = list__2[1]
    list__2_1_times_3 = list__2_1 * 3.0
    nested_tree = total + list__2_1_times_3
    nested_tree_bar = grad_seed(nested_tree)
    # return np.sum(a * b) + np.sum(tree["list"][0] ** 2) + tree["list"][1] * 3.0
    total_bar = unbroadcast(nested_tree_bar, total)
    list__2_1_bar = nested_tree_bar * 3.0
    list_0_sq_bar = np.broadcast_to(total_bar, np.shape(list_0_sq))
    list_0_bar = list_0_sq_bar * (2 * list_0)
    a_times_b_bar = np.broadcast_to(total_bar, np.shape(a_times_b))
    a_bar = unbroadcast(a_times_b_bar * b, a)
    b_bar = unbroadcast(a_times_b_bar * a, b)
    return {"pair": (a_bar, b_bar), "list": [list_0_bar, list__2_1_bar]}
