"""The Hessian-vector product of ``sum(tanh(x)**2)`` (``s2s.jvp`` of ``s2s.grad``)
against the hand-written one, at n = 10 and 1000: 31 interleaved repeats of 300 calls
each, BLAS on one thread; the minima, their ratio, and the median per-repeat ratio.

    PYTHONPATH=<tree> python tools/bench_hvp.py

It imports whichever s2s ``PYTHONPATH`` names (unlike tools/bench.py, which uses its
own tree), so two trees can be compared by running it alternately with each.
"""

import os
import statistics
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402

import s2s  # noqa: E402


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def hand(x, v):
    t2 = np.tanh(x) ** 2
    return 2 * (1 - t2) * (1 - 3 * t2) * v


g = s2s.grad(tanh_sq)


def hvp(x, v):
    return s2s.jvp(g, (x,), (v,))[1]


def block(f, a, n):
    t = time.perf_counter()
    for _ in range(n):
        f(*a)
    return (time.perf_counter() - t) / n


out = []  # one line: the tree, then each size
for n in (10, 1000):
    r = np.random.default_rng(0)
    x, v = r.normal(size=n), r.normal(size=n)
    for _ in range(4):
        hvp(x, v)
    s2s.api.transformed.JVPS.get(g)[False].wait_specialized()
    np.testing.assert_allclose(hvp(x, v), hand(x, v), rtol=1e-10)
    hs, ss = [], []
    for _ in range(31):
        hs.append(block(hand, (x, v), 300))
        ss.append(block(hvp, (x, v), 300))
    ratios = [b / a for a, b in zip(hs, ss)]
    out.append(f"n={n}: hand {min(hs) * 1e6:.1f} µs, s2s {min(ss) * 1e6:.1f} µs, ratio of "
               f"minima {min(ss) / min(hs):.2f}, median per-repeat ratio "
               f"{statistics.median(ratios):.2f}")
print(s2s.__file__.split("/s2s/")[0], " | ".join(out))
