import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def loop_enumerate_if_grad(m, w):
    tape = []
    tape_2 = []
    tape_3 = []
    m_shape = np.shape(m)
    m_shape_1 = m_shape[1]
    acc = np.zeros(m_shape_1)
    for i in range(len(m)):
        row = m[i]
        i_mod_2 = i % 2
        i_mod_2_equal_0 = i_mod_2 == 0
        if i_mod_2_equal_0:
            row_times_w = row * w
            acc_2 = acc + row_times_w
            tape.append((row_times_w,))
        else:
            cos_row = np.cos(row)
            acc_2 = acc * cos_row
            tape_2.append((cos_row,))
        tape_3.append((acc, i_mod_2_equal_0, row))
        acc = acc_2
    acc_sq = acc**2
    loop_enumerate_if = np.sum(acc_sq)
    loop_enumerate_if_bar = grad_seed(loop_enumerate_if)
    # return np.sum(acc**2)
    acc_sq_bar = np.broadcast_to(loop_enumerate_if_bar, np.shape(acc_sq))
    acc_bar = acc_sq_bar * (2 * acc)
    m_bar = np.zeros_like(m)
    w_bar = np.zeros_like(w)
    for i in reversed(range(len(m))):
        acc, i_mod_2_equal_0, row = tape_3.pop()
        if i_mod_2_equal_0:
            (row_times_w,) = tape.pop()
            # acc = acc + row * w
            acc_bar_2 = unbroadcast(acc_bar, acc)
            row_times_w_bar = unbroadcast(acc_bar, row_times_w)
            row_bar = unbroadcast(row_times_w_bar * w, row)
            w_bar = w_bar + unbroadcast(row_times_w_bar * row, w)
        else:
            (cos_row,) = tape_2.pop()
            # acc = acc * np.cos(row)
            acc_bar_2 = unbroadcast(acc_bar * cos_row, acc)
            cos_row_bar = unbroadcast(acc_bar * acc, cos_row)
            row_bar = -cos_row_bar * np.sin(row)
        # for i, row in enumerate(m):
        m_bar[i] += row_bar
        acc_bar = acc_bar_2
    return (m_bar, w_bar)
