import numpy as np
from s2s.runtime import unbroadcast, grad_seed


def loop_carried_grad(x, n):
    tape = []
    checkpoints = []
    y = x
    segment = int(np.sqrt(len(range(n)))) + 1
    for start in range(0, n, segment):
        checkpoints.append((y,))
        stop = np.minimum(start + segment, n)
        for i in range(start, stop):
            y_times_x = y * x
            sin_y = np.sin(y)
            y_2 = y_times_x + sin_y
            y = y_2
    loop_carried = np.sum(y)
    loop_carried_bar = grad_seed(loop_carried)
    # return np.sum(y)
    y_bar = np.broadcast_to(loop_carried_bar, np.shape(y))
    x_bar = np.zeros_like(x)
    for start in reversed(range(0, n, segment)):
        # run this segment again from its checkpoint, onto the tape
        (y,) = checkpoints.pop()
        stop = np.minimum(start + segment, n)
        for i in range(start, stop):
            y_times_x = y * x
            sin_y = np.sin(y)
            y_2 = y_times_x + sin_y
            tape.append((sin_y, y, y_times_x))
            y = y_2
        for i in reversed(range(start, stop)):
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
