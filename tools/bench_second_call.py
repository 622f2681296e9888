"""The latency a user's training loop sees: calls 1 to 4 of a 10-line gradient, in a
fresh process (call 1 transforms, call 2 specializes, later calls run the specialized
code).  Run it twice: the second process reads bytecode the first wrote.

    python tools/bench_second_call.py
"""

import time

import numpy as np

import s2s


def loss(w, x, y):
    z = x @ w
    h = np.tanh(z)
    r = h - y
    s = np.sum(r * r)
    p = 0.01 * np.sum(w * w)
    q = s / len(y)
    t = q + p
    return t


def main() -> None:
    g = s2s.grad(loss)
    rng = np.random.default_rng(0)
    w, x, y = rng.normal(size=5), rng.normal(size=(32, 5)), rng.normal(size=32)
    times = []
    for _ in range(4):
        start = time.perf_counter()
        g(w, x, y)
        times.append(time.perf_counter() - start)
    print("10-line gradient, calls 1-4 (ms):", [round(1e3 * t, 2) for t in times])


if __name__ == "__main__":
    main()
