"""Functions for tests/frontend/test_probe14_fixes.py: forms of the fourteenth newcomer
probe (newcomer_probe14_fns.py) s2s refused, or failed on, where JAX or Python runs
them, with variations that try to break each fix."""

from __future__ import annotations

import numpy as np

# ---- loops over a module dict zipped, or unpacking its values ------------------------

LAYERS = {"first": (np.array([[0.5, -0.3], [0.2, 0.8]]), np.array([0.1, 0.0])),
          "second": (np.array([[1.0, 0.4], [-0.6, 0.3]]), np.array([0.0, -0.2]))}
COEF = {"a": 1.0, "b": 2.5}


def zip_items_nested(x):
    h = x
    for (name, (w, b)), scale in zip(LAYERS.items(), (1.0, 0.5)):
        h = np.tanh(w @ h + b) * scale
    return np.sum(h ** 2)


def zip_items_indexed(x):
    h = x
    for (name, wb), scale in zip(LAYERS.items(), [1.0, 0.5]):
        h = np.tanh(wb[0] @ h + wb[1]) * scale
    return np.sum(h ** 2)


def zip_keys_values(x):
    h = x
    for key, (w, b) in zip(LAYERS.keys(), LAYERS.values()):
        h = np.sin(w @ h) + b * len(key)
    return np.sum(h ** 2)


def zip_two_module_dicts(x):
    s = 0.0
    for (k, c), (k2, (w, b)) in zip(COEF.items(), LAYERS.items()):
        s = s + c * np.sum((w @ x + b) ** 2)
    return s


def enumerate_zip_items(x):
    s = 0.0
    for i, ((k, c), scale) in enumerate(zip(COEF.items(), [0.5, 2.0])):
        s = s + c * scale * x[i] ** 2
    return s


def items_unpacked_value(x):
    h = x
    for name, (w, b) in LAYERS.items():
        h = np.tanh(w @ h + b)
    return np.sum(h ** 2) + len(name)


def items_value_indexed(x):
    h = x
    for name, wb in LAYERS.items():
        h = np.tanh(wb[0] @ h + wb[1])
    return np.sum(h ** 2)


def items_unpacked_continue(x):
    s = 0.0
    for name, (w, b) in LAYERS.items():
        if name == "first":
            continue
        s = s + np.sum((w @ x + b) ** 2)
    return s


def zip_values_with_array(x):
    s = 0.0
    for c, xi in zip(COEF.values(), x):
        s = s + c * xi ** 2
    return s


# ---- `carry, ys = init, []`: a tuple literal assigned to names ------------------------


def tuple_literal_list_start(x):
    ys, total = [], 0.0
    for v in x:
        total = total + v
        ys.append(total ** 2)
    return np.sum(np.stack(ys)) + total


def scan_helper_tuple_start(x):
    def scan(f, init, xs):
        carry, ys = init, []
        for v in xs:
            carry, y = f(carry, v)
            ys.append(y)
        return carry, np.stack(ys)

    def step(c, v):
        c = 0.8 * c + v
        return c, c ** 2

    c, ys = scan(step, 0.0, x)
    return c + np.sum(ys) + np.sum(ys[1:] * ys[:-1])


def tuple_literal_reads_its_targets(x):
    a, b = x, 2.0 * x
    a, b = b * a, a  # (the right side first: b is the old a)
    c, d = [], a + b
    c.append(d)
    c.append(a)
    return np.sum(c[0] * c[1]) + np.sum(b ** 3)


# ---- np.eye(n, dtype=...) / np.tri(n, dtype=...) ---------------------------------------


def eye_bool_mask(pos):
    n = pos.shape[0]
    d = pos[:, None, :] - pos[None, :, :]
    r2 = np.sum(d ** 2, axis=-1) + np.eye(n)
    off = ~np.eye(n, dtype=bool)
    return np.sum(np.where(off, 1 / np.sqrt(r2), 0.0))


def eye_dtype_of_input(m):
    k = m.shape[0]
    a = m @ m.T + np.eye(k, dtype=m.dtype) + np.identity(k, dtype=m.dtype)
    lower = np.tri(k, dtype=bool)
    return np.sum(np.where(lower, a, 0.0) ** 2) + np.sum(np.eye(k, 4, 1, dtype=m.dtype))


