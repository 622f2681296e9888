"""Module-level helpers the losses of tests/test_jaxlanes19.py call by name (the test
rebinds them): a jit on the keyed path (a dict argument, a static argument) and a
jit of ``vmap`` read them at every call through a guarded lane."""

import numpy as np


def logistic(z):
    return np.log1p(np.exp(-z))


def hinge2(z):
    return np.maximum(1.0 - z, 0.0) ** 2


SCALE = 1.0


def plain_loss(w, x, y):  # (vmapped per example)
    return np.mean(logistic(y * (x @ w)))


def dict_loss(p, x, y):  # a dict argument: the keyed path
    return np.mean(logistic(y * (x @ p["w"] + p["b"]))) + SCALE * p["b"] ** 2


def static_loss(w, x, y, scale):  # a static argument
    return scale * np.mean(logistic(y * (x @ w)))


def ordered_loss(p, x, y):  # walks the dict: its key order decides the value
    terms = [np.sum(v) * (i + 1) for i, v in enumerate(p.values())]
    return np.mean(logistic(y * (x @ p["w"]))) + terms[0] - terms[-1]


WEIGHT = np.ones(3)  # (a float array: passed at every call, so the free path's way)


def weighted_loss(w, x, y):
    return np.mean(logistic(y * (x @ (w * WEIGHT))))


def static_dict_loss(p, x, y, scale):  # a dict beside a static argument
    return scale * np.mean(logistic(y * (x @ p["w"] + p["b"])))


def nested_loss(p, x, y):  # a dict in the dict: the keyed path looks into it
    return np.mean(logistic(y * (x @ p["inner"]["w"]))) + np.sum(p["c"] ** 2)


MASK = np.array([True, False, True, True, False, True])  # (guarded by its bytes)


def masked_loss(w, x, y):  # a module boolean array: the guarded lane checks its bytes
    return np.mean(np.where(MASK, logistic(y * (x @ w)), 0.0))
