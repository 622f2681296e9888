"""Functions of tests/frontend/test_idiom_leftovers2.py (issue 23's second leftovers):
a dict argument's keys as values; a list times an array argument; dicts an `if` or a
loop binds, on the JAX backend; dicts merged and copied; a few everyday idioms.  JAX
runs this same source as its oracle (``*_ref``: the same computation written with
``np.asarray`` where JAX itself refuses the spelling)."""

import numpy as np

# ---- 1. a dict argument's keys, as values ------------------------------------------


def tuple_of_keys(p):
    ks = tuple(p)
    return sum(np.sum(np.sin(p[k]) * (i + 1.0)) for i, k in enumerate(ks))


def list_of_keys_indexed(p):
    ks = list(p)
    return np.sum(p[ks[0]] * np.cos(p[ks[-1]])) * len(ks)


def sorted_keys_value(p):
    ks = sorted(p)
    return np.sum(p[ks[0]] ** 2) + 2.0 * np.sum(p[ks[1]])


def sorted_keys_reversed(p):
    first = sorted(p, reverse=True)[0]
    return np.sum(np.tanh(p[first]) * p[sorted(p)[0]])


def keys_of_the_view(p):
    ks, ls = tuple(p.keys()), list(p.keys())
    return np.sum(p[ks[0]] * p[ls[1]] + p[ls[-1]])


def comprehension_of_keys(p):
    ks = [k for k in p]
    total = 0.0
    for i, k in enumerate(ks):
        total = total + (i - 0.5) * np.sum(p[k] ** 3)
    return total


def loop_and_tests(p):
    total = 0.0
    for k in p:
        total = total + np.sum(np.sin(p[k])) * len(p)
    if "b" in p:
        total = total + np.sum(p["b"])
    if "zz" not in p:
        total = total * 2.0
    return total


def keys_in_a_loop_header(p):
    total = 0.0
    for j, k in enumerate(tuple(p)):
        total = total + np.sum(p[k] * (j + 1.0)) * ("c" in tuple(p))
    return total


# ---- 2. a list times an array argument ---------------------------------------------


def list_times_argument(x, a, b):
    return np.sum(np.sin([a, b, 1.0] * x))


def list_times_argument_ref(x, a, b):
    return np.sum(np.sin(np.asarray([a, b, 1.0]) * x))


def argument_times_tuple(x, a, b):
    y = x * 2.0
    return np.sum((y * (a, b, a * b)) ** 2)


def argument_times_tuple_ref(x, a, b):
    y = x * 2.0
    return np.sum((y * np.asarray((a, b, a * b))) ** 2)


def computed_times_list(x, a, b):
    return np.sum(np.cos(x) * [a, a * b, 3.0])


def computed_times_list_ref(x, a, b):
    return np.sum(np.cos(x) * np.asarray([a, a * b, 3.0]))


def repeated_by_count(x, a, n):
    return np.sum(np.stack([x * a] * n))


# ---- 3. dicts an `if` or a loop binds (the JAX backend keeps their key order) -------


def dict_through_if(x):
    d = {"w": x, "b": 2.0 * x}
    if np.sum(x) > 0:
        d = {"w": x * 3.0, "b": np.sin(x)}
    return d


def dict_through_loop(x, n):
    d = {"z": x, "a": 2.0 * x}
    for _ in range(n):
        d = {"z": d["z"] * 1.1, "a": d["a"] + np.sin(d["z"])}
    return d


def dict_through_while(x):
    d = {"w": x, "b": 2.0 * x}
    while np.sum(np.abs(d["w"])) < 10.0:
        d = {"w": d["w"] * 2.0, "b": d["b"] + 1.0}
    return d


def dict_in_a_tuple_through_if(x):
    out = (x, {"z": x, "a": x * 2.0})
    if np.max(x) > 0.5:
        out = (x * 2.0, {"z": np.cos(x), "a": x})
    return out


def loss_of_a_dict_through_loop(x, n):
    d = dict_through_loop(x, n)
    return np.sum(d["z"] * d["a"])


# ---- 4. structures that differ (their messages name the keys) -----------------------


def returns_other_keys(x):
    if np.sum(x) > 0:
        return {"w": x, "b": x}
    return {"w": x}


def binds_an_argument_or_a_literal(x, p):
    d = {"w": x}
    if np.sum(x) > 0:
        d = p
    return np.sum(d["w"])


def loop_adds_a_key(x, p):
    d = {"w": x}
    for _ in range(3):
        d = {k: v * 2.0 for k, v in p.items()}
    return np.sum(d["w"])


def empty_dict_on_one_path(x):
    d = {}
    if np.sum(x) > 0:
        d["w"] = x
    return np.sum(x)


def reads_a_missing_key(p):
    return np.sum(p["a"] * p["b"])


# ---- 5. dicts merged and copied; everyday idioms ------------------------------------


def spread_and_override(x, p):
    d = {**p, "w": x}
    total = 0.0
    for i, v in enumerate(d.values()):
        total = total + (i + 1.0) * np.sum(v * x)
    return total


