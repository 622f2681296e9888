"""Functions for test_strings15.py: a ``match`` on a dict a callee is given (from an
unrolled loop over a tuple-of-dicts default, a module constant, a closure, a
``functools.partial``), a last ``case _:`` that raises, and strings made from shapes
deciding a branch.  Its JAX twin (``newcomer_harness.twin``) is the oracle."""

import functools

import numpy as np

SPECS = [{"kind": "l2", "weight": 0.5}, {"kind": "l1", "weight": 0.1}]


def penalty(w, spec):
    match spec:
        case {"kind": "l2", "weight": lam}:
            return lam * np.sum(w ** 2)
        case {"kind": "l1", "weight": lam}:
            return lam * np.sum(np.abs(w))
        case {"kind": "none"}:
            return 0.0
        case _:
            raise ValueError(f"unknown penalty {spec}")


def specs_default(w, specs=({"kind": "l2", "weight": 0.5}, {"kind": "l1", "weight": 0.1},
                            {"kind": "none"})):
    total = sum(penalty(w, s) for s in specs)
    return total + np.sum(np.sin(w))


def specs_loop(w, specs=({"kind": "l1", "weight": 0.3}, {"kind": "l2", "weight": 2.0})):
    total = 0.0
    for s in specs:
        total = total + penalty(w, s)
    return total + np.sum(np.cos(w))


def module_specs(w):
    return sum(penalty(w, s) for s in SPECS) + np.sum(w ** 3)


def weight_array(w, lam):
    return np.sum(np.tanh(w)) + penalty(w * lam, {"kind": "l2", "weight": lam[0]})


def partial_spec(w):
    reg = functools.partial(penalty, spec={"kind": "l1", "weight": 0.25})
    return reg(w) + np.sum(w ** 2)


def activation(x, kind):
    match kind:
        case "tanh":
            return np.tanh(x)
        case "sin":
            return np.sin(x)
        case _:
            raise ValueError(f"unknown activation {kind!r}")


def kind_default(x, kind="sin"):
    return np.sum(activation(x, kind) * x)


def shape_tag(x):
    rows, cols = x.shape
    tag = f"{rows}x{cols}"
    desc = "shape={}".format(x.shape)
    if tag == "2x3" and desc.endswith("(2, 3)"):
        w = np.arange(1.0, cols + 1)
    else:
        w = np.ones(cols)
    return np.sum(np.tanh(x) * w) + str(x.shape).count(",")


def shape_words(x):
    kind = "wide" if x.shape[-1] > x.shape[0] else "tall"
    label = f"{kind}:{x.ndim}d"
    if label.startswith("wide"):
        return np.sum(np.sin(x)) * len(label)
    return np.sum(x ** 2) * label.count("d")


def value_string(x):
    if f"{x[0]:.1f}" == "1.0":
        return np.sum(x)
    return np.sum(x ** 2)
