"""Loops carrying a value whose rank the first iteration changes (Horner's rule:
``acc = 0.0``, then ``acc = acc * x + c`` of an array ``x``), for
tests/frontend/test_carried_rank.py.  JAX runs the same source (``jax_twin``): its
trace unrolls the loop."""

import numpy as np

COEFFS = [0.5, -1.0, 2.0]
COEFFS_T = (0.5, -1.0, 2.0)
COEFFS_A = np.array([0.5, -1.0, 2.0, 0.25])


def horner(x, coeffs):
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return np.sum(acc)


def horner_int_start(x, coeffs):
    acc = 0
    for c in coeffs:
        acc = acc * x + c
    return np.sum(acc)


def horner_zeros_start(x, coeffs):
    acc = np.zeros(())
    for c in coeffs:
        acc = acc * x + c
    return np.sum(acc)


def horner_module_list(x):
    acc = 0.0
    for c in COEFFS:
        acc = acc * x + c
    return np.sum(acc)


def horner_module_tuple(x):
    acc = 0.0
    for c in COEFFS_T:
        acc = acc * x + c
    return np.sum(acc)


def horner_module_array(x):
    acc = 0.0
    for c in COEFFS_A:
        acc = acc * x + c
    return np.sum(np.sin(acc))


def horner_by_index(x, coeffs):
    acc = 0.0
    for i in range(1, len(coeffs)):
        acc = acc * x + coeffs[i] * coeffs[0]
    return np.sum(acc * x)


def horner_two_carried(x, coeffs):
    acc = 0.0
    total = 0.0
    for c in coeffs:
        acc = acc * x + c
        total = total + c * c
    return np.sum(acc) * total


def horner_out(x, coeffs):
    acc = 0.0
    for c in coeffs:
        acc = acc * np.tanh(x) + c
    return acc


def via_callee(x, coeffs):
    return np.sum(np.cos(horner_out(x, coeffs))) + horner(x, coeffs)


# refused, located: the rank grows at every iteration, a `break`, a nested loop


def rank_grows(x, coeffs):
    acc = 1.0
    for c in coeffs:
        acc = np.expand_dims(acc, -1) * x + c
    return np.sum(acc)


def with_break(x, coeffs):
    acc = 0.0
    for c in coeffs:
        if c > 100.0:
            break
        acc = acc * x + c
    return np.sum(acc)


def nested(x, coeffs):
    total = 0.0
    for j in range(2):
        acc = 0.0
        for c in coeffs:
            acc = acc * x + c
        total = total + acc
    return np.sum(total)
