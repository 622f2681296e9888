"""``**kwargs`` and dict arguments read by their keys (``kw.get``, ``"k" in kw``,
``{**kw, ...}``), and ``x in y`` over arrays (tests/frontend/test_kwargs_dicts.py).
The dict functions are loaded again by ``jax_twin`` as the oracle; the array ``in``
functions run as they are in NumPy (JAX's traced arrays refuse ``in``)."""

import numpy as np

W0 = np.array([0.5, -1.0, 2.0])


def scaled(x, scale=1.0, shift=0.0):
    return np.sum(np.sin(x) * scale + shift)


# ---- **kwargs: its keys are the call's keyword names -----------------------------


def get_default(x, **kw):
    s = kw.get("scale", 2.0)
    return np.sum(x * s)


def get_array_default(x, **kw):
    w = kw.get("w", W0)
    return np.sum(np.sin(x) * w)


def get_value_default(x, **kw):
    w = kw.get("w", x * x)
    return np.sum(np.sin(x) * w)


def get_none(x, **kw):
    s = kw.get("shift")
    if s is None:
        return np.sum(x**2)
    return np.sum((x - s) ** 2)


def branch_on_key(x, **kw):
    if "scale" in kw:
        return np.sum(x * kw["scale"])
    return np.sum(x)


def branch_not_in(x, **kw):
    if "scale" not in kw:
        return np.sum(np.cos(x))
    y = np.sin(x) * kw["scale"]
    return np.sum(y)


def choice_on_key(x, **kw):
    s = kw["scale"] if "scale" in kw else 0.5
    t = "shift" in kw and kw["shift"] > 0.0
    return np.sum(x * s) + (1.0 if t else 0.0) * np.sum(x)


def key_tests(x, **kw):
    k = "scale"
    found = k in kw
    if found and len(kw) > 1:
        return np.sum(x * kw[k]) * len(kw)
    if not kw:
        return np.sum(x * x)
    return np.sum(np.tanh(x))


def walks_kw(x, **kw):
    total = 0.0
    for k, v in kw.items():
        total = total + np.sum(np.sin(x) * v)
    for v in kw.values():
        total = total + np.sum(x * v)
    return total + len(list(kw.keys())) * np.sum(x)


def passes_kw(x, **kw):
    return scaled(x, **kw)


def merges_kw(x, **kw):
    more = dict(kw, shift=0.25)
    return scaled(x, **more)


def spreads_kw(x, **kw):
    more = {**kw, "scale": 3.0}
    return scaled(x, **more) + scaled(x, **{"shift": 1.0, **kw})


def returns_kw_array(x, **kw):
    w = kw.get("w", W0)
    return np.sum(x * w), w


def callee_kw(x, **kw):
    return get_default(x, **kw) + branch_on_key(x * 2.0, **kw)


def calls_with_keys(x):
    return callee_kw(x, scale=np.sum(x)) + callee_kw(x)


# ---- dict arguments: keys known per call -----------------------------------------


def dict_get(x, params):
    b = params.get("b", 0.5)
    return np.sum(np.sin(x) * params["w"]) + b


def dict_in(x, params):
    if "b" in params:
        return np.sum(x * params["w"] + params["b"])
    return np.sum(x * params["w"])


def dict_not_in(x, params):
    extra = 0.0 if "b" not in params else np.sum(params["b"] * x)
    return np.sum(np.cos(x) * params["w"]) + extra


# ---- `in` over arrays: NumPy's (y == x).any() ------------------------------------


def in_array(x):
    t = 1.0 if 2.0 in x else 0.0
    return np.sum(x) * t


def in_array_if(x):
    if 2.0 in x:
        return np.sum(np.sin(x))
    return np.sum(np.cos(x))


def not_in_array(x, v):
    if v not in x:
        return np.sum(x * v)
    return np.sum(x * x)


def in_computed(x):
    if 1.0 in np.round(x):
        return np.sum(np.exp(x))
    return np.sum(x**3)


def in_tuple_arg(x, pair):
    if 2.0 in pair:
        return np.sum(x * pair[0])
    return np.sum(x * pair[1])


def in_other(y, x, v):
    if v in x:
        return np.sum(np.sin(y) * y)
    return np.sum(np.cos(y))


def in_list_of_arrays(x, items):
    if x in items:
        return np.sum(x)
    return np.sum(2.0 * x)


def calls_in_array(x):
    return in_array_if(x) + in_array_if(x * 2.0)


def with_scale(x):
    return branch_not_in(x, scale=2.0) + choice_on_key(x, shift=1.0)


def with_params(x):
    return dict_in(x, {"w": x * x, "b": 0.5}) + dict_get(x, {"w": np.cos(x)})


# ---- the `in` functions with their test decided: JAX's oracle (jax_twin), the
# decision made by a Python loop over the elements in the test file ---------------


def in_array_body(x, found):
    t = 1.0 if found else 0.0
    return np.sum(x) * t


def in_array_if_body(x, found):
    if found:
        return np.sum(np.sin(x))
    return np.sum(np.cos(x))


def not_in_array_body(x, v, found):
    if not found:
        return np.sum(x * v)
    return np.sum(x * x)


def in_computed_body(x, found):
    if found:
        return np.sum(np.exp(x))
    return np.sum(x**3)


def in_other_body(y, x, v, found):
    if found:
        return np.sum(np.sin(y) * y)
    return np.sum(np.cos(y))


def in_tuple_arg_body(x, pair, found):
    if found:
        return np.sum(x * pair[0])
    return np.sum(x * pair[1])


def pops_kw(x, **kw):
    s = kw.pop("scale", 1.0)
    return s * scaled(x, **kw)


def in_element_of_tuple(x, pair):
    if 2.0 in pair[0]:
        return np.sum(x * pair[1])
    return np.sum(x)


def in_element_of_tuple_body(x, pair, found):
    if found:
        return np.sum(x * pair[1])
    return np.sum(x)