# ---- early returns ending in a `raise` -------------------------------------------------

TARGET4 = np.array([0.5, -0.2, 0.9, 0.1])


def kernel_by_name(r, c=0.7, kind="welsch"):
    z = (r - TARGET4) / c
    if kind == "welsch":
        return np.sum(1 - np.exp(-0.5 * z ** 2))
    if kind == "geman_mcclure":
        return np.sum(z ** 2 / (1 + z ** 2))
    raise ValueError(f"unknown kernel {kind!r}")


def two_kernels(r):
    return kernel_by_name(r, kind="geman_mcclure") + 0.5 * kernel_by_name(r)


def unknown_kernel(r):
    return kernel_by_name(r, kind="cauchy")


def returns_by_value_then_raise(r):
    s = np.sum(r ** 2)
    if s > 0.5:
        return s * np.sum(r)
    elif s > 0.1:
        return 2 * s
    raise ValueError("too small")


# ---- list.sort(key=...) / list.reverse() -------------------------------------------------


def list_sort_by_key(x):
    items = [("c", 0.5), ("a", 2.0), ("b", -1.0)]
    items.sort(key=lambda kv: kv[0])
    ws = np.array([w for _, w in items])
    return np.sum(ws * x[:3] ** 2) + np.sum(x[3:])


def list_sort_reverse_ints(x):
    ks = [3, 1, 2]
    ks.sort(reverse=True)
    return sum(x[k] * (i + 1) for i, k in enumerate(ks))


def list_reverse_of_values(x):
    parts = [x[0], x[1] * 2, x[2]]
    parts.reverse()
    return parts[0] * 3 + parts[1] - parts[2] ** 2


def list_sort_seen_by_another_name(x):
    items = [("c", 0.5), ("a", 2.0), ("b", -1.0)]
    other = items
    items.sort(key=lambda kv: kv[0])
    return np.sum(np.array([w for _, w in other]) * x[:3])


# ---- `cfg = cfg or {...}` ----------------------------------------------------------------


def config_or_default(x, cfg=None):
    cfg = cfg or {"act": "softplus", "scale": 1.5}
    acts = {"softplus": lambda v: np.logaddexp(0.0, v), "relu": lambda v: np.maximum(0, v)}
    act = acts[cfg.get("act", "relu")]
    return np.sum(act(cfg.get("scale", 1.0) * x) * cfg.get("weight", 0.5))


def scalar_or_default(x, scale=None):
    scale = scale or 2.0
    return np.sum(scale * x ** 2)


# ---- window functions ----------------------------------------------------------------------


def windowed_frames(x, width=4, hop=2):
    win = np.hamming(width)
    frames = [x[i:i + width] * win for i in range(0, x.shape[0] - width + 1, hop)]
    return np.sum(np.log1p(np.stack(frames) ** 2))


def window_zoo(x):
    n = x.shape[0]
    w = np.hanning(n) + np.blackman(n) - np.bartlett(n) + 0.1 * np.kaiser(n, 2.5)
    return np.sum(np.sin(x * (1.0 + w)) ** 2)


# ---- a loop over np.split / np.array_split's parts ------------------------------------------


def array_split_parts(x):
    parts = np.array_split(x, 2)
    return sum(np.sum(p ** 2) * (i + 1) for i, p in enumerate(parts))


def split_at_indices_loop(x):
    total = 0.0
    for k, p in enumerate(np.split(x, [1, 3])):
        total = total + (k + 1) * np.sum(np.sin(p) * p)
    return total


def split_sections_list(m):
    rows = np.split(m, 2, axis=0)
    return sum(np.sum(r @ r.T) for r in rows) + len(rows)


# ---- a constant list joined with a batched array ------------------------------------------


def pad_by_list_literals(q):
    padded = np.concatenate([[0.0], q, [0.0]])
    d = np.diff(padded)
    return np.sum(0.5 * d ** 2 + 0.25 / 3 * d ** 3)


def stack_and_rows_of_literals(m):
    rows = np.concatenate([[[0.0, 1.0]], m, ((2.0, -1.0),)], axis=0)
    pair = np.stack([[0.5, 0.5], m[0]])
    return np.sum(rows ** 2 * np.arange(rows.shape[0])[:, None]) + np.sum(np.sin(pair))
