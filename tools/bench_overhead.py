"""Per-call cost of s2s on tiny inputs, where the call's own work is a few µs:
``s2s.grad`` and ``s2s.jit(..., backend="numpy")`` of it against a gradient written
by hand, at a 0-d array, a NumPy scalar, a Python float, a 3-vector and a small
matrix-vector loss; and a Hessian-vector product (``s2s.jvp`` of ``s2s.grad``).

    python tools/bench_overhead.py             # min over 9 repeats of 3000 calls, µs
    PYTHONPATH=/other/tree python tools/bench_overhead.py   # the same on another tree

Times are minima over repeats (a loaded machine only ever adds time); each system's
result is checked against the hand-written one first.  Specializing waits for its
thread, so every timed call runs the code specialized to the signature.
"""

from __future__ import annotations

import os
import sys
import timeit

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import numpy as np  # noqa: E402

import s2s  # noqa: E402


def wave(x):
    return np.sum(np.sin(x) * x)


def wave_hand(x):
    return np.cos(x) * x + np.sin(x)


def loss(w, x):
    return np.sum((x @ w) ** 2)


def loss_hand(w, x):
    return 2 * x.T @ (x @ w)


def tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def hvp_hand(x, v):
    t2 = np.tanh(x) ** 2
    return 2 * (1 - t2) * (1 - 3 * t2) * v


CASES = {
    "0-d array": (wave, wave_hand, (np.array(0.7),)),
    "np.float64": (wave, wave_hand, (np.float64(0.7),)),
    "float": (wave, wave_hand, (0.7,)),
    "vector(3)": (wave, wave_hand, (np.arange(3.0),)),
    "matvec(4x3)": (loss, loss_hand, (np.ones(3), np.ones((4, 3)))),
}


def best(fn, args, number=3000, repeat=9) -> float:
    return min(timeit.repeat(lambda: fn(*args), number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    for name, (f, hand, args) in CASES.items():
        g = s2s.grad(f)
        j = s2s.jit(s2s.grad(f), backend="numpy")
        for _ in range(3):
            g(*args), j(*args)
        g.wait_specialized()
        j.fun.wait_specialized()
        want = hand(*args)
        for out in (g(*args), j(*args)):
            np.testing.assert_allclose(out, want, rtol=1e-12)
        t = {k: best(s, args) for k, s in (("hand", hand), ("grad", g), ("jit", j))}
        print(f"{name:12s} hand {t['hand']:6.2f} µs  s2s.grad {t['grad']:6.2f} µs "
              f"(+{t['grad'] - t['hand']:5.2f})  s2s.jit(numpy) {t['jit']:6.2f} µs "
              f"(+{t['jit'] - t['hand']:5.2f})")
    inner = s2s.grad(tanh_sq)

    def hvp(x, v):
        return s2s.jvp(inner, (x,), (v,))[1]

    for n in (10, 1000):
        rng = np.random.default_rng(0)
        x, v = rng.normal(size=n), rng.normal(size=n)
        for _ in range(3):
            hvp(x, v)
        s2s.api.pushforward._jvp_transform(inner, False).wait_specialized()
        np.testing.assert_allclose(hvp(x, v), hvp_hand(x, v), rtol=1e-10)
        th, ts = best(hvp_hand, (x, v), 1000), best(hvp, (x, v), 1000)
        print(f"hvp({n:4d})    hand {th:6.2f} µs  s2s.jvp(s2s.grad) {ts:6.2f} µs "
              f"({ts / th:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
