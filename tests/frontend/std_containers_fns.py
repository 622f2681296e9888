"""Functions of tests/frontend/test_std_containers.py (issue 23): standard-library
containers and iteration helpers built inside the transformed function
(``collections.deque``, ``collections.defaultdict``, ``itertools.chain.from_iterable``)
and a method naming its function by a string field of its object
(``getattr(self, f"act_{self.kind}")``).  Written with ``np``: the test's JAX twin
runs the same source with ``jax.numpy``."""

import collections
import itertools
from collections import defaultdict, deque

import numpy as np


def chain_groups(x):
    groups = [[x[:2], x[2:]], [x[1:3]], [], [x[::2] * 2.0]]
    acc = 0.0
    for part in itertools.chain.from_iterable(groups):
        acc = acc + np.sum(np.sin(part) * part)
    for v in itertools.chain.from_iterable(((x[0], x[1]), [x[-1]])):
        acc = acc + v ** 2 * acc
    return acc


class Unit:
    def __init__(self, kind, scale):
        self.kind = kind
        self.scale = scale

    def act_tanh(self, h):
        return np.tanh(h)

    def act_cube(self, h):
        return h ** 3 / 3.0

    def act_softplus(self, h):
        return np.log1p(np.exp(h))

    def forward(self, h):
        return getattr(self, "act_" + self.kind)(self.scale * h) + 0.1 * h


def getattr_kind_layers(x):
    units = (Unit("softplus", 0.5), Unit("tanh", 2.0), Unit("cube", 1.5), Unit("tanh", 0.3))
    h = x
    for u in units:
        h = u.forward(h)
    return np.sum(h ** 2)


def getattr_kind_rewritten(x):
    u = Unit("tanh", 2.0)
    u.kind = "cube"
    return np.sum(u.forward(x))


def deque_maxlen_window(x):
    buf = collections.deque(maxlen=3)
    acc = 0.0
    for v in (x[0], x[1], x[2], x[3], x[0] * x[1]):
        buf.append(v * 2.0)
        acc = acc + sum(buf) / len(buf) * v + buf[0] * buf[-1]
    return acc


def deque_last_two_rows(x):
    buf = deque(maxlen=2)
    for v in x:
        buf.append(np.sin(v))
    return buf[0] * buf[-1] + len(buf) * buf[1]


def deque_both_ends(x):
    buf = deque([x[0], x[1] * 2.0, x[2]], maxlen=3)
    buf.appendleft(x[3])
    first = buf.popleft()
    buf.extend([x[0] * 3.0, np.sin(x[1])])
    total = 0.0
    for b in buf:
        total = total + np.cos(b) * first
    return total + buf.pop() * buf[0] + len(buf)


def defaultdict_keyed(x):
    acc = collections.defaultdict(float)
    for k in ("a", "b", "a", "c"):
        acc[k] += np.sum(x ** 2) * (2.0 if k == "a" else 0.5) + x[0]
    return acc["a"] * acc["b"] + acc["d"] + acc["c"] * len(acc)


def defaultdict_counts(x):
    counts = defaultdict(int)
    for ch in "abcab":
        counts[ch] += 1
    return counts["a"] * np.sum(np.sin(x)) + counts["z"] + len(counts) * x[1]


def defaultdict_lambda(x):
    sums = defaultdict(lambda: np.zeros(2))
    for k in ("u", "v", "u"):
        sums[k] = sums[k] + x[:2] * x[2:]
    return np.sum(sums["u"] * sums["v"]) + np.sum(sums["w"])


# ---- refused, located (test_std_containers.py's REFUSED) -----------------------------------


def _total(d):
    return sum(d.values())


def refused_defaultdict_passed(x):
    acc = defaultdict(float)
    acc["a"] += x[0]
    return _total(acc)


def refused_defaultdict_comprehension(x):
    acc = defaultdict(float)
    acc["a"] = x[0]
    return sum(acc[k] for k in ("a", "b"))


def refused_deque_rotate(x):
    buf = deque([x[0], x[1]])
    buf.rotate(1)
    return buf[0]


def refused_deque_returned(x):
    buf = deque([x[0], x[1]], maxlen=2)
    return buf
