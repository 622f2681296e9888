"""Benchmark: the cost of odeint's derivatives in s2s (NumPy backend).

    python tools/bench_odeint.py

The Lotka-Volterra misfit of examples/odeint_adjoint.py (50 output times on [0, 10],
rtol = atol = 1e-10, SciPy's LSODA): the forward solve, ``s2s.grad`` (the adjoint
method: one backward solve of the 7-dimensional augmented state per interval), one
``s2s.jvp`` direction (the sensitivity equations beside the state), and central
differences in the 4 parameters (8 forward solves), best of 5 after warm-up, in ms.
Each derivative is checked against the differences before it is timed.  Not a test.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import odeint_adjoint as ex  # noqa: E402

import s2s  # noqa: E402


def best(f, n=5):
    times = []
    for _ in range(n):
        start = time.perf_counter()
        f()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


def main():
    t = np.linspace(0.0, 10.0, 50)
    truth = ex.odeint(ex.lotka_volterra, np.array([2.0, 1.0]), t, args=(1.0, 0.4))
    y0, a, b = np.array([1.8, 1.1]), 0.9, 0.5
    args = [y0, a, b]

    def differences():
        out = []
        for i, value in enumerate(args):
            for step in (np.eye(2) if i == 0 else [1.0]):
                hi, lo = list(args), list(args)
                hi[i], lo[i] = value + 1e-6 * step, value - 1e-6 * step
                out.append((ex.misfit(*hi, t, truth) - ex.misfit(*lo, t, truth)) / 2e-6)
        return np.array(out)

    fd = differences()
    grad = np.concatenate([np.ravel(g) for g in ex.gradient(y0, a, b, t, truth)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5)
    tangents = (np.ones(2), 1.0, 1.0, np.zeros(50), np.zeros_like(truth))
    _, tan = s2s.jvp(ex.misfit, (y0, a, b, t, truth), tangents)
    np.testing.assert_allclose(tan, np.sum(fd), rtol=1e-5)
    forward = best(lambda: ex.misfit(y0, a, b, t, truth))
    reverse = best(lambda: ex.gradient(y0, a, b, t, truth))
    jvp = best(lambda: s2s.jvp(ex.misfit, (y0, a, b, t, truth), tangents))
    central = best(differences)
    print("Lotka-Volterra misfit, 50 output times, rtol=atol=1e-10 (LSODA), best of 5:")
    print(f"  forward solve:                  {forward:9.2f} ms")
    print(f"  s2s.grad (adjoint, 4 params):   {reverse:9.2f} ms  ({reverse / forward:.0f}x)")
    print(f"  s2s.jvp (one direction):        {jvp:9.2f} ms  ({jvp / forward:.0f}x)")
    print(f"  central differences (8 solves): {central:9.2f} ms  ({central / forward:.0f}x)")


if __name__ == "__main__":
    main()
