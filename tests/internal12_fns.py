"""Functions of tests/test_internal12.py: loops whose `if`/`elif` chains carry values
(running min/max, folds), NamedTuple arguments differentiated directly."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class P(NamedTuple):
    w: np.ndarray
    b: np.ndarray


def affine_tanh(x, p):
    return np.tanh(p.w * x + p.b)


def affine_loss(x, p):
    return np.sum(np.tanh(p.w * x + p.b) * p.w)


def affine_pair(x, p):
    return P(p.w * x, np.sin(p.b)), x * 2.0


def low_times_high(x):
    """A running min and max by `if`/`elif`: the `elif`'s test is computed only in
    iterations where the `if`'s fails."""
    lo = x[0]
    hi = x[0]
    for v in x[1:]:
        if v < lo:
            lo = v
        elif v > hi:
            hi = v
    return lo * hi


def elif_fold(x):
    acc = x[0]
    for v in x[1:]:
        if v > acc:
            acc = v
        elif v < -acc:
            acc = -v
        else:
            acc = acc * v
    return acc


def elif_fold_sum(x):
    acc = 0.0
    for v in x:
        if v > 0.0:
            acc = acc + v * v
        elif v < -0.5:
            acc = acc - v
        else:
            acc = acc * 2.0
    return acc


class Q(NamedTuple):
    w: np.ndarray
    b: np.ndarray

    def apply(self, x):
        return np.tanh(self.w * x + self.b)

    def l2(self):
        return np.sum(self.w ** 2)


def calls_methods(x, q):
    return q.apply(x) + 0.1 * q.l2()


def hands_on(x, q):
    """Hands its NamedTuple to a callee calling its methods."""
    return calls_methods(x, q) * 2.0


def calls_through_class(x, q):
    return Q.apply(q, x) + 0.1 * Q.l2(q)


def hands_on_through_class(x, q):
    """The same, the callee calling the methods through the class (what the
    refusal of a batched object says to write)."""
    return calls_through_class(x, q) * 2.0


def first_pair(x):
    for a, b in zip(x, x[1:]):
        return a * b
    return 0.0


def first_square(x):
    for v in x:
        return v * v
    return 0.0


def first_enumerated(x):
    for i, v in enumerate(x):
        return v * i + np.sin(v)
    return 0.0


def first_then_break(x):
    acc = 0.0
    for v in x:
        acc = acc + v * np.cos(v)
        break
    return acc


def qr_of_rank_one(x):
    """QR of a singular matrix: its derivative rule solves with r (r[1, 1] is 0);
    NumPy's LinAlgError becomes a refusal at this line (slogdet's derivative there,
    the example before, is JAX's infinities since sound13)."""
    m = np.stack([x, 0.0 * x])
    q, r = np.linalg.qr(m)
    return np.sum(q)
