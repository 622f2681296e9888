"""The functions people actually write (issue 23, forms14): a ``match`` on a static
value with mapping, sequence, capture, class-of-builtin and guard patterns; the
Jacobians of a registered dataclass with meta fields (``n_layers``)."""

from __future__ import annotations

import dataclasses

import numpy as np

import s2s

# ---- 1. a match on a static dict, tuple or str -----------------------------------------

CFG = {"kind": "tanh", "scale": 2.0, "extra": 1}
MODE = ("adam", "cosine")


def match_module_dict(w):
    match CFG:
        case {"kind": "relu", **rest}:
            return np.sum(np.maximum(w, 0.0)) + len(rest)
        case {"kind": "tanh", "scale": s, **rest}:
            return s * np.sum(np.tanh(w)) + len(rest)
        case _:
            raise ValueError(f"unknown {CFG}")


def match_module_tuple(w):
    match MODE:
        case ("sgd", _):
            scale = 1.0
        case ("adam", "cosine") if CFG["scale"] > 1:
            scale = 0.5
        case [first, *rest]:
            scale = 2.0 + len(rest) + len(first)
        case _:
            scale = 3.0
    return scale * np.sum(np.sin(w))


def match_local_spec(w):
    spec = {"kind": "l2", "weight": 0.5}
    match spec:
        case {"kind": "l1", "weight": lam}:
            return lam * np.sum(np.abs(w))
        case {"kind": "l2", "weight": float(lam) | int(lam)} if lam > 0:
            return lam * np.sum(w ** 2)
        case _:
            return np.sum(w)


def match_str_param(w, mode="cube"):
    match mode:
        case str(name) if name == "square":
            return np.sum(w ** 2)
        case str():
            return np.sum(w ** 3)
    return np.sum(np.cos(w))


def match_dict_param(w, cfg={"kind": "l2", "weight": 0.5}):
    match cfg:
        case {"kind": "l1", "weight": lam}:
            return lam * np.sum(np.abs(w))
        case {"kind": "l2" | "sq", "weight": lam, **rest}:
            return lam * np.sum(w ** 2) + len(rest)
        case {"kind": "none"}:
            return 0.0 * np.sum(w)
    return np.sum(np.sin(w))


def match_tuple_param(w, sizes=(2, 3)):
    match sizes:
        case (a,):
            return a * np.sum(w)
        case (a, b):
            return np.sum(w ** 2) * b
        case [a, *rest]:
            return np.sum(np.cos(w)) * len(rest)


def match_on_array(w):
    match w:
        case [a, b]:
            return a * b
        case _:
            return np.sum(w)


# ---- 2. Jacobians of a registered dataclass with meta fields -----------------------------


@dataclasses.dataclass
class Stack:
    w: np.ndarray
    b: np.ndarray
    n_layers: int
    name: str = "mlp"


s2s.tree_util.register_dataclass(Stack, data_fields=["w", "b"],
                                 meta_fields=["n_layers", "name"])


def stacked(p, x):
    h = x
    for i in range(p.n_layers):
        h = np.tanh(h * p.w + p.b * (i + 1))
    scale = 2.0 if p.name == "mlp" else 0.5
    return scale * np.sum(h ** 2)


# ---- 3. a slice of a tuple or list argument, a starred unpacking of one ---------------------


def tail_sum(t):
    return np.sum(sum(t[1:]) ** 2)


def reversed_pair(t):
    a, b = t[::-1][:2]
    return np.sum(a * b)


def first_and_rest(t):
    first, *rest = t
    return np.sum(first * len(rest)) + sum(np.sum(r ** 2) for r in rest)


def every_other_back(t):
    total = 0.0
    for v in t[::-2]:
        total = total + np.sum(np.sin(v))
    return total


def head_and_rest_of_array(x):
    first, *mid, last = x
    return np.sin(first) * last + sum(m ** 2 for m in mid)


# ---- 4. dicts a callee returned, merged -----------------------------------------------------

XS = np.array([[1.0, 0.5], [0.2, -1.0], [0.3, 0.8]])
YS = np.array([0.5, -0.3, 0.9])


def step(w, x, y, lr=0.1) -> dict:
    r = x @ w - y
    g = 2.0 * x.T @ r / len(y)
    return {"loss": np.mean(r ** 2), "w": w - lr * g, "grad_norm": np.sqrt(np.sum(g ** 2))}


def merged_step_dicts(w):
    out = step(w, XS, YS)
    out |= {"extra": np.sum(w ** 3)}
    both = {**step(out["w"], XS, YS), **{"first": out["grad_norm"]}}
    again = step(both["w"], XS, YS) | both
    return again["loss"] + 0.1 * both["first"] + out["extra"] + len(again)


def handed_back(d):
    return d


def merged_into_a_handed_dict(w, cfg={"scale": 2.0}):
    out = handed_back(cfg)
    out |= {"extra": 1.0}  # (Python changes `cfg` itself: refused)
    return out["scale"] * np.sum(w)


# ---- 5. d["k"] += v where other names hold the item --------------------------------------


def item_alias_chain(x):
    state = {"acc": np.zeros_like(x)}
    a = state["acc"]
    b = a
    state["acc"] += x
    return np.sum(b * x)


def item_added_then_scaled(x):
    state = {"acc": np.ones_like(x)}
    a = state["acc"]
    state["acc"] += x
    state["acc"] *= x
    return np.sum(a * x) + np.sum(state["acc"])


def item_of_an_argument(x):
    state = {"acc": x}
    state["acc"] += 1.0  # (Python changes the caller's array: refused)
    return np.sum(x * state["acc"])


def item_with_a_view(x):
    state = {"acc": np.zeros_like(x)}
    v = state["acc"][:2]
    state["acc"] += x
    return np.sum(v * x[:2])