def union_with_a_literal(x, p):
    d = p | {"w": x * 2.0}  # (main: a zero gradient, silently)
    return np.sum(d["w"] * d["a"])


def literal_union_argument(x, p):
    d = {"w": x, "extra": np.sin(x)} | p
    return np.sum(d["w"] * d["extra"]) + np.sum(d["a"])


def dict_with_keywords(x, p):
    d = dict(p, w=np.cos(x))
    return np.sum(d["w"] * d["a"]) + len(d)


def copy_then_write(x, p):
    d = dict(p)
    d["w"] = d["a"] * x
    d["new"] = np.tanh(x)
    return np.sum(d["w"] + d["new"] * d["a"])


def update_by_argument(x, p):
    d = {"w": x, "q": x**2}
    d.update(p)
    d.update(q=np.sin(x))
    return np.sum(d["w"] * d["q"] + d["a"])


def dict_of_zip(x):
    names = ["a", "b"]
    d = dict(zip(names, [x, np.sin(x)]))
    e = dict([("u", x * 2.0), ("v", x)])
    return np.sum(d["a"] * d["b"] + e["u"] * e["v"])


def divmod_and_shape(x):
    q, r = divmod(x, 0.5)
    n, m = divmod(x.shape[0], 2)
    s = tuple(x.shape)
    return np.sum(np.reshape(q * r + r**2, s)) * n + m


def reversed_tuple_literal(x):
    t = (x, 2.0 * x, np.sin(x))
    return np.sum(t[::-1][0] * t[-1] + t[::2][1])


# ---- refused, located ----------------------------------------------------------------


def tuple_of_array(x):
    rows = tuple(x)
    return np.sum(rows[0])


def sorted_values(t):
    return np.sum(sorted(t)[0])


def len_of_a_list_argument(xs):
    return len(xs) * np.sum(xs[0] * xs[-1])  # (vmap on main: the batch size, silently)


def tuple_of_values_and_sorted_items(x, p):
    vals = tuple(p.values())
    items = sorted(p.items(), reverse=True)
    return np.sum(vals[0] * x) + np.sum(items[0][1] * vals[-1])


def copy_method_then_write(x, p):
    e = p.copy()
    e["w"] = e["a"] * x
    e["new"] = np.sin(x)
    return np.sum(e["w"] * e["new"]) + len(e)


def key_chosen_by_a_value(x, p):
    k = "w" if np.sum(x) > 0 else "a"  # (main read p["a"] on both paths: silently)
    return np.sum(p[k] * x)


def key_rebound_in_a_loop(x, p):
    k = "w"
    out = 0.0
    for _ in range(2):
        out = out + np.sum(p[k] * x)  # (main read p["w"] in both iterations)
        k = "a"
    return out


SKIP = ("a", "zz")


def filtered_by_key(x, p):
    decay = sum(np.sum(v**2) for k, v in p.items() if k not in SKIP)
    q = {k: v * x for k, v in p.items() if k != "a"}
    firsts = [p[k] for k in sorted(p) if k == "w" or k == "a"]
    named = sum(np.sum(v * x) for k, v in p.items() if "bias" not in k)  # (a substring)
    named = named + sum(np.sum(p[k]) for k in p if k.startswith("w") or k.endswith("a"))
    return np.sum(x) * decay + sum(np.sum(v) for v in q.values()) + np.sum(
        firsts[0] * x) + named


def unpacked_views(p):
    a, b, c = p.values()
    (k0, v0), _, (k2, v2) = p.items()
    first = next(iter(p.values()))
    return np.sum(a * np.sin(c) + v0 * v2 * first) + np.sum(p[max(p)] * p[min(p)])


def view_idioms(x, p):
    first = next(iter(p.values()))
    top = p[max(p)] * p[min(p)]
    return np.sum(first * x) + np.sum(sum(p.values()) * top * x)


def star_shapes_and_columns(x):
    y = np.zeros((*x.shape, 2)) + x[..., None] ** 2
    z = y.reshape(-1, *y.shape[1:])
    pairs = [(x, 1.0), (2.0 * x, 3.0)]
    cols, weights = zip(*pairs)
    d = dict.fromkeys(["a", "b"], 0.5)
    return np.sum(z * d["a"]) + np.sum(cols[1] * weights[0] + cols[0] * weights[1])


def written_by_the_loop_key(x, p):
    out = {"first": np.cos(x)}
    for k, v in p.items():
        out[k] = v * x  # (refused on main: "the key `k` is known only when ... runs")
    total = 0.0
    for i, k in enumerate(out):
        total = total + (i + 1.0) * np.sum(out[k] ** 2)
    return total


def dict_of_items(x, p):
    d = dict(sorted(p.items()))
    e = dict(p.items())
    return sum(np.sum(v * x) * (i + 1.0) for i, v in enumerate(d.values())) + np.sum(
        e["a"] * x)
