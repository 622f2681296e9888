import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def loop_carried_grad(x, n):
    tape = []
    y = x
    for i in range(n):
        y_times_x = y * x
        sin_y = np.sin(y)
        y_2 = y_times_x + sin_y
        tape.append((sin_y, y, y_times_x))
        y = y_2
    loop_carried = np.sum(y)
    loop_carried_bar = grad_seed(loop_carried)
    # return np.sum(y)
    y_bar = np.broadcast_to(loop_carried_bar, np.shape(y))
    x_bar = np.zeros_like(x)
    for i in reversed(range(n)):
        sin_y, y, y_times_x = tape.pop()
        # y = y * x + np.sin(y)
        y_times_x_bar = unbroadcast(y_bar, y_times_x)
        sin_y_bar = unbroadcast(y_bar, sin_y)
        y_bar_2 = sin_y_bar * np.cos(y)
        y_bar_2 = y_bar_2 + unbroadcast(y_times_x_bar * x, y)
        x_bar = x_bar + unbroadcast(y_times_x_bar * y, x)
        y_bar = y_bar_2
    # y = x
    x_bar = x_bar + y_bar
    return x_bar
