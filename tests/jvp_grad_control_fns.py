"""Functions with a loop inside an ``if``: the second-order transforms of their
gradients (jvp, hessian, jacfwd, jacrev, vmap of grad) are checked against JAX by
tests/test_jvp_of_grad_control.py.  ``a`` (or ``x``) is what is differentiated;
``c`` decides the ``if`` where vmap must keep the test unbatched."""

import numpy as np


def loop_in_if(a):
    if a < 20:
        for i in range(3):
            a = a * a
    return a


def loop_in_if_sin(a):
    if a < 20:
        for i in range(3):
            a = np.sin(a) * a + a
    return a * 2.0


def while_in_if(a):
    if a < 20:
        while a < 50:
            a = a * 1.5 + np.sin(a)
    return a


def loop_in_else(a):
    if a > 20:
        a = a * 3.0
    else:
        for i in range(3):
            a = a * a + 1.0
    return a


def loops_in_both(a):
    if a < 20:
        for i in range(3):
            a = a * a
    else:
        for i in range(2):
            a = np.sqrt(a) * a
    return a


def nested_ifs(a):
    if a < 20:
        if a > 0:
            for i in range(2):
                a = a * np.cos(a)
        else:
            for i in range(3):
                a = a * a
    return a


def loop_in_nested_if(a):
    b = a * 2.0
    if a < 20:
        b = b + 1.0
        if a > 1.0:
            for i in range(3):
                b = b * a
    return b


def break_in_loop_in_if(a):
    if a < 20:
        for i in range(6):
            a = a * a
            if a > 10.0:
                break
    return a


def nested_loops_in_if(a):
    if a < 20:
        for i in range(2):
            for j in range(2):
                a = a * np.sin(a) + a
    return a


def loop_in_if_in_loop(a):
    s = a
    for k in range(2):
        if s < 20:
            for i in range(2):
                s = s * a
    return s


def two_ifs_one_test(a):
    b = a
    if a < 20:
        for i in range(2):
            b = b * a
    c = b * 3.0
    if a < 20:
        for i in range(2):
            c = c * b
    return c


def vector_loop_in_if(x):
    if np.sum(x) < 20:
        for i in range(3):
            x = np.sin(x) * x + x
    return np.sum(x * x)


def vector_while_in_if(x):
    if np.sum(x) < 20:
        while np.sum(x * x) < 10.0:
            x = x * 1.5 + 0.1
    return np.sum(np.sin(x))


def writes_in_loop_in_if(a):
    y = np.zeros(3)
    if a < 20:
        for i in range(3):
            y[i] = a * (i + 1.0)
    return np.sum(y * y)


def appends_in_loop_in_if(a):
    ys = [a]
    b = a
    if a < 20:
        for i in range(3):
            b = b * a
            ys.append(b)
    return np.sum(np.stack(ys) ** 2)


# lists built on both paths of an `if`, grown in a loop on one of them: a grown list
# after the `if` (its cotangent one Python list), of known length on the other path


def list_grown_in_else(a):
    if a > 20:
        ys = []
        ys.append(a)
    else:
        ys = []
        for i in range(3):
            ys.append(a * (i + 1.0))
    return np.sum(np.stack(ys) ** 2)


def list_grown_in_if(a):
    if a < 20:
        ys = []
        for i in range(3):
            ys.append(a * (i + 1.0))
    else:
        ys = []
        ys.append(a)
    return np.sum(np.stack(ys) ** 2)


def list_literal_or_grown(a):
    if a > 20:
        ys = [a, 2.0 * a]
    else:
        ys = []
        for i in range(3):
            ys.append(a * i)
    return np.sum(np.stack(ys) ** 2)


def list_literal_appended_or_grown(a):
    if a > 20:
        ys = [a]
        ys.append(2.0 * a)
    else:
        ys = []
        for i in range(3):
            ys.append(np.sin(a) * i)
    return np.sum(np.stack(ys) ** 2)


def grown_or_list_literal(a):
    if a < 20:
        ys = []
        for i in range(3):
            ys.append(a * i)
    else:
        ys = [a, 3.0 * a]
    return np.sum(np.stack(ys) ** 2)


def decided_by_c(a, c):
    if c < 20:
        for i in range(3):
            a = a * a
    return a


def decided_by_c_while(a, c):
    if c < 20:
        while a < 50:
            a = a * 1.5 + np.sin(a)
    return a
