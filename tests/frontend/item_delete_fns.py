"""``del d["k"]``, ``d.pop("k")`` as a statement, ``del ys[-1]`` and ``ys.pop(-1)``
(tests/frontend/test_item_deletes.py).  Each runs in JAX on the same source."""

import numpy as np


def deletes_a_key(x):
    d = {"a": x * 2.0, "b": x**2, "c": np.sin(x)}
    del d["b"]
    return np.sum(sum(d.values()))


def pops_a_key(x):
    d = {"a": x * 2.0, "b": x**2, "c": np.sin(x)}
    d.pop("b")
    d["e"] = d["a"] * d["c"]
    return np.sum(d["e"]) + np.sum(d["a"])


def deletes_then_rewrites(x):
    d = {"w": x, "b": x * 3.0}
    del d["w"]
    d["w"] = np.tanh(x)
    return np.sum(d["w"] * d["b"])


def deletes_the_last_item(x):
    parts = [x, x * 2.0, x**2]
    del parts[-1]
    return np.sum(parts[-1] * x)


def pops_minus_one(x):
    parts = [x, np.cos(x), x**3]
    parts.pop(-1)
    last = parts.pop(-1)
    return np.sum(last * parts[0])


def deletes_in_a_loop(x):
    ys = []
    for k in range(4):
        ys.append(x * (k + 1.0))
        if k % 2 == 1:
            del ys[-1]
    return np.sum(sum(ys) * x)


def deletes_two(x):
    d = {"a": x, "b": x * 2.0, "c": x**2}
    del d["a"], d["c"]
    return np.sum(d["b"] ** 2)


# refused, located at the `del`


def deletes_a_shared_dict(x):
    d = {"a": x, "b": x * 2.0}
    e = d
    del d["b"]
    return np.sum(e["a"])


def deletes_a_missing_key(x):
    d = {"a": x}
    del d["b"]
    return np.sum(d["a"])


def deletes_on_one_path(x):
    d = {"a": x, "b": x * 2.0}
    if np.sum(x) > 0:
        del d["b"]
    return np.sum(d["a"])


def deletes_the_first_item(x):  # (runs since list_edits.py: test_list_fronts.py)
    parts = [x, x * 2.0]
    del parts[0]
    return np.sum(parts[0])


def deletes_an_attribute(x):
    t = np.sum(x)
    del t.real
    return t
