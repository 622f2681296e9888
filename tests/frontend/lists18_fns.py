"""Issue 23 (lists18): tuple state a loop rebinds through comprehensions, tuples read at
a loop's run-time counter, joins of lists a loop grows, transformed again (hessian,
vmap of grad).  Run against JAX on the same source by tests/frontend/test_lists18.py."""

import numpy as np


def _rates(state, a):
    u, v = state
    return (a * u - 0.7 * u * v, 0.7 * u * v - v)


def _step(s, h, k):
    return tuple(si + h * ki for si, ki in zip(s, k))


def tuple_state_zip_callees(x, h=0.1, steps=4):
    # `state = tuple(... for s, p, q in zip(state, k1, k2))`: the callees' results zipped
    # with a tuple the loop rebinds (unrolled for its length before the loop)
    state = (x + 1.0, x * 0.5 + 0.5)
    for _ in range(steps):
        k1 = _rates(state, 0.9)
        k2 = _rates(_step(state, h / 2, k1), 0.9)
        state = tuple(s + h / 2 * (p + q) for s, p, q in zip(state, k1, k2))
    return np.sum(state[0] * state[1] + state[0] ** 2)


def tuple_state_generator(x, steps=3):
    # a generator over the tuple itself, three items, in a `while` loop
    state = (x * 0.5, x ** 2, np.sin(x))
    k = 0
    while k < steps:
        state = tuple(np.tanh(s) * 1.1 + 0.3 * s for s in state)
        k += 1
    a, b, c = state
    return np.sum(a * b - c)


def _legendre(x, n=4, coefs=(1.0, -0.5, 2.0, 0.25, 1.5)):
    p = [np.ones_like(x), x]
    for k in range(1, n):
        p.append(((2 * k + 1) * x * p[-1] - k * p[-2]) / (k + 1))
    return sum(c * np.sum(q) for c, q in zip(coefs, p))


def legendre_callee(x):
    # the callee's tuple default `coefs` read at the comprehension loop's counter
    return _legendre(x) + 0.5 * _legendre(x * 0.3, n=2)


_W = np.linspace(-0.5, 0.5, 8 * 4).reshape(8, 4)


def split_in_loop(x, steps=3):
    # `np.concatenate([x, h])` in a loop: its gradient splits by the list saved on the
    # tape; `np.split` of a value per example
    h = np.zeros(2, dtype=x.dtype)
    c = np.zeros(2, dtype=x.dtype)
    for _ in range(steps):
        z = _W @ np.concatenate([x, h]) + 0.1
        i, f, g, o = np.split(z, 4)
        c = np.tanh(f) * c + np.tanh(i) * g
        h = np.tanh(o) * np.tanh(c)
    return np.sum(h ** 2) + np.sum(c)


def concat_grown_list(x):
    # `np.concatenate(parts)` of a list grown over `range(x.size)`: as many pieces as x
    # has elements, known only when the code runs
    parts = [x[:0]]
    for i in range(x.size):
        parts.append(np.sin(x[:i + 1]) * x[i] * (i + 1))
    flat = np.concatenate(parts)
    return np.sum(flat * np.linspace(0.1, 1.0, flat.size)) + np.sum(x ** 2)


def stack_grown_list(x):
    # `np.stack(rows)` of a list grown in a loop of run-time length
    rows = []
    for i in range(x.size):
        rows.append(x * x[i])
    m = np.stack(rows) if x.size else np.zeros((0, 0), dtype=x.dtype)
    return np.sum(np.tanh(m) * m.T) + np.sum(x)


def tuple_state_break(x):
    # a tuple carried as its leaves, left by `break` with the value the body ends with
    state = (x, x * 2.0)
    for i in range(5):
        state = tuple(np.sin(s) + 0.3 * s for s in state)
        if i == 2:
            break
    return np.sum(state[0] * state[1] ** 2)


def dict_state_while_break(x):
    # a dict carried as its leaves through a `while` left by `break`
    d = {"a": x, "b": x * 2.0}
    k = 0
    while k < 10:
        d = {"a": np.sin(d["a"]) * d["b"], "b": d["b"] * 0.9}
        if k == 3:
            break
        k += 1
    return np.sum(d["a"] * d["b"])
