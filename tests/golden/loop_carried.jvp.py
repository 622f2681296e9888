import numpy as np


def loop_carried_jvp(x, n, x_dot):
    y = x
    y_dot = x_dot
    for i in range(n):
        y_times_x = y * x
        y_times_x_dot = y_dot * x + y * x_dot
        sin_y = np.sin(y)
        sin_y_dot = y_dot * np.cos(y)
        y_2 = y_times_x + sin_y
        y_2_dot = y_times_x_dot + sin_y_dot
        y = y_2
        y_dot = y_2_dot
    loop_carried = np.sum(y)
    loop_carried_dot = np.sum(y_dot)
    return loop_carried, loop_carried_dot
