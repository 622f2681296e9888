"""Source functions for tests/frontend/test_comprehensions.py (loaded by jax_twin too)."""

import numpy as np

SCALES = (1.0, 2.0, 3.0)


def list_range(x):
    ys = [np.sin(x) * i for i in range(3)]
    return np.sum(ys[0] + ys[1] * ys[2])


def stack_tuple(x):
    return np.sum(np.stack([x * k for k in (1.0, 2.0)]) ** 2)


def sum_gen(x):
    return np.sum(sum(np.cos(x * k) for k in SCALES))


def over_rows(x):
    return np.sum(np.stack([np.sin(row) * 2.0 for row in x]))


def sum_rows(x):
    return np.sum(sum(row ** 2 for row in x))


def enum_list(x):
    return np.sum(sum([w * np.tanh(x * (i + 1)) for i, w in enumerate([1.0, 2.0])]))


def zip_args(x, y):
    return np.sum(sum([a * b for a, b in zip((x, y), (y, x))]))


def nested_filter(x):
    return np.sum(sum([x * a * b for a in range(4) if a % 2 == 1 for b in (1.0, 2.0)]))


def dict_comp(x):
    d = {k: x * v for k, v in {"a": 1.0, "b": 2.0}.items()}
    return np.sum(d["a"] * d["b"])


def concat_rows(x):
    return np.sum(np.concatenate([row * row for row in x]))


def max_static(x):
    return np.sum(x * max([1.0, 3.0, 2.0]))


def zip_rows(x, y):
    return np.sum(np.stack([a * np.cos(b) for a, b in zip(x, y)]))


def enumerate_rows(x):
    return sum(np.sum(row) * i for i, row in enumerate(x))


def nested_lists(x):
    grid = [[x * a + b for b in (0.0, 1.0)] for a in (1.0, 2.0)]
    return np.sum(grid[1][0] * grid[0][1])


def max_of_gen(x):
    return max(np.sum(x * k) for k in (1.0, -1.0, 0.5))


def tuple_of_gen(x):
    t = tuple(np.sin(x * k) for k in range(1, 3))
    return np.sum(t[0] * t[1])


def dict_values(x):
    d = {k: x * w for k, w in zip(("a", "b"), SCALES)}
    return np.sum(sum(d.values()))


def over_tuple_arg(ws, x):
    return np.sum(sum(w * x for w in ws))


def over_dict_arg(params, x):
    return np.sum(sum(params[k] * x for k in sorted(params)))


def calls_comprehension(x):
    return list_range(x) + 2.0 * sum_gen(x)


def filter_on_values(x):
    return sum(v for v in x if v > 0)


def filter_on_local(x):
    n = np.sum(x)
    return sum(x * k for k in range(3) if k < n)


def over_local_tuple(x):
    pair = (x, np.sin(x))
    return np.sum(sum(p * k for p, k in zip(pair, (1.0, 2.0))))


def shadowing_rows(x):
    return np.sum(np.stack([x * 2.0 for x in x])) + np.sum(x)


def nested_rows(x, y):
    return sum(np.sum(a * b) for a in x for b in y)


def dict_over_argument(params, x):
    new = {k: v * 2.0 for k, v in params.items() if np.sum(v) > 0}
    return np.sum(new["w"] * x)


def sum_appended_range(x):
    parts = []
    for i in range(3):
        parts.append(np.sin(x) * (i + 1.0))
    return np.sum(sum(parts) * x)


def sum_appended_rows(x):
    parts = []
    for row in x:
        parts.append(row * row)
    return np.sum(sum(parts, np.ones_like(x[0])))  # (with a start)


def sum_appended_n(x, n=4):
    parts = []
    for i in range(n):
        parts.append(np.tanh(x * i))
    return np.sum(sum(parts) * x)


def sum_appended_by_callee(x):
    return sum_appended_range(x) * 2.0 + sum_appended_rows(x)
