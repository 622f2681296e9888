"""Functions of tests/frontend/test_containers17.py (issue 23): a dict of lists grown by
``d["k"].append(v)``, a callee's ``range(n_layers)`` of a default or literal int, and
``sorted(..., key=..., reverse=...)`` over a dict's items by their keys.  (JAX's twin:
``newcomer_harness.twin`` of this module.)"""

import numpy as np


def history_steps(w, lr=0.2):
    history = {"loss": [], "w": [], "steps": 0}
    for _ in range(3):
        loss = np.sum(np.sin(w) * w ** 2)
        history["loss"].append(loss)
        w = w - lr * (np.cos(w) * w ** 2 + 2.0 * w * np.sin(w))
        history["w"].append(w)
    best = history["loss"][0]
    for v in history["loss"]:
        best = best * 0.5 + v
    return best + np.sum(np.stack(history["w"]) ** 2) * len(history["w"]) + sum(history["loss"])


def history_in_branch(w):
    log = {"seen": [w[0]]}
    log["seen"].append(np.sum(w))
    if w.shape[0] > 2:
        log["seen"].append(np.prod(w[:3]))
    return log["seen"][-1] * log["seen"][0] + sum(log["seen"])


def history_aliased(w):
    history = {"loss": []}
    first = history["loss"]
    history["loss"].append(np.sum(w))
    return first[0]


def _layers(x, n_layers=3):
    params = {f"w{i}": x * (i + 1.0) for i in range(n_layers)}
    h = x
    for i in range(n_layers):
        h = np.tanh(params[f"w{i}"] * h + 0.1 * i)
    return np.sum(h ** 2)


def layers_callee(x):
    return _layers(x) + _layers(x, 2) * _layers(x, n_layers=1)


def sorted_items_reverse(x):
    parts = {"c": x[2:], "a": x[:2], "b": x[1:3]}
    ordered = sorted(parts.items(), key=lambda kv: kv[0], reverse=True)
    ascending = sorted(parts.items(), key=lambda kv: kv[0])
    return sum(w * np.sum(v ** 2) for w, (_, v) in zip((1.0, 2.0, 3.0), ordered)) + np.sum(
        ascending[0][1] * ascending[-1][1][:2])


def sorted_ties_stable(x):
    pairs = [("b", x[0]), ("a", x[1]), ("b", x[2]), ("a", x[3])]
    ordered = sorted(pairs, key=lambda p: p[0], reverse=True)
    return sum((k + 1.0) * v for k, (_, v) in enumerate(ordered))


def sorted_by_values(x):
    parts = {"a": x[:2], "b": x[2:]}
    ordered = sorted(parts.items(), key=lambda kv: np.sum(kv[1]))
    return np.sum(ordered[0][1])


def _keyed(x, n=2):
    p = {f"w{i}": x * (i + 1.0) for i in range(n)}
    return sum(np.sum(np.sin(p[f"w{i}"]) * x) for i in range(n))


def small_callee(x):
    return _keyed(x) * _keyed(x, 1)


def _apply_spec(x, spec):
    if spec["kind"] == "scale":
        return spec["a"] * x
    if spec["kind"] in ("shift", "offset"):
        return x + spec["b"]
    return np.tanh(x) * spec["c"]


def specs_of_other_keys(x):
    specs = ({"kind": "scale", "a": 2.0}, {"kind": "shift", "b": 0.5},
             {"kind": "squash", "c": -1.5}, {"kind": "offset", "b": x[0]})
    for s in specs:
        x = np.sin(_apply_spec(x, s))
    return np.sum(x ** 2)


SPECS = ({"kind": "scale", "a": 2.0}, {"kind": "shift", "b": 0.5})


def module_specs(x):
    for s in SPECS:
        x = np.sin(_apply_spec(x, s))
    return np.sum(x ** 2)
