"""Issue 23: methods that set attributes of an object the function built and return a
value (s2s/frontend/stateful.py): a batch norm keeping running statistics, a running
mean updated in a loop, a layer called as a statement for its effect on the object.
tests/frontend/test_stateful18.py runs them against JAX on this same source
(``newcomer_harness.twin``) and central differences."""

from __future__ import annotations

import numpy as np


class RunningNorm:
    def __init__(self, n, momentum=0.1):
        self.mean = np.zeros(n)
        self.var = np.ones(n)
        self.momentum = momentum

    def __call__(self, x, training):
        if training:
            mu, var = x.mean(axis=0), x.var(axis=0)
            self.mean = (1 - self.momentum) * self.mean + self.momentum * mu
            self.var = (1 - self.momentum) * self.var + self.momentum * var
        else:
            mu, var = self.mean, self.var
        return (x - mu) / np.sqrt(var + 1e-5)


def norm_train_then_eval(x):
    bn = RunningNorm(x.shape[1])
    y = bn(x, training=True)
    y2 = bn(np.tanh(x), training=True)
    z = bn(x * 0.5 + 1.0, training=False)
    return np.sum(y ** 3) + np.sum(y2 * z) + np.sum(bn.mean * bn.var)


class Averager:
    def __init__(self, n):
        self.total = np.zeros(n)
        self.count = 0

    def add(self, v):
        self.total = self.total + v
        self.count = self.count + 1
        return self.total / self.count


def running_mean_loop(x):
    avg = Averager(x.size)
    m = x
    for i in range(4):
        m = avg.add(np.sin(m) * (i + 1.0))
    return np.sum(m ** 2) + np.sum(avg.total) * avg.count


def called_for_its_effect(x):
    bn = RunningNorm(x.shape[1], momentum=0.3)
    bn(x, training=True)
    bn(x ** 2, training=True)
    avg = Averager(x.shape[1])
    avg.add(bn.mean)
    return np.sum(bn(x, training=False) ** 2) + np.sum(avg.total * bn.var)


class Decayed:
    def __init__(self, w, rate):
        self.w = w
        self.rate = rate

    def scaled(self, k):
        return Decayed(self.w * k + np.sin(self.w) * self.rate, self.rate * k)


def new_object_each_iteration(x):
    d = Decayed(x, 0.5)
    for _ in range(3):
        d = d.scaled(0.9)
    return np.sum(d.w ** 2) + d.rate * np.sum(d.w)
