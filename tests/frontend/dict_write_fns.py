"""Functions that write into a dict they built (tests/frontend/test_dict_writes.py).

Loaded twice: as written (s2s transforms them) and by ``jax_twin`` with ``np`` bound
to ``jax.numpy`` (JAX's results are the oracle)."""

import numpy as np

KEYS = ("w", "b")


def write_constant_keys(x):
    out = {}
    out["a"] = x * 2.0
    out["b"] = np.sin(x)
    return np.sum(out["a"] * out["b"])


def write_into_dict_call(x):
    out = dict()
    out["a"] = x * 2.0
    out["a"] = out["a"] + np.cos(x)  # a key written twice: the second value
    out["a"] += x * x  # `+=` on an item
    return np.sum(out["a"] ** 2)


def write_into_literal(x):
    out = {"c": x, "a": x * 0.5}
    out["a"] = np.tanh(x)  # replaces, keeps the key's place
    out["d"] = out["c"] * out["a"]
    return np.sum(out["d"]) + np.sum(out["c"])


def write_keys_by_name(x):
    key = "w"
    out = {}
    out[key] = x**3
    return np.sum(out["w"])


def write_loop_over_keys(x):
    out = {"c": x}
    for k in ("a", "b"):
        out[k] = x * 2.0 + out["c"]
    total = 0.0
    for k in KEYS:  # a module constant's keys, read at each call
        out[k] = np.sin(x) if k == "w" else np.cos(x)
        total = total + np.sum(out[k] * out["a"])
    return total + np.sum(out["b"])


def write_in_runtime_loop(x, n=3):
    out = {"acc": x * 0.0, "last": x}
    for i in range(n):
        out["acc"] = out["acc"] + out["last"] * (i + 1.0)
        out["last"] = np.sin(out["last"])
    return np.sum(out["acc"]) + np.sum(out["last"])


def write_in_branches(x):
    out = {"a": x}
    if np.sum(x) > 0:
        out["a"] = x * 2.0
        out["b"] = np.sin(x)
    else:
        out["b"] = np.cos(x)
    out["c"] = out["a"] * out["b"]
    return np.sum(out["c"])


def write_values_and_items(x):
    out = {}
    out["a"] = x
    out["b"] = x * x
    parts = [np.sum(v) for v in out.values()]
    return sum(parts) + sum(np.sum(v * 2.0) for k, v in out.items())


def write_and_return(x):
    out = {}
    out["sin"] = np.sin(x)
    out["sq"] = x * x
    return out


def callee_writes(x):
    """A callee that builds a dict by writes, called by the transformed function."""
    stats = write_and_return(x * 1.5)
    return np.sum(stats["sin"] * stats["sq"]) + write_constant_keys(x)


# ---- refused: no sound meaning, or a write another name would see --------------------


def key_from_runtime_loop(x):
    out = {}
    for i in range(3):
        out[i] = x * i
    return np.sum(out[0])


def keys_change_in_loop(x):
    out = {"a": x}
    for i in range(3):
        out["b"] = x * i
    return np.sum(out["b"])


def keys_differ_on_branches(x):
    out = {"a": x}
    if np.sum(x) > 0:
        out["b"] = x
    return np.sum(out["a"])


def write_seen_through_alias(x):
    out = {"a": x}
    alias = out
    out["b"] = x * 2.0
    return np.sum(alias["a"])


def write_after_append(x):
    out = {"a": x}
    seen = []
    for i in range(2):
        out["a"] = out["a"] * 2.0
        seen.append(out)
    return np.sum(np.stack([d["a"] for d in seen]))


def write_into_argument(x, params):
    params["w"] = x
    return np.sum(params["w"])


def keyed_by_module_constant(x):
    """A dict whose keys come from a module tuple, returned: its key set is the
    module's at each call."""
    out = {}
    for k in KEYS:
        out[k] = np.sin(x) * len(k)
    return out


def unknown_call_in_a_written_loop(x):
    out = {"a": x}
    for i in range(2):
        out["a"] = np.no_such_function(out["a"])
    return np.sum(out["a"])


def write_keys_loop_in_runtime_loop(x, n=3):
    """A loop over constant keys inside a loop over range(n): unrolled, then the
    items split into names the outer loop carries."""
    out = {"a": x, "b": x * 2.0}
    for i in range(n):
        for k in ("a", "b"):
            out[k] = np.sin(out[k]) + 0.1 * i
    return np.sum(out["a"] * out["b"])


def copy_then_write(x):
    """dict(d) of a dict the function built: a copy; writing into it leaves d as is."""
    base = {"a": x, "b": x * 2.0}
    out = dict(base)
    out["a"] = np.sin(x)
    return np.sum(out["a"] * base["a"] + out["b"])


def copy_of_argument(x, params):
    out = dict(params)
    return np.sum(out["w"] * out["b"] * x)


def write_into_argument_copy(x, params):
    out = dict(params)
    out["w"] = x
    return np.sum(out["w"] * out["b"])
