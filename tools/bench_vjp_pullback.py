"""The cost of ``y, pb = s2s.vjp(f, w); pb(1.0)`` (a pullback called once, right away)
on a small logistic loss: a module function, and a new lambda per call (a training
step's).  Run from a tree with its own path first:

    PYTHONPATH=$PWD python tools/bench_vjp_pullback.py

Each pullback's gradient is checked against the hand gradient before timing."""

from __future__ import annotations

import time

import numpy as np

import s2s

rng = np.random.default_rng(0)
X = rng.normal(size=(64, 8))
Y = rng.choice([-1.0, 1.0], 64)


def loss(w):
    return np.mean(np.log1p(np.exp(-Y * (X @ w))))


def hand(w, x, y):
    return x.T @ (-y / (1.0 + np.exp(y * (x @ w)))) / x.shape[0]


def module_step(w):
    _, pb = s2s.vjp(loss, w)
    return pb(1.0)[0]


def lambda_step(w):
    x, y = X, Y
    _, pb = s2s.vjp(lambda w: np.mean(np.log1p(np.exp(-y * (x @ w)))), w)
    return pb(1.0)[0]


def best_us(step, w, n=1000, repeats=5):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            step(w)
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def main() -> None:
    w = rng.normal(size=8)
    for name, step in (("module function", module_step), ("new lambda per call", lambda_step)):
        for _ in range(3):
            np.testing.assert_allclose(step(w), hand(w, X, Y), rtol=1e-12)
        print(f"{name:22s} vjp + pullback: {best_us(step, w):7.1f} us")


if __name__ == "__main__":
    main()
